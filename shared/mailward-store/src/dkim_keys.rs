//! Hosted DKIM keys, in their organization's partition under `DKIMKEY#<domain>#<id>`.

use super::{Versioned, decode_versioned, keys};
use mailward_domain::dkim_keys::DkimKey;
use mailward_domain::store::{ItemStore, Query, StoreError, query_all};
use uuid::Uuid;

/// Writes a key: created when `version` is `None`, else replacing the version read.
pub async fn save(
    store: &dyn ItemStore,
    key: &DkimKey,
    version: Option<u64>,
) -> Result<(), StoreError> {
    super::put_versioned(
        store,
        keys::org_pk(key.org_id),
        keys::dkim_key_sk(key.domain_id, key.id),
        key,
        version,
    )
    .await
}

/// One key of a domain.
pub async fn get(
    store: &dyn ItemStore,
    org: Uuid,
    domain: Uuid,
    id: Uuid,
) -> Result<Option<Versioned<DkimKey>>, StoreError> {
    store
        .get(&keys::org_pk(org), &keys::dkim_key_sk(domain, id), true)
        .await?
        .map(|i| decode_versioned(&i))
        .transpose()
}

/// Every key of a domain, deleted ones included.
pub async fn list(
    store: &dyn ItemStore,
    org: Uuid,
    domain: Uuid,
) -> Result<Vec<Versioned<DkimKey>>, StoreError> {
    query_all(
        store,
        Query::partition(keys::org_pk(org)).prefix(keys::dkim_keys_prefix(domain)),
    )
    .await?
    .iter()
    .map(decode_versioned)
    .collect()
}
