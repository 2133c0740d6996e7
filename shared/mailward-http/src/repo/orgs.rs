//! Organizations.

use super::{Versioned, decode_versioned, encode, keys};
use mailward_domain::model::Organization;
use mailward_domain::store::{Condition, Item, ItemStore, StoreError, WriteOp};
use uuid::Uuid;

/// The stored item of an organization at a version.
pub fn org_item(org: &Organization, version: u64) -> Result<Item, StoreError> {
    Ok(Item::new(keys::org_pk(org.id), keys::ORG_META, encode(org)?).with_version(version))
}

/// Reads an organization (strongly consistent).
pub async fn get(
    store: &dyn ItemStore,
    id: Uuid,
) -> Result<Option<Versioned<Organization>>, StoreError> {
    store
        .get(&keys::org_pk(id), keys::ORG_META, true)
        .await?
        .map(|item| decode_versioned(&item))
        .transpose()
}

/// The write that creates an organization.
pub fn create_op(org: &Organization) -> Result<WriteOp, StoreError> {
    Ok(WriteOp::Put {
        item: org_item(org, 1)?,
        condition: Condition::NotExists,
    })
}

/// Saves a changed organization if nobody changed it since `read_version`, together with
/// `extra` writes (its outbox events) in one transaction.
pub async fn save(
    store: &dyn ItemStore,
    org: &Organization,
    read_version: u64,
    extra: Vec<WriteOp>,
) -> Result<u64, StoreError> {
    let version = read_version + 1;
    let mut ops = vec![WriteOp::Put {
        item: org_item(org, version)?,
        condition: Condition::Version(read_version),
    }];
    ops.extend(extra);
    store.transact(ops).await?;
    Ok(version)
}
