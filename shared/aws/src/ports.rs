//! The control layer's Queue and Publisher ports on SQS and EventBridge (the Cloud port is
//! [`crate::cloud::Ec2Cloud`]).

use kerf_control::ports::publish::SOURCE;
use kerf_control::ports::{DecisionEvent, PublishError, Publisher, Queue, QueueError};

use crate::queue::SqsQueue;

impl Queue for SqsQueue {
    async fn send(&self, body: &str, delay_seconds: u32) -> Result<String, QueueError> {
        let delay = delay_seconds.min(crate::queue::MAX_DELAY_SECONDS as u32) as i32;
        SqsQueue::send(self, body, delay)
            .await
            .map_err(|e| QueueError {
                retryable: e.is_retryable(),
                message: e.to_string(),
            })
    }
}

/// Decision events on an EventBridge bus, source `kerf.dev`.
#[derive(Clone, Debug)]
pub struct EventBridgePublisher {
    client: aws_sdk_eventbridge::Client,
    bus: Option<String>,
}

impl EventBridgePublisher {
    /// Publishes to `bus` (`None`: the account's default bus).
    pub fn new(client: aws_sdk_eventbridge::Client, bus: Option<String>) -> Self {
        EventBridgePublisher { client, bus }
    }
}

/// PutEvents takes at most 10 entries per call.
const MAX_ENTRIES: usize = 10;

impl Publisher for EventBridgePublisher {
    async fn publish(&self, events: &[DecisionEvent]) -> Result<(), PublishError> {
        for chunk in events.chunks(MAX_ENTRIES) {
            let entries = chunk.iter().map(|e| {
                aws_sdk_eventbridge::types::PutEventsRequestEntry::builder()
                    .source(SOURCE)
                    .detail_type(&e.detail_type)
                    .detail(e.detail.to_string())
                    .set_resources(Some(e.resources.clone()))
                    .set_event_bus_name(self.bus.clone())
                    .build()
            });
            crate::events::put_entries(&self.client, entries.collect())
                .await
                .map_err(|e| PublishError(e.to_string()))?;
        }
        Ok(())
    }
}
