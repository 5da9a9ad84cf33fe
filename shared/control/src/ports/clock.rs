//! The Clock port: the only source of "now" for the control layer, so simulated time can
//! drive every reconciler.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use jiff::{SignedDuration, Timestamp};

/// Where the current time comes from.
pub trait Clock: Send + Sync {
    /// The current time.
    fn now(&self) -> Timestamp;
}

/// The machine's clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}

/// A clock that only moves when told to (simulated time). Clones share the same time.
#[derive(Clone, Debug)]
pub struct ManualClock {
    micros: Arc<AtomicI64>,
}

impl ManualClock {
    /// A clock reading `start`.
    pub fn new(start: Timestamp) -> Self {
        ManualClock {
            micros: Arc::new(AtomicI64::new(start.as_microsecond())),
        }
    }

    /// Moves the clock forward by `d` (a negative `d` is ignored: time never runs back).
    pub fn advance(&self, d: SignedDuration) {
        let us = d.as_micros().clamp(0, i128::from(i64::MAX)) as i64;
        self.micros.fetch_add(us, Ordering::SeqCst);
    }

    /// Sets the clock to `t` if `t` is later than the current reading.
    pub fn advance_to(&self, t: Timestamp) {
        self.micros.fetch_max(t.as_microsecond(), Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        // Every stored value came from a valid Timestamp plus bounded advances.
        Timestamp::from_microsecond(self.micros.load(Ordering::SeqCst)).unwrap_or(Timestamp::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_forward_and_is_shared() {
        let t0: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let c = ManualClock::new(t0);
        let c2 = c.clone();
        c.advance(SignedDuration::from_secs(90));
        assert_eq!(c2.now(), t0 + SignedDuration::from_secs(90));
        c.advance(SignedDuration::from_secs(-30));
        c.advance_to(t0);
        assert_eq!(c.now(), t0 + SignedDuration::from_secs(90));
    }
}
