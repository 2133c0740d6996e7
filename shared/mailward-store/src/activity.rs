//! The activity log: one item per mutation in the organization's partition, time-ordered
//! (`ACTIVITY#<unix ms>#<id>`, newest read first), written in the same transaction as the change
//! it records, plus a reference per id for `GET /activity-log/{id}`.

use super::{decode, encode, keys};
use mailward_domain::admin::ActivityEntry;
use mailward_domain::store::{Condition, Item, ItemStore, Query, StoreError, WriteOp, query_all};
use uuid::Uuid;

/// The writes that record an entry.
pub fn record_ops(entry: &ActivityEntry) -> Result<Vec<WriteOp>, StoreError> {
    let millis = entry.created_at.unix_timestamp_nanos() / 1_000_000;
    let sk = keys::activity_sk(millis, entry.id);
    Ok(vec![
        WriteOp::Put {
            item: Item::new(keys::org_pk(entry.org_id), sk.clone(), encode(entry)?),
            condition: Condition::NotExists,
        },
        WriteOp::Put {
            item: Item::new(
                keys::org_pk(entry.org_id),
                keys::activity_ref_sk(entry.id),
                sk.into_bytes(),
            ),
            condition: Condition::NotExists,
        },
    ])
}

/// Every entry of an organization, newest first (filters are applied by the caller).
pub async fn list(store: &dyn ItemStore, org: Uuid) -> Result<Vec<ActivityEntry>, StoreError> {
    query_all(
        store,
        Query::partition(keys::org_pk(org))
            .prefix(keys::ACTIVITY_PREFIX)
            .descending(),
    )
    .await?
    .iter()
    .map(decode)
    .collect()
}

/// One entry.
pub async fn get(
    store: &dyn ItemStore,
    org: Uuid,
    id: Uuid,
) -> Result<Option<ActivityEntry>, StoreError> {
    let Some(reference) = store
        .get(&keys::org_pk(org), &keys::activity_ref_sk(id), true)
        .await?
    else {
        return Ok(None);
    };
    let sk = String::from_utf8_lossy(&reference.data).into_owned();
    store
        .get(&keys::org_pk(org), &sk, true)
        .await?
        .map(|item| decode(&item))
        .transpose()
}
