//! Remediation tasks (SPEC §2.3, §4.3): listing, reading and a person's changes, and the tasks of
//! the domain list's `expand[]=tasks`; the sweep's writes and the task-event stabilisation job
//! are [`writes`]. The rules live in `mailward-tasks`.

use crate::caller::Caller;
use crate::error::{ErrorKind, ServiceError};
use crate::pagination::paginate;
use crate::state::AppState;
use mailward_api_types::PageParams;
use mailward_api_types::tasks::{
    ListTasksParams, Task as TaskView, TaskDomain, TaskList, UpdateTaskRequest,
};
use mailward_domain::domain::Domain;
use mailward_store::optimistic::{OnConflict, retry_on_conflict};
use mailward_store::{Versioned, domains, tasks as stored};
use mailward_tasks::{Task, TaskStatus, TaskType, transitions};
use std::collections::HashMap;
use uuid::Uuid;

pub mod writes;

pub use writes::{
    EventCheck, SweepTaskWrites, TASK_EVENT_CHECK, run_check, schedule_check, sweep_writes,
};

/// Writes a person's task change may take when the sweep keeps writing the domain.
const MAX_SAVE_ATTEMPTS: u32 = 4;

/// Parsed `expand[]` of the task routes.
#[derive(Debug, Default, Clone, Copy)]
pub struct TaskExpand {
    /// The task's domain and the score gain.
    pub domain: bool,
    /// The sender (sender tasks).
    pub source: bool,
    /// Steps and records (single read only).
    pub instructions: bool,
}

/// Reads `expand[]`; `instructions` only where `allow_instructions`.
pub fn parse_expand(
    values: &[String],
    allow_instructions: bool,
) -> Result<TaskExpand, ServiceError> {
    let mut expand = TaskExpand::default();
    for value in values {
        match value.as_str() {
            "domain" => expand.domain = true,
            "source" => expand.source = true,
            "instructions" if allow_instructions => expand.instructions = true,
            _ => {
                return Err(ServiceError::invalid(
                    "expand[]",
                    if allow_instructions {
                        "expand[] accepts domain, instructions and source"
                    } else {
                        "expand[] accepts domain and source"
                    },
                ));
            }
        }
    }
    Ok(expand)
}

fn view(task: &Task, expand: TaskExpand, domain: Option<&Domain>) -> TaskView {
    let mut v = TaskView::from(task);
    if expand.domain {
        v.domain = domain.map(|d| TaskDomain {
            id: d.id,
            url: d.url.clone(),
            dmarc_policy: d.dmarc_policy.as_str().to_owned(),
            score: d.score,
        });
        v.score_gain = Some(task.score_gain);
    }
    if expand.source {
        v.source = Some(task.source_id.and_then(|id| {
            mailward_domain::sources::catalogue()
                .by_id(id)
                .map(mailward_api_types::tasks::TaskSource::of)
        }));
    }
    v
}

fn parse_statuses(raw: Option<&str>) -> Result<Vec<TaskStatus>, ServiceError> {
    let Some(raw) = raw.filter(|r| !r.trim().is_empty()) else {
        return Ok(vec![TaskStatus::Open, TaskStatus::Pending]);
    };
    raw.split(',')
        .map(|s| {
            TaskStatus::parse(s.trim()).ok_or_else(|| {
                ServiceError::invalid(
                    "statuses",
                    format!(
                        "unknown status {:?}; statuses takes open, snoozed, canceled, dismissed, pending, done (comma-separated)",
                        s.trim()
                    ),
                )
            })
        })
        .collect()
}

/// One page of the organization's tasks.
pub async fn list(
    app: &AppState,
    caller: &Caller,
    params: &ListTasksParams,
) -> Result<TaskList, ServiceError> {
    let statuses = parse_statuses(params.statuses.as_deref())?;
    let expand = parse_expand(&params.expand, false)?;
    let sort = params.sort.as_deref().unwrap_or("priority");
    if !mailward_tasks::sort::SORT_KEYS.contains(&sort) {
        return Err(ServiceError::invalid(
            "sort",
            format!(
                "sort must be one of {}",
                mailward_tasks::sort::SORT_KEYS.join(", ")
            ),
        ));
    }
    let descending = match params.order.as_deref() {
        None => mailward_tasks::sort::default_descending(sort),
        Some("desc") => true,
        Some("asc") => false,
        Some(_) => return Err(ServiceError::invalid("order", "order must be asc or desc")),
    };
    let mut list: Vec<Task> = stored::list(app.store.as_ref(), caller.org_id)
        .await?
        .into_iter()
        .filter(|t| statuses.contains(&t.status))
        .filter(|t| params.domain_id.is_none_or(|d| t.domain_id == d))
        .collect();
    if caller.is_group_limited() {
        let visible: std::collections::HashSet<Uuid> = crate::access::visible(app, caller)
            .await?
            .into_iter()
            .map(|d| d.id)
            .collect();
        list.retain(|t| visible.contains(&t.domain_id));
    }
    mailward_tasks::sort::sort(&mut list, sort, descending);
    let (page, page_info) = paginate(
        PageParams {
            page: params.page,
            per_page: params.per_page,
        },
        list,
    )?;
    let domains: HashMap<Uuid, Domain> = if expand.domain {
        domains::list(app.store.as_ref(), caller.org_id)
            .await?
            .into_iter()
            .map(|d| (d.id, d))
            .collect()
    } else {
        HashMap::new()
    };
    Ok(TaskList {
        data: page
            .iter()
            .map(|t| view(t, expand, domains.get(&t.domain_id)))
            .collect(),
        page_info,
    })
}

/// The organization's task `id`, or not found; a member limited to groups finds only the tasks
/// of their groups' domains.
async fn load(app: &AppState, caller: &Caller, id: Uuid) -> Result<Versioned<Task>, ServiceError> {
    let task = stored::get(app.store.as_ref(), caller.org_id, id)
        .await?
        .ok_or_else(|| ServiceError::not_found("task"))?;
    if caller.is_group_limited() {
        let domain = domains::get(app.store.as_ref(), caller.org_id, task.value.domain_id).await?;
        if !domain.is_some_and(|d| caller.sees_group(d.value.group_id)) {
            return Err(ServiceError::not_found("task"));
        }
    }
    Ok(task)
}

/// One task, with `expand[]` domain, instructions and source.
pub async fn get(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
    expand: &[String],
) -> Result<TaskView, ServiceError> {
    let expand = parse_expand(expand, true)?;
    let task = load(app, caller, id).await?.value;
    let domain = if expand.domain || expand.instructions {
        domains::get(app.store.as_ref(), caller.org_id, task.domain_id)
            .await?
            .map(|d| d.value)
    } else {
        None
    };
    let mut v = view(&task, expand, domain.as_ref());
    if expand.instructions
        && let Some(domain) = &domain
    {
        let planned = planned_for_instructions(app, domain, task.task_type).await;
        v.instructions = Some(mailward_tasks::instructions::instructions(&task, &planned));
    }
    Ok(v)
}

/// The planned records for a task's instructions: the plan from the stored options, with the
/// live SPF record (one cached lookup, for SPF tasks only, bounded to three seconds).
async fn planned_for_instructions(
    app: &AppState,
    domain: &Domain,
    task_type: TaskType,
) -> Vec<mailward_tasks::PlannedRecord> {
    let wants_spf = mailward_tasks::instructions::purposes(task_type)
        .contains(&mailward_domain::purpose::Purpose::Spf);
    let live_spf = if wants_spf {
        let resolver =
            mailward_dns::Deadline::new(app.resolver.as_ref(), std::time::Duration::from_secs(3));
        mailward_plan::fetch_live_spf(&resolver, &domain.url)
            .await
            .ok()
            .flatten()
    } else {
        None
    };
    let ctx = crate::evaluation::plan_context(app, domain, live_spf, Vec::new());
    crate::evaluation::planned_records(&ctx)
}

fn confirm_source_fields(input: &UpdateTaskRequest) -> Option<&'static str> {
    [
        (input.ignore_spf.is_some(), "ignore_spf"),
        (input.ignore_dkim.is_some(), "ignore_dkim"),
        (input.confirm_source.is_some(), "confirm_source"),
        (
            input.confirm_source_in_use.is_some(),
            "confirm_source_in_use",
        ),
    ]
    .into_iter()
    .find(|(present, _)| *present)
    .map(|(_, name)| name)
}

/// The status a confirm_source body asks for (SPEC §3): confirming, or ignoring both SPF and
/// DKIM, closes the task as done.
fn confirm_source_status(input: &UpdateTaskRequest) -> Option<TaskStatus> {
    let ignores_both = input.ignore_spf == Some(true) && input.ignore_dkim == Some(true);
    (input.confirm_source == Some(true) || ignores_both).then_some(TaskStatus::Done)
}

/// A person's change to a task. The domain's counters change in the same commit.
pub async fn update(
    app: &AppState,
    caller: &Caller,
    id: Uuid,
    input: UpdateTaskRequest,
) -> Result<TaskView, ServiceError> {
    caller.require_write()?;
    let current = load(app, caller, id).await?;
    if let Some(field) = confirm_source_fields(&input)
        && current.value.task_type != TaskType::ConfirmSource
    {
        return Err(ServiceError::invalid(
            field,
            format!(
                "{field} applies only to confirm_source tasks; this task is {}",
                current.value.task_type.as_str()
            ),
        ));
    }
    let requested = match (input.status, confirm_source_status(&input)) {
        (Some(status), _) => Some(status),
        (None, confirm) => confirm,
    };
    if matches!(
        requested,
        Some(TaskStatus::Dismissed | TaskStatus::Canceled)
    ) && confirm_source_status(&input).is_some()
    {
        return Err(ServiceError::invalid(
            "status",
            "confirming a sender closes the task as done; do not send dismissed or canceled with it",
        ));
    }
    let Some(requested) = requested else {
        if input.snoozed_until.is_some() {
            return Err(ServiceError::invalid(
                "snoozed_until",
                "snoozed_until goes only with status snoozed",
            ));
        }
        return Ok(TaskView::from(&current.value));
    };
    let now = app.clock.now();
    let next = transitions::apply(&current.value, requested, input.snoozed_until, now).map_err(
        |e| match e {
            transitions::TransitionError::NotAllowed { .. } => ServiceError::new(
                ErrorKind::Conflict,
                "task_transition_invalid",
                e.to_string(),
            )
            .param("status"),
            transitions::TransitionError::BadSnooze(_) => {
                ServiceError::invalid("snoozed_until", e.to_string())
            }
        },
    )?;
    let Some(next) = next else {
        return Ok(TaskView::from(&current.value));
    };
    let status_changed = next.status != current.value.status;
    save_with_counters(app, caller, &current, &next).await?;
    if status_changed {
        schedule_check(app, &next).await;
    }
    if next.task_type == TaskType::ConfirmSource {
        apply_sender_choice(app, caller, &next, &input).await?;
    }
    Ok(TaskView::from(&next))
}

/// Carries a confirm_source choice to the sender it is about (SPEC §3): confirming confirms
/// it, ignoring both SPF and DKIM discards it, ignoring one stops counting it against that one.
/// The sender tasks follow, so the sender's other confirm_source tickets close.
async fn apply_sender_choice(
    app: &AppState,
    caller: &Caller,
    task: &Task,
    input: &UpdateTaskRequest,
) -> Result<(), ServiceError> {
    use mailward_domain::senders::ConfirmationStatus;
    if confirm_source_fields(input).is_none() {
        return Ok(());
    }
    let Some(sender) = crate::reports::senders::sender_of_task(task) else {
        return Ok(());
    };
    let Some(domain) = domains::get(app.store.as_ref(), caller.org_id, task.domain_id).await?
    else {
        return Ok(());
    };
    let (ignore_spf, ignore_dkim, confirm) =
        (input.ignore_spf, input.ignore_dkim, input.confirm_source);
    let outcome =
        crate::reports::senders::set_status(app, caller, &domain.value, sender, |s, now| {
            let mut next = s.clone();
            if let Some(v) = ignore_spf {
                next.ignore_spf = v;
            }
            if let Some(v) = ignore_dkim {
                next.ignore_dkim = v;
            }
            let status = if next.ignore_spf && next.ignore_dkim {
                Some(ConfirmationStatus::Discarded)
            } else if confirm == Some(true) {
                Some(ConfirmationStatus::Confirmed)
            } else {
                None
            };
            if let Some(status) = status
                && status != next.confirmation_status
            {
                next.confirmation_status = status;
                next.confirmed_at = (status == ConfirmationStatus::Confirmed).then_some(now);
            }
            if next != *s {
                next.updated_at = now;
            }
            next
        })
        .await;
    match outcome {
        Ok(_) => Ok(()),
        // The sender's rows aged out and it was never stored: the task's own change stands.
        Err(e) if e.kind() == crate::error::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Saves one task changed by a person, with the domain's counters, in one transaction.
async fn save_with_counters(
    app: &AppState,
    caller: &Caller,
    read: &Versioned<Task>,
    next: &Task,
) -> Result<(), ServiceError> {
    let org = caller.org_id;
    let domain_id = next.domain_id;
    let store = app.store.as_ref();
    let domain = domains::get(store, org, domain_id)
        .await?
        .ok_or_else(|| ServiceError::not_found("task"))?;
    retry_on_conflict(
        MAX_SAVE_ATTEMPTS,
        domain,
        |domain: Versioned<Domain>| async move {
            let tasks: Vec<Task> = stored::list_for_domain(store, org, domain_id)
                .await?
                .into_iter()
                .map(|t| {
                    if t.value.id == next.id {
                        next.clone()
                    } else {
                        t.value
                    }
                })
                .collect();
            let (count, highest) = mailward_tasks::counters(&tasks);
            let mut ops = vec![stored::save_op(next, read.version)?];
            ops.extend(crate::activity::ops(
                app,
                caller,
                crate::activity::Change::new(
                    "task.updated",
                    "task",
                    Some(next.id),
                    format!(
                        "{} → {}: {}",
                        read.value.status.as_str(),
                        next.status.as_str(),
                        next.task_type.as_str()
                    ),
                )
                .previous(Some(
                    serde_json::json!({ "status": read.value.status.as_str() }),
                )),
            )?);
            if (count, highest)
                != (
                    domain.value.open_tasks_count,
                    domain.value.highest_open_task_priority,
                )
            {
                let mut d = domain.value.clone();
                d.open_tasks_count = count;
                d.highest_open_task_priority = highest;
                ops.extend(domains::save_ops(&d, &domain.value, domain.version)?);
            }
            store.transact(ops).await?;
            Ok::<_, ServiceError>(())
        },
        || async move {
            // The task itself changed (another person, or the sweep): a real conflict.
            let task_now = stored::get(store, org, next.id).await?;
            if task_now.is_none_or(|t| t.version != read.version) {
                return Ok(OnConflict::GiveUp);
            }
            let fresh = domains::get(store, org, domain_id)
                .await?
                .ok_or_else(|| ServiceError::not_found("task"))?;
            Ok(OnConflict::Retry(fresh))
        },
    )
    .await
}

/// The open work (open and pending tasks) of each of the organization's domains, for
/// `expand[]=tasks` on domains.
pub async fn open_work_by_domain(
    app: &AppState,
    org: Uuid,
) -> Result<HashMap<Uuid, Vec<TaskView>>, ServiceError> {
    let mut all: Vec<Task> = stored::list(app.store.as_ref(), org)
        .await?
        .into_iter()
        .filter(|t| t.status.is_open_work())
        .collect();
    mailward_tasks::sort::sort(&mut all, "priority", false);
    let mut by_domain: HashMap<Uuid, Vec<TaskView>> = HashMap::new();
    for task in &all {
        by_domain
            .entry(task.domain_id)
            .or_default()
            .push(TaskView::from(task));
    }
    Ok(by_domain)
}
