//! NodeOverlays (`karpenter.sh/v1alpha1`) with Karpenter's `NodeOverlay` gate on: each
//! NodePool's catalog is seen through them before the engine plans, so prices and extended
//! resources are the overlaid ones for provisioning and consolidation alike. An overlay that
//! does not convert is logged and left out (Karpenter marks it not ready and skips it);
//! overlays in conflict are logged, and the earlier name applies. Each overlay's `Ready`
//! condition says which: False with `ValidationFailed` or `Conflict`, as Karpenter's design
//! has it, True otherwise.

use serde_json::json;

use kerf_api::v1::ConditionStatus;
use kerf_api::v1alpha1::{NodeOverlay, NodeOverlayStatus};
use kerf_engine::model::NodePool;
use kerf_engine::overlay;

use crate::claim::{condition, upsert_conditions};
use crate::ctx::Ctx;
use crate::log::{Logger, controllers::PROVISIONER};
use crate::ports::{Cloud, Cluster, Publisher};

/// The overlays that convert; the rest are logged.
pub fn converted(overlays: &[NodeOverlay], log: &Logger) -> Vec<overlay::NodeOverlay> {
    overlays
        .iter()
        .filter_map(|o| match kerf_convert::overlay::node_overlay(o) {
            Ok(x) => Some(x),
            Err(e) => {
                log.warn(
                    PROVISIONER,
                    "ignoring invalid object",
                    json!({"kind": "NodeOverlay", "name": o.metadata.name, "error": e.to_string()}),
                );
                None
            }
        })
        .collect()
}

/// The pool with its catalog seen through `overlays`.
pub fn apply(mut pool: NodePool, overlays: &[overlay::NodeOverlay], log: &Logger) -> NodePool {
    if overlays.is_empty() {
        return pool;
    }
    for c in overlay::conflicts(&pool.catalog, overlays, &pool.name, &pool.labels) {
        log.warn(
            PROVISIONER,
            "NodeOverlays conflict",
            json!({"NodeOverlay": c.overlay, "with": c.with, "field": c.field, "NodePool": pool.name}),
        );
    }
    pool.catalog = std::sync::Arc::new(overlay::apply(
        &pool.catalog,
        overlays,
        &pool.name,
        &pool.labels,
    ));
    pool
}

/// The status `o` should have, given the conflicts found among the overlays.
pub fn status(
    o: &NodeOverlay,
    conflicts: &[overlay::Conflict],
    now: jiff::Timestamp,
) -> NodeOverlayStatus {
    let name = o.metadata.name.as_deref().unwrap_or_default();
    let ready = match kerf_convert::overlay::node_overlay(o) {
        Err(e) => condition(
            "Ready",
            ConditionStatus::False,
            "ValidationFailed",
            &e.to_string(),
        ),
        Ok(_) => match conflicts.iter().find(|c| c.overlay == name) {
            Some(c) => condition(
                "Ready",
                ConditionStatus::False,
                "Conflict",
                &format!("conflict with NodeOverlay {:?} on {}", c.with, c.field),
            ),
            None => condition("Ready", ConditionStatus::True, "Ready", ""),
        },
    };
    let old = o.status.clone().unwrap_or_default();
    NodeOverlayStatus {
        conditions: upsert_conditions(&old.conditions, &[ready], now),
    }
}

/// Every conflict among `overlays` in any of `pools`.
pub fn all_conflicts(pools: &[NodePool], overlays: &[NodeOverlay]) -> Vec<overlay::Conflict> {
    let valid: Vec<overlay::NodeOverlay> = overlays
        .iter()
        .filter_map(|o| kerf_convert::overlay::node_overlay(o).ok())
        .collect();
    let mut out: Vec<overlay::Conflict> = Vec::new();
    for p in pools {
        for c in overlay::conflicts(&p.catalog, &valid, &p.name, &p.labels) {
            if !out.contains(&c) {
                out.push(c);
            }
        }
    }
    out
}

/// Writes the status of every NodeOverlay whose status changed; returns how many.
pub async fn refresh<C: Cluster, K: Cloud, P: Publisher>(
    ctx: &Ctx<C, K, P>,
    overlays: &[NodeOverlay],
    pools: &[NodePool],
) -> usize {
    let conflicts = all_conflicts(pools, overlays);
    let mut changed = 0;
    for o in overlays {
        let next = status(o, &conflicts, ctx.now());
        if o.status.as_ref() == Some(&next) {
            continue;
        }
        let name = o.metadata.name.clone().unwrap_or_default();
        match ctx.cluster.patch_node_overlay_status(&name, &next).await {
            Ok(()) => changed += 1,
            Err(e) => ctx.log.warn(
                PROVISIONER,
                "could not write nodeoverlay status",
                json!({"NodeOverlay": name, "error": e.to_string()}),
            ),
        }
    }
    changed
}

#[cfg(test)]
#[path = "overlays_tests.rs"]
mod tests;
