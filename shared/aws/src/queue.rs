//! SQS: receive (long poll), delete and send with `DelaySeconds`.

use aws_sdk_sqs::types::MessageSystemAttributeName;

use crate::error::{AwsError, from_sdk};

/// The longest delay SQS allows on one message (15 minutes).
pub const MAX_DELAY_SECONDS: i32 = 900;

/// One received message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub id: String,
    pub receipt_handle: String,
    pub body: String,
    /// `SentTimestamp` in epoch milliseconds, when SQS reported it.
    pub sent_timestamp_ms: Option<i64>,
    pub receive_count: Option<u32>,
}

/// One queue, addressed by URL.
#[derive(Clone, Debug)]
pub struct SqsQueue {
    client: aws_sdk_sqs::Client,
    url: String,
}

impl SqsQueue {
    pub fn new(client: aws_sdk_sqs::Client, url: impl Into<String>) -> Self {
        SqsQueue {
            client,
            url: url.into(),
        }
    }

    /// Resolves a queue by name (`GetQueueUrl`), as Karpenter's `--interruption-queue` does.
    pub async fn by_name(client: aws_sdk_sqs::Client, name: &str) -> Result<Self, AwsError> {
        let out = client
            .get_queue_url()
            .queue_name(name)
            .send()
            .await
            .map_err(|e| from_sdk("GetQueueUrl", e))?;
        let url = out
            .queue_url()
            .ok_or_else(|| AwsError::bad_response("GetQueueUrl", "no URL"))?;
        Ok(SqsQueue::new(client, url))
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// Receives up to `max` (1–10) messages, waiting up to `wait_seconds` (0–20).
    pub async fn receive(
        &self,
        max: i32,
        wait_seconds: i32,
        visibility_timeout: Option<i32>,
    ) -> Result<Vec<Message>, AwsError> {
        let out = self
            .client
            .receive_message()
            .queue_url(&self.url)
            .max_number_of_messages(max.clamp(1, 10))
            .wait_time_seconds(wait_seconds.clamp(0, 20))
            .set_visibility_timeout(visibility_timeout)
            .message_system_attribute_names(MessageSystemAttributeName::SentTimestamp)
            .message_system_attribute_names(MessageSystemAttributeName::ApproximateReceiveCount)
            .send()
            .await
            .map_err(|e| from_sdk("ReceiveMessage", e))?;
        Ok(out.messages().iter().filter_map(to_message).collect())
    }

    /// Deletes a received message; an already-deleted one is not an error.
    pub async fn delete(&self, receipt_handle: &str) -> Result<(), AwsError> {
        let r = self
            .client
            .delete_message()
            .queue_url(&self.url)
            .receipt_handle(receipt_handle)
            .send()
            .await;
        match r.map_err(|e| from_sdk("DeleteMessage", e)) {
            Ok(_) | Err(AwsError::NotFound(_)) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Sends a message, delivered after `delay_seconds` (clamped to 0–900). Returns its id.
    pub async fn send(&self, body: &str, delay_seconds: i32) -> Result<String, AwsError> {
        let out = self
            .client
            .send_message()
            .queue_url(&self.url)
            .message_body(body)
            .delay_seconds(delay_seconds.clamp(0, MAX_DELAY_SECONDS))
            .send()
            .await
            .map_err(|e| from_sdk("SendMessage", e))?;
        Ok(out.message_id().unwrap_or_default().to_string())
    }
}

fn to_message(m: &aws_sdk_sqs::types::Message) -> Option<Message> {
    let attr =
        |name: MessageSystemAttributeName| m.attributes().and_then(|a| a.get(&name)).cloned();
    Some(Message {
        id: m.message_id()?.to_string(),
        receipt_handle: m.receipt_handle()?.to_string(),
        body: m.body().unwrap_or_default().to_string(),
        sent_timestamp_ms: attr(MessageSystemAttributeName::SentTimestamp)
            .and_then(|s| s.parse().ok()),
        receive_count: attr(MessageSystemAttributeName::ApproximateReceiveCount)
            .and_then(|s| s.parse().ok()),
    })
}
