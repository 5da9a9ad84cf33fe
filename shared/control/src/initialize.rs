//! Initialization: a registered NodeClaim is `Initialized` once its Node is Ready, its
//! startup taints and the known ephemeral taints are gone, and every extended resource the
//! claim requested is reported allocatable; the Node is then labelled
//! `karpenter.sh/initialized=true`.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Node;
use kerf_api::v1::{ConditionStatus, NodeClaim};
use serde_json::json;

use crate::claim::{self, condition};
use crate::ctx::Ctx;
use crate::error::ControlError;
use crate::log::{controllers::LIFECYCLE, obj};
use crate::metrics::names::NODECLAIMS_INITIALIZED;
use crate::names::{CORE_RESOURCES, INITIALIZED, conditions, is_ephemeral_taint};
use crate::ports::{Cloud, Cluster, Publisher};
use crate::view::View;

/// Why a node is not initialized yet; its message names the taint or resource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Blocker {
    NodeNotReady,
    /// A startup taint of the claim is still on the node.
    StartupTaint(String),
    /// A taint Kubernetes sets while a node comes up is still on it.
    EphemeralTaint(String),
    /// An extended resource the claim requests is not in the node's allocatable.
    ResourceNotRegistered(String),
}

impl Blocker {
    /// Karpenter's `Initialized` condition reason.
    pub fn reason(&self) -> &'static str {
        match self {
            Blocker::NodeNotReady => "NodeNotReady",
            Blocker::StartupTaint(_) => "StartupTaintsExist",
            Blocker::EphemeralTaint(_) => "KnownEphemeralTaintsExist",
            Blocker::ResourceNotRegistered(_) => "ResourceNotRegistered",
        }
    }
}

impl std::fmt::Display for Blocker {
    /// Karpenter's `Initialized` condition message.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Blocker::NodeNotReady => write!(f, "Node status is NotReady"),
            Blocker::StartupTaint(k) => write!(f, "StartupTaint \"{k}\" still exists"),
            Blocker::EphemeralTaint(k) => write!(f, "KnownEphemeralTaint \"{k}\" still exists"),
            Blocker::ResourceNotRegistered(k) => {
                write!(f, "Resource \"{k}\" was requested but not registered")
            }
        }
    }
}

/// Why a node is not initialized yet, or `None` when it is.
pub fn blocker(node: &Node, c: &NodeClaim) -> Option<Blocker> {
    let ready = node
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| cs.iter().any(|x| x.type_ == "Ready" && x.status == "True"));
    if !ready {
        return Some(Blocker::NodeNotReady);
    }
    let taints = node
        .spec
        .as_ref()
        .and_then(|s| s.taints.clone())
        .unwrap_or_default();
    if let Some(t) = taints.iter().find(|t| {
        c.spec.startup_taints.iter().any(|s| {
            s.key == t.key
                && serde_json::to_value(s.effect)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .as_deref()
                    == Some(t.effect.as_str())
        })
    }) {
        return Some(Blocker::StartupTaint(t.key.clone()));
    }
    if let Some(t) = taints.iter().find(|t| is_ephemeral_taint(&t.key)) {
        return Some(Blocker::EphemeralTaint(t.key.clone()));
    }
    let alloc = node
        .status
        .as_ref()
        .and_then(|s| s.allocatable.clone())
        .unwrap_or_default();
    for (k, v) in &c.spec.resources.requests {
        if CORE_RESOURCES.contains(&k.as_str()) || v.0 == "0" {
            continue;
        }
        let reported = alloc.get(k).is_some_and(|q| q.0 != "0");
        if !reported {
            return Some(Blocker::ResourceNotRegistered(k.clone()));
        }
    }
    None
}

/// Marks initialized every registered claim whose node passes the checks; records the
/// blocker on the others when it changed. Returns how many were initialized.
pub async fn initialize_pending<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    view: &View,
) -> usize {
    let mut done = 0;
    for c in &view.snap.node_claims {
        if c.metadata.deletion_timestamp.is_some()
            || !claim::is_true(c, conditions::REGISTERED)
            || claim::is_true(c, conditions::INITIALIZED)
        {
            continue;
        }
        let Some(node_name) = claim::status(c).node_name else {
            continue;
        };
        let Some(node) = view
            .snap
            .nodes
            .iter()
            .find(|n| n.metadata.name.as_deref() == Some(&node_name))
        else {
            continue;
        };
        let r = match blocker(node, c) {
            Some(b) => note_blocker(ctx, c, &b).await,
            None => initialize(ctx, c, node).await.map(|()| done += 1),
        };
        if let Err(e) = r {
            ctx.log.warn(
                LIFECYCLE,
                "could not initialize nodeclaim",
                json!({"NodeClaim": obj(claim::name(c)), "error": e.to_string()}),
            );
        }
    }
    done
}

async fn note_blocker<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    c: &NodeClaim,
    b: &Blocker,
) -> Result<(), ControlError> {
    let (reason, message) = (b.reason(), b.to_string());
    let current = claim::status(c);
    let same = kerf_api::v1::common::find_condition(&current.conditions, conditions::INITIALIZED)
        .is_some_and(|x| x.reason == reason && x.message == message);
    if !same {
        let cond = condition(
            conditions::INITIALIZED,
            ConditionStatus::Unknown,
            reason,
            &message,
        );
        ctx.cluster
            .set_node_claim_conditions(claim::name(c), &[cond], ctx.now())
            .await?;
    }
    Ok(())
}

async fn initialize<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    c: &NodeClaim,
    node: &Node,
) -> Result<(), ControlError> {
    let name = claim::name(c);
    let labelled = node
        .metadata
        .labels
        .as_ref()
        .is_some_and(|l| l.get(INITIALIZED).is_some_and(|v| v == "true"));
    if !labelled {
        let mut n = node.clone();
        n.metadata
            .labels
            .get_or_insert_with(BTreeMap::new)
            .insert(INITIALIZED.into(), "true".into());
        ctx.cluster.update_node(&n).await?;
    }
    let mut s = claim::status(c);
    let cond = condition(
        conditions::INITIALIZED,
        ConditionStatus::True,
        "Initialized",
        "",
    );
    s.conditions = claim::merge_conditions(&s.conditions, &[cond], ctx.now());
    ctx.cluster.patch_node_claim_status(name, None, &s).await?;
    let pool = claim::pool_name(c).unwrap_or_default();
    ctx.metrics
        .count(NODECLAIMS_INITIALIZED, &[("nodepool", pool)], 1.0);
    let node_name = node.metadata.name.clone().unwrap_or_default();
    let allocatable = node
        .status
        .as_ref()
        .and_then(|s| s.allocatable.clone())
        .unwrap_or_default();
    ctx.log.info(
        LIFECYCLE,
        "initialized nodeclaim",
        json!({"NodeClaim": obj(name), "Node": obj(&node_name), "allocatable": allocatable}),
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(requests: serde_json::Value) -> NodeClaim {
        serde_json::from_value(json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
            "metadata": {"name": "c"},
            "spec": {"requirements": [], "resources": {"requests": requests},
                "startupTaints": [{"key": "agent-not-ready", "effect": "NoSchedule"}],
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}}}))
        .unwrap()
    }

    fn node(ready: bool, taints: serde_json::Value, alloc: serde_json::Value) -> Node {
        serde_json::from_value(
            json!({"metadata": {"name": "n"}, "spec": {"taints": taints},
            "status": {"allocatable": alloc,
                "conditions": [{"type": "Ready", "status": if ready {"True"} else {"False"}}]}}),
        )
        .unwrap()
    }

    #[test]
    fn each_blocker_in_karpenters_order() {
        let c = claim(json!({"cpu": "1", "nvidia.com/gpu": "1"}));
        let gpu = json!({"cpu": "2", "nvidia.com/gpu": "1"});
        assert_eq!(
            blocker(&node(false, json!([]), gpu.clone()), &c)
                .unwrap()
                .reason(),
            "NodeNotReady"
        );
        let startup = json!([{"key": "agent-not-ready", "effect": "NoSchedule"}]);
        assert_eq!(
            blocker(&node(true, startup, gpu.clone()), &c)
                .unwrap()
                .reason(),
            "StartupTaintsExist"
        );
        let eph = json!([{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]);
        assert_eq!(
            blocker(&node(true, eph, gpu.clone()), &c).unwrap().reason(),
            "KnownEphemeralTaintsExist"
        );
        assert_eq!(
            blocker(&node(true, json!([]), json!({"cpu": "2"})), &c)
                .unwrap()
                .reason(),
            "ResourceNotRegistered"
        );
        assert_eq!(blocker(&node(true, json!([]), gpu), &c), None);
        let other = json!([{"key": "dedicated", "effect": "NoSchedule"}]);
        assert_eq!(
            blocker(&node(true, other, json!({})), &claim(json!({"cpu": "1"}))),
            None
        );
    }
}
