//! Notification markers: a notification of one occurrence (an event id, a domain's first report,
//! a digest's day) goes to each recipient at most once, however often its job runs.

use super::keys;
use mailward_domain::store::{Condition, Item, ItemStore, StoreError};
use uuid::Uuid;

/// Claims an organization's task digest of `day` (`YYYY-MM-DD`): `true` for the first caller.
pub async fn claim_digest_day(
    store: &dyn ItemStore,
    org: Uuid,
    day: &str,
    now: i64,
) -> Result<bool, StoreError> {
    // Read first: most calls (every sweep batch of the day) find the claim taken, and a read
    // costs less than a refused conditional write.
    if store
        .get(&keys::org_pk(org), &keys::digest_day_sk(day), false)
        .await?
        .is_some()
    {
        return Ok(false);
    }
    let mut item = Item::new(keys::org_pk(org), keys::digest_day_sk(day), Vec::new());
    item.expires_at = Some(now + 3 * 86_400);
    match store.put(item, Condition::NotExists).await {
        Ok(()) => Ok(true),
        Err(e) if e.is_conflict() => Ok(false),
        Err(e) => Err(e),
    }
}

/// The fingerprint of what the last digest listed, if one was sent.
pub async fn last_digest(store: &dyn ItemStore, org: Uuid) -> Result<Option<String>, StoreError> {
    Ok(store
        .get(&keys::org_pk(org), keys::DIGEST_LAST, true)
        .await?
        .map(|item| String::from_utf8_lossy(&item.data).into_owned()))
}

/// Remembers what a digest listed.
pub async fn save_digest(
    store: &dyn ItemStore,
    org: Uuid,
    fingerprint: &str,
) -> Result<(), StoreError> {
    let item = Item::new(
        keys::org_pk(org),
        keys::DIGEST_LAST,
        fingerprint.as_bytes().to_vec(),
    );
    store.put(item, Condition::None).await
}

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
