//! The clock port: all time goes through it so tests can move time instead of sleeping.

use std::sync::Mutex;
use time::{Duration, OffsetDateTime};

/// Source of "now". Production uses [`SystemClock`]; tests use [`ManualClock`] and advance it.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// The current instant in UTC.
    fn now(&self) -> OffsetDateTime;

    /// The current instant as Unix seconds (the unit of TTLs and rate-limit windows).
    fn unix(&self) -> i64 {
        self.now().unix_timestamp()
    }
}

/// The real wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> OffsetDateTime {
        OffsetDateTime::now_utc()
    }
}

/// A clock that only moves when told to, so expiry rules can be tested without waiting.
#[derive(Debug)]
pub struct ManualClock {
    now: Mutex<OffsetDateTime>,
}

impl ManualClock {
    /// A manual clock starting at `start`.
    pub fn new(start: OffsetDateTime) -> Self {
        Self {
            now: Mutex::new(start),
        }
    }

    /// A manual clock starting at the current wall-clock time (truncated to whole seconds).
    pub fn starting_now() -> Self {
        let now = OffsetDateTime::now_utc();
        Self::new(now.replace_nanosecond(0).unwrap_or(now))
    }

    /// Moves the clock forward by `by`.
    pub fn advance(&self, by: Duration) {
        let mut now = self.now.lock().unwrap_or_else(|p| p.into_inner());
        *now += by;
    }

    /// Sets the clock to `at` (tests of certificates valid only at a past moment).
    pub fn set(&self, at: OffsetDateTime) {
        *self.now.lock().unwrap_or_else(|p| p.into_inner()) = at;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> OffsetDateTime {
        *self.now.lock().unwrap_or_else(|p| p.into_inner())
    }
}
