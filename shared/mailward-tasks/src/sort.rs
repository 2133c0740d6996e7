//! The orders of `GET /tasks` (SPEC §4.3).

use crate::model::{Task, TaskStatus};
use std::cmp::Ordering;

/// The sort keys.
pub const SORT_KEYS: [&str; 5] = [
    "created_at",
    "priority",
    "resolved_at",
    "sequence",
    "status",
];

/// `status` rank: pending, open, snoozed, done, dismissed, canceled.
fn status_rank(status: TaskStatus) -> u8 {
    match status {
        TaskStatus::Pending => 0,
        TaskStatus::Open => 1,
        TaskStatus::Snoozed => 2,
        TaskStatus::Done => 3,
        TaskStatus::Dismissed => 4,
        TaskStatus::Canceled => 5,
    }
}

/// The natural direction of a key (what `order` defaults to): most severe, earliest in the
/// rollout and first in the status ranking come first (ascending); times newest first
/// (descending).
pub fn default_descending(key: &str) -> bool {
    matches!(key, "created_at" | "resolved_at")
}

/// Sorts tasks by `key` (one of [`SORT_KEYS`]); `descending` reverses the key's comparison.
/// Ties: `priority` by rollout position then recency; `sequence` by priority then recency;
/// `status` by priority, sequence, recency; times by priority. `resolved_at` puts tasks never
/// resolved last in both directions. Ids break the last ties, so pages are stable.
pub fn sort(tasks: &mut [Task], key: &str, descending: bool) {
    let directed = |o: Ordering| if descending { o.reverse() } else { o };
    let recency = |a: &Task, b: &Task| b.created_at.cmp(&a.created_at);
    tasks.sort_by(|a, b| {
        let primary = match key {
            "created_at" => {
                directed(a.created_at.cmp(&b.created_at)).then(a.priority.cmp(&b.priority))
            }
            "resolved_at" => match (a.resolved_at, b.resolved_at) {
                (Some(x), Some(y)) => directed(x.cmp(&y)),
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (None, None) => Ordering::Equal,
            }
            .then(a.priority.cmp(&b.priority)),
            "sequence" => directed(a.sequence.cmp(&b.sequence))
                .then(a.priority.cmp(&b.priority))
                .then_with(|| recency(a, b)),
            "status" => directed(status_rank(a.status).cmp(&status_rank(b.status)))
                .then(a.priority.cmp(&b.priority))
                .then(a.sequence.cmp(&b.sequence))
                .then_with(|| recency(a, b)),
            _ => directed(a.priority.cmp(&b.priority))
                .then(a.sequence.cmp(&b.sequence))
                .then_with(|| recency(a, b)),
        };
        primary.then(a.id.cmp(&b.id))
    });
}
