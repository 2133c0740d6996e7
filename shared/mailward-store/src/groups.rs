//! Groups of domains (SPEC §2.4), in the organization's partition.

use super::{Versioned, decode, decode_versioned, encode, keys};
use mailward_domain::admin::Group;
use mailward_domain::store::{Condition, Item, ItemStore, Query, StoreError, WriteOp, query_all};
use uuid::Uuid;

fn item(group: &Group, version: u64) -> Result<Item, StoreError> {
    Ok(Item::new(
        keys::org_pk(group.org_id),
        keys::group_sk(group.id),
        encode(group)?,
    )
    .with_version(version))
}

/// Whether the organization has a group with this id.
pub async fn exists(store: &dyn ItemStore, org: Uuid, id: Uuid) -> Result<bool, StoreError> {
    Ok(store
        .get(&keys::org_pk(org), &keys::group_sk(id), true)
        .await?
        .is_some())
}

/// The write that creates a group.
pub fn create_op(group: &Group) -> Result<WriteOp, StoreError> {
    Ok(WriteOp::Put {
        item: item(group, 1)?,
        condition: Condition::NotExists,
    })
}

/// The write that saves a changed group read at `version`.
pub fn save_op(group: &Group, version: u64) -> Result<WriteOp, StoreError> {
    Ok(WriteOp::Put {
        item: item(group, version + 1)?,
        condition: Condition::Version(version),
    })
}

/// The write that deletes a group read at `version`.
pub fn delete_op(org: Uuid, id: Uuid, version: u64) -> WriteOp {
    WriteOp::Delete {
        pk: keys::org_pk(org),
        sk: keys::group_sk(id),
        condition: Condition::Version(version),
    }
}

/// One group of an organization.
pub async fn get(
    store: &dyn ItemStore,
    org: Uuid,
    id: Uuid,
) -> Result<Option<Versioned<Group>>, StoreError> {
    store
        .get(&keys::org_pk(org), &keys::group_sk(id), true)
        .await?
        .map(|i| decode_versioned(&i))
        .transpose()
}

/// Every group of an organization.
pub async fn list(store: &dyn ItemStore, org: Uuid) -> Result<Vec<Group>, StoreError> {
    query_all(
        store,
        Query::partition(keys::org_pk(org)).prefix(keys::GROUP_PREFIX),
    )
    .await?
    .iter()
    .map(decode)
    .collect()
}
