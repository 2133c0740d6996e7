//! A short-lived cache of definitive outcomes (answers, NODATA and NXDOMAIN).
//!
//! Failures (SERVFAIL, timeouts...) are never cached: the next request should try again. Entries
//! live for the smaller of the record TTL and the configured cap, so a record a user just
//! published shows up within seconds.

use mailward_domain::dns::{Answer, DnsError, RecordType};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

type Key = (String, RecordType);
type Outcome = Result<Answer, DnsError>;

/// The cache; cheap to share behind the resolver's `Arc`.
pub(crate) struct Cache {
    cap: Duration,
    capacity: usize,
    entries: Mutex<HashMap<Key, (Instant, Outcome)>>,
}

impl Cache {
    pub(crate) fn new(cap: Duration, capacity: usize) -> Self {
        Self {
            cap,
            capacity,
            entries: Mutex::new(HashMap::new()),
        }
    }

    fn enabled(&self) -> bool {
        !self.cap.is_zero() && self.capacity > 0
    }

    /// The cached outcome for `name` (canonical) and `record_type`, if still fresh.
    pub(crate) fn get(&self, name: &str, record_type: RecordType) -> Option<Outcome> {
        if !self.enabled() {
            return None;
        }
        let entries = self.entries.lock().ok()?;
        let (expires, outcome) = entries.get(&(name.to_owned(), record_type))?;
        (*expires > Instant::now()).then(|| outcome.clone())
    }

    /// Stores a definitive outcome; `ttl` is the record (or negative) TTL when known.
    pub(crate) fn put(
        &self,
        name: &str,
        record_type: RecordType,
        outcome: &Outcome,
        ttl: Option<u32>,
    ) {
        if !self.enabled() || !matches!(outcome, Ok(_) | Err(DnsError::NxDomain)) {
            return;
        }
        let lifetime = ttl
            .map(|t| Duration::from_secs(u64::from(t)).min(self.cap))
            .unwrap_or(self.cap);
        if lifetime.is_zero() {
            return;
        }
        let Ok(mut entries) = self.entries.lock() else {
            return;
        };
        let now = Instant::now();
        if entries.len() >= self.capacity {
            entries.retain(|_, (expires, _)| *expires > now);
            if entries.len() >= self.capacity {
                entries.clear();
            }
        }
        let Some(expires) = now.checked_add(lifetime) else {
            return;
        };
        entries.insert((name.to_owned(), record_type), (expires, outcome.clone()));
    }

    /// Forgets everything (tests, and callers that know the world just changed).
    pub(crate) fn clear(&self) {
        if let Ok(mut entries) = self.entries.lock() {
            entries.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caches_definitive_outcomes_only() {
        let cache = Cache::new(Duration::from_secs(30), 2);
        cache.put("a.test", RecordType::A, &Ok(Answer::default()), Some(300));
        cache.put("b.test", RecordType::A, &Err(DnsError::NxDomain), None);
        cache.put("c.test", RecordType::A, &Err(DnsError::ServFail), None);
        cache.put("d.test", RecordType::A, &Ok(Answer::default()), Some(0));
        assert_eq!(
            cache.get("a.test", RecordType::A),
            Some(Ok(Answer::default()))
        );
        assert_eq!(
            cache.get("b.test", RecordType::A),
            Some(Err(DnsError::NxDomain))
        );
        assert_eq!(cache.get("c.test", RecordType::A), None);
        assert_eq!(cache.get("d.test", RecordType::A), None);
        assert_eq!(cache.get("a.test", RecordType::Txt), None);
        cache.put("e.test", RecordType::A, &Ok(Answer::default()), None);
        assert_eq!(
            cache.get("e.test", RecordType::A),
            Some(Ok(Answer::default()))
        );
        cache.clear();
        assert_eq!(cache.get("e.test", RecordType::A), None);
        let off = Cache::new(Duration::ZERO, 10);
        off.put("a.test", RecordType::A, &Ok(Answer::default()), None);
        assert_eq!(off.get("a.test", RecordType::A), None);
    }
}
