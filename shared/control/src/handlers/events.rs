//! The Lambda events the handlers read and the batch response they give, as the
//! `aws_lambda_events` crate types them: SQS batches ([`SqsEvent`]) answered with the messages
//! to retry ([`SqsBatchResponse`]), the schedule's EventBridge event ([`Schedule`]) and
//! Function URL requests ([`FunctionUrlRequest`]). The provisioner and the disruption function
//! are invoked by a batch or by the schedule: one [`Invocation`], read once at the edge.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

pub use aws_lambda_events::eventbridge::EventBridgeEvent;
pub use aws_lambda_events::lambda_function_urls::LambdaFunctionUrlRequest as FunctionUrlRequest;
pub use aws_lambda_events::sqs::{BatchItemFailure, SqsBatchResponse, SqsEvent, SqsMessage};

/// A scheduled EventBridge event. Its `detail` may be missing: the schedules' `Input` in
/// template.yaml (`{"source": "kerf.schedule", "detail-type": "…"}`) carries none.
pub type Schedule = EventBridgeEvent<Option<Value>>;

/// What invokes the provisioner or the disruption function.
#[derive(Debug, Clone, PartialEq)]
pub enum Invocation {
    /// An SQS batch (the payload has `Records`).
    Queue(SqsEvent),
    /// The schedule (boxed: an event's envelope is larger than a batch's list).
    Schedule(Box<Schedule>),
}

/// Why a payload is no [`Invocation`].
#[derive(Debug, thiserror::Error)]
pub enum InvocationError {
    #[error("the payload is {0}: neither an SQS batch nor a scheduled EventBridge event")]
    NotAnObject(&'static str),
    #[error("an SQS batch (the payload has `Records`) that cannot be read: {0}")]
    Queue(serde_json::Error),
    #[error("neither an SQS batch (no `Records`) nor a scheduled EventBridge event: {0}")]
    Neither(serde_json::Error),
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl Invocation {
    /// Reads a payload: one with `Records` is an SQS batch, any other object a scheduled
    /// EventBridge event (its `source` and `detail-type` given).
    pub fn from_json(payload: Value) -> Result<Invocation, InvocationError> {
        let Some(fields) = payload.as_object() else {
            return Err(InvocationError::NotAnObject(kind(&payload)));
        };
        if fields.contains_key("Records") {
            return serde_json::from_value(payload)
                .map(Invocation::Queue)
                .map_err(InvocationError::Queue);
        }
        serde_json::from_value(payload)
            .map(|s| Invocation::Schedule(Box::new(s)))
            .map_err(InvocationError::Neither)
    }

    /// The batch response returning every message to the queue (a schedule has none).
    pub fn fail_all(&self) -> SqsBatchResponse {
        match self {
            Invocation::Queue(batch) => fail_all(batch),
            Invocation::Schedule(_) => batch_failures(&[]),
        }
    }

    /// A scheduled event from `source`, of `detail_type`, with no detail (as the schedules
    /// in template.yaml send it).
    pub fn scheduled(source: &str, detail_type: &str) -> Invocation {
        let mut s = Schedule::default();
        s.source = source.to_string();
        s.detail_type = detail_type.to_string();
        Invocation::Schedule(Box::new(s))
    }
}

impl<'de> Deserialize<'de> for Invocation {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Invocation::from_json(Value::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

impl From<SqsEvent> for Invocation {
    fn from(batch: SqsEvent) -> Self {
        Invocation::Queue(batch)
    }
}

/// A record's body (empty when it has none).
pub fn body(record: &SqsMessage) -> &str {
    record.body.as_deref().unwrap_or_default()
}

/// The message ids of an SQS batch (records without one are left out).
pub fn message_ids(batch: &SqsEvent) -> Vec<String> {
    batch
        .records
        .iter()
        .filter_map(|r| r.message_id.clone())
        .collect()
}

/// The batch response returning `ids` to the queue.
pub fn batch_failures(ids: &[String]) -> SqsBatchResponse {
    let mut r = SqsBatchResponse::default();
    r.set_failures(ids);
    r
}

/// The batch response returning every message of `batch` to the queue.
pub fn fail_all(batch: &SqsEvent) -> SqsBatchResponse {
    batch_failures(&message_ids(batch))
}

/// An answer as the JSON Lambda returns (what `kerf sim` and the tests read).
pub fn to_json<T: Serialize>(answer: &T) -> Value {
    // Infallible for the answers here: their maps have string keys and nothing in them
    // serializes with an error.
    serde_json::to_value(answer).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_payload_with_records_is_a_batch_and_one_without_is_the_schedule() {
        let batch = json!({"Records": [{"messageId": "m1", "body": "b",
            "attributes": {"SentTimestamp": "1767276000000"}}, {"body": "no id"}]});
        let Ok(Invocation::Queue(q)) = Invocation::from_json(batch) else {
            panic!("a batch");
        };
        assert_eq!(message_ids(&q), ["m1"]);
        assert_eq!(body(&q.records[1]), "no id");
        let template = json!({"source": "kerf.schedule", "detail-type": "Provisioner Sweep"});
        let Ok(Invocation::Schedule(s)) = Invocation::from_json(template) else {
            panic!("a schedule");
        };
        assert_eq!(
            (s.source.as_str(), s.detail.clone()),
            ("kerf.schedule", None)
        );
        assert_eq!(
            Invocation::scheduled("kerf.schedule", "Provisioner Sweep"),
            Invocation::Schedule(s)
        );
        let rule = json!({"version": "0", "id": "x", "detail-type": "Scheduled Event",
            "source": "aws.events", "time": "2026-11-24T02:32:00Z", "resources": [], "detail": {}});
        assert!(matches!(
            Invocation::from_json(rule),
            Ok(Invocation::Schedule(_))
        ));
    }

    #[test]
    fn a_payload_that_is_neither_says_what_is_wrong() {
        let err = |v: Value| Invocation::from_json(v).unwrap_err().to_string();
        assert_eq!(
            err(json!([])),
            "the payload is an array: neither an SQS batch nor a scheduled EventBridge event"
        );
        assert_eq!(
            err(json!({"source": "kerf.schedule"})),
            "neither an SQS batch (no `Records`) nor a scheduled EventBridge event: \
             missing field `detail-type`"
        );
        let bad = err(json!({"Records": "not a list"}));
        assert!(
            bad.starts_with("an SQS batch (the payload has `Records`) that cannot be read: "),
            "{bad}"
        );
        let via_serde = serde_json::from_str::<Invocation>("{}")
            .unwrap_err()
            .to_string();
        assert!(
            via_serde.contains("missing field `detail-type`"),
            "{via_serde}"
        );
    }

    #[test]
    fn batch_responses_are_the_json_they_were() {
        let batch = Invocation::from_json(json!({"Records": [{"messageId": "a"},
            {"messageId": "b"}, {"body": "{}"}]}));
        let Ok(Invocation::Queue(q)) = batch else {
            panic!("a batch");
        };
        let old = json!({"batchItemFailures": [{"itemIdentifier": "a"}, {"itemIdentifier": "b"}]});
        assert_eq!(
            serde_json::to_string(&fail_all(&q)).unwrap(),
            old.to_string()
        );
        assert_eq!(
            to_json(&batch_failures(&[])),
            json!({"batchItemFailures": []})
        );
    }
}
