//! The Publisher port: decision events (EventBridge, source `kerf.dev`) so other systems can
//! react to what Kerf did. Publishing is best effort: a failure never fails a reconcile.

use std::future::Future;
use std::sync::Arc;

use serde_json::Value;

/// The `source` of every decision event.
pub const SOURCE: &str = "kerf.dev";

/// One decision event.
#[derive(Debug, Clone, PartialEq)]
pub struct DecisionEvent {
    /// e.g. `NodeClaim Launched`, `NodeClaim Launch Failed`, `Pods Unschedulable`.
    pub detail_type: String,
    /// The event body.
    pub detail: Value,
    /// ARNs or provider IDs the event is about.
    pub resources: Vec<String>,
}

/// Decision event types.
pub mod detail_types {
    pub const NODECLAIM_LAUNCHED: &str = "NodeClaim Launched";
    pub const NODECLAIM_LAUNCH_FAILED: &str = "NodeClaim Launch Failed";
    pub const PODS_UNSCHEDULABLE: &str = "Pods Unschedulable";
}

/// A failed publish.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("publish failed: {0}")]
pub struct PublishError(pub String);

/// Where decision events go.
pub trait Publisher: Send + Sync {
    /// Publishes the events (one batch).
    fn publish(
        &self,
        events: &[DecisionEvent],
    ) -> impl Future<Output = Result<(), PublishError>> + Send;
}

impl<T: Publisher> Publisher for Arc<T> {
    async fn publish(&self, events: &[DecisionEvent]) -> Result<(), PublishError> {
        (**self).publish(events).await
    }
}
