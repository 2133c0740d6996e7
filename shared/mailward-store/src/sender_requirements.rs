//! What the organization keeps for a domain's sender requirements (one item in its partition):
//! the verdicts of its most recent header analysis of the domain's mail and the spam rates it
//! supplied. Removed with the domain.

use super::{Versioned, decode, decode_versioned, encode, keys};
use mailward_domain::sender_requirements::RequirementInputs;
use mailward_domain::store::{Condition, Item, ItemStore, Query, StoreError, WriteOp, query_all};
use uuid::Uuid;

/// The domain's kept inputs, with their version.
pub async fn get(
    store: &dyn ItemStore,
    org: Uuid,
    domain: Uuid,
) -> Result<Option<Versioned<RequirementInputs>>, StoreError> {
    store
        .get(
            &keys::org_pk(org),
            &keys::sender_requirements_sk(domain),
            true,
        )
        .await?
        .map(|item| decode_versioned(&item))
        .transpose()
}

/// Every domain's kept inputs of the organization (for its export).
pub async fn list(store: &dyn ItemStore, org: Uuid) -> Result<Vec<RequirementInputs>, StoreError> {
    query_all(
        store,
        Query::partition(keys::org_pk(org)).prefix(keys::SENDER_REQUIREMENTS_PREFIX),
    )
    .await?
    .iter()
    .map(decode)
    .collect()
}

/// The write of `inputs` read at `version` (`None`: not stored yet).
pub fn save_op(inputs: &RequirementInputs, version: Option<u64>) -> Result<WriteOp, StoreError> {
    Ok(WriteOp::Put {
        item: Item::new(
            keys::org_pk(inputs.org_id),
            keys::sender_requirements_sk(inputs.domain_id),
            encode(inputs)?,
        )
        .with_version(version.map_or(1, |v| v + 1)),
        condition: match version {
            None => Condition::NotExists,
            Some(v) => Condition::Version(v),
        },
    })
}

/// The delete of the domain's item (with the domain).
pub fn delete_op(org: Uuid, domain: Uuid) -> WriteOp {
    WriteOp::Delete {
        pk: keys::org_pk(org),
        sk: keys::sender_requirements_sk(domain),
        condition: Condition::None,
    }
}
