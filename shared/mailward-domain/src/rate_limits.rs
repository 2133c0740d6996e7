//! The rate-limit counter port: how many requests a subject made in one fixed window.
//!
//! Why a port of its own rather than the item store: the single local process can count in
//! memory (no write per request through the one SQLite writer), while Lambda instances must share
//! one count per bucket in DynamoDB. The HTTP layer only ever sees this trait.

use crate::store::StoreError;
use async_trait::async_trait;

/// One fixed window of one bucket: `[start, end)` in Unix seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// First second of the window.
    pub start: i64,
    /// First second after the window.
    pub end: i64,
}

/// Counts requests per bucket (`scope`), subject and window.
#[async_trait]
pub trait RateCounter: Send + Sync {
    /// Counts one request of `subject` in `scope` during `window` and returns the count so far
    /// (this request included). Counts of earlier windows are forgotten.
    async fn hit(&self, scope: &str, subject: &str, window: Window) -> Result<i64, StoreError>;
}
