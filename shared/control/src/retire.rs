//! Starting a NodeClaim's termination, for every reconciler (disruption, interruption,
//! health, progress repairs): delete the NodeClaim (the termination function drains it) and
//! queue its termination message.

use serde_json::json;

use crate::ctx::Ctx;
use crate::error::ControlError;
use crate::log::{controllers::DISRUPTION, obj};
use crate::metrics::names::NODECLAIMS_DISRUPTED;
use crate::ports::{Cloud, Cluster, Publisher, Queue, QueueError, TerminationMessage};

/// Queues the termination of `node_claim` (after `delay_seconds`).
pub async fn enqueue<Q: Queue>(
    queue: &Q,
    node_claim: &str,
    delay_seconds: u32,
) -> Result<String, QueueError> {
    queue
        .send(&TerminationMessage::new(node_claim).body(), delay_seconds)
        .await
}

/// Deletes one NodeClaim (the termination function drains it) and queues its termination.
pub async fn delete_one<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    termination: &Q,
    name: &str,
    pool: &str,
    reason: &str,
) -> Result<(), ControlError> {
    ctx.cluster.delete_node_claim(name, None).await?;
    enqueue(termination, name, 0).await?;
    ctx.metrics.count(
        NODECLAIMS_DISRUPTED,
        &[("reason", reason), ("nodepool", pool)],
        1.0,
    );
    ctx.log.info(
        DISRUPTION,
        "deleted nodeclaim for disruption",
        json!({"NodeClaim": obj(name), "reason": reason}),
    );
    Ok(())
}
