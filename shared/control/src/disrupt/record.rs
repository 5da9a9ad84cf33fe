//! What the disruption function writes on NodeClaims to carry a command across sweeps
//! (time lives in the cluster, not in a process):
//!
//! - `kerf.dev/disruption-pending`: a command computed by one pass, validated
//!   [`VALIDATION_DELAY`] later (Karpenter's 15-second validation; a timer message wakes the
//!   function for it): its id, when, its method and candidates, and the instance-type options
//!   of each replacement (the validated command may only narrow them, so it costs no more);
//! - `kerf.dev/disruption`: a command under way on its candidates: its id, reason, start and
//!   how many replacements it launched; the replacements carry the label
//!   `kerf.dev/disruption-command=<id>`.

use jiff::{SignedDuration, Timestamp};
use kerf_api::v1::NodeClaim;
use kerf_engine::Recorded;
use kerf_engine::plan::{CommandReason, Disruption, Method};
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

/// A command recorded for validation: what the validation 15 s later checks again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pending {
    pub id: String,
    pub at: Timestamp,
    pub method: Method,
    /// Its candidates (the record sits on each of them).
    pub node_claims: Vec<String>,
    /// The instance-type options of each replacement.
    pub options: Vec<Vec<String>>,
}

impl Pending {
    pub fn of(d: &Disruption, now: Timestamp) -> Pending {
        Pending {
            id: d.id.clone(),
            at: now,
            method: d.method,
            node_claims: d.node_claims.clone(),
            options: d
                .replacements
                .iter()
                .map(|r| r.instance_type_options.clone())
                .collect(),
        }
    }

    /// When it is due for validation.
    pub fn due(&self) -> Timestamp {
        self.at + VALIDATION_DELAY
    }

    /// The engine's view of it.
    pub fn recorded(&self) -> Recorded<'_> {
        Recorded {
            method: self.method,
            node_claims: &self.node_claims,
            options: &self.options,
        }
    }
}

/// A command under way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Command {
    pub id: String,
    /// Its reason, recorded as the NodeClaim `DisruptionReason` condition's reason (`Empty`,
    /// `Drifted`, ...).
    #[serde(with = "condition_reason")]
    pub reason: CommandReason,
    pub started: Timestamp,
    /// Replacements it launches (found by the [`REPLACEMENT_OF`] label).
    pub replacements: usize,
}

/// A [`CommandReason`] in the `DisruptionReason` condition's spelling.
mod condition_reason {
    use kerf_engine::plan::CommandReason;
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub fn serialize<S: Serializer>(r: &CommandReason, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(r.condition_reason())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<CommandReason, D::Error> {
        let s = String::deserialize(d)?;
        CommandReason::from_condition_reason(&s)
            .ok_or_else(|| D::Error::custom(format!("unknown disruption reason {s:?}")))
    }
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

    #[test]
    fn a_record_round_trips_and_is_due_after_the_validation_delay() {
        let t0: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let p = Pending {
            id: "underutilized-1".into(),
            at: t0,
            method: Method::SingleNodeConsolidation,
            node_claims: vec!["a".into()],
            options: vec![vec!["m5.large".into(), "c5.large".into()]],
        };
        assert_eq!(p.due(), t0 + SignedDuration::from_secs(15));
        let round: Pending = serde_json::from_str(&text(&p)).unwrap();
        assert_eq!(round, p);
        assert_eq!(round.recorded().options, &p.options[..]);
    }
}
