//! Task-event stabilisation (SPEC §6.5): a task event fires only after the task held its state
//! for the window (four hours by default). Every status change schedules a check for the end
//! of the window carrying the status and the time it began; the check emits only if the task
//! still has that status since that time.
//!
//! Subscribers hear of a task when it opens (`task.opened`, or `task.reopened` when they heard
//! of it before) and when it closes (`task.completed`, `task.canceled`, `task.dismissed`), and
//! only of closings of tasks they heard open: a task that opens and resolves inside the window
//! emits nothing at all. A check delivered twice emits once: the first flips the task's
//! `announced_open` flag, so the second finds nothing to announce.

use crate::model::{Task, TaskStatus};
use time::OffsetDateTime;

/// Default window.
pub const DEFAULT_WINDOW_SECS: u64 = 4 * 3600;

/// The event to emit at a check, and the task to store with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Announcement {
    /// The event type name.
    pub event: &'static str,
    /// The task with its announcement flags updated.
    pub task: Task,
}

/// What a check for `status` held since `since` emits, if anything.
pub fn check(task: &Task, status: TaskStatus, since: OffsetDateTime) -> Option<Announcement> {
    use mailward_domain::events::types::{
        TASK_CANCELED, TASK_COMPLETED, TASK_DISMISSED, TASK_OPENED, TASK_REOPENED,
    };
    if task.status != status || task.status_since != since {
        return None;
    }
    let mut next = task.clone();
    let event = match status {
        TaskStatus::Open if !task.announced_open => {
            next.announced_open = true;
            next.ever_announced = true;
            if task.ever_announced {
                TASK_REOPENED
            } else {
                TASK_OPENED
            }
        }
        TaskStatus::Done | TaskStatus::Canceled | TaskStatus::Dismissed if task.announced_open => {
            next.announced_open = false;
            match status {
                TaskStatus::Done => TASK_COMPLETED,
                TaskStatus::Canceled => TASK_CANCELED,
                _ => TASK_DISMISSED,
            }
        }
        _ => return None,
    };
    Some(Announcement { event, task: next })
}

/// Whether a move into `status` needs a check at the end of the window.
pub fn needs_check(status: TaskStatus) -> bool {
    matches!(
        status,
        TaskStatus::Open | TaskStatus::Done | TaskStatus::Canceled | TaskStatus::Dismissed
    )
}
