//! Domains: the domain item in the organization's partition, a name claim per organization
//! (uniqueness by conditional put), and a global name index (`DOMAINNAME#<name>`, for report
//! attribution to every organization watching a name). Removing a domain also removes its DNS
//! snapshots.
//!
//! **List cards.** Beside each domain item sits its list card (`DCARD#<id>`, the ~250
//! bytes `GET /domains` filters and sorts on), written in the same transaction as every change
//! of the domain that changes the card ([`save_ops`]), so a strongly consistent read of the
//! cards is exactly the domains as committed. [`cards`] reads them with the note
//! `DCARDS` that says every domain of the organization has one (written with the organization;
//! for an organization from before cards, by [`build_cards`] from the daily job): without the
//! note, readers fall back to the domains themselves. Readers go through
//! `crate::card_cache`, which keeps each process's copy exact against the organization's card
//! counter.

use super::{Versioned, decode, decode_versioned, encode, keys, onboarding, snapshots, tasks};
use mailward_domain::domain::Domain;
use mailward_domain::domain_list::DomainCard;
use mailward_domain::store::{
    Condition, Item, ItemStore, MAX_TRANSACTION_OPS, Query, StoreError, WriteOp, query_all,
};
use uuid::Uuid;

fn domain_item(domain: &Domain, version: u64) -> Result<Item, StoreError> {
    let item = Item::new(
        keys::org_pk(domain.org_id),
        keys::domain_sk(domain.id),
        encode(domain)?,
    )
    .with_version(version);
    // The sweep's sparse index of due work: shard by domain id, sorted by due time.
    Ok(match domain.next_check_at {
        Some(due) => item.with_gsi1(
            keys::sweep_pk(keys::sweep_shard(domain.id)),
            keys::sweep_sk(due.unix_timestamp(), domain.org_id, domain.id),
        ),
        None => item,
    })
}

fn card_op(domain: &Domain) -> Result<WriteOp, StoreError> {
    Ok(WriteOp::Put {
        item: Item::new(
            keys::org_pk(domain.org_id),
            keys::domain_card_sk(domain.id),
            encode(&DomainCard::of(domain))?,
        ),
        condition: Condition::None,
    })
}

/// The write of the note that every domain of `org` has its list card: with a new
/// organization (it has no domains yet), or by [`build_cards`].
pub fn cards_ready_op(org: Uuid) -> WriteOp {
    WriteOp::Put {
        item: Item::new(keys::org_pk(org), keys::DOMAIN_CARDS_READY, Vec::new()),
        condition: Condition::None,
    }
}

/// The writes that create a domain: the item, its list card, the organization's claim on the
/// name (fails when the organization already watches it) and the global name index entry.
pub fn create_ops(domain: &Domain) -> Result<Vec<WriteOp>, StoreError> {
    Ok(vec![
        WriteOp::Put {
            item: domain_item(domain, 1)?,
            condition: Condition::NotExists,
        },
        card_op(domain)?,
        WriteOp::Put {
            item: Item::new(
                keys::org_pk(domain.org_id),
                keys::domain_name_sk(&domain.url),
                domain.id.as_bytes().to_vec(),
            ),
            condition: Condition::NotExists,
        },
        WriteOp::Put {
            item: Item::new(
                keys::domain_name_pk(&domain.url),
                keys::org_pk(domain.org_id),
                domain.id.as_bytes().to_vec(),
            ),
            condition: Condition::None,
        },
    ])
}

/// The writes that remove a domain, its name claim and its index entry, and note its partition
/// as to be emptied (`crate::domain_data::purge_gone`; its snapshots go at once: see [`remove`]).
pub fn delete_ops(domain: &Domain, version: u64) -> Vec<WriteOp> {
    vec![
        crate::domain_data::gone_op(domain.org_id, domain.id),
        WriteOp::Delete {
            pk: keys::org_pk(domain.org_id),
            sk: keys::domain_sk(domain.id),
            condition: Condition::Version(version),
        },
        WriteOp::Delete {
            pk: keys::org_pk(domain.org_id),
            sk: keys::domain_card_sk(domain.id),
            condition: Condition::None,
        },
        WriteOp::Delete {
            pk: keys::org_pk(domain.org_id),
            sk: keys::domain_name_sk(&domain.url),
            condition: Condition::None,
        },
        WriteOp::Delete {
            pk: keys::domain_name_pk(&domain.url),
            sk: keys::org_pk(domain.org_id),
            condition: Condition::None,
        },
    ]
}

/// Removes a domain read at `version`, together with `extra` writes (e.g. its event) and its
/// DNS snapshots, in one transaction when they fit in [`MAX_TRANSACTION_OPS`]. Snapshots that do
/// not fit are deleted afterwards, once the domain is gone, in batches; that part is best effort:
/// a failed batch is logged and the rest still run (the organization purge removes leftovers).
/// Fails, removing nothing, when the domain changed since it was read.
pub async fn remove(
    store: &dyn ItemStore,
    domain: &Domain,
    version: u64,
    extra: Vec<WriteOp>,
) -> Result<(), StoreError> {
    let mut first = delete_ops(domain, version);
    first.extend(extra);
    let mut snapshot_deletes =
        snapshots::delete_ops_for_domain(store, domain.org_id, domain.id).await?;
    snapshot_deletes.extend(tasks::delete_ops_for_domain(store, domain.org_id, domain.id).await?);
    snapshot_deletes.push(onboarding::delete_op(domain.org_id, domain.id));
    snapshot_deletes.push(crate::sender_requirements::delete_op(
        domain.org_id,
        domain.id,
    ));
    let room = MAX_TRANSACTION_OPS.saturating_sub(first.len());
    let rest = snapshot_deletes.split_off(room.min(snapshot_deletes.len()));
    first.extend(snapshot_deletes);
    store.transact(first).await?;
    let mut rest = rest.into_iter().peekable();
    while rest.peek().is_some() {
        let batch: Vec<WriteOp> = rest.by_ref().take(MAX_TRANSACTION_OPS).collect();
        let size = batch.len();
        if let Err(e) = store.transact(batch).await {
            tracing::warn!(
                org.id = %domain.org_id,
                domain.id = %domain.id,
                items = size,
                error = %e,
                "could not delete the snapshots of a removed domain",
            );
        }
    }
    Ok(())
}

/// The writes that save `domain`, changed from `before` (the value read at `read_version`), if
/// nobody changed it since: the domain item and, when a listed field changed, its list card.
pub fn save_ops(
    domain: &Domain,
    before: &Domain,
    read_version: u64,
) -> Result<Vec<WriteOp>, StoreError> {
    let mut ops = vec![WriteOp::Put {
        item: domain_item(domain, read_version + 1)?,
        condition: Condition::Version(read_version),
    }];
    if DomainCard::of(domain) != DomainCard::of(before) {
        ops.push(card_op(domain)?);
    }
    Ok(ops)
}

/// One domain of an organization.
pub async fn get(
    store: &dyn ItemStore,
    org: Uuid,
    id: Uuid,
) -> Result<Option<Versioned<Domain>>, StoreError> {
    store
        .get(&keys::org_pk(org), &keys::domain_sk(id), true)
        .await?
        .map(|item| decode_versioned(&item))
        .transpose()
}

/// Whether the organization already watches a name.
pub async fn name_taken(store: &dyn ItemStore, org: Uuid, name: &str) -> Result<bool, StoreError> {
    Ok(store
        .get(&keys::org_pk(org), &keys::domain_name_sk(name), true)
        .await?
        .is_some())
}

/// The id of the organization's domain named `name`, if it watches it.
pub async fn id_by_name(
    store: &dyn ItemStore,
    org: Uuid,
    name: &str,
) -> Result<Option<Uuid>, StoreError> {
    Ok(store
        .get(&keys::org_pk(org), &keys::domain_name_sk(name), false)
        .await?
        .and_then(|item| Uuid::from_slice(&item.data).ok()))
}

/// How many domains an organization holds (its name claims: small items, no decoding).
pub async fn count(store: &dyn ItemStore, org: Uuid) -> Result<u64, StoreError> {
    Ok(query_all(
        store,
        Query::partition(keys::org_pk(org)).prefix(keys::domain_name_sk("")),
    )
    .await?
    .len() as u64)
}

/// Every domain of an organization (sorting and filtering happen in memory: fine to tens of
/// thousands of domains per organization; see ARCHITECTURE.md).
pub async fn list(store: &dyn ItemStore, org: Uuid) -> Result<Vec<Domain>, StoreError> {
    query_all(
        store,
        Query::partition(keys::org_pk(org)).prefix(keys::DOMAIN_PREFIX),
    )
    .await?
    .iter()
    .map(decode)
    .collect()
}

/// The list cards of every domain of an organization (strongly consistent: exactly the domains
/// as committed), or `None` while the organization's cards are not all built yet (see the
/// module docs): the caller then reads [`list`].
pub async fn cards(
    store: &dyn ItemStore,
    org: Uuid,
) -> Result<Option<Vec<DomainCard>>, StoreError> {
    let items = query_all(
        store,
        Query::partition(keys::org_pk(org)).prefix(keys::DOMAIN_CARDS_QUERY),
    )
    .await?;
    if !items.iter().any(|item| item.sk == keys::DOMAIN_CARDS_READY) {
        return Ok(None);
    }
    items
        .iter()
        .filter(|item| item.sk.starts_with(keys::DOMAIN_CARD_PREFIX))
        .map(decode)
        .collect::<Result<_, _>>()
        .map(Some)
}

/// Builds the missing list cards of an organization created before cards existed, then writes
/// the note that they are all there. A card a save already wrote is newer and is kept (each put
/// is conditional on absence). Returns how many cards were written; nothing when the note is
/// already there.
pub async fn build_cards(store: &dyn ItemStore, org: Uuid) -> Result<usize, StoreError> {
    if store
        .get(&keys::org_pk(org), keys::DOMAIN_CARDS_READY, true)
        .await?
        .is_some()
    {
        return Ok(0);
    }
    let mut written = 0;
    let ops = list(store, org)
        .await?
        .iter()
        .map(|domain| {
            Ok(WriteOp::Put {
                item: Item::new(
                    keys::org_pk(org),
                    keys::domain_card_sk(domain.id),
                    encode(&DomainCard::of(domain))?,
                ),
                condition: Condition::NotExists,
            })
        })
        .collect::<Result<Vec<_>, StoreError>>()?;
    for chunk in ops.chunks(MAX_TRANSACTION_OPS) {
        let applied = store.write_each(chunk.to_vec()).await?;
        written += applied.into_iter().filter(|applied| *applied).count();
    }
    store.transact(vec![cards_ready_op(org)]).await?;
    Ok(written)
}

/// The organization's domains with the given ids, in that order (read together by key,
/// [`ItemStore::get_many`]: one `BatchGetItem` a hundred; a domain deleted meanwhile is left out).
pub async fn get_many(
    store: &dyn ItemStore,
    org: Uuid,
    ids: &[Uuid],
) -> Result<Vec<Domain>, StoreError> {
    get_many_items(store, org, ids)
        .await?
        .into_iter()
        .flatten()
        .map(|item| decode_versioned::<Domain>(&item).map(|d| d.value))
        .collect()
}

/// The stored items of the domains `ids` of `org`, in that order (`None` for one not found),
/// undecoded: for a reader that keeps what it made of an item's bytes.
pub async fn get_many_items(
    store: &dyn ItemStore,
    org: Uuid,
    ids: &[Uuid],
) -> Result<Vec<Option<Item>>, StoreError> {
    let pk = keys::org_pk(org);
    let wanted = ids
        .iter()
        .map(|id| (pk.clone(), keys::domain_sk(*id)))
        .collect();
    store.get_many(wanted, true).await
}

/// When the longest-waiting domain of a sweep shard fell due (unix seconds), if one is due
/// at `now_unix`: how far the sweep lags.
pub async fn oldest_due(
    store: &dyn ItemStore,
    shard: u32,
    now_unix: i64,
) -> Result<Option<i64>, StoreError> {
    let mut query = Query::partition(keys::sweep_pk(shard))
        .on(mailward_domain::store::Index::Gsi1)
        .limit(1);
    query.sort = mailward_domain::store::SortKey::AtMost(format!("{now_unix:012}#~"));
    let page = store.query(query).await?;
    Ok(page.items.first().and_then(|item| {
        let key = item.gsi1.as_ref()?;
        key.sk.split('#').next()?.parse().ok()
    }))
}

/// A domain due for evaluation, as the sweep index gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Due {
    /// Its organization.
    pub org: Uuid,
    /// The domain.
    pub id: Uuid,
    /// Never evaluated yet: its first evaluation also opens its tasks (more writes).
    pub first: bool,
}

/// One page of due domains in a sweep shard: `(org, domain)` pairs due at or before `now`.
pub async fn due(
    store: &dyn ItemStore,
    shard: u32,
    now_unix: i64,
    limit: usize,
    cursor: Option<String>,
) -> Result<(Vec<(Uuid, Uuid)>, Option<String>), StoreError> {
    let (due, cursor) = due_domains(store, shard, now_unix, limit, cursor).await?;
    Ok((due.into_iter().map(|d| (d.org, d.id)).collect(), cursor))
}

/// [`due`], saying of each domain whether it was never evaluated.
pub async fn due_domains(
    store: &dyn ItemStore,
    shard: u32,
    now_unix: i64,
    limit: usize,
    cursor: Option<String>,
) -> Result<(Vec<Due>, Option<String>), StoreError> {
    let mut query = Query::partition(keys::sweep_pk(shard))
        .on(mailward_domain::store::Index::Gsi1)
        .limit(limit)
        .after(cursor);
    query.sort = mailward_domain::store::SortKey::AtMost(format!("{now_unix:012}#~"));
    let page = store.query(query).await?;
    let pairs = page
        .items
        .iter()
        .filter_map(|item| {
            let domain: Domain = decode(item).ok()?;
            Some(Due {
                org: domain.org_id,
                id: domain.id,
                first: domain.last_checked_at.is_none(),
            })
        })
        .collect();
    Ok((pairs, page.cursor))
}
