//! Remediation tasks (SPEC §2.3, §4.3): list, read (with instructions), and change a task's
//! status.

use axum::extract::State;
use mailward_api_types::ErrorBody;
use mailward_api_types::tasks::{
    ListTasksParams, Task, TaskExpandParams, TaskList, UpdateTaskRequest,
};
use mailward_http::extract::{Json, PathId, Query};
use mailward_http::{ApiError, AppState, Principal, Routes};
use mailward_services::tasks;

/// Lists the organization's tasks.
#[utoipa::path(get, path = "/tasks", tag = "tasks", params(ListTasksParams),
    description = "The organization's remediation tasks, derived by the monitoring sweep from each \
domain's DNS (one task per problem; a problem that returns reopens its task). `statuses` filters \
(comma-separated; default `open,pending`). Sorts: `priority` (default; most severe first, ties by \
rollout `sequence` then newest), `sequence` (the rollout order, ties by priority then newest), \
`status` (pending, open, snoozed, done, dismissed, canceled; ties by priority, sequence, newest), \
`created_at` and `resolved_at` (newest first by default; tasks never resolved come last either \
way). `order` asc|desc reverses the key (defaults: asc for priority, sequence and status, desc \
for the times). `domain_id` limits the list to one domain. `expand[]=domain` adds the domain \
(`id`, `url`, `dmarc_policy`, `score`) and `score_gain`, what fixing the task would add to the \
domain's score by the audit's own scoring (0 for types the score does not measure); \
`expand[]=source` adds the sender (null for tasks not about a sender).",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = TaskList), (status = 400, body = ErrorBody)))]
pub async fn list_tasks(
    State(app): State<AppState>,
    principal: Principal,
    Query(params): Query<ListTasksParams>,
) -> Result<axum::Json<TaskList>, ApiError> {
    Ok(axum::Json(tasks::list(&app, &principal, &params).await?))
}

/// One task.
#[utoipa::path(get, path = "/tasks/{id}", tag = "tasks",
    params(("id" = uuid::Uuid, Path, description = "Task id"), TaskExpandParams),
    description = "`expand[]` accepts `domain` (with `score_gain`), `source` and `instructions` \
(beta): `steps` for a person and the exact `dns_records` `{type, name, value}` to publish, from \
the domain's records guidance (SPF tasks read the live SPF record to keep its mechanisms). A task \
id of another organization answers 404.",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = Task), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_task(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
    Query(params): Query<TaskExpandParams>,
) -> Result<axum::Json<Task>, ApiError> {
    Ok(axum::Json(
        tasks::get(&app, &principal, id, &params.expand).await?,
    ))
}

/// Changes a task.
#[utoipa::path(post, path = "/tasks/{id}", tag = "tasks", request_body = UpdateTaskRequest,
    params(("id" = uuid::Uuid, Path, description = "Task id")),
    description = "Editors, administrators or read-write keys. Moves: to `open` from any status \
(reopen, or wake a snoozed task early); to `snoozed` from open or pending, until \
`snoozed_until` (in the future, at most 90 days; default 7 days), after which the next \
monitoring pass wakes it (`open`) unless the problem is gone (then `done`, verified); to `pending` \
(\"I changed it, check it\") from open or snoozed, resolved as verified by the next pass that \
finds the problem gone; to `done`, `dismissed` or `canceled` from open, snoozed or pending. A \
person's `done` carries `resolution_reason: manual`; if the next pass still finds the problem, \
the task reopens. The same status again changes nothing. Any other move answers 409 \
`task_transition_invalid` (param `status`). `confirm_source`, `confirm_source_in_use`, \
`ignore_spf` and `ignore_dkim` apply only to confirm_source tasks (400 naming the field \
otherwise); confirming, or ignoring both SPF and DKIM, closes such a task as done. The domain's \
`open_tasks_count` and `highest_open_task_priority` change in the same write. Task events \
(`task.completed`, `task.dismissed`, `task.reopened`...) fire only after the new status held for \
the stabilisation window (four hours).",
    security(("api_key" = []), ("session" = [])),
    responses((status = 200, body = Task), (status = 400, body = ErrorBody), (status = 403, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn update_task(
    State(app): State<AppState>,
    principal: Principal,
    PathId(id): PathId,
    Json(body): Json<UpdateTaskRequest>,
) -> Result<axum::Json<Task>, ApiError> {
    Ok(axum::Json(tasks::update(&app, &principal, id, body).await?))
}

/// Routes of this module.
pub fn routes() -> Routes {
    Routes::new()
        .routes(utoipa_axum::routes!(list_tasks))
        .routes(utoipa_axum::routes!(get_task, update_task))
}
