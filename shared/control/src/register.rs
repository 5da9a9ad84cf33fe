//! Registration: a Node whose providerID matches a launched NodeClaim becomes that claim's
//! node. The Node gets the claim's labels and annotations, Karpenter's labels
//! (`karpenter.sh/registered=true`, the node class label), the claim's taints and startup
//! taints (unless the node opts out with `karpenter.sh/do-not-sync-taints`), the
//! termination finalizer and an owner reference to the claim, and loses the
//! `karpenter.sh/unregistered` taint; the claim records `nodeName` and `Registered=True`.
//!
//! Two paths compute the same change ([`registered_node`]): the webhook patches the Node as
//! it is created (no window where pods land on an unsynced node), and the provisioner's pass
//! ([`register_pending`], woken by the webhook's hint or the sweep) updates Nodes the webhook
//! missed. Only that pass records a registration on the claim, from the Node it reads from the
//! API server: an admission review is never trusted to write anything.
//!
//! A claim in a partition placement group that EC2 chose the partition for gets it from the
//! instance first ([`partition`]).

pub mod partition;

pub use crate::registration::{claim_for, is_registered, registered_node, registered_status};

use kerf_api::v1::NodeClaim;
use serde_json::json;

use crate::claim::{self, node_provider_id};
use crate::ctx::Ctx;
use crate::error::ControlError;
use crate::log::{controllers::LIFECYCLE, obj};
use crate::metrics::names::NODECLAIMS_REGISTERED;
use crate::names::conditions;
use crate::ports::{Cloud, Cluster, Publisher};
use crate::view::View;

/// Records a registration on the claim, logs and counts it.
pub async fn record<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    c: &NodeClaim,
    node: &str,
) -> Result<(), ControlError> {
    let name = claim::name(c);
    let status = registered_status(c, node, ctx.now());
    ctx.cluster
        .patch_node_claim_status(name, None, &status)
        .await?;
    let pool = claim::pool_name(c).unwrap_or_default();
    ctx.metrics
        .count(NODECLAIMS_REGISTERED, &[("nodepool", pool)], 1.0);
    ctx.log.info(
        LIFECYCLE,
        "registered nodeclaim",
        json!({"NodeClaim": obj(name), "Node": obj(node), "provider-id": claim::provider_id(c)}),
    );
    Ok(())
}

/// Registers every Node of the view whose claim is launched but not registered yet.
/// Returns how many were registered; failures are logged and left to the next pass.
pub async fn register_pending<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    view: &View,
) -> usize {
    let mut done = 0;
    for node in &view.snap.nodes {
        let Some(pid) = node_provider_id(node) else {
            continue;
        };
        let Some(c) = claim_for(&view.snap.node_claims, pid) else {
            continue;
        };
        if claim::is_true(c, conditions::REGISTERED) && is_registered(node) {
            continue;
        }
        let node_name = node.metadata.name.clone().unwrap_or_default();
        let result = async {
            let (c, relabelled) = match partition::fill(ctx, c).await? {
                partition::Filled::NotNeeded => (c.clone(), false),
                partition::Filled::Labelled(c) => (*c, true),
                partition::Filled::Waiting => return Ok(false),
            };
            if !is_registered(node) || relabelled {
                ctx.cluster.update_node(&registered_node(node, &c)).await?;
            }
            record(ctx, &c, &node_name).await.map(|()| true)
        }
        .await;
        match result {
            Ok(true) => done += 1,
            Ok(false) => ctx.log.info(
                LIFECYCLE,
                "waiting for the instance's placement group partition",
                json!({"Node": obj(&node_name), "NodeClaim": obj(claim::name(c))}),
            ),
            Err(e) => ctx.log.warn(
                LIFECYCLE,
                "could not register node",
                json!({"Node": obj(&node_name), "NodeClaim": obj(claim::name(c)), "error": e.to_string()}),
            ),
        }
    }
    done
}
