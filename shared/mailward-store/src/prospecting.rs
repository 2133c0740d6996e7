//! Prospecting reports: the report in its organization's partition (`PROSPECT#<id>`), and a
//! link item outside any organization (`PROSPECT#<id>` / `LINK`) that maps the id of the public
//! download to its organization. The two are written and removed together.

use super::{decode, encode, keys};
use mailward_domain::store::{Condition, Item, ItemStore, Query, StoreError, WriteOp, query_all};
use serde::Serialize;
use serde::de::DeserializeOwned;
use uuid::Uuid;

/// What the public link item holds: whose report it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Link {
    /// The organization that owns the report.
    pub org_id: Uuid,
}

/// Stores a new report and its link.
pub async fn create<T: Serialize>(
    store: &dyn ItemStore,
    org: Uuid,
    id: Uuid,
    report: &T,
) -> Result<(), StoreError> {
    store
        .transact(vec![
            WriteOp::Put {
                item: Item::new(keys::org_pk(org), keys::prospect_sk(id), encode(report)?),
                condition: Condition::NotExists,
            },
            WriteOp::Put {
                item: Item::new(
                    keys::prospect_link_pk(id),
                    keys::PROSPECT_LINK_SK,
                    encode(&Link { org_id: org })?,
                ),
                condition: Condition::NotExists,
            },
        ])
        .await
}

/// One report of an organization.
pub async fn get<T: DeserializeOwned>(
    store: &dyn ItemStore,
    org: Uuid,
    id: Uuid,
) -> Result<Option<T>, StoreError> {
    store
        .get(&keys::org_pk(org), &keys::prospect_sk(id), false)
        .await?
        .map(|item| decode(&item))
        .transpose()
}

/// The organization behind a public report id, if the id exists.
pub async fn link(store: &dyn ItemStore, id: Uuid) -> Result<Option<Link>, StoreError> {
    store
        .get(&keys::prospect_link_pk(id), keys::PROSPECT_LINK_SK, false)
        .await?
        .map(|item| decode(&item))
        .transpose()
}

/// Every report of an organization (unordered).
pub async fn list<T: DeserializeOwned>(
    store: &dyn ItemStore,
    org: Uuid,
) -> Result<Vec<T>, StoreError> {
    query_all(
        store,
        Query::partition(keys::org_pk(org)).prefix(keys::PROSPECT_PREFIX),
    )
    .await?
    .iter()
    .map(decode)
    .collect()
}

/// Removes a report and its link; `false` when there was none.
pub async fn remove(store: &dyn ItemStore, org: Uuid, id: Uuid) -> Result<bool, StoreError> {
    let ops = vec![
        WriteOp::Delete {
            pk: keys::org_pk(org),
            sk: keys::prospect_sk(id),
            condition: Condition::Exists,
        },
        WriteOp::Delete {
            pk: keys::prospect_link_pk(id),
            sk: keys::PROSPECT_LINK_SK.to_owned(),
            condition: Condition::None,
        },
    ];
    match store.transact(ops).await {
        Ok(()) => Ok(true),
        Err(e) if e.is_conflict() => Ok(false),
        Err(e) => Err(e),
    }
}
