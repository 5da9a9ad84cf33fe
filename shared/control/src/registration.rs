//! What registration changes, decided without I/O: the claim a Node belongs to, the Node
//! after registration and the claim's status once registered. Both paths that register a
//! Node use it: the registration pass ([`crate::register`]) and the webhook that patches a
//! Node as it is created ([`crate::webhook`]).

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Node, Taint};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kerf_api::v1::{ConditionStatus, NodeClaim, NodeClaimStatus};

use crate::claim::{self, condition};
use crate::names::{
    DO_NOT_SYNC_TAINTS, NODECLASS, REGISTERED, TERMINATION_FINALIZER, UNREGISTERED_TAINT,
    conditions,
};

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

#[cfg(test)]
#[path = "registration_tests.rs"]
mod tests;
