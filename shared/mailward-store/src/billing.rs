//! An organization's billing record, and the claims that make webhook processing idempotent.

use super::{Versioned, decode_versioned, keys, put_versioned};
use mailward_domain::billing::BillingAccount;
use mailward_domain::store::{Condition, Item, ItemStore, StoreError};
use uuid::Uuid;

/// The organization's billing record, if it ever started a checkout.
pub async fn get(
    store: &dyn ItemStore,
    org: Uuid,
) -> Result<Option<Versioned<BillingAccount>>, StoreError> {
    store
        .get(&keys::org_pk(org), keys::BILLING_SK, true)
        .await?
        .map(|item| decode_versioned(&item))
        .transpose()
}

/// Writes the record read at `version` (`None`: creates it).
pub async fn put(
    store: &dyn ItemStore,
    org: Uuid,
    account: &BillingAccount,
    version: Option<u64>,
) -> Result<(), StoreError> {
    put_versioned(
        store,
        keys::org_pk(org),
        keys::BILLING_SK.to_owned(),
        account,
        version,
    )
    .await
}

/// How long a processed event is remembered: longer than Stripe's three days of retries.
pub const EVENT_TTL_SECS: i64 = 30 * 86_400;

/// Whether event `id` was processed already.
pub async fn event_seen(store: &dyn ItemStore, id: &str) -> Result<bool, StoreError> {
    Ok(store
        .get(&keys::billing_event_pk(id), "EVENT", true)
        .await?
        .is_some())
}

/// Records event `id` as processed (after its effects are written, so a crash in between
/// processes it again, which is harmless: processing reads the latest state).
pub async fn mark_event(store: &dyn ItemStore, id: &str, now: i64) -> Result<(), StoreError> {
    let mut item = Item::new(keys::billing_event_pk(id), "EVENT", Vec::new());
    item.expires_at = Some(now + EVENT_TTL_SECS);
    store.put(item, Condition::None).await
}
