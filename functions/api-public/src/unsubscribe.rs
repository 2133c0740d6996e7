//! `GET` and `POST /notifications/unsubscribe`: the one-click unsubscribe link of notification
//! mail (RFC 8058). `GET` only shows a confirmation page (mail scanners fetch links; a fetch must
//! not unsubscribe anyone); `POST` (the mail client's one-click, or the page's button) turns the
//! link's switch off for the organization.

use axum::extract::State;
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use mailward_api_types::ErrorBody;
use mailward_api_types::notifications::{UnsubscribeParams, Unsubscribed};
use mailward_http::extract::Query;
use mailward_http::{ApiError, AppState, Routes};
use mailward_services::html::escape;
use mailward_services::unsubscribe;

const NOTE: &str = "No credentials: the link's token is signed for one organization and one \
setting. `GET` answers a confirmation page and changes nothing (link scanners fetch links); \
`POST` (a mail client's RFC 8058 one-click, with or without the body \
`List-Unsubscribe=One-Click`) turns the setting off in `settings.email_notifications` of the \
organization. An administrator turns it back on with `POST /organizations/{id}`. Mail to \
addresses a person listed (an alert rule's `email` destination, a scheduled report's \
`recipients`: an extension) carries a link signed for that address and that rule or report: \
it takes the address off that list alone (`recipient` in the answer) and leaves the \
organization's setting as it is.";

/// Shows what the link turns off, with a button to confirm.
#[utoipa::path(get, path = "/notifications/unsubscribe", tag = "notifications",
    params(UnsubscribeParams), description = NOTE, security(()),
    responses(
        (status = 200, description = "A confirmation page", content_type = "text/html"),
        (status = 400, description = "The token is not valid (`param` token)", body = ErrorBody),
    ))]
pub async fn unsubscribe_page(
    State(app): State<AppState>,
    Query(params): Query<UnsubscribeParams>,
) -> Result<Response, ApiError> {
    let link = unsubscribe::verify_link(&app, &params.token)?;
    let action = format!(
        "/notifications/unsubscribe?token={}",
        escape(params.token.trim())
    );
    let question = match &link.recipient {
        Some((_, to)) => format!(
            "Stop this “{}” mail to {}?",
            link.switch.as_str(),
            escape(to)
        ),
        None => format!("Turn off “{}” mail?", link.switch.as_str()),
    };
    Ok(page(&format!(
        "<h1>{question}</h1>\n<form method=\"post\" action=\"{action}\">\
         <button type=\"submit\">Turn it off</button></form>"
    )))
}

/// Turns the link's setting off.
#[utoipa::path(post, path = "/notifications/unsubscribe", tag = "notifications",
    params(UnsubscribeParams), description = NOTE, security(()),
    responses(
        (status = 200, description = "Done: a page, or JSON when the request accepts only JSON", body = Unsubscribed),
        (status = 400, description = "The token is not valid (`param` token)", body = ErrorBody),
    ))]
pub async fn unsubscribe_now(
    State(app): State<AppState>,
    Query(params): Query<UnsubscribeParams>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let done = unsubscribe::apply(&app, &params.token).await?;
    let wants_json = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("application/json") && !a.contains("text/html"));
    if wants_json {
        return Ok(axum::Json(Unsubscribed {
            organization: done.organization,
            setting: done.switch.as_str().to_owned(),
            enabled: done.recipient.is_some(),
            recipient: done.recipient,
        })
        .into_response());
    }
    let said = match &done.recipient {
        Some(to) => format!(
            "{} no longer receives this “{}” mail of {}.",
            escape(to),
            done.switch.as_str(),
            escape(&done.organization)
        ),
        None => format!(
            "{} no longer receives “{}” mail.",
            escape(&done.organization),
            done.switch.as_str()
        ),
    };
    Ok(page(&format!("<h1>Done</h1>\n<p>{said}</p>")))
}

fn page(body: &str) -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        format!(
            "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>Mailward notifications</title></head>\n<body style=\"font-family:sans-serif\">\n{body}\n</body></html>\n"
        ),
    )
        .into_response()
}

/// This module's routes.
pub fn routes() -> Routes {
    Routes::new().routes(utoipa_axum::routes!(unsubscribe_page, unsubscribe_now))
}
