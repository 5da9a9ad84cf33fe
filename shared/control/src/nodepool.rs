//! NodePool status, as Karpenter's counter and readiness controllers write it: the pool's
//! node count and summed node capacity (`kubectl get nodepools` shows NODES), and the
//! `NodeClassReady`, `ValidationSucceeded` and `Ready` conditions (READY). Written only when
//! it changed.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kerf_api::v1::{Condition, ConditionStatus, EC2NodeClass, NodeClaim, NodePool, NodePoolStatus};
use kerf_catalog::quantity::{self, Format};
use serde_json::json;

use crate::claim::{condition, pool_name, upsert_conditions};
use crate::ctx::Ctx;
use crate::log::{controllers::NODEPOOL, obj};
use crate::ports::{Cloud, Cluster, Publisher};

/// The summed capacity of `claims` (cpu in cores or millicores, memory in binary units).
fn resources(claims: &[&NodeClaim]) -> BTreeMap<String, Quantity> {
    let mut sum: BTreeMap<String, i64> = BTreeMap::new();
    for c in claims {
        let capacity = c.status.as_ref().map(|s| &s.capacity);
        for (k, q) in capacity.into_iter().flatten() {
            // A capacity the API server accepted parses; an unreadable one is not counted.
            if let Ok(v) = quantity::parse(&q.0) {
                *sum.entry(k.clone()).or_default() += v;
            }
        }
    }
    sum.into_iter()
        .map(|(k, v)| {
            let f = match k.as_str() {
                "memory" | "ephemeral-storage" => Format::Binary,
                _ => Format::DecimalMilli,
            };
            (k, Quantity(quantity::format(v, f)))
        })
        .collect()
}

/// `NodeClassReady` for `pool`, and the class generation it was observed at.
fn class_ready(pool: &NodePool, classes: &[EC2NodeClass]) -> (Condition, Option<i64>) {
    let want = &pool.spec.template.spec.node_class_ref.name;
    let Some(class) = classes
        .iter()
        .find(|c| c.metadata.name.as_ref() == Some(want))
    else {
        let c = condition(
            "NodeClassReady",
            ConditionStatus::False,
            "NodeClassNotFound",
            "NodeClass not found on cluster",
        );
        return (c, None);
    };
    let ready = class.status.as_ref().is_some_and(|s| {
        s.conditions
            .iter()
            .any(|c| c.type_ == "Ready" && c.status == ConditionStatus::True)
    });
    let c = if ready {
        condition(
            "NodeClassReady",
            ConditionStatus::True,
            "NodeClassReady",
            "",
        )
    } else {
        condition(
            "NodeClassReady",
            ConditionStatus::False,
            "NodeClassNotReady",
            "NodeClass is not ready",
        )
    };
    (c, class.metadata.generation)
}

/// The status `pool` should have.
pub fn status(
    pool: &NodePool,
    claims: &[NodeClaim],
    classes: &[EC2NodeClass],
    now: jiff::Timestamp,
) -> NodePoolStatus {
    let name = pool.metadata.name.as_deref().unwrap_or_default();
    let mine: Vec<&NodeClaim> = claims
        .iter()
        .filter(|c| pool_name(c) == Some(name))
        .collect();
    let (class, generation) = class_ready(pool, classes);
    let validated = condition(
        "ValidationSucceeded",
        ConditionStatus::True,
        "ValidationSucceeded",
        "",
    );
    let ready = if class.status == ConditionStatus::True {
        condition("Ready", ConditionStatus::True, "Ready", "")
    } else {
        condition(
            "Ready",
            ConditionStatus::False,
            "UnhealthyDependents",
            "NodeClassReady=False",
        )
    };
    let old = pool.status.clone().unwrap_or_default();
    NodePoolStatus {
        resources: resources(&mine),
        nodes: Some(mine.len() as i64),
        node_class_observed_generation: generation,
        conditions: upsert_conditions(&old.conditions, &[class, validated, ready], now),
    }
}

/// Refreshes the status of every pool; returns how many changed.
pub async fn refresh<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    pools: &[NodePool],
    claims: &[NodeClaim],
    classes: &[EC2NodeClass],
) -> usize {
    let mut changed = 0;
    for pool in pools
        .iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
    {
        let name = pool.metadata.name.clone().unwrap_or_default();
        let next = status(pool, claims, classes, ctx.now());
        if pool.status.as_ref() == Some(&next) {
            continue;
        }
        match ctx.cluster.patch_node_pool_status(&name, &next).await {
            Ok(()) => changed += 1,
            Err(e) => ctx.log.warn(
                NODEPOOL,
                "could not write nodepool status",
                json!({"NodePool": obj(&name), "error": e.to_string()}),
            ),
        }
    }
    changed
}

#[cfg(test)]
#[path = "nodepool_tests.rs"]
mod tests;
