//! Deleting a NodeClaim that carries nothing to drain (it never launched, never registered,
//! or its instance is gone): delete it, terminate its instance, delete its Node, and remove
//! the termination finalizers. Every step is idempotent, so a rerun after a crash at any
//! point finishes the job. Draining nodes that run pods is the termination function's work.

use kerf_api::v1::NodeClaim;
use serde_json::json;

use crate::claim;
use crate::ctx::Ctx;
use crate::error::ControlError;
use crate::log::{controllers::LIFECYCLE, obj};
use crate::metrics::names::NODECLAIMS_TERMINATED;
use crate::names::TERMINATION_FINALIZER;
use crate::ports::cloud::instance_id;
use crate::ports::{Cloud, Cluster, Deleted, Publisher, Target};

/// Why a NodeClaim is deleted outright (the `reason` it is logged and counted under).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Deletion {
    /// It did not launch or register in time.
    Liveness,
    /// EC2 had no capacity for any of its offerings.
    InsufficientCapacity,
    /// Its launch can never succeed as asked.
    LaunchFailed,
    /// Its instance is gone.
    GarbageCollected,
    /// It was deleted and what it owns is cleaned up.
    Deleted,
}

impl Deletion {
    /// The spelling in logs and `karpenter_nodeclaims_terminated_total`.
    pub fn as_str(self) -> &'static str {
        match self {
            Deletion::Liveness => "liveness",
            Deletion::InsufficientCapacity => "insufficient_capacity",
            Deletion::LaunchFailed => "launch_failed",
            Deletion::GarbageCollected => "garbage_collected",
            Deletion::Deleted => "deleted",
        }
    }
}

/// Deletes `claim` and everything it owns; `why` goes to the log and the metric.
pub async fn delete_claim<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    claim: &NodeClaim,
    node: Option<&str>,
    why: Deletion,
) -> Result<(), ControlError> {
    let reason = why.as_str();
    let name = claim::name(claim).to_string();
    let uid = claim.metadata.uid.as_deref();
    let deleted = ctx.cluster.delete_node_claim(&name, uid).await?;
    if let Some(id) = claim::provider_id(claim).and_then(instance_id) {
        ctx.cloud.terminate(&[id.to_string()]).await?;
    }
    if let Some(node) = node {
        ctx.cluster.delete_node(node, None).await?;
        remove_finalizer(ctx, &Target::Node(node.to_string())).await?;
        // Logged wherever a Node goes, as the termination function logs it.
        ctx.log.info(
            LIFECYCLE,
            "deleted node",
            json!({"Node": obj(node), "NodeClaim": obj(&name)}),
        );
    }
    if deleted != Deleted::AlreadyGone {
        remove_finalizer(ctx, &Target::NodeClaim(name.clone())).await?;
    }
    let pool = claim::pool_name(claim).unwrap_or_default().to_string();
    ctx.metrics.count(
        NODECLAIMS_TERMINATED,
        &[("nodepool", &pool), ("reason", reason)],
        1.0,
    );
    ctx.log.info(
        LIFECYCLE,
        "deleted nodeclaim",
        json!({"NodeClaim": obj(&name), "NodePool": obj(&pool), "reason": reason,
               "provider-id": claim::provider_id(claim).unwrap_or_default()}),
    );
    Ok(())
}

/// Removes the termination finalizer from a Node or NodeClaim; one already gone counts as done.
pub async fn remove_finalizer<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    target: &Target,
) -> Result<(), ControlError> {
    match ctx
        .cluster
        .remove_finalizer(target, TERMINATION_FINALIZER, None)
        .await
    {
        Ok(()) => Ok(()),
        Err(e) if e.is_not_found() => Ok(()),
        Err(e) => Err(e.into()),
    }
}
