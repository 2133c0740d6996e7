//! A domain's hosted SPF state, in its organization's partition under `HOSTEDSPF#<domain>`.

use super::{Versioned, decode_versioned, keys};
use mailward_domain::hosted_spf::HostedSpf;
use mailward_domain::store::{Condition, ItemStore, StoreError};
use uuid::Uuid;

/// Writes the state: created when `version` is `None`, else replacing the version read.
pub async fn save(
    store: &dyn ItemStore,
    state: &HostedSpf,
    version: Option<u64>,
) -> Result<(), StoreError> {
    super::put_versioned(
        store,
        keys::org_pk(state.org_id),
        keys::hosted_spf_sk(state.domain_id),
        state,
        version,
    )
    .await
}

/// The state of a domain, if hosting ever began.
pub async fn get(
    store: &dyn ItemStore,
    org: Uuid,
    domain: Uuid,
) -> Result<Option<Versioned<HostedSpf>>, StoreError> {
    store
        .get(&keys::org_pk(org), &keys::hosted_spf_sk(domain), true)
        .await?
        .map(|i| decode_versioned(&i))
        .transpose()
}

/// Removes the state (hosting turned off or the domain deleted).
pub async fn remove(store: &dyn ItemStore, org: Uuid, domain: Uuid) -> Result<(), StoreError> {
    store
        .delete(
            &keys::org_pk(org),
            &keys::hosted_spf_sk(domain),
            Condition::None,
        )
        .await
        .map(|_| ())
}
