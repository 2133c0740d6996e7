//! Pacing of bulk writes per partition key. A DynamoDB partition key takes at most 1,000 write
//! units a second; a bulk write past that (a 100,000-row report's chunks, a domain's thousands
//! of senders after identification) is throttled, and a throttled write that runs out of SDK
//! retries fails the whole job, which the queue then runs again from the start. So
//! `put_all` and `write_each` hold each key of one call to [`UNITS_PER_SECOND`] once its first
//! second's worth is written: small bulk writes go at full speed, large ones take as long as
//! the key needs and finish.

use mailward_domain::store::Item;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Write units a second one bulk call sends to one partition key (under the 1,000 limit,
/// leaving room for the other writers of the key).
pub const UNITS_PER_SECOND: f64 = 800.0;

/// The write units DynamoDB bills for putting `item` outside a transaction: one per started
/// kilobyte of its key, payload and attributes.
pub fn units(item: &Item) -> f64 {
    let index_keys: usize = [&item.gsi1, &item.gsi2]
        .into_iter()
        .flatten()
        .map(|k| k.pk.len() + k.sk.len())
        .sum();
    // Attribute names and the version, counter and expiry numbers: about 40 bytes.
    let size = item.pk.len() + item.sk.len() + item.data.len() + index_keys + 40;
    size.div_ceil(1024) as f64
}

/// How long one call has written to each key, and how much.
#[derive(Debug)]
pub struct KeyPacer {
    start: Instant,
    written: HashMap<String, f64>,
    rate: f64,
}

impl KeyPacer {
    /// A pacer for one bulk call.
    pub fn new() -> Self {
        Self::with_rate(UNITS_PER_SECOND)
    }

    /// A pacer at `rate` units a second per key.
    pub fn with_rate(rate: f64) -> Self {
        Self {
            start: Instant::now(),
            written: HashMap::new(),
            rate,
        }
    }

    /// Counts `units` more for `pk` and says how long to wait before writing them: nothing for
    /// the key's first second's worth, then as long as keeps it at the rate.
    pub fn admit(&mut self, pk: &str, units: f64) -> Duration {
        let total = self.written.entry(pk.to_owned()).or_default();
        *total += units;
        let due = ((*total - self.rate) / self.rate).max(0.0);
        Duration::from_secs_f64(due).saturating_sub(self.start.elapsed())
    }
}

impl Default for KeyPacer {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_writes_its_first_second_at_once_then_at_the_rate() {
        let mut pacer = KeyPacer::with_rate(100.0);
        assert_eq!(pacer.admit("A", 60.0), Duration::ZERO);
        assert_eq!(pacer.admit("A", 40.0), Duration::ZERO);
        // 150 units on one key: half a second past its first second's worth.
        let wait = pacer.admit("A", 50.0);
        assert!(wait > Duration::from_millis(400) && wait <= Duration::from_millis(500));
        // Another key has its own budget.
        assert_eq!(pacer.admit("B", 100.0), Duration::ZERO);
    }

    #[test]
    fn units_count_started_kilobytes() {
        assert_eq!(units(&Item::new("P", "S", vec![0; 10])), 1.0);
        assert_eq!(units(&Item::new("P", "S", vec![0; 2_000])), 2.0);
        assert_eq!(units(&Item::new("P", "S", vec![0; 35_000])), 35.0);
    }
}
