//! A person's status change (`POST /tasks/{id}`), and which changes are allowed.
//!
//! The allowed moves, chosen where SPEC §3 is silent:
//! - to `open`: from any status (reopening a closed task, or waking a snoozed one early);
//! - to `snoozed`: from `open` or `pending`, until a chosen time (default seven days; at most
//!   ninety); the next evaluation after that time wakes it (back to `open`);
//! - to `pending` ("I made the change, check it"): from `open` or `snoozed`; the next evaluation
//!   that finds the problem gone resolves it as verified;
//! - to `done`, `dismissed` or `canceled`: from `open`, `snoozed` or `pending`; `done` by a
//!   person carries `resolution_reason: manual`;
//! - the same status again: nothing changes.
//!   Anything else (closing an already closed task, snoozing a closed one) is refused.

use crate::model::{ResolutionReason, Task, TaskStatus};
use time::{Duration, OffsetDateTime};

/// Default snooze when no time is given.
pub const DEFAULT_SNOOZE: Duration = Duration::days(7);
/// Longest snooze.
pub const MAX_SNOOZE: Duration = Duration::days(90);

/// Why a change was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransitionError {
    /// The move is not allowed from the task's status.
    NotAllowed {
        /// The task's status.
        from: TaskStatus,
        /// The requested one.
        to: TaskStatus,
    },
    /// `snoozed_until` is not in the future or too far.
    BadSnooze(String),
}

impl std::fmt::Display for TransitionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TransitionError::NotAllowed { from, to } => write!(
                f,
                "a {} task cannot become {}; reopen it first (status open)",
                from.as_str(),
                to.as_str()
            ),
            TransitionError::BadSnooze(why) => f.write_str(why),
        }
    }
}

/// Whether a person may move a task from `from` to `to` (equal statuses are allowed and change
/// nothing).
pub fn allowed(from: TaskStatus, to: TaskStatus) -> bool {
    use TaskStatus::*;
    from == to
        || match to {
            Open => true,
            Snoozed => matches!(from, Open | Pending),
            Pending => matches!(from, Open | Snoozed),
            Done | Dismissed | Canceled => from.is_active(),
        }
}

/// The task after a person's change to `to`; `None` when nothing changes.
pub fn apply(
    task: &Task,
    to: TaskStatus,
    snoozed_until: Option<OffsetDateTime>,
    now: OffsetDateTime,
) -> Result<Option<Task>, TransitionError> {
    if !allowed(task.status, to) {
        return Err(TransitionError::NotAllowed {
            from: task.status,
            to,
        });
    }
    if snoozed_until.is_some() && to != TaskStatus::Snoozed {
        return Err(TransitionError::BadSnooze(
            "snoozed_until goes only with status snoozed".into(),
        ));
    }
    let until = match (to, snoozed_until) {
        (TaskStatus::Snoozed, Some(until)) if until <= now => {
            return Err(TransitionError::BadSnooze(
                "snoozed_until must be in the future".into(),
            ));
        }
        (TaskStatus::Snoozed, Some(until)) if until > now + MAX_SNOOZE => {
            return Err(TransitionError::BadSnooze(
                "snoozed_until must be within 90 days".into(),
            ));
        }
        (TaskStatus::Snoozed, Some(until)) => Some(until),
        (TaskStatus::Snoozed, None) => Some(now + DEFAULT_SNOOZE),
        _ => None,
    };
    if task.status == to && (to != TaskStatus::Snoozed || task.snoozed_until == until) {
        return Ok(None);
    }
    let mut next = task.clone();
    if next.status != to {
        next.status = to;
        next.status_since = now;
    }
    next.updated_at = now;
    next.snoozed_until = until;
    match to {
        TaskStatus::Done => {
            next.resolved_at = Some(now);
            next.resolution_reason = Some(ResolutionReason::Manual);
        }
        TaskStatus::Pending => next.marked_pending_at = Some(now),
        TaskStatus::Open => {
            next.resolved_at = None;
            next.resolution_reason = None;
            next.marked_pending_at = None;
        }
        TaskStatus::Snoozed | TaskStatus::Dismissed | TaskStatus::Canceled => {}
    }
    Ok(Some(next))
}
