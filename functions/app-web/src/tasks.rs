//! Tasks across domains, in rollout sequence and priority, with a person's moves: done,
//! dismiss, snooze for a week. The same operations as `GET /tasks` and `POST /tasks/{id}`.

use crate::layout::{self, Nav, csrf};
use crate::posted::Posted;
use crate::session::{Person, redirect_with};
use axum::extract::{Path, Query, State};
use axum::response::Response;
use mailward_api_types::tasks::{ListTasksParams, TaskList, UpdateTaskRequest};
use mailward_http::AppState;
use mailward_services::{Caller, ServiceError};
use maud::{Markup, html};
use serde::Deserialize;
use uuid::Uuid;

const LIVE: &str = "open,pending,snoozed";

/// A domain's live tasks in rollout order.
pub async fn of_domain(
    app: &AppState,
    caller: &Caller,
    domain: Uuid,
) -> Result<TaskList, ServiceError> {
    let params = ListTasksParams {
        statuses: Some(LIVE.into()),
        domain_id: Some(domain),
        sort: Some("sequence".into()),
        order: Some("asc".into()),
        per_page: Some(100),
        ..ListTasksParams::default()
    };
    mailward_services::tasks::list(app, caller, &params).await
}

#[derive(Debug, Default, Deserialize)]
pub struct TasksQuery {
    page: Option<u32>,
    n: Option<String>,
    ns: Option<String>,
}

/// `GET /app/tasks`.
pub async fn list(
    State(app): State<AppState>,
    person: Person,
    Query(q): Query<TasksQuery>,
) -> Response {
    let page = q.page.unwrap_or(1).clamp(1, 1_000_000);
    let params = ListTasksParams {
        statuses: Some(LIVE.into()),
        sort: Some("sequence".into()),
        order: Some("asc".into()),
        expand: vec!["domain".into()],
        page: Some(page),
        per_page: Some(50),
        ..ListTasksParams::default()
    };
    let tasks = match mailward_services::tasks::list(&app, &person.caller, &params).await {
        Ok(t) => t,
        Err(e) => return layout::service_failure(&person, e),
    };
    let body = html! {
        h1 { "Tasks" }
        (layout::flash(&app, &q.n, &q.ns))
        div.card {
            p.muted { "Open, pending and snoozed tasks of every domain you can see, in rollout order, then by priority." }
            (table(&person, &tasks, true, "/app/tasks"))
            nav.pager aria-label="Pages" {
                @if page > 1 { a href={ "/app/tasks?page=" (page - 1) } { "Previous page" } }
                @if tasks.page_info.has_more { a href={ "/app/tasks?page=" (page + 1) } { "Next page" } }
            }
        }
    };
    layout::page(&person, Nav::Tasks, "Tasks", body)
}

/// The tasks table, with the moves for people who may make them.
pub fn table(person: &Person, tasks: &TaskList, with_domain: bool, back: &str) -> Markup {
    html! {
        @if tasks.data.is_empty() {
            p { "Nothing to do here right now." }
        } @else {
            table.responsive {
                thead { tr {
                    @if with_domain { th scope="col" { "Domain" } }
                    th scope="col" { "Task" } th.num scope="col" { "Priority" } th scope="col" { "Status" }
                    @if person.can_write() { th scope="col" { "Move" } }
                } }
                tbody {
                    @for t in &tasks.data {
                        tr {
                            @if with_domain {
                                td data-label="Domain" { a href={ "/app/domains/" (t.domain_id) } { (t.domain.as_ref().map_or_else(|| t.domain_id.to_string(), |d| d.url.clone())) } }
                            }
                            td data-label="Task" { (t.description) }
                            td.num data-label="Priority" { (t.priority) }
                            td data-label="Status" { (t.status.as_str()) }
                            @if person.can_write() {
                                td data-label="Move" { div.moves {
                                    @for (field, value, text) in [("status", "done", "Done"), ("status", "dismissed", "Dismiss"), ("snooze", "7", "Snooze 7 days")] {
                                        form.inline method="post" action={ "/app/tasks/" (t.id) } {
                                            (csrf(&person.csrf))
                                            input type="hidden" name="back" value=(back);
                                            input type="hidden" name=(field) value=(value);
                                            button.small.secondary type="submit" aria-label={ (text) ": " (t.description) } { (text) }
                                        }
                                    }
                                } }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// `POST /app/tasks/{id}`: a move.
pub async fn update(
    State(app): State<AppState>,
    Path(id): Path<String>,
    Posted { person, fields }: Posted,
) -> Response {
    let back = fields
        .get("back")
        .filter(|b| b.starts_with("/app/") && !b.starts_with("//"))
        .unwrap_or("/app/tasks")
        .to_owned();
    let Ok(id) = id.parse::<Uuid>() else {
        return layout::service_failure(&person, ServiceError::not_found("task"));
    };
    let mut input = UpdateTaskRequest::default();
    match (fields.get("status"), fields.get("snooze")) {
        (Some(status), _) => {
            match serde_json::from_value(serde_json::Value::String(status.to_owned())) {
                Ok(s) => input.status = Some(s),
                Err(_) => return back_with(&app, &back, "error", "Unknown move (field: status)."),
            }
        }
        (None, Some(days)) => {
            let days: i64 = days.parse().unwrap_or(7).clamp(1, 90);
            input.status = serde_json::from_value(serde_json::Value::String("snoozed".into())).ok();
            input.snoozed_until = Some(app.clock.now() + time::Duration::days(days));
        }
        (None, None) => return back_with(&app, &back, "error", "Choose a move (field: status)."),
    }
    match mailward_services::tasks::update(&app, &person.caller, id, input).await {
        Ok(t) => back_with(
            &app,
            &back,
            "saved",
            &format!("Task is now {}.", t.status.as_str()),
        ),
        Err(e) => back_with(&app, &back, "error", &layout::refusal_text(&e)),
    }
}

fn back_with(app: &AppState, back: &str, key: &str, text: &str) -> Response {
    redirect_with(app, back, if key == "saved" { "ok" } else { "bad" }, text)
}
