//! The activity log (SPEC §4.5): who changed what, when, for every mutation of the service.

use axum::extract::State;
use mailward_api_types::ErrorBody;
use mailward_api_types::activity::{ActivityAction, ActivityEntry, ActivityList, ActivityParams};
use mailward_http::extract::{PathId, Query};
use mailward_http::{ApiError, AppState, Principal, Routes};
use mailward_services::activity;

/// Lists activity entries.
#[utoipa::path(get, path = "/activity-log", tag = "activity-log", params(ActivityParams),
    description = "Administrators or read-write keys, not limited to groups. Entries newest first: \
`actor_type` USER, API_KEY, SERVICE_STAFF or SYSTEM with `actor_id` (the account or key; null \
for SYSTEM), `action` (see /activity-log/actions), `target_type` and `target_id`, a `summary`, \
`previous` (the changed fields' earlier values, when there are any) and `created_at`. Every \
entry is written in the same transaction as its change. Filters: `actor_type`, `action`, \
`target_type`, `target_id`, `since` (inclusive) and `until` (exclusive) as RFC 3339 times; \
`page`/`per_page`.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = ActivityList), (status = 400, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub async fn list_activity(
    State(app): State<AppState>,
    principal: Principal,
    Query(params): Query<ActivityParams>,
) -> Result<axum::Json<ActivityList>, ApiError> {
    Ok(axum::Json(activity::list(&app, &principal, &params).await?))
}

/// The action catalogue.
#[utoipa::path(get, path = "/activity-log/actions", tag = "activity-log",
    description = "Every `action` the log records, with what it means.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = [ActivityAction])))]
pub async fn list_actions(_principal: Principal) -> axum::Json<Vec<ActivityAction>> {
    axum::Json(activity::actions())
}

/// One entry.
#[utoipa::path(get, path = "/activity-log/{id}", tag = "activity-log",
    params(("id" = uuid::Uuid, Path, description = "Entry id")),
    description = "Administrators or read-write keys, not limited to groups.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = ActivityEntry), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_activity(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<axum::Json<ActivityEntry>, ApiError> {
    Ok(axum::Json(activity::get(&app, &principal, id).await?))
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(list_activity))
        .routes(utoipa_axum::routes!(list_actions))
        .routes(utoipa_axum::routes!(get_activity))
}
