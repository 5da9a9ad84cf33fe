//! The interruption events Karpenter consumes, typed: spot interruption warning, rebalance
//! recommendation, instance state change, AWS Health scheduled change for EC2 and
//! capacity-reservation interruption, as EventBridge delivers them into SQS. Any other event
//! is a no-op; an event that misses a field its kind needs is an error (such messages are
//! logged and deleted, never retried). [`super::intake`] reads what is not an EventBridge
//! event at all.
//!
//! Envelope fields other than `source`, `detail-type` and `detail` are optional: moto's
//! delivered envelopes lack `account`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ports::HealthCategory;

/// The EventBridge envelope. It serializes back to what it was read from (fields absent on
/// input stay absent).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
pub struct Envelope {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub version: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub id: String,
    #[serde(rename = "detail-type")]
    pub detail_type: String,
    pub source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
    /// RFC3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    #[serde(default)]
    pub resources: Vec<String>,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub detail: Value,
}

/// What an event asks Kerf to do, by Karpenter's message kinds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Interruption {
    SpotInterrupted {
        instance_id: String,
        action: Option<String>,
    },
    RebalanceRecommendation {
        instance_id: String,
    },
    /// State `stopping` / `stopped`.
    InstanceStopped {
        instance_id: String,
        state: String,
    },
    /// State `shutting-down` / `terminated`.
    InstanceTerminated {
        instance_id: String,
        state: String,
    },
    /// AWS Health `scheduledChange` for EC2; may name several instances.
    ScheduledChange {
        instance_ids: Vec<String>,
        event_type_code: Option<String>,
    },
    CapacityReservationInterrupted {
        instance_id: String,
        action: Option<String>,
    },
    /// A failed status check or a scheduled event, from the instance-status poller (never
    /// from the queue).
    InstanceUnhealthy {
        instance_id: String,
        category: HealthCategory,
    },
    /// Anything else (other sources, other states): handled by deleting the message.
    NoOp,
}

impl Interruption {
    /// Karpenter's `message_type` metric label.
    pub fn kind(&self) -> &'static str {
        match self {
            Interruption::SpotInterrupted { .. } => "spot_interrupted",
            Interruption::RebalanceRecommendation { .. } => "rebalance_recommendation",
            Interruption::InstanceStopped { .. } => "instance_stopped",
            Interruption::InstanceTerminated { .. } => "instance_terminated",
            Interruption::ScheduledChange { .. } => "scheduled_change",
            Interruption::CapacityReservationInterrupted { .. } => {
                "capacity_reservation_interrupted"
            }
            Interruption::InstanceUnhealthy { category, .. } => category.kind(),
            Interruption::NoOp => "no_op",
        }
    }

    /// The instances the event is about.
    pub fn instance_ids(&self) -> Vec<&str> {
        match self {
            Interruption::SpotInterrupted { instance_id, .. }
            | Interruption::RebalanceRecommendation { instance_id }
            | Interruption::InstanceStopped { instance_id, .. }
            | Interruption::InstanceTerminated { instance_id, .. }
            | Interruption::CapacityReservationInterrupted { instance_id, .. }
            | Interruption::InstanceUnhealthy { instance_id, .. } => vec![instance_id],
            Interruption::ScheduledChange { instance_ids, .. } => {
                instance_ids.iter().map(String::as_str).collect()
            }
            Interruption::NoOp => Vec::new(),
        }
    }
}

/// A parsed event.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    pub envelope: Envelope,
    pub interruption: Interruption,
}

/// Why a message could not be parsed (Karpenter logs and deletes such messages).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EventError {
    #[error("not an EventBridge envelope: {0}")]
    Envelope(String),
    #[error("{detail_type}: missing or invalid detail field {field:?}")]
    Detail {
        detail_type: String,
        field: &'static str,
    },
}

fn field(env: &Envelope, name: &'static str) -> Result<String, EventError> {
    env.detail
        .get(name)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| EventError::Detail {
            detail_type: env.detail_type.clone(),
            field: name,
        })
}

fn opt(env: &Envelope, name: &str) -> Option<String> {
    env.detail
        .get(name)
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// Parses an SQS message body holding an EventBridge event.
pub fn parse(body: &str) -> Result<Event, EventError> {
    let envelope: Envelope =
        serde_json::from_str(body).map_err(|e| EventError::Envelope(e.to_string()))?;
    event(envelope)
}

/// [`parse`] of a body already read as JSON.
pub fn parse_value(body: Value) -> Result<Event, EventError> {
    let envelope: Envelope =
        serde_json::from_value(body).map_err(|e| EventError::Envelope(e.to_string()))?;
    event(envelope)
}

fn event(envelope: Envelope) -> Result<Event, EventError> {
    let interruption = classify(&envelope)?;
    Ok(Event {
        envelope,
        interruption,
    })
}

fn classify(env: &Envelope) -> Result<Interruption, EventError> {
    if env.version != "0" && !env.version.is_empty() {
        return Ok(Interruption::NoOp);
    }
    Ok(match (env.source.as_str(), env.detail_type.as_str()) {
        ("aws.ec2", "EC2 Spot Instance Interruption Warning") => Interruption::SpotInterrupted {
            instance_id: field(env, "instance-id")?,
            action: opt(env, "instance-action"),
        },
        ("aws.ec2", "EC2 Instance Rebalance Recommendation") => {
            Interruption::RebalanceRecommendation {
                instance_id: field(env, "instance-id")?,
            }
        }
        ("aws.ec2", "EC2 Instance State-change Notification") => state_change(env)?,
        ("aws.ec2", "EC2 Capacity Reservation Instance Interruption Warning") => {
            Interruption::CapacityReservationInterrupted {
                instance_id: field(env, "instance-id")?,
                action: opt(env, "instance-action"),
            }
        }
        ("aws.health", "AWS Health Event") => health(env),
        _ => Interruption::NoOp,
    })
}

fn state_change(env: &Envelope) -> Result<Interruption, EventError> {
    let instance_id = field(env, "instance-id")?;
    let state = field(env, "state")?;
    Ok(match state.as_str() {
        "stopping" | "stopped" => Interruption::InstanceStopped { instance_id, state },
        "shutting-down" | "terminated" => Interruption::InstanceTerminated { instance_id, state },
        _ => Interruption::NoOp,
    })
}

fn health(env: &Envelope) -> Interruption {
    let d = &env.detail;
    let is_ec2 = d.get("service").and_then(Value::as_str) == Some("EC2");
    let scheduled = d.get("eventTypeCategory").and_then(Value::as_str) == Some("scheduledChange");
    if !(is_ec2 && scheduled) {
        return Interruption::NoOp;
    }
    let instance_ids = d
        .get("affectedEntities")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|e| e.get("entityValue").and_then(Value::as_str))
        .map(str::to_string)
        .collect();
    Interruption::ScheduledChange {
        instance_ids,
        event_type_code: opt(env, "eventTypeCode"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spot_warning_without_account() {
        let e = parse(
            r#"{"version":"0","id":"x","detail-type":"EC2 Spot Instance Interruption Warning","source":"aws.ec2",
                "time":"2026-11-21T04:28:08Z","region":"us-west-2","resources":[],
                "detail":{"instance-id":"i-1","instance-action":"terminate"}}"#,
        )
        .unwrap();
        assert_eq!(e.envelope.account, None);
        assert_eq!(e.interruption.kind(), "spot_interrupted");
        assert_eq!(e.interruption.instance_ids(), vec!["i-1"]);
    }

    #[test]
    fn running_state_and_unknown_sources_are_no_ops() {
        let run = r#"{"version":"0","detail-type":"EC2 Instance State-change Notification","source":"aws.ec2","detail":{"instance-id":"i-1","state":"running"}}"#;
        assert_eq!(parse(run).unwrap().interruption, Interruption::NoOp);
        let other = r#"{"detail-type":"x","source":"my.app","detail":{}}"#;
        assert_eq!(parse(other).unwrap().interruption, Interruption::NoOp);
    }

    /// `events/<name>` of the repository.
    fn sample(name: &str) -> String {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../events")
            .join(name);
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    #[test]
    fn every_sample_event_round_trips_and_parses_to_its_kind() {
        let kinds = [
            (
                "spot-interruption.json",
                "spot_interrupted",
                vec!["i-0123456789abcdef0"],
            ),
            (
                "spot-interruption-moto.json",
                "spot_interrupted",
                vec!["i-b8ca42e28c3fc4a6b"],
            ),
            (
                "rebalance-recommendation.json",
                "rebalance_recommendation",
                vec!["i-0b662ef9931388ba0"],
            ),
            (
                "instance-state-change.json",
                "instance_terminated",
                vec!["i-abcd1111"],
            ),
            (
                "scheduled-change.json",
                "scheduled_change",
                vec!["i-12345678", "i-87654321"],
            ),
            (
                "capacity-reservation-interruption.json",
                "capacity_reservation_interrupted",
                vec!["i-0abc"],
            ),
        ];
        for (name, kind, ids) in kinds {
            let body = sample(name);
            let e = parse(&body).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(e.interruption.kind(), kind, "{name}");
            assert_eq!(e.interruption.instance_ids(), ids, "{name}");
            let original: Value = serde_json::from_str(&body).unwrap();
            let back = serde_json::to_value(&e.envelope).unwrap();
            assert_eq!(back, original, "{name} round-trips");
            let again = parse(&back.to_string()).unwrap();
            assert_eq!(again, e, "{name} parses the same after the round trip");
        }
    }

    #[test]
    fn every_state_change_kerf_acts_on_and_the_rest() {
        let state = |s: &str| {
            let body = format!(
                r#"{{"detail-type":"EC2 Instance State-change Notification","source":"aws.ec2","detail":{{"instance-id":"i-1","state":"{s}"}}}}"#
            );
            parse(&body).unwrap().interruption.kind()
        };
        assert_eq!(state("stopping"), "instance_stopped");
        assert_eq!(state("stopped"), "instance_stopped");
        assert_eq!(state("shutting-down"), "instance_terminated");
        assert_eq!(state("terminated"), "instance_terminated");
        for other in ["pending", "running", "rebooting"] {
            assert_eq!(state(other), "no_op", "{other}");
        }
    }

    #[test]
    fn bad_detail_is_an_error() {
        let bad = r#"{"version":"0","detail-type":"EC2 Spot Instance Interruption Warning","source":"aws.ec2","detail":{}}"#;
        assert!(matches!(
            parse(bad),
            Err(EventError::Detail {
                field: "instance-id",
                ..
            })
        ));
        assert!(matches!(parse("nope"), Err(EventError::Envelope(_))));
    }
}
