//! What the audit tools keep: the ten-minute audit cache and the 24-hour activation scan (both
//! per domain name, outside any organization: the audit is public), and captured leads (one
//! partition per day).

use super::{decode, encode, keys};
use mailward_domain::store::{Condition, Item, ItemStore, StoreError};
use serde::Serialize;
use serde::de::DeserializeOwned;
use time::OffsetDateTime;
use uuid::Uuid;

/// How long an audit is cached (SPEC §8.2).
pub const AUDIT_CACHE_SECS: i64 = 600;
/// How long a stored activation scan lives (SPEC §8.2).
pub const ACTIVATION_SCAN_SECS: i64 = 24 * 3600;

/// The cached audit of a domain, if one is live. A copy that no longer decodes (written by an
/// older version) reads as absent, so it is simply recomputed.
pub async fn cached<T: DeserializeOwned>(
    store: &dyn ItemStore,
    domain: &str,
) -> Result<Option<T>, StoreError> {
    Ok(store
        .get(&keys::audit_cache_pk(domain), keys::AUDIT_CACHE_SK, false)
        .await?
        .and_then(|item| serde_json::from_slice(&item.data).ok()))
}

/// Writes `value` at a key until `expires_unix` (the last write wins).
async fn put_expiring<T: Serialize>(
    store: &dyn ItemStore,
    (pk, sk): (String, &str),
    value: &T,
    expires_unix: i64,
) -> Result<(), StoreError> {
    let item = Item::new(pk, sk, encode(value)?).expiring_at(expires_unix);
    store.put(item, Condition::None).await
}

/// Caches an audit for [`AUDIT_CACHE_SECS`].
pub async fn cache<T: Serialize>(
    store: &dyn ItemStore,
    domain: &str,
    audit: &T,
    now_unix: i64,
) -> Result<(), StoreError> {
    let key = (keys::audit_cache_pk(domain), keys::AUDIT_CACHE_SK);
    put_expiring(store, key, audit, now_unix + AUDIT_CACHE_SECS).await
}

/// The activation scan stored for a domain, if one is live.
pub async fn activation_scan<T: DeserializeOwned>(
    store: &dyn ItemStore,
    domain: &str,
) -> Result<Option<T>, StoreError> {
    store
        .get(
            &keys::activation_scan_pk(domain),
            keys::ACTIVATION_SCAN_SK,
            false,
        )
        .await?
        .map(|item| decode(&item))
        .transpose()
}

/// Stores an activation scan for [`ACTIVATION_SCAN_SECS`] (the last one wins).
pub async fn store_activation_scan<T: Serialize>(
    store: &dyn ItemStore,
    domain: &str,
    audit: &T,
    now_unix: i64,
) -> Result<(), StoreError> {
    let key = (keys::activation_scan_pk(domain), keys::ACTIVATION_SCAN_SK);
    put_expiring(store, key, audit, now_unix + ACTIVATION_SCAN_SECS).await
}

/// A captured lead: who asked for an audit of which domain.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Lead {
    /// The address given with the audit.
    pub email: String,
    /// The audited domain.
    pub domain: String,
    /// The visitor journey id header, when it was a UUID.
    pub journey_id: Option<Uuid>,
    /// The caller's organization, when a credential was sent.
    pub org_id: Option<Uuid>,
    /// When it was captured.
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
}

/// Records a lead under its day.
pub async fn record_lead(store: &dyn ItemStore, lead: &Lead) -> Result<(), StoreError> {
    let day = lead.created_at.date().to_string();
    let millis = lead.created_at.unix_timestamp_nanos() / 1_000_000;
    let item = Item::new(
        keys::lead_pk(&day),
        keys::lead_sk(millis, Uuid::new_v4()),
        encode(lead)?,
    );
    store.put(item, Condition::NotExists).await
}
