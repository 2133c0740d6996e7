//! The local stack's test-mode stand-ins for Stripe's hosted pages (the local `Payments`
//! adapter, `mailward_billing::local`): `GET /billing/local/checkout/{id}` shows what the
//! Checkout Session subscribes to and a button that pays it; `GET /billing/local/portal/{id}`
//! shows the subscription with buttons to cancel it and, being test mode, to make the next
//! invoice fail or be paid. Each button produces the events Stripe would send, signed, through
//! `/billing/stripe-webhook`, then redirects (303) back to the service. They exist only where
//! billing runs on the local adapter; they are not API routes (not in the OpenAPI document).

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use mailward_billing::local::{LocalPayments, PortalAction};
use mailward_domain::html::escape;
use std::sync::Arc;

fn page(status: StatusCode, title: &str, body: &str) -> Response {
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title>\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"></head>\
         <body>\
         <p><strong>Test mode</strong>: Mailward's local stand-in for the payment provider's hosted page. \
         No card is asked for and nothing is charged.</p><h1>{t}</h1>{body}</body></html>",
        t = escape(title)
    );
    (
        status,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; form-action 'self'; frame-ancestors 'none'",
            ),
            (header::CACHE_CONTROL, "no-store"),
        ],
        html,
    )
        .into_response()
}

fn not_found() -> Response {
    page(
        StatusCode::NOT_FOUND,
        "Not found",
        "<p>No such session.</p>",
    )
}

fn failed(e: impl std::fmt::Display) -> Response {
    page(
        StatusCode::BAD_GATEWAY,
        "Something failed",
        &format!("<p>{}</p>", escape(&e.to_string())),
    )
}

fn redirect(to: &str) -> Response {
    (StatusCode::SEE_OTHER, [(header::LOCATION, to.to_owned())]).into_response()
}

async fn checkout(State(pay): State<Arc<LocalPayments>>, Path(id): Path<String>) -> Response {
    let session = match pay.checkout(&id).await {
        Ok(Some(s)) => s,
        Ok(None) => return not_found(),
        Err(e) => return failed(e),
    };
    if session.subscription.is_some() {
        return page(
            StatusCode::OK,
            "Already paid",
            "<p>This checkout is complete.</p>",
        );
    }
    let lines: String = session
        .request
        .items
        .iter()
        .map(|(price, quantity)| format!("<li>{} × {quantity}</li>", escape(&line_item(price))))
        .collect();
    let plan = mailward_services::usage::pricing_name(session.request.plan);
    let trial = session.request.trial_days.map_or(String::new(), |d| {
        format!("<p>Starts with a {d}-day trial.</p>")
    });
    page(
        StatusCode::OK,
        &format!("Subscribe to Mailward {plan}"),
        &format!(
            "<ul>{lines}</ul>{trial}<form method=\"post\"><button type=\"submit\">Subscribe</button></form>\
             <p><a href=\"{}\">Cancel</a></p>",
            escape(&session.request.cancel_url)
        ),
    )
}

/// The usage line item a local price bills (`price_local_msp_domain-inactive` →
/// `DOMAIN-INACTIVE`); a configured Stripe price id as it is.
fn line_item(price: &str) -> String {
    let rest = price.strip_prefix("price_local_").unwrap_or(price);
    ["it_teams_", "msp_"]
        .iter()
        .find_map(|plan| rest.strip_prefix(plan))
        .map_or_else(|| price.to_owned(), str::to_uppercase)
}

async fn pay_checkout(State(pay): State<Arc<LocalPayments>>, Path(id): Path<String>) -> Response {
    match pay.pay(&id).await {
        Ok(Some(back)) => redirect(&back),
        Ok(None) => not_found(),
        Err(e) => failed(e),
    }
}

async fn portal(State(pay): State<Arc<LocalPayments>>, Path(id): Path<String>) -> Response {
    let (portal, sub) = match pay.portal(&id).await {
        Ok(Some(found)) => found,
        Ok(None) => return not_found(),
        Err(e) => return failed(e),
    };
    let Some(sub) = sub else {
        return page(
            StatusCode::OK,
            "Billing",
            &format!(
                "<p>No subscription yet.</p><p><a href=\"{}\">Back</a></p>",
                escape(&portal.return_url)
            ),
        );
    };
    let button = |action: &str, label: &str| {
        format!(
            "<form method=\"post\"><input type=\"hidden\" name=\"action\" value=\"{action}\">\
             <button type=\"submit\">{label}</button></form>"
        )
    };
    page(
        StatusCode::OK,
        "Your Mailward subscription",
        &format!(
            "<p>Status: {}</p>{}{}{}<p><a href=\"{}\">Back</a></p>",
            sub.status.as_str(),
            button("cancel", "Cancel the subscription"),
            button("fail_payment", "Test mode: fail the next invoice"),
            button("pay_invoice", "Test mode: pay the open invoice"),
            escape(&portal.return_url)
        ),
    )
}

async fn act(
    State(pay): State<Arc<LocalPayments>>,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    let action = url::form_urlencoded::parse(&body)
        .find(|(k, _)| k == "action")
        .map(|(_, v)| v.into_owned());
    let action = match action.as_deref() {
        Some("cancel") => PortalAction::Cancel,
        Some("fail_payment") => PortalAction::FailPayment,
        Some("pay_invoice") => PortalAction::PayInvoice,
        _ => {
            return page(
                StatusCode::BAD_REQUEST,
                "Unknown action",
                "<p>action must be cancel, fail_payment or pay_invoice.</p>",
            );
        }
    };
    match pay.act(&id, action).await {
        Ok(Some(back)) => redirect(&back),
        Ok(None) => not_found(),
        Err(e) => failed(e),
    }
}

/// The pages, over the same store, clock and webhook secret as the local adapter.
pub fn router(state: &mailward_services::state::AppState) -> Router {
    let pay = Arc::new(LocalPayments::new(
        Arc::clone(&state.store),
        Arc::clone(&state.clock),
        &state.config.base_url,
        &mailward_billing::webhook_secret(&state.config),
    ));
    Router::new()
        .route(
            "/billing/local/checkout/{id}",
            get(checkout).post(pay_checkout),
        )
        .route("/billing/local/portal/{id}", get(portal).post(act))
        .with_state(pay)
}
