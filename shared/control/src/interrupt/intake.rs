//! Taking a batch in, as Karpenter's interruption controller reads its queue. A body is an
//! EventBridge event, delivered directly or inside an SNS notification
//! (`{"Type":"Notification","Message":"<event JSON>"}`, unwrapped), or no event at all: an SNS
//! notification of anything else, an Auto Scaling lifecycle hook's test or transition message,
//! any JSON object without an event's `source` and `detail-type`, an empty body. Those are
//! no-ops: counted under `message_type="no_op"`, logged at debug and deleted. Only a body that
//! is not a JSON object, or an event of a kind Kerf acts on that misses a field its kind needs,
//! fails to parse: logged as a warning and deleted, never retried.

use jiff::Timestamp;
use serde_json::{Value, json};

use super::events::{EventError, Interruption, parse_value};
use crate::log::Logger;
use crate::log::controllers::INTERRUPTION;
use crate::metrics::Metrics;
use crate::metrics::names::{INTERRUPTION_QUEUE_DURATION, INTERRUPTION_RECEIVED};

/// One SQS message.
#[derive(Clone, Debug)]
pub struct Message {
    pub id: String,
    pub body: String,
    /// When SQS received it (`attributes.SentTimestamp`).
    pub sent: Option<jiff::Timestamp>,
}

/// A batch taken in.
#[derive(Debug, Default, PartialEq)]
pub struct Intake<'a> {
    /// The messages to act on: `(message id, interruption)`.
    pub work: Vec<(&'a str, Interruption)>,
    /// Messages dropped (no-ops and unreadable ones): deleted, never retried.
    pub dropped: usize,
}

/// Reads, counts and logs a batch's messages; only interruptions remain to act on.
pub fn triage<'a>(
    log: &Logger,
    metrics: &Metrics,
    now: Timestamp,
    messages: &'a [Message],
) -> Intake<'a> {
    let mut intake = Intake::default();
    for m in messages {
        if let Some(sent) = m.sent {
            let waited = now.duration_since(sent).as_secs_f64().max(0.0);
            metrics.observe(INTERRUPTION_QUEUE_DURATION, &[], waited);
        }
        let read = read(&m.body);
        let kind = read.as_ref().map_or("unknown", Interruption::kind);
        metrics.count(INTERRUPTION_RECEIVED, &[("message_type", kind)], 1.0);
        match read {
            Ok(Interruption::NoOp) => {
                log.debug(
                    INTERRUPTION,
                    "ignoring no-op interruption message",
                    json!({"message-id": m.id, "messageKind": kind}),
                );
                intake.dropped += 1;
            }
            Ok(i) => intake.work.push((&m.id, i)),
            Err(e) => {
                log.warn(
                    INTERRUPTION,
                    "failed parsing interruption message",
                    json!({"message-id": m.id, "error": e.to_string()}),
                );
                intake.dropped += 1;
            }
        }
    }
    intake
}

/// What a message body asks for.
pub fn read(body: &str) -> Result<Interruption, EventError> {
    if body.trim().is_empty() {
        return Ok(Interruption::NoOp);
    }
    let v: Value = serde_json::from_str(body).map_err(|e| EventError::Envelope(e.to_string()))?;
    if let Some(inner) = sns_message(&v) {
        // Whatever else a notification carries (plain text, other JSON) is no event.
        return match serde_json::from_str::<Value>(inner) {
            Ok(inner) if is_event(&inner) => interruption(inner),
            _ => Ok(Interruption::NoOp),
        };
    }
    match v {
        v if is_event(&v) => interruption(v),
        Value::Object(_) | Value::Null => Ok(Interruption::NoOp),
        _ => Err(EventError::Envelope("not a JSON object".into())),
    }
}

/// The `Message` of an SNS notification.
fn sns_message(v: &Value) -> Option<&str> {
    if v.get("Type")?.as_str()? != "Notification" {
        return None;
    }
    v.get("Message")?.as_str()
}

/// Whether `v` is shaped as an EventBridge event (its `source` and `detail-type` given).
fn is_event(v: &Value) -> bool {
    ["source", "detail-type"]
        .iter()
        .all(|k| v.get(k).is_some_and(Value::is_string))
}

fn interruption(event: Value) -> Result<Interruption, EventError> {
    parse_value(event).map(|e| e.interruption)
}

#[cfg(test)]
#[path = "intake_tests.rs"]
mod tests;
