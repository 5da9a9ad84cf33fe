//! NodeOverlays in `kerf plan`'s input: with Karpenter's `NodeOverlay` gate on they change
//! each NodePool's view of the catalog (prices, extended resources); with it off they are
//! skipped with one warning, as Karpenter ignores them.

use std::sync::Arc;

use kerf_api::v1alpha1::NodeOverlay;
use kerf_engine::model::NodePool;
use kerf_engine::overlay;

use crate::error::{CliError, Locate, Location};

/// Applies the overlays to every pool's catalog when `gate` is on; warns about overlays in
/// conflict (equal weight, same field, different values: the earlier name applies).
pub fn apply(
    pools: &mut [NodePool],
    overlays: &[(NodeOverlay, Location)],
    gate: bool,
    warnings: &mut Vec<String>,
) -> Result<(), CliError> {
    if overlays.is_empty() {
        return Ok(());
    }
    if !gate {
        warnings.push(format!(
            "{} NodeOverlay(s) skipped: the NodeOverlay feature gate is off (set \
             KERF_FEATURE_GATES=NodeOverlay=true, as Karpenter's --feature-gates)",
            overlays.len()
        ));
        return Ok(());
    }
    let converted: Vec<overlay::NodeOverlay> = overlays
        .iter()
        .map(|(o, at)| kerf_convert::overlay::node_overlay(o).map_err(|e| e.at(at)))
        .collect::<Result<_, _>>()?;
    let mut told = Vec::new();
    for np in pools.iter_mut() {
        for c in overlay::conflicts(&np.catalog, &converted, &np.name, &np.labels) {
            let line = format!(
                "NodeOverlay {:?} conflicts with {:?} on {} (equal weight): {:?} applies",
                c.overlay, c.with, c.field, c.with
            );
            if !told.contains(&line) {
                told.push(line);
            }
        }
        np.catalog = Arc::new(overlay::apply(
            &np.catalog,
            &converted,
            &np.name,
            &np.labels,
        ));
    }
    warnings.extend(told);
    Ok(())
}
