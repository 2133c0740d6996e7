//! Typed repositories over the item store. The key layout lives in [`keys`] and nowhere else.

pub mod accounts;
pub mod api_keys;
pub mod domains;
pub mod keys;
pub mod orgs;
pub mod outbox;
pub mod signups;
pub mod snapshots;
pub mod sources;
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

/// Deserializes an item with its version.
pub fn decode_versioned<T: DeserializeOwned>(item: &Item) -> Result<Versioned<T>, StoreError> {
    Ok(Versioned {
        value: decode(item)?,
        version: item.version,
    })
}
