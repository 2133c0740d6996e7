//! Groups of domains. Only existence is read today (a domain's `group_id` must name a group of
//! its organization); the groups API arrives with organization administration.

use super::keys;
use mailward_domain::store::{ItemStore, StoreError};
use uuid::Uuid;

/// Whether the organization has a group with this id.
pub async fn exists(store: &dyn ItemStore, org: Uuid, id: Uuid) -> Result<bool, StoreError> {
    Ok(store
        .get(&keys::org_pk(org), &keys::group_sk(id), true)
        .await?
        .is_some())
}
