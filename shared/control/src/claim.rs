//! NodeClaims as the provisioner writes them: built from a NodePool and one of the engine's
//! launches, and the status conditions of their lifecycle (Launched → Registered →
//! Initialized, with the root `Ready`).

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kerf_api::v1::{
    Condition, ConditionStatus, EC2NodeClass, NodeClaim, NodeClaimSpec, NodeClaimStatus, NodePool,
    NodeSelectorRequirementWithMinValues, ResourceRequirements,
};
use kerf_engine::plan::Launch;
use kerf_engine::requirements::SelectorRequirement;

use crate::names::{NODEPOOL, TERMINATION_FINALIZER, conditions};

/// The NodeClaim for one planned launch of `pool`: `generateName: <pool>-`, the pool's
/// template labels and annotations, its taints, node class, expiry and grace period, and
/// the launch's requirements (instance-type options included) and resource requests.
pub fn new_claim(pool: &NodePool, class: Option<&EC2NodeClass>, launch: &Launch) -> NodeClaim {
    let pool_name = pool.metadata.name.clone().unwrap_or_default();
    let t = &pool.spec.template;
    let mut labels = t.metadata.labels.clone();
    labels.insert(NODEPOOL.into(), pool_name.clone());
    let requests: BTreeMap<String, Quantity> = launch
        .requests
        .iter()
        .map(|(k, v)| (k.clone(), Quantity(v.clone())))
        .collect();
    let mut claim = NodeClaim::new(
        "",
        NodeClaimSpec {
            taints: t.spec.taints.clone(),
            startup_taints: t.spec.startup_taints.clone(),
            requirements: requirements(&launch.requirements, &pool_name),
            resources: ResourceRequirements { requests },
            node_class_ref: t.spec.node_class_ref.clone(),
            termination_grace_period: t.spec.termination_grace_period.clone(),
            expire_after: t.spec.expire_after.clone(),
        },
    );
    let mut annotations = t.metadata.annotations.clone();
    annotations.insert(
        kerf_labels::NODEPOOL_HASH.into(),
        kerf_convert::hash::nodepool_hash(pool),
    );
    annotations.insert(
        kerf_labels::NODEPOOL_HASH_VERSION.into(),
        kerf_labels::KERF_NODEPOOL_HASH_VERSION.into(),
    );
    if launch.min_values_relaxed {
        annotations.insert(kerf_labels::MIN_VALUES_RELAXED.into(), "true".into());
    }
    if let Some(c) = class {
        annotations.insert(
            kerf_labels::aws::EC2NODECLASS_HASH.into(),
            kerf_convert::hash::nodeclass_hash(c),
        );
        annotations.insert(
            kerf_labels::aws::EC2NODECLASS_HASH_VERSION.into(),
            kerf_labels::aws::KERF_EC2NODECLASS_HASH_VERSION.into(),
        );
    }
    claim.metadata = ObjectMeta {
        generate_name: Some(format!("{pool_name}-")),
        labels: Some(labels),
        annotations: Some(annotations),
        ..ObjectMeta::default()
    };
    claim
}

/// The engine's requirements in the CRD's shape, with `karpenter.sh/nodepool In [pool]`
/// first, as Karpenter writes them.
pub fn requirements(
    reqs: &[SelectorRequirement],
    pool: &str,
) -> Vec<NodeSelectorRequirementWithMinValues> {
    let mut out = vec![NodeSelectorRequirementWithMinValues {
        key: NODEPOOL.into(),
        operator: kerf_api::v1::common::Operator::In,
        values: vec![pool.to_string()],
        min_values: None,
    }];
    for r in reqs.iter().filter(|r| r.key != NODEPOOL) {
        // Both types are the same JSON object (key, operator, values, minValues).
        if let Ok(v) = serde_json::to_value(r).and_then(serde_json::from_value) {
            out.push(v);
        }
    }
    out
}

/// A condition with `lastTransitionTime` left empty (the writer sets it, keeping the old
/// time when the status did not change).
pub fn condition(type_: &str, status: ConditionStatus, reason: &str, message: &str) -> Condition {
    Condition {
        type_: type_.into(),
        status,
        observed_generation: None,
        last_transition_time: String::new(),
        reason: reason.into(),
        message: message.into(),
    }
}

/// Upserts `updates` into `current` by type: an unchanged status keeps its
/// lastTransitionTime, a changed or new one gets `now`.
pub fn upsert_conditions(
    current: &[Condition],
    updates: &[Condition],
    now: Timestamp,
) -> Vec<Condition> {
    let now = rfc3339(now);
    let mut out = current.to_vec();
    for u in updates {
        let mut u = u.clone();
        match out.iter_mut().find(|c| c.type_ == u.type_) {
            Some(c) => {
                u.last_transition_time =
                    if c.status == u.status && !c.last_transition_time.is_empty() {
                        c.last_transition_time.clone()
                    } else {
                        now.clone()
                    };
                *c = u;
            }
            None => {
                u.last_transition_time = now.clone();
                out.push(u);
            }
        }
    }
    out
}

/// A NodeClaim's conditions after `updates` ([`upsert_conditions`]), with the root `Ready`
/// recomputed (`Launched` ∧ `Registered` ∧ `Initialized`).
pub fn merge_conditions(
    current: &[Condition],
    updates: &[Condition],
    now: Timestamp,
) -> Vec<Condition> {
    let mut out = upsert_conditions(current, updates, now);
    set_ready(&mut out, &rfc3339(now));
    out
}

fn set_ready(conds: &mut Vec<Condition>, now: &str) {
    let parts = [
        conditions::LAUNCHED,
        conditions::REGISTERED,
        conditions::INITIALIZED,
    ];
    let status_of = |t: &str| conds.iter().find(|c| c.type_ == t).map(|c| c.status);
    let pending = parts
        .iter()
        .find(|t| status_of(t) != Some(ConditionStatus::True));
    let (status, reason, message) = match pending {
        None => (ConditionStatus::True, "Ready", String::new()),
        Some(t) => (
            match status_of(t) {
                Some(ConditionStatus::False) => ConditionStatus::False,
                _ => ConditionStatus::Unknown,
            },
            "UnhealthyDependents",
            format!("{t}={}", status_name(status_of(t))),
        ),
    };
    let ready = Condition {
        type_: conditions::READY.into(),
        status,
        observed_generation: None,
        last_transition_time: now.to_string(),
        reason: reason.into(),
        message,
    };
    match conds.iter_mut().find(|c| c.type_ == conditions::READY) {
        Some(c) if c.status == ready.status => {
            c.reason = ready.reason;
            c.message = ready.message;
        }
        Some(c) => *c = ready,
        None => conds.push(ready),
    }
}

fn status_name(s: Option<ConditionStatus>) -> &'static str {
    match s {
        Some(ConditionStatus::True) => "True",
        Some(ConditionStatus::False) => "False",
        _ => "Unknown",
    }
}

/// Whether the claim's condition of `type_` is True.
pub fn is_true(claim: &NodeClaim, type_: &str) -> bool {
    claim
        .status
        .as_ref()
        .is_some_and(|s| kerf_api::v1::common::is_condition_true(&s.conditions, type_))
}

/// When the claim's condition of `type_` last changed, if it is set.
pub fn transition_time(claim: &NodeClaim, type_: &str) -> Option<Timestamp> {
    let s = claim.status.as_ref()?;
    let c = kerf_api::v1::common::find_condition(&s.conditions, type_)?;
    c.last_transition_time.parse().ok()
}

/// The claim's status, or an empty one.
pub fn status(claim: &NodeClaim) -> NodeClaimStatus {
    claim.status.clone().unwrap_or_default()
}

/// The claim's name.
pub fn name(claim: &NodeClaim) -> &str {
    claim.metadata.name.as_deref().unwrap_or_default()
}

/// The claim's provider ID, once launched.
pub fn provider_id(claim: &NodeClaim) -> Option<&str> {
    claim
        .status
        .as_ref()
        .and_then(|s| s.provider_id.as_deref())
        .filter(|p| !p.is_empty())
}

/// The providerID of a Node (its claim's, once registered).
pub fn node_provider_id(n: &k8s_openapi::api::core::v1::Node) -> Option<&str> {
    n.spec
        .as_ref()
        .and_then(|s| s.provider_id.as_deref())
        .filter(|p| !p.is_empty())
}

/// The claim's NodePool (its `karpenter.sh/nodepool` label).
pub fn pool_name(claim: &NodeClaim) -> Option<&str> {
    claim
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(NODEPOOL))
        .map(String::as_str)
}

/// RFC 3339 with second precision, as the API server writes times.
pub fn rfc3339(t: Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

#[cfg(test)]
mod tests;

/// Whether an object (a NodeClaim or its Node) is being deleted and waits on Karpenter's
/// termination finalizer: a termination for Kerf to carry out.
pub fn deleting_ours(meta: &ObjectMeta) -> bool {
    meta.deletion_timestamp.is_some()
        && meta
            .finalizers
            .iter()
            .flatten()
            .any(|f| f == TERMINATION_FINALIZER)
}
