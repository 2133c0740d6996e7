//! [`MemoryRateCounter`]: the in-process adapter of the rate-limit counter port, for the single
//! local process. Counting in memory keeps every request off the one SQLite writer (two counter
//! writes per authenticated request were the local stack's p99 at 16 clients). Counts are lost
//! on restart, which for windows of a minute to a day is the behaviour a person expects of a
//! development stack; the AWS adapter shares counts between instances through DynamoDB.

use async_trait::async_trait;
use mailward_domain::rate_limits::{RateCounter, Window};
use mailward_domain::store::StoreError;
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Shards of the counter map: hits of different subjects rarely contend for one lock.
const SHARDS: usize = 16;

/// Every this many hits, the shards drop the counters of windows that have ended.
const PRUNE_EVERY: u64 = 4096;

#[derive(Debug, Clone, Copy)]
struct Count {
    window: Window,
    count: i64,
}

/// Counts per bucket, subject and window, in memory.
#[derive(Debug)]
pub struct MemoryRateCounter {
    shards: Vec<Mutex<HashMap<(String, String), Count>>>,
    hits: AtomicU64,
}

impl Default for MemoryRateCounter {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryRateCounter {
    /// An empty counter.
    pub fn new() -> Self {
        Self {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            hits: AtomicU64::new(0),
        }
    }

    /// Counters held (for tests and diagnostics).
    pub fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.lock().unwrap_or_else(|p| p.into_inner()).len())
            .sum()
    }

    /// True when no counter is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops the counters of windows that ended before `now_start`: they can never be asked
    /// for again.
    fn prune(&self, now_start: i64) {
        for shard in &self.shards {
            shard
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .retain(|_, c| c.window.end > now_start);
        }
    }
}

/// The shard of a key: FNV-1a, stable across calls (unlike a randomly seeded hasher).
fn shard_of(scope: &str, subject: &str) -> usize {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in scope.bytes().chain([0u8]).chain(subject.bytes()) {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    usize::try_from(hash % SHARDS as u64).unwrap_or(0)
}

#[async_trait]
impl RateCounter for MemoryRateCounter {
    async fn hit(&self, scope: &str, subject: &str, window: Window) -> Result<i64, StoreError> {
        if self.hits.fetch_add(1, Ordering::Relaxed) % PRUNE_EVERY == PRUNE_EVERY - 1 {
            self.prune(window.start);
        }
        let mut shard = self.shards[shard_of(scope, subject)]
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let entry = shard
            .entry((scope.to_owned(), subject.to_owned()))
            .or_insert(Count { window, count: 0 });
        // A later window restarts the count. A hit stamped with an earlier window (a request
        // that read the clock just before the boundary) counts in the current one.
        if entry.window.start < window.start {
            *entry = Count { window, count: 0 };
        }
        entry.count += 1;
        Ok(entry.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(start: i64) -> Window {
        Window {
            start,
            end: start + 60,
        }
    }

    #[tokio::test]
    async fn counts_per_bucket_subject_and_window() {
        let c = MemoryRateCounter::new();
        assert_eq!(c.hit("global", "k1", w(0)).await.unwrap(), 1);
        assert_eq!(c.hit("global", "k1", w(0)).await.unwrap(), 2);
        assert_eq!(c.hit("global", "k2", w(0)).await.unwrap(), 1);
        assert_eq!(c.hit("api_key", "k1", w(0)).await.unwrap(), 1);
        // A new window starts from one; the old one is forgotten.
        assert_eq!(c.hit("global", "k1", w(60)).await.unwrap(), 1);
        assert_eq!(c.hit("global", "k1", w(60)).await.unwrap(), 2);
    }

    #[tokio::test]
    async fn concurrent_hits_see_distinct_counts() {
        let c = std::sync::Arc::new(MemoryRateCounter::new());
        let tasks: Vec<_> = (0..50)
            .map(|_| {
                let c = std::sync::Arc::clone(&c);
                tokio::spawn(async move { c.hit("global", "k", w(0)).await.unwrap() })
            })
            .collect();
        let mut seen = Vec::new();
        for t in tasks {
            seen.push(t.await.unwrap());
        }
        seen.sort_unstable();
        assert_eq!(seen, (1..=50).collect::<Vec<i64>>());
    }

    #[tokio::test]
    async fn ended_windows_are_pruned() {
        let c = MemoryRateCounter::new();
        for i in 0..PRUNE_EVERY {
            c.hit("global", &format!("s{i}"), w(0)).await.unwrap();
        }
        assert_eq!(c.len(), usize::try_from(PRUNE_EVERY).unwrap());
        // The next prune, during window 120, drops every counter of window 0.
        for i in 0..PRUNE_EVERY {
            c.hit("global", &format!("t{}", i % 8), w(120))
                .await
                .unwrap();
        }
        assert_eq!(c.len(), 8);
    }
}
