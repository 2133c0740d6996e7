//! API keys: metadata in the organization's partition, plus one lookup item per key keyed by
//! the key's hash, read with a strongly consistent get so a rotated or deleted key is refused
//! at once (SPEC §5.4).

use super::{Versioned, decode, decode_versioned, encode, keys};
use mailward_domain::model::{ApiKey, ApiKeyAccess};
use mailward_domain::secrets;
use mailward_domain::store::{Condition, Item, ItemStore, Query, StoreError, WriteOp, query_all};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

/// What a presented key resolves to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiKeyLookup {
    /// The key's id.
    pub key_id: Uuid,
    /// Its organization.
    pub org_id: Uuid,
    /// Its access level.
    pub access: ApiKeyAccess,
}

/// A freshly generated key: metadata plus the secret to show once.
#[derive(Debug, Clone)]
pub struct NewKey {
    /// Stored metadata.
    pub meta: ApiKey,
    /// The key itself.
    pub secret: String,
}

/// Generates a key for an organization (nothing stored yet: see [`create_ops`]).
pub fn generate(
    org_id: Uuid,
    name: String,
    access: ApiKeyAccess,
    created_by: Option<Uuid>,
    now: OffsetDateTime,
) -> NewKey {
    let secret = secrets::new_api_key();
    let meta = ApiKey {
        id: Uuid::new_v4(),
        org_id,
        name,
        access,
        key_hash: secrets::sha256_hex(secret.as_bytes()),
        last_four: last_four(&secret),
        created_by,
        created_at: now,
        rotated_at: None,
    };
    NewKey { meta, secret }
}

pub use mailward_domain::secrets::last_four;

fn lookup_item(meta: &ApiKey) -> Result<Item, StoreError> {
    let lookup = ApiKeyLookup {
        key_id: meta.id,
        org_id: meta.org_id,
        access: meta.access,
    };
    Ok(Item::new(
        keys::api_key_lookup_pk(&meta.key_hash),
        keys::API_KEY_LOOKUP_SK,
        encode(&lookup)?,
    ))
}

fn meta_item(meta: &ApiKey, version: u64) -> Result<Item, StoreError> {
    Ok(Item::new(
        keys::org_pk(meta.org_id),
        keys::api_key_sk(meta.id),
        encode(meta)?,
    )
    .with_version(version))
}

/// The writes that store a new key (for a transaction with other creations).
pub fn create_ops(meta: &ApiKey) -> Result<Vec<WriteOp>, StoreError> {
    Ok(vec![
        WriteOp::Put {
            item: meta_item(meta, 1)?,
            condition: Condition::NotExists,
        },
        WriteOp::Put {
            item: lookup_item(meta)?,
            condition: Condition::NotExists,
        },
    ])
}

/// Resolves a presented key (strongly consistent).
pub async fn find_by_key(
    store: &dyn ItemStore,
    key: &str,
) -> Result<Option<ApiKeyLookup>, StoreError> {
    let hash = secrets::sha256_hex(key.as_bytes());
    store
        .get(
            &keys::api_key_lookup_pk(&hash),
            keys::API_KEY_LOOKUP_SK,
            true,
        )
        .await?
        .map(|item| decode(&item))
        .transpose()
}

/// Every key of an organization, oldest first.
pub async fn list(store: &dyn ItemStore, org: Uuid) -> Result<Vec<ApiKey>, StoreError> {
    let mut keys: Vec<ApiKey> = query_all(
        store,
        Query::partition(keys::org_pk(org)).prefix(keys::API_KEY_PREFIX),
    )
    .await?
    .iter()
    .map(decode)
    .collect::<Result<_, _>>()?;
    keys.sort_by(|a, b| a.created_at.cmp(&b.created_at).then(a.id.cmp(&b.id)));
    Ok(keys)
}

/// One key of an organization.
pub async fn get(
    store: &dyn ItemStore,
    org: Uuid,
    id: Uuid,
) -> Result<Option<Versioned<ApiKey>>, StoreError> {
    store
        .get(&keys::org_pk(org), &keys::api_key_sk(id), true)
        .await?
        .map(|item| decode_versioned(&item))
        .transpose()
}

/// Replaces a key's secret: the old secret's lookup item goes in the same transaction as the new
/// one appears, so the old key answers 401 from the next request on.
/// `extra` writes (its activity entry) commit with it.
pub async fn rotate(
    store: &dyn ItemStore,
    current: Versioned<ApiKey>,
    now: OffsetDateTime,
    extra: Vec<WriteOp>,
) -> Result<NewKey, StoreError> {
    let secret = secrets::new_api_key();
    let old = current.value;
    let meta = ApiKey {
        key_hash: secrets::sha256_hex(secret.as_bytes()),
        last_four: last_four(&secret),
        rotated_at: Some(now),
        ..old.clone()
    };
    let mut ops = vec![
        WriteOp::Delete {
            pk: keys::api_key_lookup_pk(&old.key_hash),
            sk: keys::API_KEY_LOOKUP_SK.into(),
            condition: Condition::None,
        },
        WriteOp::Put {
            item: lookup_item(&meta)?,
            condition: Condition::NotExists,
        },
        WriteOp::Put {
            item: meta_item(&meta, current.version + 1)?,
            condition: Condition::Version(current.version),
        },
    ];
    ops.extend(extra);
    store.transact(ops).await?;
    Ok(NewKey { meta, secret })
}

/// The writes that remove a key and its lookup item.
pub fn delete_ops(meta: &ApiKey, version: Option<u64>) -> Vec<WriteOp> {
    vec![
        WriteOp::Delete {
            pk: keys::org_pk(meta.org_id),
            sk: keys::api_key_sk(meta.id),
            condition: version.map_or(Condition::None, Condition::Version),
        },
        WriteOp::Delete {
            pk: keys::api_key_lookup_pk(&meta.key_hash),
            sk: keys::API_KEY_LOOKUP_SK.into(),
            condition: Condition::None,
        },
    ]
}
