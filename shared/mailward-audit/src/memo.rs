//! An audit-scoped, single-flight memo in front of the resolver.
//!
//! Why: the dimensions share names (`_dmarc.<domain>` is read by record discovery and by the
//! policy tree walk; SPF's `mx` and `a` terms ask what the MX dimension asks; report
//! authorization walks names the policy walk already asked). With the memo, the first caller's
//! query is shared by every concurrent or later caller for the same name and type, so work that
//! is started early (speculatively, to shorten the critical path) is never paid twice. Failures
//! are memoized too: within one audit a name that timed out is not asked again.

use futures::future::{BoxFuture, FutureExt, Shared};
use mailward_domain::dns::{Answer, DnsError, DnsResolver, RecordType};
use std::collections::HashMap;
use std::sync::Mutex;

type Pending<'a> = Shared<BoxFuture<'a, Result<Answer, DnsError>>>;

/// A resolver that answers each `(name, type)` at most once per audit.
pub struct Memo<'a> {
    inner: &'a dyn DnsResolver,
    entries: Mutex<HashMap<(String, RecordType), Pending<'a>>>,
}

impl<'a> Memo<'a> {
    /// Wraps `inner` for one audit.
    pub fn new(inner: &'a dyn DnsResolver) -> Self {
        Memo {
            inner,
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// The shared pending lookup for `name`/`record_type`, created on first use.
    fn pending(&self, name: &str, record_type: RecordType) -> Pending<'a> {
        let key = (name.trim_end_matches('.').to_ascii_lowercase(), record_type);
        let inner = self.inner;
        let make = |name: String| -> Pending<'a> {
            async move { inner.lookup(&name, record_type).await }
                .boxed()
                .shared()
        };
        match self.entries.lock() {
            Ok(mut map) => map
                .entry(key.clone())
                .or_insert_with(|| make(key.0))
                .clone(),
            // A poisoned lock only means another task panicked; skip the memo.
            Err(_) => make(key.0),
        }
    }
}

#[async_trait::async_trait]
impl DnsResolver for Memo<'_> {
    async fn lookup(&self, name: &str, record_type: RecordType) -> Result<Answer, DnsError> {
        self.pending(name, record_type).await
    }
}
