//! A domain's own partition, `ORG#<org>#D#<domain>` ([`keys::domain_pk`]): its DNS snapshots,
//! imported reports with their daily rows and day totals, forwarders, senders, TLS and failure
//! reports. These are the items written by the thousand (a report's rows, every sweep's
//! snapshots), so each domain takes its own share of DynamoDB's per-key write budget instead of
//! the whole organization sharing one key (the arithmetic: ARCHITECTURE.md, "Write load per
//! partition key").
//!
//! **The move, backward compatible across one version.** Until this layout these items lived
//! in the organization's partition under the same sort keys. Every reader here reads both
//! partitions; when the old one still holds something of the domain, the domain is moved
//! ([`migrate_domain`]: each item put into the domain's partition, version and expiry kept, and
//! deleted from the old one) before the answer is read, so a versioned write that follows a read
//! always finds its item where it now lives. The daily lifecycle job moves every domain of every
//! organization ([`migrate_domain`] from `mailward_workers::retention::apply`), so after one
//! deployment and a day the old partition holds none of these items; the version after next drops
//! the second read.
//!
//! A deleted domain's partition is not emptied in the request that deletes it (a year of rows
//! is thousands of items): the deletion leaves a `DOMAINGONE#<domain>` note in the
//! organization's partition, and the daily job or the organization's purge empties the partition
//! and then drops the note ([`purge_gone`]).

use super::keys;
use mailward_domain::store::{Condition, Item, ItemStore, Query, SortKey, StoreError, WriteOp};
use uuid::Uuid;

/// Sort-key prefixes of everything of `domain` that lives in its own partition.
pub fn moved_prefixes(domain: Uuid) -> [String; 9] {
    [
        keys::snapshot_prefix(domain, None),
        keys::snapshot_latest_prefix(domain),
        keys::reports_prefix(domain),
        keys::report_days_prefix(domain),
        keys::report_total_sk(domain, ""),
        keys::forwarders_sk(domain),
        keys::senders_prefix(domain),
        keys::tls_reports_prefix(domain),
        keys::failure_reports_prefix(domain),
    ]
}

/// The domain's items under `sort`, ascending. See the module: items still in the
/// organization's partition are moved first.
pub async fn query(
    store: &dyn ItemStore,
    org: Uuid,
    domain: Uuid,
    sort: SortKey,
) -> Result<Vec<Item>, StoreError> {
    let mut new = Query::partition(keys::domain_pk(org, domain));
    new.sort = sort.clone();
    let mut old = Query::partition(keys::org_pk(org));
    old.sort = sort;
    let (found, before) = futures::future::try_join(
        mailward_domain::store::query_all(store, new.clone()),
        first_of(store, old),
    )
    .await?;
    if before.is_none() {
        return Ok(found);
    }
    migrate_domain(store, org, domain).await?;
    mailward_domain::store::query_all(store, new).await
}

/// The first live item of a query (is anything there?). A page may come back empty with a
/// cursor (DynamoDB applies the limit before filtering out expired items), so it pages on.
async fn first_of(store: &dyn ItemStore, mut query: Query) -> Result<Option<Item>, StoreError> {
    query = query.limit(1);
    loop {
        let page = store.query(query.clone()).await?;
        if let Some(item) = page.items.into_iter().next() {
            return Ok(Some(item));
        }
        match page.cursor {
            Some(cursor) => query.cursor = Some(cursor),
            None => return Ok(None),
        }
    }
}

/// The domain's items whose sort key starts with `prefix`.
pub async fn query_prefix(
    store: &dyn ItemStore,
    org: Uuid,
    domain: Uuid,
    prefix: String,
) -> Result<Vec<Item>, StoreError> {
    query(store, org, domain, SortKey::Prefix(prefix)).await
}

/// One item of the domain. See the module: an item still in the organization's partition moves
/// (with the rest of the domain's) before it is returned.
pub async fn get(
    store: &dyn ItemStore,
    org: Uuid,
    domain: Uuid,
    sk: &str,
    consistent: bool,
) -> Result<Option<Item>, StoreError> {
    let pk = keys::domain_pk(org, domain);
    if let Some(item) = store.get(&pk, sk, consistent).await? {
        return Ok(Some(item));
    }
    if store.get(&keys::org_pk(org), sk, true).await?.is_none() {
        return Ok(None);
    }
    migrate_domain(store, org, domain).await?;
    store.get(&pk, sk, true).await
}

/// Moves what the organization's partition still holds of `domain` into the domain's own
/// partition; returns how many items moved. Idempotent and safe beside writers: an item is put
/// only where none is yet (a newer write there wins) and deleted from the old place in the same
/// transaction, or alone once the new place is taken.
pub async fn migrate_domain(
    store: &dyn ItemStore,
    org: Uuid,
    domain: Uuid,
) -> Result<usize, StoreError> {
    let to = keys::domain_pk(org, domain);
    let mut moved = 0;
    for prefix in moved_prefixes(domain) {
        let old = Query::partition(keys::org_pk(org)).prefix(prefix);
        for item in mailward_domain::store::query_all(store, old).await? {
            let (pk, sk) = (item.pk.clone(), item.sk.clone());
            let copy = Item {
                pk: to.clone(),
                ..item
            };
            let pair = vec![
                WriteOp::Put {
                    item: copy,
                    condition: Condition::NotExists,
                },
                WriteOp::Delete {
                    pk: pk.clone(),
                    sk: sk.clone(),
                    condition: Condition::None,
                },
            ];
            match store.transact(pair).await {
                Ok(()) => moved += 1,
                // Written in the new place since (a newer value): the old copy only goes.
                Err(e) if e.is_conflict() => {
                    store.delete(&pk, &sk, Condition::None).await?;
                }
                Err(e) => return Err(e),
            }
        }
    }
    if moved > 0 {
        tracing::info!(org.id = %org, domain.id = %domain, moved, "domain data moved to its own partition");
    }
    Ok(moved)
}

/// The write that notes a deleted domain's partition as still to be emptied.
pub fn gone_op(org: Uuid, domain: Uuid) -> WriteOp {
    WriteOp::Put {
        item: Item::new(keys::org_pk(org), keys::domain_gone_sk(domain), Vec::new()),
        condition: Condition::None,
    }
}

/// Empties the partitions of the organization's deleted domains, then their notes; returns how
/// many items went. A pass that stops half-way is finished by the next.
pub async fn purge_gone(store: &dyn ItemStore, org: Uuid) -> Result<usize, StoreError> {
    let notes = mailward_domain::store::query_all(
        store,
        Query::partition(keys::org_pk(org)).prefix(keys::DOMAIN_GONE_PREFIX),
    )
    .await?;
    let mut removed = 0;
    for note in notes {
        let Some(domain) = note
            .sk
            .strip_prefix(keys::DOMAIN_GONE_PREFIX)
            .and_then(|id| Uuid::parse_str(id).ok())
        else {
            continue;
        };
        // Anything of it the organization's partition still held moves first, so one walk of
        // the domain's partition removes everything.
        migrate_domain(store, org, domain).await?;
        removed += purge_partition(store, org, domain).await?;
        store.delete(&note.pk, &note.sk, Condition::None).await?;
    }
    Ok(removed)
}

/// Deletes every item of one domain's partition, page by page; returns how many.
pub async fn purge_partition(
    store: &dyn ItemStore,
    org: Uuid,
    domain: Uuid,
) -> Result<usize, StoreError> {
    let pk = keys::domain_pk(org, domain);
    let mut removed = 0;
    loop {
        let page = store.query(Query::partition(pk.clone()).limit(500)).await?;
        if page.items.is_empty() {
            return Ok(removed);
        }
        use futures::StreamExt as _;
        let results: Vec<Result<bool, StoreError>> = futures::stream::iter(page.items)
            .map(|item| async move { store.delete(&item.pk, &item.sk, Condition::None).await })
            .buffer_unordered(16)
            .collect()
            .await;
        for result in results {
            result?;
            removed += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_moved_prefix_names_the_domain_and_no_other_kind() {
        let domain = Uuid::from_u128(7);
        for prefix in moved_prefixes(domain) {
            assert!(prefix.contains(&domain.to_string()), "{prefix}");
        }
        // A task, a DKIM key or the domain item stays in the organization's partition.
        for stays in [
            keys::task_sk(domain, Uuid::nil()),
            keys::domain_sk(domain),
            keys::onboarding_sk(domain),
        ] {
            assert!(
                !moved_prefixes(domain).iter().any(|p| stays.starts_with(p)),
                "{stays}"
            );
        }
    }
}
