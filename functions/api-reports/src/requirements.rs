//! Mailbox providers' sender requirements for a domain (an extension beyond SPEC).

use axum::extract::State;
use mailward_api_types::ErrorBody;
use mailward_api_types::sender_requirements::{SenderRequirementsView, SupplySpamRateRequest};
use mailward_http::extract::{Json, PathId};
use mailward_http::{ApiError, AppState, Principal, Routes};
use mailward_services::sender_requirements;

/// The domain's sender requirements.
#[utoipa::path(get, path = "/domains/{id}/sender-requirements", tag = "reports",
    params(("id" = uuid::Uuid, Path, description = "Domain id")),
    description = "An extension beyond SPEC. Gmail's and Yahoo's requirements for bulk senders \
(since February 2024) and Outlook.com's for high-volume senders (since 5 May 2025), judged for \
the domain. Each provider lists the requirements it publishes (Gmail: spf, dkim, dmarc, \
reverse_dns, tls, one_click_unsubscribe, spam_rate; Yahoo: the same without tls; Outlook.com: \
spf, dkim, dmarc), each `pass`, `fail` or `unknown` with its evidence: `dns` (the SPF and DMARC \
records, looked up now), `reports` (the aggregate reports that provider itself sent in the last \
30 days, counted when sender identification runs after each import; only the domain's own mail \
is judged: messages passing DMARC or from a sender that is confirmed, or recognised and not \
discarded; forwarded mail is left out; 98% of it must pass), `reverse_dns` (forward-confirmed \
PTR of the addresses in those reports), `header_analysis` (the verdicts, never the headers, of \
the organization's most recent `POST /tools/header-analyze` of a message from the domain, kept \
30 days) and `supplied` (a spam rate set with POST on this path: Mailward never sees spam \
complaints and never guesses them). A requirement fails when any evidence fails, passes when \
all of it passes, and is unknown otherwise. `error_codes` are the provider's published SMTP \
codes for such mail; a failing requirement opens (or updates) a `meet_sender_requirement` task \
(`task_id`): for spf, dkim, dmarc and reverse_dns only from providers whose reports show the \
domain's own mail (a missing record alone is the set-up tasks' matter); never on a parked \
domain.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = SenderRequirementsView), (status = 404, body = ErrorBody)))]
pub async fn get_sender_requirements(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<axum::Json<SenderRequirementsView>, ApiError> {
    Ok(axum::Json(
        sender_requirements::get(&app, &principal, id).await?,
    ))
}

/// Supplies (or clears) a provider's spam rate.
#[utoipa::path(post, path = "/domains/{id}/sender-requirements", tag = "reports",
    request_body = SupplySpamRateRequest,
    params(("id" = uuid::Uuid, Path, description = "Domain id")),
    description = "An extension beyond SPEC. Sets the spam rate the organization read for the \
domain in the provider's own tools (Google Postmaster Tools, Yahoo Sender Hub, Microsoft SNDS), \
in percent; it counts for 30 days. `spam_rate_pct` null or absent clears it. Answers the \
requirements as `GET` does, with the spam_rate requirement and its task updated. Needs write \
access; logged as `domain.spam_rate_supplied`.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = SenderRequirementsView), (status = 400, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn supply_spam_rate(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
    Json(body): Json<SupplySpamRateRequest>,
) -> Result<axum::Json<SenderRequirementsView>, ApiError> {
    Ok(axum::Json(
        sender_requirements::supply_spam_rate(&app, &principal, id, body).await?,
    ))
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new().routes(utoipa_axum::routes!(
        get_sender_requirements,
        supply_spam_rate
    ))
}
