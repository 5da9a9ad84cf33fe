//! NodeOverlays (`karpenter.sh/v1alpha1`) with Karpenter's `NodeOverlay` gate on: each
//! NodePool's catalog is seen through them before the engine plans, so prices and extended
//! resources are the overlaid ones for provisioning and consolidation alike. An overlay that
//! does not convert is logged and left out (Karpenter marks it not ready and skips it);
//! overlays in conflict are logged, and the earlier name applies. Each overlay's `Ready`
//! condition says which: False with `ValidationFailed` or `Conflict`, as Karpenter's design
//! has it, True otherwise.
//!
//! A NodeClaim some of whose instance types an overlay reached is annotated at creation, as
//! Karpenter does, and launched from the overlaid catalog: extended resources an overlay
//! adds hold its requests, and a price overlay makes the launch follow the overlaid prices.

use std::collections::BTreeMap;
use std::sync::Arc;

use kerf_catalog::Catalog;
use serde_json::json;

use kerf_api::v1::{ConditionStatus, NodeClaim};
use kerf_api::v1alpha1::{NodeOverlay, NodeOverlayStatus};
use kerf_engine::model::NodePool;
use kerf_engine::overlay;

use crate::claim::{condition, upsert_conditions};
use crate::ctx::Ctx;
use crate::log::{Logger, controllers::PROVISIONER};
use crate::ports::{Cloud, Cluster, Publisher};
use crate::view::View;

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

/// The overlays that convert, quietly (the view has logged the others).
pub fn valid(overlays: &[NodeOverlay]) -> Vec<overlay::NodeOverlay> {
    overlays
        .iter()
        .filter_map(|o| kerf_convert::overlay::node_overlay(o).ok())
        .collect()
}

/// The annotations Karpenter puts on a new NodeClaim of `pool` whose instance types
/// (`types`) overlays reach: `karpenter.sh/price-overlay-applied` and
/// `karpenter.sh/capacity-overlay-applied`, each "true" when it applies.
pub fn claim_annotations(
    view: &View,
    pool: &kerf_api::v1::NodePool,
    types: &[String],
) -> BTreeMap<String, String> {
    let class = &pool.spec.template.spec.node_class_ref.name;
    let (Some(catalog), Some(name)) = (view.catalogs.get(class), pool.metadata.name.as_deref())
    else {
        return BTreeMap::new();
    };
    let overlays = valid(&view.snap.node_overlays);
    let labels = &pool.spec.template.metadata.labels;
    let t = overlay::touched(catalog, &overlays, name, labels, types);
    let mut out = BTreeMap::new();
    for (on, key) in [
        (t.price, kerf_labels::PRICE_OVERLAY_APPLIED),
        (t.capacity, kerf_labels::CAPACITY_OVERLAY_APPLIED),
    ] {
        if on {
            out.insert(key.to_string(), "true".to_string());
        }
    }
    out
}

/// The catalog a claim launches from: its class's `base`, seen through the overlays as its
/// NodePool sees it (the base itself when its pool is gone or no overlay exists).
pub fn launch_catalog(view: &View, claim: &NodeClaim, base: &Arc<Catalog>) -> Arc<Catalog> {
    let overlays = valid(&view.snap.node_overlays);
    let pool = crate::claim::pool_name(claim).and_then(|p| view.pool(p));
    let (Some(pool), false) = (pool, overlays.is_empty()) else {
        return base.clone();
    };
    let name = pool.metadata.name.as_deref().unwrap_or_default();
    let labels = &pool.spec.template.metadata.labels;
    Arc::new(overlay::apply(base, &overlays, name, labels))
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
    let valid = valid(overlays);
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
