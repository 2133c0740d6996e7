//! The process's copy of organizations' list cards, kept exact by a per-organization counter.
//!
//! Reading an organization's 10,000 cards costs ~1,000 read units and ~40 ms of decoding, and
//! `GET /domains`, `/usage`, `/groups?expand[]=domains` and the report views all start there.
//! So every write that changes a card goes through [`CardVersions`], which adds 1 to the
//! organization's counter ([`keys::CARDS_VERSION`]) once the write has committed, and a reader
//! ([`card_set`]) reads the counter first (one small strongly consistent `GetItem`), uses its
//! copy when the copy was read at that value, and otherwise reads the cards and keeps them at
//! the value it read *before* them.
//!
//! **Why that is exact.** The counter only grows. A card write committed before a reader read
//! the counter either was counted in that value (then the cards read after it hold the write)
//! or is counted later (then the next reader sees a greater value and reads again). A request
//! that changed a card answers only after its increment, so whoever reads after that answer
//! sees the change: read-your-writes holds across processes and Lambda instances.
//!
//! **What bounds a miss.** A process that dies between a write and its increment, or an
//! increment that fails (it is logged), leaves other copies stale: each copy is also read
//! again after [`MAX_AGE`]. The counter is one item per organization taking one write per
//! card change: at the sweep's pacing (≤ 15 first evaluations a second per organization,
//! ARCHITECTURE.md) far under a partition's 1,000 write units a second, and a plain `ADD`
//! (no transaction), so concurrent writers never conflict on it.
//!
//! Single deletes are not counted: only the organization purge and retention delete a card
//! that way (a domain's removal is a transaction), and a purged organization has no readers.

use super::{domains, keys, report_versions};
use async_trait::async_trait;
use mailward_domain::domain_list::{CardSet, DomainCard};
use mailward_domain::store::{Condition, Item, ItemStore, Page, Query, StoreError, WriteOp};
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant};
use uuid::Uuid;

/// How long a copy is used without reading the cards again, even at an unchanged counter.
pub const MAX_AGE: Duration = Duration::from_secs(60);

/// How many cards the process keeps, over all organizations (~200 bytes each in memory): the
/// least recently read organizations go first, and a bigger organization is never kept.
pub const MAX_CARDS: usize = 100_000;

struct Copy {
    version: i64,
    read_at: Instant,
    used_at: Instant,
    set: Arc<CardSet>,
}

#[derive(Default)]
struct Copies {
    by_org: HashMap<Uuid, Copy>,
    cards: usize,
}

static COPIES: LazyLock<Mutex<Copies>> = LazyLock::new(Mutex::default);

fn copies() -> std::sync::MutexGuard<'static, Copies> {
    COPIES.lock().unwrap_or_else(|e| e.into_inner())
}

impl Copies {
    fn keep(&mut self, org: Uuid, copy: Copy) {
        let size = copy.set.len();
        if let Some(old) = self.by_org.remove(&org) {
            self.cards -= old.set.len();
        }
        if size > MAX_CARDS {
            return;
        }
        while self.cards + size > MAX_CARDS {
            let Some(oldest) = self
                .by_org
                .iter()
                .min_by_key(|(_, c)| c.used_at)
                .map(|(id, _)| *id)
            else {
                break;
            };
            if let Some(gone) = self.by_org.remove(&oldest) {
                self.cards -= gone.set.len();
            }
        }
        self.cards += size;
        self.by_org.insert(org, copy);
    }
}

/// The organization's card counter now (0 before its first card write).
async fn version(store: &dyn ItemStore, org: Uuid) -> Result<i64, StoreError> {
    Ok(store
        .get(&keys::org_pk(org), keys::CARDS_VERSION, true)
        .await?
        .and_then(|item| item.counter)
        .unwrap_or(0))
}

/// The organization's cards, exactly as committed (see the module docs), from the process's
/// copy when it is current; `None` while the organization's cards are not all built yet
/// ([`domains::cards`]).
pub async fn card_set(
    store: &dyn ItemStore,
    org: Uuid,
) -> Result<Option<Arc<CardSet>>, StoreError> {
    let version = version(store, org).await?;
    {
        let mut copies = copies();
        if let Some(copy) = copies.by_org.get_mut(&org)
            && copy.version == version
            && copy.read_at.elapsed() < MAX_AGE
        {
            copy.used_at = Instant::now();
            return Ok(Some(Arc::clone(&copy.set)));
        }
    }
    let Some(cards) = domains::cards(store, org).await? else {
        return Ok(None);
    };
    let set = Arc::new(CardSet::new(cards));
    let now = Instant::now();
    copies().keep(
        org,
        Copy {
            version,
            read_at: now,
            used_at: now,
            set: Arc::clone(&set),
        },
    );
    Ok(Some(set))
}

/// The list cards of every domain of an organization, exactly as committed: the process's copy
/// when current ([`card_set`]), or made from the domains while the
/// organization's cards are not all built yet.
pub async fn all_cards(store: &dyn ItemStore, org: Uuid) -> Result<Arc<CardSet>, StoreError> {
    match card_set(store, org).await? {
        Some(set) => Ok(set),
        None => Ok(Arc::new(CardSet::new(
            domains::list(store, org)
                .await?
                .iter()
                .map(DomainCard::of)
                .collect(),
        ))),
    }
}

/// The item store seen through the card and report counters: every write passes through
/// unchanged, and one that wrote an organization's card or card note is followed by the
/// increment of that organization's counter (see the module docs), one that wrote a domain's
/// day total or sender by that domain's report counter ([`report_versions`]). Built around the store once per process
/// (`AppState::new`).
pub struct CardVersions {
    inner: Arc<dyn ItemStore>,
}

impl CardVersions {
    /// `inner`, counting card writes.
    pub fn new(inner: Arc<dyn ItemStore>) -> Self {
        Self { inner }
    }

    /// Adds 1 to the counter of each organization in `orgs` (partition keys). A failure is
    /// logged, not returned: the write itself committed, and [`MAX_AGE`] bounds how long
    /// another process's copy can miss it.
    async fn bump(&self, orgs: Vec<String>) {
        for pk in orgs {
            if let Err(error) = self
                .inner
                .increment(&pk, keys::CARDS_VERSION, 1, None)
                .await
            {
                tracing::warn!(%pk, %error, "could not count a list card change");
            }
        }
    }
}

/// The organization partitions among `keys` whose card or card note is written.
fn card_orgs<'a>(keys: impl Iterator<Item = (&'a str, &'a str)>) -> Vec<String> {
    let mut orgs: Vec<String> = keys
        .filter(|(pk, sk)| {
            pk.starts_with(keys::ORG_PK_PREFIX) && sk.starts_with(keys::DOMAIN_CARDS_QUERY)
        })
        .map(|(pk, _)| pk.to_owned())
        .collect();
    orgs.sort_unstable();
    orgs.dedup();
    orgs
}

#[async_trait]
impl ItemStore for CardVersions {
    async fn get(&self, pk: &str, sk: &str, consistent: bool) -> Result<Option<Item>, StoreError> {
        self.inner.get(pk, sk, consistent).await
    }
    async fn get_many(
        &self,
        keys: Vec<(String, String)>,
        consistent: bool,
    ) -> Result<Vec<Option<Item>>, StoreError> {
        self.inner.get_many(keys, consistent).await
    }
    async fn put(&self, item: Item, condition: Condition) -> Result<(), StoreError> {
        let changes = Changes::of(std::iter::once((item.pk.as_str(), item.sk.as_str())));
        let result = self.inner.put(item, condition).await;
        counted(self, changes, &result).await;
        result
    }
    async fn delete(&self, pk: &str, sk: &str, condition: Condition) -> Result<bool, StoreError> {
        self.inner.delete(pk, sk, condition).await
    }
    async fn query(&self, query: Query) -> Result<Page, StoreError> {
        self.inner.query(query).await
    }
    async fn transact(&self, ops: Vec<WriteOp>) -> Result<(), StoreError> {
        let changes = Changes::of_ops(&ops);
        let result = self.inner.transact(ops).await;
        counted(self, changes, &result).await;
        result
    }
    async fn put_all(&self, items: Vec<Item>) -> Result<(), StoreError> {
        let changes = Changes::of(items.iter().map(|i| (i.pk.as_str(), i.sk.as_str())));
        let result = self.inner.put_all(items).await;
        counted(self, changes, &result).await;
        result
    }
    async fn write_each(&self, ops: Vec<WriteOp>) -> Result<Vec<bool>, StoreError> {
        let changes = Changes::of_ops(&ops);
        let result = self.inner.write_each(ops).await;
        match &result {
            Ok(applied) if !applied.iter().any(|a| *a) => {}
            _ => changes.count(self).await,
        }
        result
    }
    async fn increment(
        &self,
        pk: &str,
        sk: &str,
        by: i64,
        expires_at: Option<i64>,
    ) -> Result<i64, StoreError> {
        self.inner.increment(pk, sk, by, expires_at).await
    }
    async fn scan(&self, cursor: Option<String>, limit: usize) -> Result<Page, StoreError> {
        self.inner.scan(cursor, limit).await
    }
}

/// What a write changes that a counter follows: organizations' cards, domains' report data
/// ([`report_versions`]).
struct Changes {
    card_orgs: Vec<String>,
    report_domains: Vec<(Uuid, Uuid)>,
}

impl Changes {
    fn of<'a>(keys: impl Iterator<Item = (&'a str, &'a str)> + Clone) -> Self {
        Self {
            card_orgs: card_orgs(keys.clone()),
            report_domains: report_versions::report_domains(keys),
        }
    }

    fn of_ops(ops: &[WriteOp]) -> Self {
        Self::of(
            ops.iter()
                .filter(|op| !matches!(op, WriteOp::Check { .. }))
                .map(WriteOp::key),
        )
    }

    fn is_empty(&self) -> bool {
        self.card_orgs.is_empty() && self.report_domains.is_empty()
    }

    async fn count(self, store: &CardVersions) {
        store.bump(self.card_orgs).await;
        report_versions::bump(store.inner.as_ref(), &self.report_domains).await;
    }
}

/// Counts a write's changes unless it certainly wrote nothing (its condition failed): a
/// write of unknown outcome (a timeout) is counted, which costs at most one extra read.
async fn counted<T>(store: &CardVersions, changes: Changes, result: &Result<T, StoreError>) {
    if changes.is_empty() || matches!(result, Err(e) if e.is_conflict()) {
        return;
    }
    changes.count(store).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_card_writes_in_organization_partitions_count_once_each() {
        let org = keys::org_pk(Uuid::from_u128(1));
        let card = keys::domain_card_sk(Uuid::from_u128(2));
        let keys = [
            (org.as_str(), card.as_str()),
            (org.as_str(), keys::DOMAIN_CARDS_READY),
            (org.as_str(), "DOMAIN#x"),
            ("DOMAINNAME#a.example", card.as_str()),
        ];
        assert_eq!(card_orgs(keys.into_iter()), vec![org.clone()]);
        assert!(card_orgs([(org.as_str(), keys::CARDS_VERSION)].into_iter()).is_empty());
    }

    #[test]
    fn the_least_recently_read_organizations_leave_first() {
        let mut copies = Copies::default();
        let at = Instant::now();
        let copy = |n: usize, used: u64| Copy {
            version: 1,
            read_at: at,
            used_at: at + Duration::from_secs(used),
            set: Arc::new(CardSet::new(vec![sample(); n])),
        };
        copies.keep(Uuid::from_u128(1), copy(MAX_CARDS / 2, 1));
        copies.keep(Uuid::from_u128(2), copy(MAX_CARDS / 2, 2));
        copies.keep(Uuid::from_u128(3), copy(10, 3));
        assert!(!copies.by_org.contains_key(&Uuid::from_u128(1)));
        assert_eq!(copies.cards, MAX_CARDS / 2 + 10);
        copies.keep(Uuid::from_u128(4), copy(MAX_CARDS + 1, 4));
        assert!(!copies.by_org.contains_key(&Uuid::from_u128(4)));
        assert_eq!(copies.by_org.len(), 2);
    }

    fn sample() -> mailward_domain::domain_list::DomainCard {
        let domain = mailward_domain::domain::Domain::new(
            Uuid::from_u128(9),
            Uuid::from_u128(1),
            "a.example".into(),
            time::OffsetDateTime::UNIX_EPOCH,
        );
        mailward_domain::domain_list::DomainCard::of(&domain)
    }
}
