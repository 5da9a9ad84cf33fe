//! Batching pending pods as Karpenter's provisioner does: a batch starts with the first pod
//! that arrives and ends when no new pod has arrived for [`BATCH_IDLE`], or [`BATCH_MAX`]
//! after it started, so that a scale-out whose pods the ReplicaSet controller creates (and
//! kube-scheduler marks unschedulable) over several seconds is planned as one.
//!
//! The batch lives in the queue, not in memory: an invocation whose hints say pods are still
//! arriving sends one hint again, delayed by what remains of the idle time, carrying the
//! batch's first arrival, and runs no pass. A lost hint costs latency (the schedule's sweep
//! provisions), a duplicated one an invocation.

use jiff::{SignedDuration, Timestamp};

use crate::ports::hint::Hint;

/// A batch ends once no pod has arrived for this long (Karpenter's `BATCH_IDLE_DURATION`).
pub const BATCH_IDLE: SignedDuration = SignedDuration::from_secs(1);
/// A batch ends this long after its first pod arrived (Karpenter's `BATCH_MAX_DURATION`).
pub const BATCH_MAX: SignedDuration = SignedDuration::from_secs(10);
/// At most this many pod names ride on a carried hint (they only inform: the pass reads the
/// cluster), which keeps it far below SQS's 256 KiB.
const CARRIED_PODS: usize = 100;

/// When the pods of a batch of hints arrived.
#[derive(Clone, Debug, PartialEq)]
pub struct Arrivals {
    pub first: Timestamp,
    pub last: Timestamp,
    pub pods: Vec<String>,
}

impl Arrivals {
    /// The arrivals the hints tell of; `None` when a hint does not say when its pods arrived
    /// (an older version's), which then runs a pass at once.
    pub fn of(hints: &[Hint]) -> Option<Arrivals> {
        let mut out: Option<Arrivals> = None;
        for h in hints {
            let at = h.at?;
            let first = h.since.unwrap_or(at).min(at);
            let a = out.get_or_insert_with(|| Arrivals {
                first,
                last: at,
                pods: Vec::new(),
            });
            a.first = a.first.min(first);
            a.last = a.last.max(at);
            for p in &h.pods {
                if !a.pods.contains(p) {
                    a.pods.push(p.clone());
                }
            }
        }
        out
    }

    /// Whether the batch is over at `now`, or how many seconds to wait (SQS delays by whole
    /// seconds: at least one).
    pub fn wait(&self, now: Timestamp) -> Option<u32> {
        let idle = now.duration_since(self.last);
        if idle >= BATCH_IDLE || now.duration_since(self.first) >= BATCH_MAX {
            return None;
        }
        let left = (BATCH_IDLE - idle).min(BATCH_MAX - now.duration_since(self.first));
        Some(((left.as_millis().max(0) as u64).div_ceil(1000) as u32).max(1))
    }

    /// The hint that carries the batch on.
    pub fn carried(&self) -> Hint {
        let pods = &self.pods[..self.pods.len().min(CARRIED_PODS)];
        Hint {
            since: Some(self.first),
            ..Hint::new(pods, self.last)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> Timestamp {
        format!("2026-01-01T00:00:{s}Z").parse().unwrap()
    }

    fn hint(pod: &str, s: &str) -> Hint {
        Hint::new(&[pod.to_string()], at(s))
    }

    #[test]
    fn a_batch_waits_while_pods_arrive_and_ends_when_they_stop() {
        let a = Arrivals::of(&[hint("a", "00.000"), hint("b", "00.700")]).unwrap();
        assert_eq!((a.first, a.last), (at("00.000"), at("00.700")));
        assert_eq!(a.pods, ["a", "b"]);
        // 0.3 s after the last arrival: wait what remains of the second.
        assert_eq!(a.wait(at("01.000")), Some(1));
        // A second without arrivals: the batch is over.
        assert_eq!(a.wait(at("01.700")), None);
    }

    #[test]
    fn a_carried_batch_keeps_its_first_arrival_and_ends_after_ten_seconds() {
        let a = Arrivals::of(&[hint("a", "00.000"), hint("b", "09.500")]).unwrap();
        let carried = a.carried();
        assert_eq!(carried.since, Some(at("00.000")));
        assert_eq!(carried.at, Some(at("09.500")));
        let again = Arrivals::of(&[carried, hint("c", "09.800")]).unwrap();
        assert_eq!(again.first, at("00.000"));
        assert_eq!(again.pods, ["a", "b", "c"]);
        // Pods still arriving, but the batch began 10 s ago.
        assert_eq!(again.wait(at("09.900")), Some(1));
        assert_eq!(again.wait(at("10.000")), None);
    }

    #[test]
    fn a_carried_hint_names_at_most_a_hundred_pods() {
        let hints: Vec<Hint> = (0..150).map(|i| hint(&format!("p{i}"), "00.000")).collect();
        let a = Arrivals::of(&hints).unwrap();
        assert_eq!(a.pods.len(), 150);
        assert_eq!(a.carried().pods.len(), 100);
    }

    #[test]
    fn hints_without_arrival_times_run_at_once() {
        let mut old = hint("a", "00.000");
        old.at = None;
        assert_eq!(Arrivals::of(&[hint("b", "00.000"), old]), None);
        assert_eq!(Arrivals::of(&[]), None);
    }
}
