//! A domain's onboarding scan: the activation scan a domain was added with (`use_stored_scan`),
//! kept with the domain (activation scans themselves expire after 24 hours) so the rollout plan
//! can show its findings (SPEC §2.9 `scan_findings`).

use super::{decode, encode, keys};
use mailward_domain::store::{Condition, Item, ItemStore, StoreError, WriteOp};
use serde::Serialize;
use serde::de::DeserializeOwned;
use uuid::Uuid;

/// The write that keeps `scan` as the domain's onboarding scan.
pub fn save_op<T: Serialize>(org: Uuid, domain: Uuid, scan: &T) -> Result<WriteOp, StoreError> {
    Ok(WriteOp::Put {
        item: Item::new(
            keys::org_pk(org),
            keys::onboarding_sk(domain),
            encode(scan)?,
        ),
        condition: Condition::None,
    })
}

/// The domain's onboarding scan, if it was added with one.
pub async fn load<T: DeserializeOwned>(
    store: &dyn ItemStore,
    org: Uuid,
    domain: Uuid,
) -> Result<Option<T>, StoreError> {
    store
        .get(&keys::org_pk(org), &keys::onboarding_sk(domain), false)
        .await?
        .map(|item| decode(&item))
        .transpose()
}

/// The delete that removes it with its domain.
pub fn delete_op(org: Uuid, domain: Uuid) -> WriteOp {
    WriteOp::Delete {
        pk: keys::org_pk(org),
        sk: keys::onboarding_sk(domain),
        condition: Condition::None,
    }
}
