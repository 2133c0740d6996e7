//! Typed repositories over the item store (DESIGN.md §3): model types in, items out, on either
//! adapter of the `ItemStore` port.
//!
//! Why a crate of its own: the key layout is a contract with the data already stored, so it
//! lives in [`keys`] and nowhere else, and every service reaches the table only through these
//! functions. This crate knows nothing of HTTP, the AWS SDK or SQLite: Cargo refuses a route, a
//! handler or an adapter here.

pub mod accounts;
pub mod activity;
pub mod alerts;
pub mod api_keys;
pub mod audits;
pub mod billing;
pub mod candidates;
pub mod card_cache;
pub mod dkim_keys;
pub mod dns_connections;
pub mod domain_data;
pub mod domains;
pub mod exports;
pub mod failure_reports;
pub mod groups;
pub mod hosted_spf;
pub mod hosted_zone;
pub mod identity;
pub mod invitations;
pub mod keys;
pub mod mailboxes;
pub mod mta_sts;
pub mod notifications;
pub mod oauth;
pub mod onboarding;
pub mod optimistic;
pub mod orgs;
pub mod outbox;
pub mod prospecting;
pub mod rate_limits;
pub mod report_versions;
pub mod reports;
pub mod retention;
pub mod row_chunks;
pub mod scheduled_reports;
pub mod scim;
pub mod sender_requirements;
pub mod senders;
pub mod signups;
pub mod snapshots;
pub mod sources;
pub mod support;
pub mod tasks;
pub mod tls_reports;
pub mod webhooks;

use mailward_domain::store::{Item, StoreError};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// A stored value with the version it was read at (for optimistic concurrency).
#[derive(Debug, Clone, PartialEq)]
pub struct Versioned<T> {
    /// The value.
    pub value: T,
    /// Version at read time.
    pub version: u64,
}

/// Serializes a value into an item's payload.
pub fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, StoreError> {
    serde_json::to_vec(value).map_err(|e| StoreError::Invalid(format!("encode: {e}")))
}

/// Deserializes an item's payload.
pub fn decode<T: DeserializeOwned>(item: &Item) -> Result<T, StoreError> {
    serde_json::from_slice(&item.data)
        .map_err(|e| StoreError::Unavailable(format!("corrupt item {}/{}: {e}", item.pk, item.sk)))
}

/// `value` as the item at `pk`/`sk` with the condition of optimistic versioning: created when
/// `version` is `None` (failing if something is there), else replacing exactly the version read.
pub fn versioned_item<T: Serialize>(
    pk: String,
    sk: String,
    value: &T,
    version: Option<u64>,
) -> Result<(Item, mailward_domain::store::Condition), StoreError> {
    use mailward_domain::store::Condition;
    let (condition, next) = match version {
        None => (Condition::NotExists, 1),
        Some(v) => (Condition::Version(v), v + 1),
    };
    Ok((
        Item::new(pk, sk, encode(value)?).with_version(next),
        condition,
    ))
}

/// Writes `value` at `pk`/`sk` with optimistic versioning (see [`versioned_item`]).
pub async fn put_versioned<T: Serialize>(
    store: &dyn mailward_domain::store::ItemStore,
    pk: String,
    sk: String,
    value: &T,
    version: Option<u64>,
) -> Result<(), StoreError> {
    let (item, condition) = versioned_item(pk, sk, value, version)?;
    store.put(item, condition).await
}

/// Deserializes an item with its version.
pub fn decode_versioned<T: DeserializeOwned>(item: &Item) -> Result<Versioned<T>, StoreError> {
    Ok(Versioned {
        value: decode(item)?,
        version: item.version,
    })
}
