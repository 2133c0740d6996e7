//! Notification markers: a notification of one occurrence (an event id, a domain's first report,
//! a digest's day) goes to each recipient at most once, however often its job runs.

use super::keys;
use mailward_domain::store::{Condition, Item, ItemStore, StoreError};
use uuid::Uuid;

/// How long a marker is kept: longer than any queue retry or redelivery.
pub const MARKER_TTL_SECS: i64 = 90 * 86_400;

/// Claims the right to send `occurrence` to `recipient`: `true` when this caller claimed it,
/// `false` when it was claimed before (sent already, or being sent).
pub async fn claim(
    store: &dyn ItemStore,
    org: Uuid,
    occurrence: &str,
    recipient: &str,
    now: i64,
) -> Result<bool, StoreError> {
    let mut item = Item::new(
        keys::org_pk(org),
        keys::notified_sk(occurrence, recipient),
        Vec::new(),
    );
    item.expires_at = Some(now + MARKER_TTL_SECS);
    match store.put(item, Condition::NotExists).await {
        Ok(()) => Ok(true),
        Err(e) if e.is_conflict() => Ok(false),
        Err(e) => Err(e),
    }
}

/// Gives a claim back after the mail could not be sent, so the job's retry sends it.
pub async fn release(
    store: &dyn ItemStore,
    org: Uuid,
    occurrence: &str,
    recipient: &str,
) -> Result<(), StoreError> {
    store
        .delete(
            &keys::org_pk(org),
            &keys::notified_sk(occurrence, recipient),
            Condition::None,
        )
        .await
        .map(|_| ())
}
