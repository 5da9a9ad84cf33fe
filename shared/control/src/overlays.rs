//! NodeOverlays (`karpenter.sh/v1alpha1`) with Karpenter's `NodeOverlay` gate on: each
//! NodePool's catalog is seen through them before the engine plans, so prices and extended
//! resources are the overlaid ones for provisioning and consolidation alike. An overlay that
//! does not convert is logged and left out (Karpenter marks it not ready and skips it);
//! overlays in conflict are logged, and the earlier name applies.

use serde_json::json;

use kerf_api::v1alpha1::NodeOverlay;
use kerf_engine::model::NodePool;
use kerf_engine::overlay;

use crate::log::{Logger, controllers::PROVISIONER};

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
