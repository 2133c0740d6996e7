//! What the sweep and the stabilisation job write of tasks: the reconciliation's writes for one
//! domain (one task per problem, ever) and the delayed check that fires a task's event once its
//! state has held ([`TASK_EVENT_CHECK`]).

use crate::error::ServiceError;
use crate::state::AppState;
use mailward_api_types::tasks::Task as TaskView;
pub use mailward_app::jobs::{EventCheck, TASK_EVENT_CHECK};
use mailward_domain::domain::Domain;
use mailward_domain::store::WriteOp;
use mailward_store::outbox::OutboxEvent;
use mailward_store::{Versioned, tasks as stored};
use mailward_tasks::reconcile::{Change, Transition};
use mailward_tasks::{Task, stabilise};
use time::OffsetDateTime;
use uuid::Uuid;

/// Queues the stabilisation check of a task that just entered its status (best effort: the
/// sweep also announces held states it finds unannounced, so a lost message delays an event,
/// never loses it).
pub async fn schedule_check(app: &AppState, task: &Task) {
    if !stabilise::needs_check(task.status) {
        return;
    }
    let check = EventCheck {
        org_id: task.org_id,
        task_id: task.id,
        status: task.status,
        since: task.status_since,
    };
    let sent = crate::job::enqueue(app, &check, app.config.task_event_delay_secs).await;
    if let Err(error) = sent {
        tracing::warn!(task.id = %task.id, %error, "could not queue a task-event check; the sweep will announce the task");
    }
}

/// The write of a task event (the task in its REST shape).
fn event_op(event: &str, task: &Task, now: OffsetDateTime) -> Result<WriteOp, ServiceError> {
    let object = serde_json::to_value(TaskView::from(task))?;
    Ok(OutboxEvent::new(event, task.org_id, now, object, None).write_op()?)
}

/// Runs a stabilisation check: emits the task's event if it still holds the status it entered
/// at `since`, once.
pub async fn run_check(app: &AppState, check: EventCheck) -> Result<(), ServiceError> {
    let store = app.store.as_ref();
    let Some(current) = stored::get(store, check.org_id, check.task_id).await? else {
        return Ok(()); // the domain and its tasks were deleted
    };
    let Some(announcement) = stabilise::check(&current.value, check.status, check.since) else {
        return Ok(());
    };
    let ops = vec![
        stored::save_op(&announcement.task, current.version)?,
        event_op(announcement.event, &announcement.task, app.clock.now())?,
    ];
    store.transact(ops).await?;
    tracing::info!(task.id = %check.task_id, event = announcement.event, "task event emitted");
    Ok(())
}

/// The sweep's share of a domain's evaluation: the writes that reconcile its tasks (new and
/// changed tasks, and the events of states that held through the window without being
/// announced), the domain's new counters, and the tasks whose status changed (their checks are
/// queued after the commit).
pub struct SweepTaskWrites {
    /// Writes for the domain's transaction.
    pub ops: Vec<WriteOp>,
    /// `(open_tasks_count, highest_open_task_priority)` after the writes.
    pub counters: (u32, Option<u8>),
    /// Tasks that entered a new status.
    pub moved: Vec<Task>,
}

/// Reconciles a domain's tasks with the findings of its evaluation.
pub fn sweep_writes(
    config: &crate::config::Config,
    domain: &Domain,
    existing: &[Versioned<Task>],
    findings: &mailward_tasks::Findings,
    audit: Option<&mailward_audit::AuditResult>,
    now: OffsetDateTime,
) -> Result<SweepTaskWrites, ServiceError> {
    let plain: Vec<Task> = existing.iter().map(|t| t.value.clone()).collect();
    let changes: Vec<Change> = mailward_tasks::reconcile(
        mailward_tasks::Owner {
            org_id: domain.org_id,
            domain_id: domain.id,
        },
        &plain,
        findings,
        |problem| audit.map_or(0, |a| mailward_tasks::score_gain::score_gain(a, problem)),
        now,
        Uuid::new_v4,
    );
    let version_of = |id: Uuid| {
        existing
            .iter()
            .find(|t| t.value.id == id)
            .map(|t| t.version)
    };
    let mut ops = Vec::new();
    let mut moved = Vec::new();
    for change in &changes {
        match version_of(change.task.id) {
            None => ops.extend(stored::create_ops(&change.task)?),
            Some(version) => ops.push(stored::save_op(&change.task, version)?),
        }
        if change.transition.changes_status() && change.transition != Transition::Refreshed {
            moved.push(change.task.clone());
        }
        let action = match change.transition {
            Transition::Opened => Some("task.opened"),
            Transition::Reopened => Some("task.reopened"),
            Transition::Resolved => Some("task.resolved"),
            Transition::Canceled => Some("task.canceled"),
            Transition::Woke | Transition::Refreshed => None,
        };
        if let Some(action) = action {
            ops.extend(crate::activity::system_ops(
                domain.org_id,
                crate::activity::Change::new(
                    action,
                    "task",
                    Some(change.task.id),
                    format!("{} on {}", change.task.task_type.as_str(), domain.url),
                ),
                now,
            )?);
        }
    }
    // States that held through the window unannounced (a lost check message): announce now.
    let window = time::Duration::seconds(
        i64::try_from(config.task_event_delay_secs).unwrap_or(i64::MAX / 2),
    );
    for task in existing
        .iter()
        .filter(|t| !changes.iter().any(|c| c.task.id == t.value.id))
        .filter(|t| now - t.value.status_since >= window)
    {
        if let Some(announcement) =
            stabilise::check(&task.value, task.value.status, task.value.status_since)
        {
            ops.push(stored::save_op(&announcement.task, task.version)?);
            ops.push(event_op(announcement.event, &announcement.task, now)?);
        }
    }
    let after = mailward_tasks::reconcile::apply(&plain, &changes);
    Ok(SweepTaskWrites {
        ops,
        counters: mailward_tasks::counters(&after),
        moved,
    })
}
