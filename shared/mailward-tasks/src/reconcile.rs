//! Reconciling a domain's tasks with the problems of its latest evaluation: one task per
//! problem, ever. A problem seen for the first time opens a task; a problem that returns reopens
//! its task; a problem the evaluation could judge and did not find resolves its task as
//! verified; a task whose type no longer applies to the domain is canceled. A dismissed task
//! stays dismissed (a person decided), and a task the evaluation could not judge is left alone.

use crate::model::{ResolutionReason, Task, TaskStatus};
use crate::problems::{Findings, Problem};
use time::OffsetDateTime;
use uuid::Uuid;

/// What happened to a task's status in a reconciliation or a person's change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    /// A new task, open.
    Opened,
    /// A done or canceled task came back (open again).
    Reopened,
    /// The service's check found the problem gone (done, verified).
    Resolved,
    /// No longer applicable (canceled).
    Canceled,
    /// A snoozed task's time came (open again).
    Woke,
    /// Only its description, priority, sequence or score gain changed.
    Refreshed,
}

impl Transition {
    /// Whether the status changed (a stabilisation check is due).
    pub fn changes_status(self) -> bool {
        !matches!(self, Transition::Refreshed)
    }
}

/// One task written by a reconciliation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The task as it must be stored.
    pub task: Task,
    /// What happened to it.
    pub transition: Transition,
}

/// Where a new task belongs.
#[derive(Debug, Clone, Copy)]
pub struct Owner {
    /// Its organization.
    pub org_id: Uuid,
    /// Its domain.
    pub domain_id: Uuid,
}

fn refreshed(mut task: Task, problem: &Problem, score_gain: u8) -> Option<Task> {
    let before = task.clone();
    task.description = problem.description.clone();
    task.priority = problem.priority;
    task.sequence = problem.sequence;
    task.score_gain = score_gain;
    task.sending_domain = problem.sending_domain.clone();
    task.source_id = problem.source_id;
    (task != before).then_some(task)
}

fn set_status(task: &mut Task, status: TaskStatus, now: OffsetDateTime) {
    task.status = status;
    task.status_since = now;
    task.updated_at = now;
}

/// The changes that bring `existing` (every task of one domain) in line with `findings`.
/// `score_gain` says what fixing a problem would add to the score; `new_id` makes task ids.
pub fn reconcile(
    owner: Owner,
    existing: &[Task],
    findings: &Findings,
    score_gain: impl Fn(&Problem) -> u8,
    now: OffsetDateTime,
    mut new_id: impl FnMut() -> Uuid,
) -> Vec<Change> {
    let mut changes = Vec::new();
    for problem in &findings.problems {
        let gain = score_gain(problem);
        let task = existing
            .iter()
            .find(|t| t.task_type == problem.task_type && t.problem_key == problem.key);
        match task {
            None => {
                changes.push(Change {
                    task: Task {
                        id: new_id(),
                        org_id: owner.org_id,
                        domain_id: owner.domain_id,
                        task_type: problem.task_type,
                        problem_key: problem.key.clone(),
                        status: TaskStatus::Open,
                        priority: problem.priority,
                        sequence: problem.sequence,
                        description: problem.description.clone(),
                        score_gain: gain,
                        sending_domain: problem.sending_domain.clone(),
                        source_id: problem.source_id,
                        source_alias: None,
                        snoozed_until: None,
                        marked_pending_at: None,
                        resolved_at: None,
                        resolution_reason: None,
                        status_since: now,
                        announced_open: false,
                        ever_announced: false,
                        created_at: now,
                        updated_at: now,
                    },
                    transition: Transition::Opened,
                });
            }
            Some(task) => match task.status {
                TaskStatus::Done | TaskStatus::Canceled => {
                    let mut task = refreshed(task.clone(), problem, gain).unwrap_or(task.clone());
                    set_status(&mut task, TaskStatus::Open, now);
                    task.resolved_at = None;
                    task.resolution_reason = None;
                    task.marked_pending_at = None;
                    changes.push(Change {
                        task,
                        transition: Transition::Reopened,
                    });
                }
                TaskStatus::Snoozed if task.snoozed_until.is_none_or(|until| until <= now) => {
                    let mut task = refreshed(task.clone(), problem, gain).unwrap_or(task.clone());
                    set_status(&mut task, TaskStatus::Open, now);
                    task.snoozed_until = None;
                    changes.push(Change {
                        task,
                        transition: Transition::Woke,
                    });
                }
                TaskStatus::Open | TaskStatus::Snoozed | TaskStatus::Pending => {
                    if let Some(mut task) = refreshed(task.clone(), problem, gain) {
                        task.updated_at = now;
                        changes.push(Change {
                            task,
                            transition: Transition::Refreshed,
                        });
                    }
                }
                // A person dismissed it: the service does not overrule that.
                TaskStatus::Dismissed => {}
            },
        }
    }
    for task in existing.iter().filter(|t| t.status.is_active()) {
        let present = findings
            .problems
            .iter()
            .any(|p| p.task_type == task.task_type && p.key == task.problem_key);
        if present {
            continue;
        }
        let mut task = task.clone();
        if findings.not_applicable.contains(&task.task_type) {
            set_status(&mut task, TaskStatus::Canceled, now);
            task.snoozed_until = None;
            changes.push(Change {
                task,
                transition: Transition::Canceled,
            });
        } else if findings.judged.contains(&task.task_type) {
            set_status(&mut task, TaskStatus::Done, now);
            task.resolved_at = Some(now);
            task.resolution_reason = Some(ResolutionReason::Verified);
            task.snoozed_until = None;
            changes.push(Change {
                task,
                transition: Transition::Resolved,
            });
        } else if task.status == TaskStatus::Snoozed
            && task.snoozed_until.is_some_and(|until| until <= now)
        {
            set_status(&mut task, TaskStatus::Open, now);
            task.snoozed_until = None;
            changes.push(Change {
                task,
                transition: Transition::Woke,
            });
        }
    }
    changes
}

/// The domain's `open_tasks_count` and `highest_open_task_priority` over its tasks: open work
/// (open or pending) of a work type (opportunities excluded).
pub fn counters(tasks: &[Task]) -> (u32, Option<u8>) {
    let open: Vec<&Task> = tasks
        .iter()
        .filter(|t| t.status.is_open_work() && t.task_type.is_work())
        .collect();
    (
        u32::try_from(open.len()).unwrap_or(u32::MAX),
        open.iter().map(|t| t.priority).min(),
    )
}

/// `existing` with `changes` applied (the tasks as they will be stored).
pub fn apply(existing: &[Task], changes: &[Change]) -> Vec<Task> {
    let mut tasks: Vec<Task> = existing
        .iter()
        .filter(|t| !changes.iter().any(|c| c.task.id == t.id))
        .cloned()
        .collect();
    tasks.extend(changes.iter().map(|c| c.task.clone()));
    tasks
}
