//! Starting a NodeClaim's termination, for every reconciler (disruption, interruption,
//! health, progress repairs): delete the NodeClaim (the termination function drains it) and
//! queue its termination message. The [`Retirement`] says who asked, so the log line and
//! `karpenter_nodeclaims_disrupted_total` read as the controller that decided it.

use kerf_engine::plan::CommandReason;
use serde_json::{Value, json};

use crate::ctx::Ctx;
use crate::error::ControlError;
use crate::log::controllers::{
    CAPACITY_RESERVATION_EXPIRATION, DISRUPTION, HEALTH, INTERRUPTION, STATIC_DEPROVISIONING,
};
use crate::log::obj;
use crate::metrics::names::NODECLAIMS_DISRUPTED;
use crate::ports::{Cloud, Cluster, Publisher, Queue, QueueError, TerminationMessage};

/// Who retires a NodeClaim, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Retirement<'a> {
    /// A disruption command, by its reason (`underutilized`, `empty`, `drifted`, ...).
    Disruption(CommandReason),
    /// An interruption, by its message kind (`spot_interrupted`, `instance_status`, ...);
    /// `forceful` when the drain does not wait for PodDisruptionBudgets.
    Interruption { kind: &'a str, forceful: bool },
    /// Node repair, by the Node condition that was bad for too long (always forceful).
    Repair { condition: &'a str },
    /// A static NodePool has more NodeClaims than its replicas.
    Overprovisioned,
    /// The capacity block the node runs in is about to end.
    CapacityBlockExpiring { reservation: &'a str },
}

impl Retirement<'_> {
    /// The `reason` of `karpenter_nodeclaims_disrupted_total` (Karpenter counts an
    /// interruption under its message kind).
    pub fn reason(&self) -> &str {
        match self {
            Retirement::Disruption(reason) => reason.as_str(),
            Retirement::Interruption { kind, .. } => kind,
            Retirement::Repair { .. } => "unhealthy",
            Retirement::Overprovisioned => "overprovisioned",
            Retirement::CapacityBlockExpiring { .. } => "capacity_block_expiring",
        }
    }

    /// The controller, message and keys of the log line, as Karpenter's controllers write it.
    fn log_line(&self, name: &str) -> (&'static str, &'static str, Value) {
        match self {
            Retirement::Disruption(reason) => (
                DISRUPTION,
                "deleted nodeclaim for disruption",
                json!({"NodeClaim": obj(name), "reason": reason.as_str()}),
            ),
            Retirement::Interruption { kind, forceful } => {
                let action = if *forceful {
                    "ForcefulTermination"
                } else {
                    "CordonAndDrain"
                };
                (
                    INTERRUPTION,
                    "initiating delete from interruption message",
                    json!({"NodeClaim": obj(name), "messageKind": kind, "action": action}),
                )
            }
            Retirement::Repair { condition } => (
                HEALTH,
                "deleting unhealthy node",
                json!({"NodeClaim": obj(name), "condition": condition}),
            ),
            Retirement::Overprovisioned => (
                STATIC_DEPROVISIONING,
                "deleting nodeclaim",
                json!({"NodeClaim": obj(name), "reason": "overprovisioned"}),
            ),
            Retirement::CapacityBlockExpiring { reservation } => (
                CAPACITY_RESERVATION_EXPIRATION,
                "initiating delete for capacity block expiration",
                json!({"NodeClaim": obj(name), "capacity-reservation-id": reservation}),
            ),
        }
    }
}

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
    why: Retirement<'_>,
) -> Result<(), ControlError> {
    ctx.cluster.delete_node_claim(name, None).await?;
    enqueue(termination, name, 0).await?;
    ctx.metrics.count(
        NODECLAIMS_DISRUPTED,
        &[("reason", why.reason()), ("nodepool", pool)],
        1.0,
    );
    let (controller, message, fields) = why.log_line(name);
    ctx.log.info(controller, message, fields);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interruption_is_logged_and_counted_as_one() {
        let why = Retirement::Interruption {
            kind: "spot_interrupted",
            forceful: false,
        };
        assert_eq!(why.reason(), "spot_interrupted");
        let (controller, message, fields) = why.log_line("default-x");
        assert_eq!(controller, "interruption");
        assert_eq!(message, "initiating delete from interruption message");
        assert_eq!(fields["messageKind"], "spot_interrupted");
        assert_eq!(fields["action"], "CordonAndDrain");
        assert_eq!(fields["NodeClaim"]["name"], "default-x");
        let forceful = Retirement::Interruption {
            kind: "instance_status",
            forceful: true,
        };
        assert_eq!(forceful.log_line("x").2["action"], "ForcefulTermination");
    }

    #[test]
    fn a_capacity_block_expiring_is_logged_as_karpenter_logs_it() {
        let why = Retirement::CapacityBlockExpiring {
            reservation: "cr-0abc",
        };
        assert_eq!(why.reason(), "capacity_block_expiring");
        let (controller, message, fields) = why.log_line("gpu-x");
        assert_eq!(
            (controller, message),
            (
                "capacityreservation.expiration",
                "initiating delete for capacity block expiration"
            )
        );
        assert_eq!(fields["capacity-reservation-id"], "cr-0abc");
        assert_eq!(fields["NodeClaim"]["name"], "gpu-x");
    }

    #[test]
    fn a_repair_is_logged_by_node_health_and_counted_as_unhealthy() {
        let why = Retirement::Repair { condition: "Ready" };
        assert_eq!(why.reason(), "unhealthy");
        let (controller, message, fields) = why.log_line("default-x");
        assert_eq!(
            (controller, message),
            ("node.health", "deleting unhealthy node")
        );
        assert_eq!(fields["condition"], "Ready");
        assert_eq!(fields["NodeClaim"]["name"], "default-x");
    }

    #[test]
    fn a_disruption_is_logged_and_counted_under_its_reason() {
        let why = Retirement::Disruption(CommandReason::Underutilized);
        assert_eq!(why.reason(), "underutilized");
        let (controller, message, fields) = why.log_line("default-x");
        assert_eq!(controller, "disruption");
        assert_eq!(message, "deleted nodeclaim for disruption");
        assert_eq!(fields["reason"], "underutilized");
    }
}
