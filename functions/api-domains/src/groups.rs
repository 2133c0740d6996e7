//! Groups (SPEC §2.4, §4.2): a managed-service provider's customers or a company's brands.
//! Deleting a group leaves its domains ungrouped, never deleted.

use axum::extract::State;
use axum::http::StatusCode;
use mailward_api_types::ErrorBody;
use mailward_api_types::admin::{
    CreateGroupRequest, Group, GroupExpandParams, GroupList, ListGroupsParams, UpdateGroupRequest,
};
use mailward_http::extract::{Json, PathId, Query};
use mailward_http::{ApiError, AppState, Principal, Routes};
use mailward_services::groups;

/// Lists the groups.
#[utoipa::path(get, path = "/groups", tag = "groups", params(ListGroupsParams),
    description = "The organization's groups (a member limited to groups sees only theirs). \
`sort` created_at (default) or name (case-insensitive), `order` desc (default) or asc. \
`expand[]=domains` adds `domains`: `count`, `enforcement_pct` (share of the group's domains whose \
observed DMARC policy is quarantine or reject, 0-100), `last_14_days_volume` and \
`last_14_days_dmarc_pass_pct` (0 until aggregate reports are ingested) and `average_score`.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = GroupList), (status = 400, body = ErrorBody)))]
pub async fn list_groups(
    State(app): State<AppState>,
    principal: Principal,
    Query(params): Query<ListGroupsParams>,
) -> Result<axum::Json<GroupList>, ApiError> {
    Ok(axum::Json(groups::list(&app, &principal, &params).await?))
}

/// Creates a group.
#[utoipa::path(post, path = "/groups", tag = "groups", request_body = CreateGroupRequest,
    description = "Editors, administrators or read-write keys, not limited to groups (403 \
`forbidden` otherwise). `name` 1-128 printable characters; `external_customer_id` and \
`external_billing_entity_id` at most 255. Emits `group.created`.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 201, body = Group), (status = 400, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub async fn create_group(
    State(app): State<AppState>,
    principal: Principal,
    Json(body): Json<CreateGroupRequest>,
) -> Result<(StatusCode, axum::Json<Group>), ApiError> {
    let group = groups::create(&app, &principal, body).await?;
    Ok((StatusCode::CREATED, axum::Json(group)))
}

/// One group.
#[utoipa::path(get, path = "/groups/{id}", tag = "groups",
    params(("id" = uuid::Uuid, Path, description = "Group id"), GroupExpandParams),
    description = "Requires credentials (the reference served this anonymously; we do not: a \
group's name is a customer's name). `expand[]=domains` as on the list. Another organization's \
group, or one a limited member is not in, answers 404.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = Group), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_group(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
    Query(params): Query<GroupExpandParams>,
) -> Result<axum::Json<Group>, ApiError> {
    Ok(axum::Json(
        groups::get(&app, &principal, id, &params.expand).await?,
    ))
}

/// Changes a group.
#[utoipa::path(post, path = "/groups/{id}", tag = "groups", request_body = UpdateGroupRequest,
    params(("id" = uuid::Uuid, Path, description = "Group id")),
    description = "Editors, administrators or read-write keys. `name` (1-128), \
`external_customer_id` and `external_billing_entity_id` (null clears them). \
`backfill_tickets: true` queues a re-evaluation of the group's domains, which derives their \
remediation tasks again. Emits `group.updated` with `previous_attributes` when something changed.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = Group), (status = 400, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn update_group(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
    Json(body): Json<UpdateGroupRequest>,
) -> Result<axum::Json<Group>, ApiError> {
    Ok(axum::Json(
        groups::update(&app, &principal, id, body).await?,
    ))
}

/// Deletes a group.
#[utoipa::path(delete, path = "/groups/{id}", tag = "groups",
    params(("id" = uuid::Uuid, Path, description = "Group id")),
    description = "Editors, administrators or read-write keys, not limited to groups. The group's \
domains become ungrouped (never deleted) and members limited to it lose it. A member limited to \
this group alone would be left with access to every domain, so the deletion answers 409 \
`group_has_members` until they get another group or are removed. Emits `group.deleted`.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 204, description = "Deleted"), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn delete_group(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
) -> Result<StatusCode, ApiError> {
    groups::delete(&app, &principal, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(list_groups, create_group))
        .routes(utoipa_axum::routes!(get_group, update_group, delete_group))
}
