//! `POST /domains/bulk` (SPEC §4.1): many domains in one request, each entry independent.

use axum::extract::State;
use mailward_api_types::ErrorBody;
use mailward_api_types::domains::{BulkRequest, BulkResponse};
use mailward_http::extract::Json;
use mailward_http::{ApiError, AppState, Principal, Routes};
use mailward_services::domains::bulk;

/// Adds many domains; always 200, entries independent.
#[utoipa::path(post, path = "/domains/bulk", tag = "domains", request_body = BulkRequest,
    description = "Editors, administrators or read-write keys. A body that is not JSON, lacks \
`domains`, carries another key, or whose `domains` is not an array of 1 to 500 entries answers 400 \
naming the field. Otherwise the answer is 200 even when every entry failed: one result per entry, \
in request order. Entries are independent: each is checked and stored on its own, so a malformed \
entry or a storage failure affects only that entry. `url` echoes the submitted string (null when \
the entry had none); `reason` is `<code>: <message>` with code `invalid_entry` (the entry is not a \
JSON object), `parameter_invalid_or_missing` (`param` names the entry field: `url` missing, not a \
string or not a domain name; `group_id` not a UUID string or null, or naming no group of the \
organization; any key other than `url` and `group_id`), `domain_exists` (already watched, also \
earlier in the same request) or `internal_error` (storing this entry failed; retry it). Each \
created domain emits `domain.created`.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = BulkResponse), (status = 400, body = ErrorBody)))]
pub async fn bulk_create_domains(
    State(app): State<AppState>,
    principal: Principal,
    Json(body): Json<BulkRequest>,
) -> Result<axum::Json<BulkResponse>, ApiError> {
    Ok(axum::Json(bulk::create_many(&app, &principal, body).await?))
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new().routes(utoipa_axum::routes!(bulk_create_domains))
}
