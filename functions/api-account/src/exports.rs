//! Organization exports (an extension beyond SPEC §4.2): every resource as JSON and the report
//! data as CSV in one archive, built in the background, downloaded through a signed link.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use mailward_api_types::ErrorBody;
use mailward_api_types::organizations::OrganizationExport;
use mailward_http::extract::{PathId, path_uuid};
use mailward_http::{ApiError, AppState, Principal, Routes};
use mailward_services::exports;

/// Asks for an export.
#[utoipa::path(post, path = "/organizations/{id}/exports", tag = "organizations",
    params(("id" = uuid::Uuid, Path, description = "Organization id")),
    description = "An extension beyond SPEC §4.2, for a customer leaving or an auditor: a \
signed-in administrator without a group limit asks, and a background job builds one zip \
archive (`mailward-export/`) of every resource of the organization as the API answers it, with \
the administrator's rights at build time: `organization.json`, `domains.json`, `groups.json`, \
`members.json`, `invitations.json`, `api_keys.json` (never secrets), `webhook_endpoints.json`, \
`tasks.json` (every status), `activity_log.json`, `support_tickets.json` (with messages), `custom_sources.json` (the organization's own sending sources), `dns_connections.json` and \
`mailbox_connections.json` (never credentials), `sender_requirements.json` (per domain: supplied \
spam rates, kept header-analysis verdicts, each provider's report figures), `alert_rules.json` \
(never a destination's URL or routing key) and `alerts.json` (open, and resolved within 90 days), each \
the `data` of every page, and the report data of the last 365 days as \
`reports/daily.csv` and `reports/sources.csv` (the columns of `GET /report-data/export`). \
Answers 202 with the export `pending`; read it with `GET /organizations/{id}/exports/{export_id}` \
until `ready`. The archive is kept 7 days, then the export reads `expired` (no link). Recorded as `organization.export_requested`.",
    security(("session" = [])),
    responses((status = 202, body = OrganizationExport), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn request_export(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<(StatusCode, axum::Json<OrganizationExport>), ApiError> {
    let export = exports::request(&app, &principal, id).await?;
    Ok((StatusCode::ACCEPTED, axum::Json(export)))
}

/// One export.
#[utoipa::path(get, path = "/organizations/{id}/exports/{export_id}", tag = "organizations",
    params(("id" = uuid::Uuid, Path, description = "Organization id"),
        ("export_id" = uuid::Uuid, Path, description = "Export id")),
    description = "The export's status (`pending`, `ready`, `failed` with `error`). Once ready, \
`download_url` is a signed link to the archive that works for one hour \
(`download_expires_at`); each read answers a fresh one. Administrators without a group limit, \
signed in.",
    security(("session" = [])),
    responses((status = 200, body = OrganizationExport), (status = 400, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_export(
    State(app): State<AppState>,
    principal: Principal,
    Path((org, export)): Path<(String, String)>,
) -> Result<axum::Json<OrganizationExport>, ApiError> {
    let (org, export) = (path_uuid(&org, "id")?, path_uuid(&export, "export_id")?);
    Ok(axum::Json(
        exports::get(&app, &principal, org, export).await?,
    ))
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(request_export))
        .routes(utoipa_axum::routes!(get_export))
}
