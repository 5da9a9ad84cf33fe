//! A provisioning hint: the message the webhook sends on the provisioner's queue when a pod
//! becomes unschedulable. It only wakes the provisioner (the snapshot is the truth), and it
//! says when the pods arrived, so that the provisioner batches arrivals as Karpenter does
//! ([`crate::provision::batch`]).

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

/// Why the provisioner is woken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum HintReason {
    /// Pods became unschedulable (or a pass is asked for again).
    PodUnschedulable,
}

/// The body of a provisioning hint.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Hint {
    pub reason: HintReason,
    /// `namespace/name` of the pods, when known.
    #[serde(default)]
    pub pods: Vec<String>,
    /// When the pods arrived, to the second (as Events show it).
    pub time: String,
    /// The same moment to the nanosecond (absent in hints of older versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<Timestamp>,
    /// On a hint sent again while a batch waits for arrivals to stop: the batch's first
    /// arrival, so that the batch never waits longer than its maximum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<Timestamp>,
}

impl Hint {
    /// Pods arrived at `now`.
    pub fn new(pods: &[String], now: Timestamp) -> Hint {
        Hint {
            reason: HintReason::PodUnschedulable,
            pods: pods.to_vec(),
            time: crate::claim::rfc3339(now),
            at: Some(now),
            since: None,
        }
    }

    pub fn body(&self) -> String {
        // Strings, timestamps and a unit enum always serialize.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The hint a body holds, or `None` for any other body (a timer, garbage).
    pub fn parse(body: &str) -> Option<Hint> {
        serde_json::from_str(body).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hint_round_trips_and_keeps_its_second_for_readers() {
        let now: Timestamp = "2026-01-01T00:00:01.250Z".parse().unwrap();
        let h = Hint::new(&["default/a".into()], now);
        let body = h.body();
        assert!(body.contains(r#""reason":"PodUnschedulable""#), "{body}");
        assert!(body.contains(r#""time":"2026-01-01T00:00:01Z""#), "{body}");
        assert_eq!(Hint::parse(&body), Some(h));
        // A hint of an older version (no `at`) still parses; a timer does not.
        let old = r#"{"reason":"PodUnschedulable","pods":[],"time":"2026-01-01T00:00:01Z"}"#;
        assert_eq!(Hint::parse(old).and_then(|h| h.at), None);
        assert!(Hint::parse(r#"{"version":1,"kind":"due"}"#).is_none());
    }
}
