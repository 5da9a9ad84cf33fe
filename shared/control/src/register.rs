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

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Node, Taint};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kerf_api::v1::{ConditionStatus, NodeClaim, NodeClaimStatus};
use serde_json::json;

use crate::claim::{self, condition, node_provider_id};
use crate::ctx::Ctx;
use crate::error::ControlError;
use crate::log::{controllers::LIFECYCLE, obj};
use crate::metrics::names::NODECLAIMS_REGISTERED;
use crate::names::{
    DO_NOT_SYNC_TAINTS, NODECLASS, REGISTERED, TERMINATION_FINALIZER, UNREGISTERED_TAINT,
    conditions,
};
use crate::ports::{Cloud, Cluster, Publisher};
use crate::view::View;

/// The launched, not deleted claim a Node with `provider_id` belongs to.
pub fn claim_for<'a>(claims: &'a [NodeClaim], provider_id: &str) -> Option<&'a NodeClaim> {
    claims.iter().find(|c| {
        claim::provider_id(c) == Some(provider_id) && c.metadata.deletion_timestamp.is_none()
    })
}

/// Whether a Node already carries what registration writes.
pub fn is_registered(n: &Node) -> bool {
    let labelled = n
        .metadata
        .labels
        .as_ref()
        .is_some_and(|l| l.get(REGISTERED).is_some_and(|v| v == "true"));
    let tainted = n
        .spec
        .as_ref()
        .and_then(|s| s.taints.as_ref())
        .is_some_and(|ts| ts.iter().any(|t| t.key == UNREGISTERED_TAINT));
    labelled && !tainted
}

fn taint(t: &kerf_api::v1::common::Taint) -> Taint {
    Taint {
        key: t.key.clone(),
        value: t.value.clone(),
        effect: t.effect.as_str().into(),
        time_added: None,
    }
}

/// The Node after registration with `claim` (pure; see the module documentation).
pub fn registered_node(node: &Node, claim: &NodeClaim) -> Node {
    let mut n = node.clone();
    let m = &mut n.metadata;
    let labels = m.labels.get_or_insert_with(BTreeMap::new);
    for (k, v) in claim.metadata.labels.iter().flatten() {
        labels.insert(k.clone(), v.clone());
    }
    labels.insert(REGISTERED.into(), "true".into());
    labels.insert(NODECLASS.into(), claim.spec.node_class_ref.name.clone());
    let sync_taints = labels.get(DO_NOT_SYNC_TAINTS).is_none_or(|v| v != "true");
    if let Some(a) = &claim.metadata.annotations {
        let annotations = m.annotations.get_or_insert_with(BTreeMap::new);
        for (k, v) in a {
            annotations.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    let finalizers = m.finalizers.get_or_insert_with(Vec::new);
    if !finalizers.iter().any(|f| f == TERMINATION_FINALIZER) {
        finalizers.push(TERMINATION_FINALIZER.into());
    }
    let uid = claim.metadata.uid.clone().unwrap_or_default();
    let owners = m.owner_references.get_or_insert_with(Vec::new);
    if !owners.iter().any(|o| o.uid == uid) {
        owners.push(OwnerReference {
            api_version: "karpenter.sh/v1".into(),
            kind: "NodeClaim".into(),
            name: claim::name(claim).to_string(),
            uid,
            block_owner_deletion: Some(true),
            controller: None,
        });
    }
    let spec = n.spec.get_or_insert_with(Default::default);
    let taints = spec.taints.get_or_insert_with(Vec::new);
    taints.retain(|t| t.key != UNREGISTERED_TAINT);
    if sync_taints {
        for t in claim.spec.taints.iter().chain(&claim.spec.startup_taints) {
            let t = taint(t);
            if !taints
                .iter()
                .any(|x| x.key == t.key && x.effect == t.effect)
            {
                taints.push(t);
            }
        }
    }
    if taints.is_empty() {
        spec.taints = None;
    }
    n
}

/// The claim's status once `node` registered.
pub fn registered_status(c: &NodeClaim, node: &str, now: Timestamp) -> NodeClaimStatus {
    let mut s = claim::status(c);
    s.node_name = Some(node.to_string());
    let cond = condition(
        conditions::REGISTERED,
        ConditionStatus::True,
        "Registered",
        "",
    );
    s.conditions = claim::merge_conditions(&s.conditions, &[cond], now);
    s
}

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

#[cfg(test)]
#[path = "register_tests.rs"]
mod tests;
