//! DNS snapshots (SPEC §4.1): what DNS served for each record type of a domain, recorded by the
//! sweep whenever it changed.

use axum::extract::{Path, State};
use mailward_api_types::ErrorBody;
use mailward_api_types::snapshots::{DiffParam, SnapshotFilters, SnapshotList, SnapshotView};
use mailward_http::extract::{PathId, Query};
use mailward_http::{ApiError, AppState, Principal, Routes};
use mailward_services::domains::snapshots;
use uuid::Uuid;

/// Snapshots of a domain, newest first.
#[utoipa::path(get, path = "/domains/{id}/dns-snapshots", tag = "domains",
    params(("id" = uuid::Uuid, Path, description = "Domain id"), SnapshotFilters),
    description = "One snapshot per record type and change, taken by the monitoring sweep; a failed \
lookup records nothing (a timeout never looks like the records vanished). Newest first.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = SnapshotList), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn list_dns_snapshots(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
    Query(filters): Query<SnapshotFilters>,
) -> Result<axum::Json<SnapshotList>, ApiError> {
    Ok(axum::Json(
        snapshots::list(&app, &principal, id, &filters).await?,
    ))
}

/// One snapshot, optionally with its diff.
#[utoipa::path(get, path = "/domains/{id}/dns-snapshots/{snapshot_id}", tag = "domains",
    params(("id" = uuid::Uuid, Path, description = "Domain id"), ("snapshot_id" = uuid::Uuid, Path, description = "Snapshot id"), DiffParam),
    description = "With `diff` (bare `?diff`, `diff=true` or `diff=1`; `diff=false` and `diff=0` \
turn it off; any other value answers 400 naming `diff`) the snapshot carries `diff`: the values \
added and removed since the previous snapshot of the same type.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = SnapshotView), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_dns_snapshot(
    State(app): State<AppState>,
    principal: Principal,
    Path((domain_raw, snapshot_raw)): Path<(String, String)>,
    Query(params): Query<DiffParam>,
) -> Result<axum::Json<SnapshotView>, ApiError> {
    let id = Uuid::parse_str(&domain_raw).map_err(|_| {
        ApiError::invalid_param("id", "the domain id in the path is not a valid UUID")
    })?;
    let snapshot_id = Uuid::parse_str(&snapshot_raw).map_err(|_| {
        ApiError::invalid_param(
            "snapshot_id",
            "the snapshot id in the path is not a valid UUID",
        )
    })?;
    let with_diff = snapshots::diff_wanted(params.diff.as_deref())?;
    Ok(axum::Json(
        snapshots::get(&app, &principal, id, snapshot_id, with_diff).await?,
    ))
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(list_dns_snapshots))
        .routes(utoipa_axum::routes!(get_dns_snapshot))
}
