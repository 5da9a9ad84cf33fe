//! The Queue port: sending work to an SQS queue (provisioning hints, termination steps).

use std::future::Future;
use std::sync::Arc;

/// A failed send.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("queue send failed: {message}")]
pub struct QueueError {
    pub message: String,
    /// Whether the same send may succeed later.
    pub retryable: bool,
}

/// A work queue.
pub trait Queue: Send + Sync {
    /// Sends `body`, visible after `delay_seconds` (0–900); returns the message id.
    fn send(
        &self,
        body: &str,
        delay_seconds: u32,
    ) -> impl Future<Output = Result<String, QueueError>> + Send;
}

impl<T: Queue> Queue for Arc<T> {
    async fn send(&self, body: &str, delay_seconds: u32) -> Result<String, QueueError> {
        (**self).send(body, delay_seconds).await
    }
}
