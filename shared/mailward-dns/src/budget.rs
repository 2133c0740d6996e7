//! [`Budgeted`]: a per-request query budget over any resolver.
//!
//! Hostile DNS (include cycles, 50 includes, CNAME loops) must end within a bounded number of
//! queries; one request wraps its resolver in a `Budgeted` and every component sharing it draws
//! from the same budget.

use async_trait::async_trait;
use mailward_domain::dns::{Answer, DnsError, DnsResolver, RecordType};
use std::sync::atomic::{AtomicU32, Ordering};

/// A resolver that answers at most `budget` lookups, then fails with
/// [`DnsError::BudgetExhausted`]. Every call counts, cached or not, so a request's behaviour does
/// not depend on what other requests warmed up.
pub struct Budgeted<'a> {
    inner: &'a dyn DnsResolver,
    budget: u32,
    used: AtomicU32,
}

impl<'a> Budgeted<'a> {
    /// Wraps `inner` with a budget of `budget` lookups.
    pub fn new(inner: &'a dyn DnsResolver, budget: u32) -> Self {
        Self {
            inner,
            budget,
            used: AtomicU32::new(0),
        }
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
        self.inner.lookup(name, record_type).await
    }
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
}
