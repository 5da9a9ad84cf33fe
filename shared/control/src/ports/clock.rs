//! The Clock port: the only source of "now" for the control layer, so simulated time can
//! drive every reconciler.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

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

/// A clock that only moves when told to (simulated time), or, once told to follow the wall
/// clock, never reads earlier than it (a real control plane's time, to the microsecond).
/// Clones share the same time.
#[derive(Clone, Debug)]
pub struct ManualClock {
    micros: Arc<AtomicI64>,
    wall: Arc<AtomicBool>,
}

impl ManualClock {
    /// A clock reading `start`.
    pub fn new(start: Timestamp) -> Self {
        ManualClock {
            micros: Arc::new(AtomicI64::new(start.as_microsecond())),
            wall: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Where the clock was last moved to (its reading, unless it follows the wall clock).
    pub fn moved(&self) -> Timestamp {
        // Every stored value came from a valid Timestamp plus bounded advances.
        Timestamp::from_microsecond(self.micros.load(Ordering::SeqCst)).unwrap_or(Timestamp::MAX)
    }

    /// From now on the clock reads at least the wall clock: between two moves, time goes on
    /// as it does for functions in Lambda instead of standing at the last move.
    pub fn follow_wall(&self) {
        self.wall.store(true, Ordering::SeqCst);
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
        let set = self.moved();
        if self.wall.load(Ordering::SeqCst) {
            set.max(Timestamp::now())
        } else {
            set
        }
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

    #[test]
    fn a_clock_following_the_wall_never_reads_earlier_than_it() {
        let past: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let c = ManualClock::new(past);
        c.follow_wall();
        let before = Timestamp::now();
        assert!(c.clone().now() >= before);
        // Moved past the wall clock, it reads where it was moved.
        let hour = Timestamp::now() + SignedDuration::from_hours(1);
        let ahead = Timestamp::from_microsecond(hour.as_microsecond()).unwrap();
        c.advance_to(ahead);
        assert_eq!(c.now(), ahead);
    }
}
