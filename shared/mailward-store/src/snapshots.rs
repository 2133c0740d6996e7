//! DNS snapshots: one item per record type and change, in the domain's partition
//! ([`crate::domain_data`]), written
//! by the sweep only when the values differ from the type's latest snapshot.

use super::{decode, domain_data, encode, keys};
use mailward_domain::snapshots::Snapshot;
use mailward_domain::store::{Condition, Item, ItemStore, StoreError, WriteOp};
use uuid::Uuid;

/// The write that records a new snapshot and moves the type's "latest" marker.
pub fn record_ops(org: Uuid, snapshot: &Snapshot) -> Result<Vec<WriteOp>, StoreError> {
    let millis = snapshot.captured_at.unix_timestamp_nanos() / 1_000_000;
    let sk = keys::snapshot_sk(
        snapshot.domain_id,
        &snapshot.record_type,
        millis,
        snapshot.id,
    );
    Ok(vec![
        WriteOp::Put {
            item: Item::new(
                keys::domain_pk(org, snapshot.domain_id),
                sk,
                encode(snapshot)?,
            ),
            condition: Condition::NotExists,
        },
        WriteOp::Put {
            item: Item::new(
                keys::domain_pk(org, snapshot.domain_id),
                keys::snapshot_latest_sk(snapshot.domain_id, &snapshot.record_type),
                encode(snapshot)?,
            ),
            condition: Condition::None,
        },
    ])
}

/// The latest snapshot of each type, for change detection.
pub async fn latest(
    store: &dyn ItemStore,
    org: Uuid,
    domain: Uuid,
) -> Result<Vec<Snapshot>, StoreError> {
    domain_data::query_prefix(store, org, domain, keys::snapshot_latest_prefix(domain))
        .await?
        .iter()
        .map(decode)
        .collect()
}

/// Every snapshot of a domain (optionally one type), oldest first.
pub async fn list(
    store: &dyn ItemStore,
    org: Uuid,
    domain: Uuid,
    record_type: Option<&str>,
) -> Result<Vec<Snapshot>, StoreError> {
    domain_data::query_prefix(
        store,
        org,
        domain,
        keys::snapshot_prefix(domain, record_type),
    )
    .await?
    .iter()
    .map(decode)
    .collect()
}

/// The deletes that remove every snapshot of a domain and its latest-per-type markers (both
/// `SNAPSHOT#<domain>#...` and `SNAPLATEST#<domain>#...`), for when the domain is removed.
pub async fn delete_ops_for_domain(
    store: &dyn ItemStore,
    org: Uuid,
    domain: Uuid,
) -> Result<Vec<WriteOp>, StoreError> {
    let mut ops = Vec::new();
    for prefix in [
        keys::snapshot_prefix(domain, None),
        keys::snapshot_latest_prefix(domain),
    ] {
        let items = domain_data::query_prefix(store, org, domain, prefix).await?;
        ops.extend(items.into_iter().map(|item| WriteOp::Delete {
            pk: item.pk,
            sk: item.sk,
            condition: Condition::None,
        }));
    }
    Ok(ops)
}
