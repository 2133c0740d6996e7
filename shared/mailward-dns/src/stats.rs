//! What this process's resolvers answered, by outcome, since start: the figures an operator
//! watches (`/metrics`, CloudWatch). Process-wide atomic counters, so that every resolver
//! (the sweep's, the API's) adds to one set.

use mailward_domain::dns::{Answer, DnsError};
use std::sync::atomic::{AtomicU64, Ordering};

/// The outcomes counted, in the order [`counts`] lists them.
pub const OUTCOMES: [&str; 8] = [
    "answer", "nodata", "nxdomain", "servfail", "refused", "timeout", "error", "cached",
];

static COUNTS: [AtomicU64; 8] = [const { AtomicU64::new(0) }; 8];

/// Counts one query sent upstream by its outcome.
pub(crate) fn queried(outcome: &Result<Answer, DnsError>) {
    let index = match outcome {
        Ok(answer) if answer.records.is_empty() => 1,
        Ok(_) => 0,
        Err(DnsError::NxDomain) => 2,
        Err(DnsError::ServFail) => 3,
        Err(DnsError::Refused) => 4,
        Err(DnsError::Timeout) => 5,
        Err(_) => 6,
    };
    COUNTS[index].fetch_add(1, Ordering::Relaxed);
}

/// Counts one lookup answered from the cache.
pub(crate) fn cache_hit() {
    COUNTS[7].fetch_add(1, Ordering::Relaxed);
}

/// Every outcome with its count so far.
pub fn counts() -> [(&'static str, u64); 8] {
    std::array::from_fn(|i| (OUTCOMES[i], COUNTS[i].load(Ordering::Relaxed)))
}
