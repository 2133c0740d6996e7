//! Remediation tasks.

use super::{Access, Context, Order, Tool, ToolError};
use mailward_api_types::tasks::{ListTasksParams, Task as TaskView, TaskList, UpdateTaskRequest};
use mailward_services::tasks;
use mailward_tasks::TaskStatus;
use serde::Deserialize;
use utoipa::ToSchema;
use uuid::Uuid;

/// `list_tasks`.
pub struct ListTasks;

/// Filters, order and page of the task list.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ListTasksInput {
    /// Comma-separated statuses: open, snoozed, pending, done, dismissed, canceled (default: open)
    pub statuses: Option<String>,
    /// The domain: its id (UUID) or its name (e.g. example.com)
    pub domain: Option<String>,
    /// Sort field, e.g. priority, created_at
    pub sort: Option<String>,
    /// Sort order
    #[schema(inline)]
    pub order: Option<Order>,
    /// Page number, from 1
    #[schema(minimum = 1, maximum = 100_000)]
    pub page: Option<u32>,
    /// Items per page
    #[schema(minimum = 1, maximum = 100)]
    pub per_page: Option<u32>,
}

impl Tool for ListTasks {
    const NAME: &'static str = "list_tasks";
    const DESCRIPTION: &'static str = "The remediation tasks of the organization (or one domain), most urgent first by default: what to fix, why, and how. Next: get_task for details, complete_task once fixed, dismiss_task when it does not apply.";
    const ACCESS: Access = Access::Directory;
    const SCOPE: Option<&'static str> = Some("tasks:read");
    const TITLE: &'static str = "List tasks";
    const UNTRUSTED: &'static [&'static str] = &[
        "data[].description",
        "data[].sending_domain",
        "data[].source_alias",
        "data[].source",
    ];
    type Input = ListTasksInput;
    type Output = TaskList;

    async fn call(ctx: &Context, a: ListTasksInput) -> Result<TaskList, ToolError> {
        let domain_id = match &a.domain {
            Some(d) => Some(ctx.domain_id(d).await?),
            None => None,
        };
        let params = ListTasksParams {
            statuses: a.statuses,
            domain_id,
            sort: a.sort,
            order: a.order.map(|o| o.as_str().to_owned()),
            expand: Vec::new(),
            page: a.page,
            per_page: a.per_page,
        };
        Ok(tasks::list(&ctx.app, ctx.caller()?, &params).await?)
    }
}

/// One task.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskInput {
    /// The task id (from list_tasks)
    pub task_id: Uuid,
}

/// `get_task`.
pub struct GetTask;

impl Tool for GetTask {
    const NAME: &'static str = "get_task";
    const DESCRIPTION: &'static str = "One task: its description, priority, the domain, the evidence, and the steps to resolve it.";
    const ACCESS: Access = Access::Directory;
    const SCOPE: Option<&'static str> = Some("tasks:read");
    const TITLE: &'static str = "Get task";
    const UNTRUSTED: &'static [&'static str] =
        &["description", "sending_domain", "source_alias", "source"];
    type Input = TaskInput;
    type Output = TaskView;

    async fn call(ctx: &Context, a: TaskInput) -> Result<TaskView, ToolError> {
        Ok(tasks::get(&ctx.app, ctx.caller()?, a.task_id, &[]).await?)
    }
}

async fn set_status(
    ctx: &Context,
    task_id: Uuid,
    status: TaskStatus,
) -> Result<TaskView, ToolError> {
    let change = UpdateTaskRequest {
        status: Some(status),
        ..UpdateTaskRequest::default()
    };
    Ok(tasks::update(&ctx.app, ctx.caller()?, task_id, change).await?)
}

/// `complete_task`.
pub struct CompleteTask;

impl Tool for CompleteTask {
    const NAME: &'static str = "complete_task";
    const DESCRIPTION: &'static str = "Marks a task done after the person fixed what it asked. Mailward checks again at its next sweep and reopens it if the problem is still there.";
    const ACCESS: Access = Access::Write;
    const SCOPE: Option<&'static str> = Some("tasks:write");
    const TITLE: &'static str = "Complete task";
    type Input = TaskInput;
    type Output = TaskView;

    async fn call(ctx: &Context, a: TaskInput) -> Result<TaskView, ToolError> {
        set_status(ctx, a.task_id, TaskStatus::Done).await
    }
}

/// `dismiss_task`.
pub struct DismissTask;

impl Tool for DismissTask {
    const NAME: &'static str = "dismiss_task";
    const DESCRIPTION: &'static str = "Dismisses a task that does not apply (the person decided so). It stays dismissed unless its cause changes.";
    const ACCESS: Access = Access::Write;
    const SCOPE: Option<&'static str> = Some("tasks:write");
    const TITLE: &'static str = "Dismiss task";
    type Input = TaskInput;
    type Output = TaskView;

    async fn call(ctx: &Context, a: TaskInput) -> Result<TaskView, ToolError> {
        set_status(ctx, a.task_id, TaskStatus::Dismissed).await
    }
}
