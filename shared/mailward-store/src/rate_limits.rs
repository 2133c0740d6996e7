//! Rate-limit windows in the item store: one atomic counter per bucket, subject and fixed window,
//! expiring a minute after the window ends, so every Lambda instance shares one count. The
//! adapter of the [`RateCounter`] port used on AWS (DynamoDB conditional counters).

use super::keys;
use async_trait::async_trait;
use mailward_domain::rate_limits::{RateCounter, Window};
use mailward_domain::store::{ItemStore, StoreError};
use std::sync::Arc;

/// Counts one request in the window starting at `window_start` and returns the count so far.
pub async fn count(
    store: &dyn ItemStore,
    scope: &str,
    subject: &str,
    window_start: i64,
    window_end: i64,
) -> Result<i64, StoreError> {
    store
        .increment(
            &keys::rate_pk(scope, subject),
            &window_start.to_string(),
            1,
            Some(window_end + 60),
        )
        .await
}

/// The shared-store [`RateCounter`]: one counter write per hit, visible to every instance.
#[derive(Clone)]
pub struct StoreRateCounter {
    store: Arc<dyn ItemStore>,
}

impl StoreRateCounter {
    /// Counts in `store`.
    pub fn new(store: Arc<dyn ItemStore>) -> Self {
        Self { store }
    }
}

impl std::fmt::Debug for StoreRateCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreRateCounter").finish_non_exhaustive()
    }
}

#[async_trait]
impl RateCounter for StoreRateCounter {
    async fn hit(&self, scope: &str, subject: &str, window: Window) -> Result<i64, StoreError> {
        count(
            self.store.as_ref(),
            scope,
            subject,
            window.start,
            window.end,
        )
        .await
    }
}
