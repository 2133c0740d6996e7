//! [`Budgeted`]: a per-request query budget and in-flight share over any resolver.
//!
//! Hostile DNS (include cycles, 50 includes, CNAME loops) must end within a bounded number of
//! queries; one request wraps its resolver in a `Budgeted` and every component sharing it draws
//! from the same budget. The same wrapper keeps one request from taking the whole resolver: it
//! holds at most [`REQUEST_IN_FLIGHT`] queries in flight, and a request of a background lane (the
//! sweep) also takes a slot of that lane, so the lane never holds every one of the resolver's
//! slots and API requests always find some free.

use async_trait::async_trait;
use mailward_domain::dns::{Answer, DnsError, DnsResolver, RecordType};
use std::sync::atomic::{AtomicU32, Ordering};
use tokio::sync::Semaphore;

/// Queries one request may have in flight at once: more than one audit asks at its widest (the
/// DKIM catalogue's selectors, all at once), so an audit is never slowed by its own share.
pub const REQUEST_IN_FLIGHT: usize = 128;

/// A resolver that answers at most `budget` lookups, then fails with
/// [`DnsError::BudgetExhausted`]. Every call counts, cached or not, so a request's behaviour does
/// not depend on what other requests warmed up.
pub struct Budgeted<'a> {
    inner: &'a dyn DnsResolver,
    budget: u32,
    used: AtomicU32,
    in_flight: Semaphore,
    lane: Option<&'a Semaphore>,
}

impl<'a> Budgeted<'a> {
    /// Wraps `inner` with a budget of `budget` lookups.
    pub fn new(inner: &'a dyn DnsResolver, budget: u32) -> Self {
        Self {
            inner,
            budget,
            used: AtomicU32::new(0),
            in_flight: Semaphore::new(REQUEST_IN_FLIGHT),
            lane: None,
        }
    }

    /// Also takes a slot of `lane` for each query: the lane's size bounds what all of its
    /// requests together hold in flight (the sweep's lane is a share of the resolver's bound).
    pub fn in_lane(mut self, lane: &'a Semaphore) -> Self {
        self.lane = Some(lane);
        self
    }

    /// Lookups charged so far (refused ones excluded), for diagnostics.
    pub fn used(&self) -> u32 {
        self.used.load(Ordering::SeqCst).min(self.budget)
    }

    /// Lookups still allowed.
    pub fn remaining(&self) -> u32 {
        self.budget - self.used()
    }

    fn charge(&self) -> bool {
        self.used
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |used| {
                (used < self.budget).then_some(used + 1)
            })
            .is_ok()
    }
}

impl std::fmt::Debug for Budgeted<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Budgeted")
            .field("budget", &self.budget)
            .field("used", &self.used())
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl DnsResolver for Budgeted<'_> {
    async fn lookup(&self, name: &str, record_type: RecordType) -> Result<Answer, DnsError> {
        if !self.charge() {
            return Err(DnsError::BudgetExhausted);
        }
        let _lane = match self.lane {
            Some(lane) => Some(lane.acquire().await.map_err(|_| closed())?),
            None => None,
        };
        let _slot = self.in_flight.acquire().await.map_err(|_| closed())?;
        self.inner.lookup(name, record_type).await
    }
}

fn closed() -> DnsError {
    DnsError::Other("resolver closed".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Always;

    #[async_trait]
    impl DnsResolver for Always {
        async fn lookup(&self, _: &str, _: RecordType) -> Result<Answer, DnsError> {
            Ok(Answer::default())
        }
    }

    #[tokio::test]
    async fn stops_at_the_budget() {
        let budgeted = Budgeted::new(&Always, 2);
        assert!(budgeted.lookup("a.test", RecordType::A).await.is_ok());
        assert!(budgeted.lookup("b.test", RecordType::A).await.is_ok());
        assert_eq!(
            budgeted.lookup("c.test", RecordType::A).await,
            Err(DnsError::BudgetExhausted)
        );
        assert_eq!((budgeted.used(), budgeted.remaining()), (2, 0));
    }

    /// Counts the lookups in flight at once.
    #[derive(Default)]
    struct Slow {
        now: std::sync::atomic::AtomicUsize,
        peak: std::sync::atomic::AtomicUsize,
    }

    #[async_trait]
    impl DnsResolver for Slow {
        async fn lookup(&self, _: &str, _: RecordType) -> Result<Answer, DnsError> {
            let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
            self.peak.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            self.now.fetch_sub(1, Ordering::SeqCst);
            Ok(Answer::default())
        }
    }

    #[tokio::test]
    async fn one_request_holds_at_most_its_share_in_flight() {
        let slow = Slow::default();
        let budgeted = Budgeted::new(&slow, 1000);
        let names: Vec<String> = (0..300).map(|i| format!("n{i}.test")).collect();
        futures::future::join_all(names.iter().map(|n| budgeted.lookup(n, RecordType::Txt))).await;
        assert_eq!(slow.peak.load(Ordering::SeqCst), REQUEST_IN_FLIGHT);
    }

    #[tokio::test]
    async fn a_lane_bounds_all_of_its_requests_together() {
        let slow = Slow::default();
        let lane = Semaphore::new(10);
        let requests: Vec<Budgeted<'_>> = (0..4)
            .map(|_| Budgeted::new(&slow, 1000).in_lane(&lane))
            .collect();
        futures::future::join_all(requests.iter().flat_map(|r| {
            (0..20)
                .map(move |i| async move { r.lookup(&format!("n{i}.test"), RecordType::Txt).await })
        }))
        .await;
        assert_eq!(slow.peak.load(Ordering::SeqCst), 10);
    }
}
