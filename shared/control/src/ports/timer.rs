//! Timers: a delayed message on a function's own queue (the disruption function's timer
//! queue, the provisioner's request queue), whose body names what to examine
//! again, for which objects, and the moment it is for. State stays in the cluster (a record
//! on the NodeClaim, a condition's time, `lastPodEventTime`): a timer only wakes a function
//! up, so a lost one costs latency (the schedule's next pass does the same work) and a
//! duplicated one costs an invocation, never correctness.
//!
//! SQS delays a message by at most 15 minutes: a timer for a later moment is sent for the
//! longest delay and sent again, with what remains, when it arrives early ([`Timer::early`]).

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use super::{Queue, QueueError};

/// The body's version: a message of another version is dropped with a warning.
pub const TIMER_VERSION: u32 = 1;
/// SQS's longest `DelaySeconds`.
pub const MAX_DELAY: SignedDuration = SignedDuration::from_mins(15);

/// Why a function is woken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum TimerKind {
    /// A disruption command recorded 15 s ago is due for validation.
    Validate,
    /// Run a disruption pass again now: a command started or completed, or a pass left work.
    Requeue,
    /// A node's `consolidateAfter` (or `expireAfter`, or its repair toleration) runs out at
    /// `due`.
    Due,
    /// Pods left or terminated on the named nodes: their NodeClaims' `lastPodEventTime`
    /// moves to now, which restarts `consolidateAfter`.
    PodEvent,
    /// A NodeClaim's launch or registration timeout runs out at `due` (the provisioner's).
    Liveness,
    /// Unavailable offerings expire at `due` while pods still wait for them (the
    /// provisioner's).
    Offerings,
    /// A NodePool or EC2NodeClass was created or its spec changed (the webhook's): their
    /// statuses and drift are looked at now, as Karpenter's controllers react to the change.
    Changed,
}

impl TimerKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TimerKind::Validate => "validate",
            TimerKind::Requeue => "requeue",
            TimerKind::Due => "due",
            TimerKind::PodEvent => "podEvent",
            TimerKind::Liveness => "liveness",
            TimerKind::Offerings => "offerings",
            TimerKind::Changed => "changed",
        }
    }
}

/// One timer message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Timer {
    pub version: u32,
    pub kind: TimerKind,
    /// The moment it is for.
    pub due: Timestamp,
    /// The objects it names (NodeClaims, or Nodes for [`TimerKind::PodEvent`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub objects: Vec<String>,
}

/// A message that is not a timer of this version.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a timer message (version {TIMER_VERSION}): {0}")]
pub struct NotATimer(pub String);

impl Timer {
    pub fn new(kind: TimerKind, due: Timestamp, objects: Vec<String>) -> Self {
        Timer {
            version: TIMER_VERSION,
            kind,
            due,
            objects,
        }
    }

    /// Reads a message body.
    pub fn parse(body: &str) -> Result<Timer, NotATimer> {
        let t: Timer = serde_json::from_str(body).map_err(|e| NotATimer(e.to_string()))?;
        if t.version != TIMER_VERSION {
            return Err(NotATimer(format!("version {}", t.version)));
        }
        Ok(t)
    }

    pub fn body(&self) -> String {
        // A struct of strings, a timestamp and an enum always serializes.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The delay to send it with at `now` (0 when due, at most [`MAX_DELAY`]).
    pub fn delay_at(&self, now: Timestamp) -> u32 {
        let d = self
            .due
            .duration_since(now)
            .clamp(SignedDuration::ZERO, MAX_DELAY);
        // Round up: a timer never wakes before its moment.
        (d.as_millis() as u64).div_ceil(1000) as u32
    }

    /// Whether it arrived before its moment (a chained timer with time still to wait).
    pub fn early(&self, now: Timestamp) -> bool {
        self.delay_at(now) > 0
    }

    /// Sends it on `queue` to arrive at its moment (or as late as SQS allows).
    pub async fn send<Q: Queue>(&self, queue: &Q, now: Timestamp) -> Result<String, QueueError> {
        queue.send(&self.body(), self.delay_at(now)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t0() -> Timestamp {
        "2026-01-01T00:00:00Z".parse().unwrap()
    }

    #[test]
    fn a_timer_round_trips_and_other_versions_are_refused() {
        let t = Timer::new(TimerKind::Validate, t0(), vec!["default-abc".into()]);
        assert_eq!(Timer::parse(&t.body()).unwrap(), t);
        assert!(t.body().contains(r#""kind":"validate""#), "{}", t.body());
        let mut v2 = t.clone();
        v2.version = 2;
        assert!(Timer::parse(&v2.body()).is_err());
        assert!(Timer::parse(r#"{"nodeClaim": "x"}"#).is_err());
    }

    #[test]
    fn delays_round_up_and_long_timers_are_chained() {
        let t = Timer::new(
            TimerKind::Due,
            t0() + SignedDuration::from_millis(15_200),
            vec![],
        );
        assert_eq!(t.delay_at(t0()), 16, "never wakes before its moment");
        assert_eq!(t.delay_at(t0() + SignedDuration::from_secs(20)), 0);
        let far = Timer::new(TimerKind::Due, t0() + SignedDuration::from_hours(1), vec![]);
        assert_eq!(far.delay_at(t0()), 900);
        assert!(far.early(t0() + SignedDuration::from_mins(15)));
        assert!(!far.early(t0() + SignedDuration::from_hours(1)));
    }
}
