//! Garbage collection, both ways:
//! - an instance tagged for the cluster that no NodeClaim knows (by provider ID, or by the
//!   NodeClaim name it was launched for) is terminated once older than the grace period, and
//!   a Node left for it is deleted;
//! - a launched NodeClaim whose instance no longer exists is deleted (with its Node), unless
//!   that Node is still Ready (a live kubelet means the instance exists);
//! - a NodeClaim being deleted that has nothing to drain (no Node, or a Node without pods
//!   other than DaemonSet and mirror pods) is finalized;
//! - launch templates no launch has used for an hour are deleted (Karpenter deletes them when
//!   its in-memory cache lets them go; a serverless sweep reads their last use from EC2).

use std::collections::BTreeSet;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Node, Pod};
use kerf_api::v1::NodeClaim;
use serde_json::json;

use crate::claim;
use crate::claim::node_provider_id;
use crate::ctx::Ctx;
use crate::error::ControlError;
use crate::finalize;
use crate::log::controllers::{
    GARBAGE_COLLECTION, INSTANCE_GARBAGE_COLLECTION, LAUNCH_TEMPLATE_GARBAGE_COLLECTION,
};
use crate::log::obj;
use crate::names::conditions;
use crate::ports::{Cloud, Cluster, Instance, Publisher, Target};
use crate::view::View;

/// What a collection did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Collected {
    pub instances: Vec<String>,
    pub node_claims: Vec<String>,
    pub launch_templates: Vec<String>,
}

/// Instances no NodeClaim accounts for, older than the grace period at `now`.
pub fn orphans<'a>(
    instances: &'a [Instance],
    claims: &[NodeClaim],
    now: Timestamp,
    grace: jiff::SignedDuration,
) -> Vec<&'a Instance> {
    let ids: BTreeSet<&str> = claims.iter().filter_map(claim::provider_id).collect();
    let names: BTreeSet<&str> = claims.iter().map(claim::name).collect();
    instances
        .iter()
        .filter(|i| !i.is_terminating())
        .filter(|i| !ids.contains(i.provider_id.as_str()))
        .filter(|i| i.node_claim().is_none_or(|n| !names.contains(n)))
        .filter(|i| {
            i.launch_time
                .is_some_and(|t| now.duration_since(t) >= grace)
        })
        .collect()
}

fn node_ready(n: &Node) -> bool {
    n.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

/// Launched claims whose instance is gone (and whose Node is not Ready).
pub fn lost_claims<'a>(
    instances: &[Instance],
    claims: &'a [NodeClaim],
    nodes: &[Node],
    now: Timestamp,
    grace: jiff::SignedDuration,
) -> Vec<&'a NodeClaim> {
    let live: BTreeSet<&str> = instances
        .iter()
        .filter(|i| !i.is_terminating())
        .map(|i| i.provider_id.as_str())
        .collect();
    claims
        .iter()
        .filter(|c| c.metadata.deletion_timestamp.is_none())
        .filter(|c| claim::provider_id(c).is_some_and(|p| !live.contains(p)))
        .filter(|c| {
            claim::transition_time(c, conditions::LAUNCHED)
                .is_some_and(|t| now.duration_since(t) >= grace)
        })
        .filter(|c| {
            let pid = claim::provider_id(c);
            !nodes
                .iter()
                .any(|n| node_provider_id(n) == pid && node_ready(n))
        })
        .collect()
}

fn drains_nothing(pods: &[Pod], node: &str) -> bool {
    pods.iter()
        .filter(|p| p.spec.as_ref().and_then(|s| s.node_name.as_deref()) == Some(node))
        .all(|p| {
            let owned_by_ds = p
                .metadata
                .owner_references
                .iter()
                .flatten()
                .any(|o| o.kind == "DaemonSet");
            let mirror = p
                .metadata
                .annotations
                .as_ref()
                .is_some_and(|a| a.contains_key(kerf_labels::MIRROR_POD));
            owned_by_ds || mirror
        })
}

fn claim_node<'a>(view: &'a View, c: &NodeClaim) -> Option<&'a Node> {
    let pid = claim::provider_id(c)?;
    view.snap
        .nodes
        .iter()
        .find(|n| node_provider_id(n) == Some(pid))
}

/// Runs every collection once.
pub async fn collect<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    view: &View,
) -> Result<Collected, ControlError> {
    let now = ctx.now();
    let grace = ctx.settings.orphan_grace;
    let instances = ctx.cloud.list().await?;
    let mut out = Collected::default();
    for i in orphans(&instances, &view.snap.node_claims, now, grace) {
        ctx.cloud.terminate(std::slice::from_ref(&i.id)).await?;
        if let Some(n) = view
            .snap
            .nodes
            .iter()
            .find(|n| node_provider_id(n) == Some(&i.provider_id))
        {
            let name = n.metadata.name.clone().unwrap_or_default();
            ctx.cluster.delete_node(&name, None).await?;
            finalize::remove_finalizer(ctx, &Target::Node(name)).await?;
        }
        ctx.log.info(
            INSTANCE_GARBAGE_COLLECTION,
            "garbage collected instance with no nodeclaim",
            json!({"provider-id": i.provider_id, "instance-type": i.instance_type, "NodeClaim": i.node_claim()}),
        );
        out.instances.push(i.id.clone());
    }
    for c in lost_claims(
        &instances,
        &view.snap.node_claims,
        &view.snap.nodes,
        now,
        grace,
    ) {
        let node = claim_node(view, c).and_then(|n| n.metadata.name.clone());
        ctx.log.info(
            GARBAGE_COLLECTION,
            "garbage collecting nodeclaim with no cloudprovider representation",
            json!({"NodeClaim": obj(claim::name(c)), "provider-id": claim::provider_id(c)}),
        );
        finalize::delete_claim(
            ctx,
            c,
            node.as_deref(),
            finalize::Deletion::GarbageCollected,
        )
        .await?;
        out.node_claims.push(claim::name(c).to_string());
    }
    for c in view
        .snap
        .node_claims
        .iter()
        .filter(|c| claim::deleting_ours(&c.metadata))
    {
        let node = claim_node(view, c);
        let empty = node.is_none_or(|n| {
            drains_nothing(
                &view.snap.pods,
                n.metadata.name.as_deref().unwrap_or_default(),
            )
        });
        // A drain under way is the termination function's to finish (its minimum drain time,
        // then the wait for the node's volumes to detach).
        let draining = crate::teardown::in_progress(c);
        if empty && !draining {
            let node = node.and_then(|n| n.metadata.name.clone());
            finalize::delete_claim(ctx, c, node.as_deref(), finalize::Deletion::Deleted).await?;
            out.node_claims.push(claim::name(c).to_string());
        }
    }
    out.launch_templates = templates(ctx, now).await;
    Ok(out)
}

/// Deletes the launch templates no launch has used for a while. A failure is logged and left
/// to the next sweep: a template kept too long costs nothing but clutter.
async fn templates<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    now: Timestamp,
) -> Vec<String> {
    match ctx.cloud.delete_unused_templates(now).await {
        Ok(names) => {
            for name in &names {
                ctx.log.info(
                    LAUNCH_TEMPLATE_GARBAGE_COLLECTION,
                    "deleted launch template",
                    json!({"name": name}),
                );
            }
            names
        }
        Err(e) => {
            ctx.log.warn(
                LAUNCH_TEMPLATE_GARBAGE_COLLECTION,
                "could not delete unused launch templates",
                json!({"error": e.to_string()}),
            );
            Vec::new()
        }
    }
}

#[cfg(test)]
#[path = "gc_tests.rs"]
mod tests;
