//! A simulated SQS queue (delays, visibility timeout, at-least-once redelivery) and a
//! simulated EventBridge bus that keeps what was published.

use std::sync::{Arc, Mutex, MutexGuard};

use jiff::{SignedDuration, Timestamp};
use kerf_control::handlers::events::{SqsEvent, SqsMessage};
use kerf_control::ports::{Clock, DecisionEvent, PublishError, Publisher, Queue, QueueError};
use serde_json::Value;

/// One message.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub id: String,
    pub body: String,
    pub sent: Timestamp,
    pub visible_at: Timestamp,
    pub receives: u32,
}

#[derive(Debug, Default)]
struct State {
    messages: Vec<Message>,
    next: u64,
    fail_sends: usize,
}

/// The queue; clones share it.
#[derive(Clone)]
pub struct SimQueue {
    clock: Arc<dyn Clock>,
    visibility: SignedDuration,
    state: Arc<Mutex<State>>,
}

impl std::fmt::Debug for SimQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimQueue").finish_non_exhaustive()
    }
}

impl SimQueue {
    /// A queue whose received messages reappear after `visibility` unless deleted.
    pub fn new(clock: Arc<dyn Clock>, visibility: SignedDuration) -> Self {
        SimQueue {
            clock,
            visibility,
            state: Arc::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What the SQS event source mapping does after an invocation: deletes the batch's
    /// messages except those the response lists in `batchItemFailures` (they come back after
    /// the visibility timeout).
    pub fn settle(&self, batch: &[Message], response: &Value) {
        let failed: Vec<&str> = response["batchItemFailures"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f["itemIdentifier"].as_str())
            .collect();
        for m in batch {
            if !failed.contains(&m.id.as_str()) {
                self.delete(&m.id);
            }
        }
    }

    /// Makes the next `n` sends fail.
    pub fn fail_sends(&self, n: usize) {
        self.lock().fail_sends = n;
    }

    /// Messages sent since the start (what SQS bills for sends).
    pub fn sent(&self) -> u64 {
        self.lock().next
    }

    /// Messages waiting (visible or not).
    pub fn len(&self) -> usize {
        self.lock().messages.len()
    }

    /// Whether no message waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// When the oldest visible message was sent, if one is visible.
    pub fn oldest_visible(&self) -> Option<Timestamp> {
        let now = self.clock.now();
        self.lock()
            .messages
            .iter()
            .filter(|m| m.visible_at <= now)
            .map(|m| m.sent)
            .min()
    }

    /// When the next message is due to a consumer that waits `window` after a message is sent
    /// before taking a batch.
    pub fn next_due(&self, window: SignedDuration) -> Option<Timestamp> {
        self.lock()
            .messages
            .iter()
            .map(|m| m.visible_at.max(m.sent + window))
            .min()
    }

    /// Receives up to `max` visible messages (they become invisible for the timeout).
    pub fn receive(&self, max: usize) -> Vec<Message> {
        let now = self.clock.now();
        let vis = self.visibility;
        let mut s = self.lock();
        let mut out = Vec::new();
        for m in s
            .messages
            .iter_mut()
            .filter(|m| m.visible_at <= now)
            .take(max)
        {
            m.visible_at = now + vis;
            m.receives += 1;
            out.push(m.clone());
        }
        out
    }

    /// Deletes a received message.
    pub fn delete(&self, id: &str) {
        self.lock().messages.retain(|m| m.id != id);
    }

    /// An SQS event (what Lambda's event source mapping delivers) for `messages`.
    pub fn event(messages: &[Message]) -> SqsEvent {
        let mut event = SqsEvent::default();
        event.records = messages.iter().map(record).collect();
        event
    }
}

/// The SQS record of one message, as the event source mapping gives it.
fn record(m: &Message) -> SqsMessage {
    let mut r = SqsMessage::default();
    r.message_id = Some(m.id.clone());
    r.receipt_handle = Some(format!("rh-{}", m.id));
    r.body = Some(m.body.clone());
    r.attributes = [
        ("ApproximateReceiveCount", m.receives.to_string()),
        ("SentTimestamp", m.sent.as_millisecond().to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    r.md5_of_body = Some(String::new());
    r.event_source = Some("aws:sqs".into());
    r.event_source_arn = Some("arn:aws:sqs:us-west-2:000000000000:kerf-provisioning".into());
    r.aws_region = Some("us-west-2".into());
    r
}

impl Queue for SimQueue {
    async fn send(&self, body: &str, delay_seconds: u32) -> Result<String, QueueError> {
        let now = self.clock.now();
        let mut s = self.lock();
        if s.fail_sends > 0 {
            s.fail_sends -= 1;
            return Err(QueueError {
                message: "simulated SQS failure".into(),
                retryable: true,
            });
        }
        s.next += 1;
        let id = format!("msg-{:06}", s.next);
        s.messages.push(Message {
            id: id.clone(),
            body: body.into(),
            sent: now,
            visible_at: now + SignedDuration::from_secs(i64::from(delay_seconds)),
            receives: 0,
        });
        Ok(id)
    }
}

/// The simulated event bus; clones share it.
#[derive(Clone, Debug, Default)]
pub struct SimPublisher {
    events: Arc<Mutex<Vec<DecisionEvent>>>,
    fail: Arc<Mutex<usize>>,
}

impl SimPublisher {
    /// Everything published so far.
    pub fn events(&self) -> Vec<DecisionEvent> {
        self.events.lock().map(|e| e.clone()).unwrap_or_default()
    }

    /// Makes the next `n` publishes fail.
    pub fn fail(&self, n: usize) {
        if let Ok(mut f) = self.fail.lock() {
            *f = n;
        }
    }
}

impl Publisher for SimPublisher {
    async fn publish(&self, events: &[DecisionEvent]) -> Result<(), PublishError> {
        if let Ok(mut f) = self.fail.lock()
            && *f > 0
        {
            *f -= 1;
            return Err(PublishError("simulated EventBridge failure".into()));
        }
        if let Ok(mut e) = self.events.lock() {
            e.extend_from_slice(events);
        }
        Ok(())
    }
}
