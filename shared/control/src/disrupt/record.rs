//! What the disruption function writes on NodeClaims to carry a command across sweeps
//! (time lives in the cluster, not in a process):
//!
//! - `kerf.dev/disruption-pending`: a command computed by one sweep, waiting for the next
//!   sweep at least [`VALIDATION_DELAY`] later to compute it again (Karpenter's 15-second
//!   validation, made two-phase): its id, when, and the instance-type options of each
//!   replacement (a confirmed command may only narrow them, so it costs no more);
//! - `kerf.dev/disruption`: a command under way on its candidates: its id, reason, start and
//!   how many replacements it launched; the replacements carry the label
//!   `kerf.dev/disruption-command=<id>`.

use jiff::{SignedDuration, Timestamp};
use kerf_api::v1::NodeClaim;
use kerf_engine::plan::Disruption;
use serde::{Deserialize, Serialize};

/// Annotation of a command waiting for validation.
pub const PENDING: &str = "kerf.dev/disruption-pending";
/// Annotation of a command under way.
pub const COMMAND: &str = "kerf.dev/disruption";
/// Label of a replacement NodeClaim naming its command.
pub const REPLACEMENT_OF: &str = "kerf.dev/disruption-command";
/// How long a command waits before it is confirmed (Karpenter's validation delay).
pub const VALIDATION_DELAY: SignedDuration = SignedDuration::from_secs(15);
/// A command whose replacements are not all initialized after this is rolled back.
pub const COMMAND_TIMEOUT: SignedDuration = SignedDuration::from_mins(10);

/// A command recorded for validation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pending {
    pub id: String,
    pub at: Timestamp,
    /// The instance-type options of each replacement.
    pub options: Vec<Vec<String>>,
}

impl Pending {
    pub fn of(d: &Disruption, now: Timestamp) -> Pending {
        Pending {
            id: d.id.clone(),
            at: now,
            options: d
                .replacements
                .iter()
                .map(|r| r.instance_type_options.clone())
                .collect(),
        }
    }

    /// Whether `d`, computed now, confirms this record: same command, recorded long
    /// enough ago, and every recorded option still an option (so no more expensive).
    pub fn confirmed_by(&self, d: &Disruption, now: Timestamp) -> bool {
        self.id == d.id
            && now >= self.at + VALIDATION_DELAY
            && self.options.len() == d.replacements.len()
            && self
                .options
                .iter()
                .zip(&d.replacements)
                .all(|(then, r)| then.iter().all(|t| r.instance_type_options.contains(t)))
    }
}

/// A command under way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Command {
    pub id: String,
    /// The NodeClaim `DisruptionReason` condition's reason (`Empty`, `Drifted`, ...).
    pub reason: String,
    pub started: Timestamp,
    /// Replacements it launches (found by the [`REPLACEMENT_OF`] label).
    pub replacements: usize,
}

fn annotation<'a>(c: &'a NodeClaim, key: &str) -> Option<&'a String> {
    c.metadata.annotations.as_ref()?.get(key)
}

/// The pending record on a claim, if any (unreadable counts as none).
pub fn pending(c: &NodeClaim) -> Option<Pending> {
    serde_json::from_str(annotation(c, PENDING)?).ok()
}

/// The command under way on a claim, if any.
pub fn command(c: &NodeClaim) -> Option<Command> {
    serde_json::from_str(annotation(c, COMMAND)?).ok()
}

/// JSON text of a record.
pub fn text<T: Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(options: &[&[&str]]) -> Disruption {
        let launch = |o: &&[&str]| kerf_engine::plan::Launch {
            node_claim: String::new(),
            node_pool: "default".into(),
            instance_type: o[0].into(),
            capacity_type: kerf_catalog::CapacityType::OnDemand,
            zone: "a".into(),
            price: 0.1,
            instance_type_options: o.iter().map(|s| s.to_string()).collect(),
            requirements: vec![],
            pods: vec![],
            requests: Default::default(),
        };
        let replacements: Vec<_> = options.iter().map(launch).collect();
        Disruption {
            reason: "underutilized".into(),
            action: "replace".into(),
            node_claims: vec!["a".into()],
            nodes: vec!["n".into()],
            replacement: replacements.first().cloned(),
            savings_per_hour: 0.1,
            replacements,
            method: kerf_engine::plan::Method::SingleNodeConsolidation,
            id: "underutilized-1".into(),
            node_pools: vec!["default".into()],
            prices: vec![0.2],
            pods: vec![],
            nominations: vec![],
            drift_reasons: vec![],
            disruption_cost: 1.0,
        }
    }

    #[test]
    fn a_record_is_confirmed_after_the_delay_by_a_command_no_more_expensive() {
        let t0: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let p = Pending::of(&d(&[&["m5.large", "c5.large"]]), t0);
        let later = t0 + SignedDuration::from_secs(15);
        assert!(!p.confirmed_by(
            &d(&[&["m5.large", "c5.large"]]),
            t0 + SignedDuration::from_secs(14)
        ));
        assert!(p.confirmed_by(&d(&[&["m5.large", "c5.large", "m6a.large"]]), later));
        assert!(
            !p.confirmed_by(&d(&[&["c5.large"]]), later),
            "an option gone: maybe more expensive now"
        );
        assert!(!p.confirmed_by(&d(&[]), later));
        let round: Pending = serde_json::from_str(&text(&p)).unwrap();
        assert_eq!(round, p);
    }
}
