//! A domain's senders (SPEC §2.6 DomainSource, §3 moves, §4.1 sources rows).

use axum::extract::{Path, State};
use mailward_api_types::ErrorBody;
use mailward_api_types::senders::{DomainSourceView, UpdateDomainSourceRequest};
use mailward_http::extract::{Json, PathId, path_uuid};
use mailward_http::{ApiError, AppState, Principal, Routes};
use mailward_services::reports::senders;

/// The senders of a domain.
#[utoipa::path(get, path = "/domains/{id}/sources", tag = "reports",
    params(("id" = uuid::Uuid, Path, description = "Domain id")),
    description = "Every sender the domain's aggregate reports show, most recently seen first \
(then by volume). Senders are identified after each import, in the background (a few seconds): \
a catalogue source when a DKIM signature by the service's domain, the return-path domain, the \
forward-confirmed reverse-DNS name of the source IP, or a selector convention unique to one \
service says so (`is_known` true, `source_id` set); otherwise the sending domain (reverse-DNS \
or return-path domain), or the bare address. `totals` covers the plan's retention: \
`compliant` passed DMARC; `non_compliant` failed from a recognised or confirmed sender; \
`forwarded` was overridden as forwarded or came through a forward-only service; `unknown` \
failed from anyone else. New senders start `requires_confirmation`.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = [DomainSourceView]), (status = 404, body = ErrorBody)))]
pub async fn list_domain_sources(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<axum::Json<Vec<DomainSourceView>>, ApiError> {
    Ok(axum::Json(senders::list(&app, &principal, id).await?))
}

/// Confirms, discards or resets a sender.
#[utoipa::path(post, path = "/domains/{id}/sources/{source_id}", tag = "reports",
    request_body = UpdateDomainSourceRequest,
    params(("id" = uuid::Uuid, Path, description = "Domain id"),
        ("source_id" = uuid::Uuid, Path, description = "The DomainSource `id` (not the catalogue id)")),
    description = "Moves the sender to `confirmation_status` (confirmed sets `confirmed_at`; any \
other status clears it). The sender tasks follow at once: confirming or discarding closes its \
confirm_source tasks; a confirmed sender that fails SPF or DKIM gets source_failing_spf or \
source_failing_dkim; a discarded sender still authorized by the SPF record gets \
cleanup_sender_records. Needs write access.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = DomainSourceView), (status = 400, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn update_domain_source(
    State(app): State<AppState>,
    principal: Principal,
    Path((domain_raw, source_raw)): Path<(String, String)>,
    Json(body): Json<UpdateDomainSourceRequest>,
) -> Result<axum::Json<DomainSourceView>, ApiError> {
    let id = path_uuid(&domain_raw, "id")?;
    let source_id = path_uuid(&source_raw, "source_id")?;
    Ok(axum::Json(
        senders::update(&app, &principal, id, source_id, body).await?,
    ))
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(list_domain_sources))
        .routes(utoipa_axum::routes!(update_domain_source))
}
