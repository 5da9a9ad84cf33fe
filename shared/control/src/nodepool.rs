//! NodePool status, as Karpenter's counter and readiness controllers write it: the pool's
//! node count and summed node capacity (`kubectl get nodepools` shows NODES), and the
//! `NodeClassReady`, `ValidationSucceeded` and `Ready` conditions (READY), and Kerf's own
//! `kerf.dev/CostWithinLimit` for a pool with a dollar limit (`kerf.dev/max-cost-per-hour`).
//! Written only when it changed.
//!
//! A dollar limit that does not parse fails `ValidationSucceeded`, so the pool is not
//! `Ready`; the provisioner also leaves such a pool out (the conversion refuses it) and logs
//! a warning. A typo in a spending cap must not lift the cap, and Karpenter treats a NodePool
//! that fails validation the same way: it launches nothing until it is fixed.

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

/// Kerf's condition on a pool with a dollar limit.
pub const COST_WITHIN_LIMIT: &str = "kerf.dev/CostWithinLimit";

/// `ValidationSucceeded`, failed by a dollar limit that does not parse.
fn validation(pool: &NodePool) -> Condition {
    match kerf_convert::budget::max_cost_per_hour(pool) {
        Ok(_) => condition(
            "ValidationSucceeded",
            ConditionStatus::True,
            "ValidationSucceeded",
            "",
        ),
        Err(e) => condition(
            "ValidationSucceeded",
            ConditionStatus::False,
            "InvalidCostLimit",
            &e.message,
        ),
    }
}

/// `kerf.dev/CostWithinLimit` for a pool whose NodeClaims cost `cost` per hour: True while
/// the cost is under the limit, False once it reached it; `None` without a (valid) limit.
fn cost_condition(pool: &NodePool, cost: f64) -> Option<Condition> {
    let max = kerf_convert::budget::max_cost_per_hour(pool).ok()??;
    let message = format!("${cost:.2}/h of ${max:.2}/h");
    Some(if cost < max {
        condition(
            COST_WITHIN_LIMIT,
            ConditionStatus::True,
            "WithinLimit",
            &message,
        )
    } else {
        condition(
            COST_WITHIN_LIMIT,
            ConditionStatus::False,
            "LimitReached",
            &message,
        )
    })
}

/// The status `pool` should have; `cost` is what its NodeClaims cost per hour.
pub fn status(
    pool: &NodePool,
    claims: &[NodeClaim],
    classes: &[EC2NodeClass],
    cost: f64,
    now: jiff::Timestamp,
) -> NodePoolStatus {
    let name = pool.metadata.name.as_deref().unwrap_or_default();
    let mine: Vec<&NodeClaim> = claims
        .iter()
        .filter(|c| pool_name(c) == Some(name))
        .collect();
    let (class, generation) = class_ready(pool, classes);
    let validated = validation(pool);
    let failed: Vec<String> = [&class, &validated]
        .iter()
        .filter(|c| c.status != ConditionStatus::True)
        .map(|c| format!("{}=False", c.type_))
        .collect();
    let ready = if failed.is_empty() {
        condition("Ready", ConditionStatus::True, "Ready", "")
    } else {
        condition(
            "Ready",
            ConditionStatus::False,
            "UnhealthyDependents",
            &failed.join(", "),
        )
    };
    let old = pool.status.clone().unwrap_or_default();
    let mut updates = vec![class, validated, ready];
    let mut kept = old.conditions.clone();
    match cost_condition(pool, cost) {
        Some(c) => updates.push(c),
        None => kept.retain(|c| c.type_ != COST_WITHIN_LIMIT),
    }
    NodePoolStatus {
        resources: resources(&mine),
        nodes: Some(mine.len() as i64),
        node_class_observed_generation: generation,
        conditions: upsert_conditions(&kept, &updates, now),
    }
}

/// Refreshes the status of every pool (`costs`: what each pool's NodeClaims cost per hour);
/// returns how many changed.
pub async fn refresh<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    pools: &[NodePool],
    claims: &[NodeClaim],
    classes: &[EC2NodeClass],
    costs: &BTreeMap<String, f64>,
) -> usize {
    let mut changed = 0;
    for pool in pools
        .iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
    {
        let name = pool.metadata.name.clone().unwrap_or_default();
        let cost = costs.get(&name).copied().unwrap_or(0.0);
        let next = status(pool, claims, classes, cost, ctx.now());
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
