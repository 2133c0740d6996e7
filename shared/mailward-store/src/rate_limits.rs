//! Rate-limit windows: one atomic counter per bucket, subject and fixed window, expiring a minute
//! after the window ends, so every instance shares one count.

use super::keys;
use mailward_domain::store::{ItemStore, StoreError};

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
