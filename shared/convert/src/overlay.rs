//! `karpenter.sh/v1alpha1` NodeOverlay to the engine's overlay, every field checked as
//! Karpenter's validation checks it (an error names the field).

use kerf_api::v1alpha1::NodeOverlay;
use kerf_engine::overlay::{NodeOverlay as Overlay, PriceChange};
use kerf_engine::requirements::Requirements;

use crate::{FieldError, resources};

/// Resources a NodeOverlay's `capacity` may not set: only extended resources can be added.
const STANDARD: [&str; 4] = ["cpu", "memory", "pods", "ephemeral-storage"];

/// Converts one NodeOverlay.
pub fn node_overlay(o: &NodeOverlay) -> Result<Overlay, FieldError> {
    let name = o
        .metadata
        .name
        .clone()
        .ok_or_else(|| FieldError::new("metadata.name", "missing"))?;
    let reqs = crate::cluster::karpenter_requirements(&o.spec.requirements, "spec.requirements")?;
    let requirements = Requirements::from_selectors(&reqs)
        .map_err(|e| FieldError::new("spec.requirements", e.to_string()))?;
    let price = PriceChange::parse(o.spec.price.as_deref(), o.spec.price_adjustment.as_deref())
        .map_err(|e| FieldError::new("spec", e.to_string()))?;
    let capacity = resources("spec.capacity", Some(&o.spec.capacity))?;
    if let Some(k) = capacity.0.keys().find(|k| STANDARD.contains(&k.as_str())) {
        return Err(FieldError::new(
            format!("spec.capacity.{k}"),
            "only extended resources may be added (not cpu, memory, pods or ephemeral-storage)",
        ));
    }
    let weight = o.spec.weight.unwrap_or(0);
    if !(0..=10_000).contains(&weight) {
        return Err(FieldError::new(
            "spec.weight",
            "must be between 0 and 10000",
        ));
    }
    Ok(Overlay {
        name,
        weight,
        requirements,
        price,
        capacity,
    })
}

#[cfg(test)]
#[path = "overlay_tests.rs"]
mod tests;
