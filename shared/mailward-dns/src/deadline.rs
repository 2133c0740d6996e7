//! [`Deadline`]: one time limit for every lookup a request makes.
//!
//! A request that must answer its client in time (the records guidance and verification: the
//! client gives up after 10 s) cannot budget each lookup stage on its own: stages in series add
//! their timeouts up. Wrapping the request's resolver in a `Deadline` makes every lookup, in any
//! stage, fail with [`DnsError::Timeout`] once the request's time is spent, so the work ends with
//! what it could learn (an unanswered lookup reads as "could not find out", never as absence).

use async_trait::async_trait;
use mailward_domain::dns::{Answer, DnsError, DnsResolver, RecordType};
use std::time::Duration;
use tokio::time::Instant;

/// A resolver whose lookups all end by one instant.
pub struct Deadline<'a> {
    inner: &'a dyn DnsResolver,
    until: Instant,
}

impl<'a> Deadline<'a> {
    /// Wraps `inner` so every lookup ends within `limit` from now.
    pub fn new(inner: &'a dyn DnsResolver, limit: Duration) -> Self {
        Self {
            inner,
            until: Instant::now() + limit,
        }
    }

    /// Time left before lookups start failing.
    pub fn remaining(&self) -> Duration {
        self.until.saturating_duration_since(Instant::now())
    }
}

impl std::fmt::Debug for Deadline<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deadline")
            .field("remaining", &self.remaining())
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl DnsResolver for Deadline<'_> {
    async fn lookup(&self, name: &str, record_type: RecordType) -> Result<Answer, DnsError> {
        match tokio::time::timeout_at(self.until, self.inner.lookup(name, record_type)).await {
            Ok(answer) => answer,
            Err(_) => Err(DnsError::Timeout),
        }
    }

    async fn lookup_uncached(
        &self,
        name: &str,
        record_type: RecordType,
    ) -> Result<Answer, DnsError> {
        match tokio::time::timeout_at(self.until, self.inner.lookup_uncached(name, record_type))
            .await
        {
            Ok(answer) => answer,
            Err(_) => Err(DnsError::Timeout),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Answers after a fixed delay.
    struct Slow(Duration);

    #[async_trait]
    impl DnsResolver for Slow {
        async fn lookup(&self, _: &str, _: RecordType) -> Result<Answer, DnsError> {
            tokio::time::sleep(self.0).await;
            Ok(Answer::default())
        }
    }

    #[tokio::test(start_paused = true)]
    async fn lookups_in_series_share_one_deadline() {
        let slow = Slow(Duration::from_secs(4));
        let resolver = Deadline::new(&slow, Duration::from_secs(10));
        let started = Instant::now();
        assert!(resolver.lookup("a.test", RecordType::Txt).await.is_ok());
        assert!(resolver.lookup("b.test", RecordType::Txt).await.is_ok());
        assert_eq!(
            resolver.lookup("c.test", RecordType::Txt).await,
            Err(DnsError::Timeout),
            "the third 4 s stage runs out of the 10 s"
        );
        assert_eq!(
            resolver.lookup("d.test", RecordType::Txt).await,
            Err(DnsError::Timeout)
        );
        assert_eq!(started.elapsed(), Duration::from_secs(10));
    }
}
