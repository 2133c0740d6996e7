//! Per-domain report counters, and the process's memo of figures computed from a domain's
//! report data, kept exact by them.
//!
//! The organization report views (`GET /report-data/summary`, `/report-data/domains`) sum, for
//! every domain with reports, its day totals over the period and count its senders: for an
//! organization with a year of reports on 1,000 domains, ~365,000 day totals and every sender
//! of 1,000 domains, ~4,000 requests a call. What they compute from one domain changes only
//! when that domain's day totals or senders do. So every write of a day total
//! (`REPTOTAL#<domain>#…`) or a sender (`SENDER#<domain>#…`) adds 1 to the domain's counter
//! once it has committed ([`crate::card_cache::CardVersions`] sees every write; retention's
//! deletes call [`bump`]); a reader reads all of the organization's counters first
//! ([`versions`]: one strongly consistent query per shard), uses what it computed earlier for a
//! domain when it was computed at that domain's counter, and otherwise reads the domain again
//! and keeps the result at the counter value read *before* the data ([`Memo`]).
//!
//! **Why that is exact under concurrent ingestion.** The argument of `card_cache`, per domain:
//! a counter only grows; a write committed before the reader read the counters was either
//! counted in the value read (then the data read after it holds the write) or is counted later
//! (then the next reader sees a greater value and computes again); a request that ingested a
//! report answers only after its increments, so every request starting after that answer, on
//! any instance, sees the report. Ingestion elsewhere in the organization invalidates only the
//! domains it wrote: a read during steady ingestion recomputes a few domains, not 1,000.
//!
//! **What bounds a miss.** A process that dies between a write and its increment, or an
//! increment that fails (logged), leaves memos stale: each is also recomputed after
//! [`MAX_AGE`]. Deletes of a removed domain's partition are not counted (its card is gone, so
//! no view reads it).
//!
//! **Write load.** The counters of an organization live in [`keys::REPORT_VERSION_SHARDS`]
//! partitions (`REPVER#<org>#<n>`, by the domain id's last byte), one plain `ADD` per domain
//! and write call (never in a transaction, so writers never conflict on it): see
//! ARCHITECTURE.md for the arithmetic.

use super::keys;
use mailward_domain::store::{ItemStore, Query, StoreError, query_all};
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use uuid::Uuid;

/// How long a memo entry is used without computing it again, even at an unchanged counter.
pub const MAX_AGE: Duration = Duration::from_secs(600);

/// The partition of a domain's report counter.
fn shard_pk(org: Uuid, domain: Uuid) -> String {
    let shard = u32::from(domain.as_bytes()[15]) % keys::REPORT_VERSION_SHARDS;
    keys::report_versions_pk(org, shard)
}

/// Sort-key prefixes of what a domain's report figures are computed from, each followed by
/// the domain id: day totals, senders, row chunks, report marks, forwarding networks.
const COUNTED_PREFIXES: [&str; 5] = [
    keys::REPORT_TOTAL_PREFIX,
    keys::SENDER_PREFIX,
    keys::REPORT_DAY_PREFIX,
    keys::REPORT_PREFIX,
    keys::FORWARDERS_PREFIX,
];

/// The (organization, domain) of a key whose write changes the domain's report figures
/// ([`COUNTED_PREFIXES`]), in the domain's partition or (before its move) the organization's.
fn report_domain(pk: &str, sk: &str) -> Option<(Uuid, Uuid)> {
    let org = pk.strip_prefix(keys::ORG_PK_PREFIX)?.get(..36)?;
    let domain = COUNTED_PREFIXES
        .iter()
        .find_map(|prefix| sk.strip_prefix(prefix))?
        .get(..36)?;
    Some((Uuid::parse_str(org).ok()?, Uuid::parse_str(domain).ok()?))
}

/// The domains among `keys` whose report figures a write of them changes, each once.
pub fn report_domains<'a>(keys: impl Iterator<Item = (&'a str, &'a str)>) -> Vec<(Uuid, Uuid)> {
    let mut found: Vec<(Uuid, Uuid)> = keys.filter_map(|(pk, sk)| report_domain(pk, sk)).collect();
    found.sort_unstable();
    found.dedup();
    found
}

/// Adds 1 to the report counter of each (organization, domain). A failure is logged, not
/// returned: the write itself committed, and [`MAX_AGE`] bounds how long a memo can miss it.
pub async fn bump(store: &dyn ItemStore, domains: &[(Uuid, Uuid)]) {
    for (org, domain) in domains {
        let (pk, sk) = (shard_pk(*org, *domain), domain.to_string());
        if let Err(error) = store.increment(&pk, &sk, 1, None).await {
            tracing::warn!(%org, %domain, %error, "could not count a report data change");
        }
    }
}

/// Every report counter of the organization (a domain never written is absent: read it as 0).
pub async fn versions(store: &dyn ItemStore, org: Uuid) -> Result<HashMap<Uuid, i64>, StoreError> {
    let shards = (0..keys::REPORT_VERSION_SHARDS).map(|shard| {
        let mut query = Query::partition(keys::report_versions_pk(org, shard));
        query.consistent = true;
        query_all(store, query)
    });
    let mut out = HashMap::new();
    for items in futures::future::try_join_all(shards).await? {
        out.extend(
            items.into_iter().filter_map(|item| {
                Some((Uuid::parse_str(&item.sk).ok()?, item.counter.unwrap_or(0)))
            }),
        );
    }
    Ok(out)
}

/// One domain's report counter (0 before its first counted write).
pub async fn version(store: &dyn ItemStore, org: Uuid, domain: Uuid) -> Result<i64, StoreError> {
    Ok(store
        .get(&shard_pk(org, domain), &domain.to_string(), true)
        .await?
        .and_then(|item| item.counter)
        .unwrap_or(0))
}

/// Removes every report counter of the organization (its purge); how many there were.
pub async fn purge(store: &dyn ItemStore, org: Uuid) -> Result<usize, StoreError> {
    let mut found = Vec::new();
    for shard in 0..keys::REPORT_VERSION_SHARDS {
        let items = query_all(
            store,
            Query::partition(keys::report_versions_pk(org, shard)),
        )
        .await?;
        found.extend(items.into_iter().map(|item| (item.pk, item.sk)));
    }
    super::retention::delete_all(store, found).await
}

struct Entry<V> {
    version: i64,
    read_at: Instant,
    used_at: Instant,
    value: V,
}

/// What a process computed from domains' report data, each entry at the counter value read
/// before its data, at most `capacity` entries (the least recently used half goes when full).
pub struct Memo<K, V> {
    entries: Mutex<HashMap<K, Entry<V>>>,
    capacity: usize,
}

impl<K: Eq + Hash + Clone, V: Clone> Memo<K, V> {
    /// An empty memo of at most `capacity` entries.
    pub fn new(capacity: usize) -> Self {
        Self {
            entries: Mutex::new(HashMap::new()),
            capacity,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<K, Entry<V>>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The value kept for `key` if it was computed at `version` less than [`MAX_AGE`] ago.
    pub fn get(&self, key: &K, version: i64) -> Option<V> {
        let mut entries = self.lock();
        let entry = entries.get_mut(key)?;
        if entry.version != version || entry.read_at.elapsed() >= MAX_AGE {
            return None;
        }
        entry.used_at = Instant::now();
        Some(entry.value.clone())
    }

    /// Keeps `value`, computed from data read after the counter showed `version`.
    pub fn keep(&self, key: K, version: i64, value: V) {
        let mut entries = self.lock();
        if entries.len() >= self.capacity && !entries.contains_key(&key) {
            let mut used: Vec<Instant> = entries.values().map(|e| e.used_at).collect();
            used.sort_unstable();
            let cut = used[used.len() / 2];
            entries.retain(|_, e| e.used_at > cut);
        }
        let now = Instant::now();
        entries.insert(
            key,
            Entry {
                version,
                read_at: now,
                used_at: now,
                value,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn day_totals_and_senders_in_either_partition_count_once_per_domain() {
        let (org, domain) = (Uuid::from_u128(1), Uuid::from_u128(2));
        let (new, old) = (keys::domain_pk(org, domain), keys::org_pk(org));
        let total = keys::report_total_sk(domain, "2026-11-01");
        let sender = keys::sender_sk(domain, Uuid::from_u128(3));
        let found = report_domains(
            [
                (new.as_str(), total.as_str()),
                (new.as_str(), sender.as_str()),
                (old.as_str(), total.as_str()),
                (new.as_str(), "SNAPSHOT#x"),
                ("PTR#192.0.2.1", total.as_str()),
                (old.as_str(), "REPTOTAL#not-a-uuid"),
            ]
            .into_iter(),
        );
        assert_eq!(found, vec![(org, domain)]);
    }

    #[test]
    fn a_memo_answers_only_at_the_version_it_was_computed_at_and_stays_bounded() {
        let memo: Memo<u32, &str> = Memo::new(4);
        memo.keep(1, 7, "seven");
        assert_eq!(memo.get(&1, 7), Some("seven"));
        assert_eq!(memo.get(&1, 8), None);
        assert_eq!(memo.get(&2, 7), None);
        for key in 2..=6 {
            memo.keep(key, 1, "x");
        }
        assert!(memo.lock().len() <= 4);
        assert_eq!(memo.get(&6, 1), Some("x"));
    }
}
