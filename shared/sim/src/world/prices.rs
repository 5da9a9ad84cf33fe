//! Prices in the simulated cloud: the bundled on-demand table and spot estimates, with spot
//! prices a scenario can move (per instance type, in one zone or all of them).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use kerf_catalog::pricing::PriceSource;
use kerf_catalog::{CapacityType, Catalog};

/// Spot price overrides; clones share them.
#[derive(Clone, Debug, Default)]
pub struct Prices {
    /// `(instance type, zone)` → USD per hour; an empty zone applies to every zone.
    spot: Arc<Mutex<BTreeMap<(String, String), f64>>>,
}

impl Prices {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<(String, String), f64>> {
        self.spot.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sets the spot price of `instance_type` in `zone` (every zone when `None`).
    pub fn set_spot(&self, instance_type: &str, zone: Option<&str>, price: f64) {
        let mut s = self.lock();
        if zone.is_none() {
            s.retain(|(t, _), _| t != instance_type);
        }
        s.insert(
            (
                instance_type.to_string(),
                zone.unwrap_or_default().to_string(),
            ),
            price,
        );
    }

    fn spot_override(&self, instance_type: &str, zone: &str) -> Option<f64> {
        let s = self.lock();
        s.get(&(instance_type.to_string(), zone.to_string()))
            .or_else(|| s.get(&(instance_type.to_string(), String::new())))
            .copied()
    }

    /// Applies the overrides to a catalog's spot offerings.
    pub fn apply(&self, catalog: &mut Catalog) {
        if self.lock().is_empty() {
            return;
        }
        for it in &mut catalog.instance_types {
            for o in &mut it.offerings {
                if o.capacity_type == CapacityType::Spot
                    && let Some(p) = self.spot_override(&it.name, &o.zone)
                {
                    o.price = p;
                }
            }
        }
    }

    /// What an instance of this offering costs per hour now, if the type is known.
    pub fn price(&self, capacity: CapacityType, instance_type: &str, zone: &str) -> Option<f64> {
        let table = kerf_catalog::bundled::bundled_prices().ok()?;
        match capacity {
            CapacityType::Spot => self
                .spot_override(instance_type, zone)
                .or_else(|| table.spot(instance_type, zone)),
            _ => table.on_demand(instance_type),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_override_moves_one_zone_or_all() {
        let p = Prices::default();
        let base = p.price(CapacityType::Spot, "m5.large", "us-west-2a");
        assert!(base.is_some_and(|b| b > 0.0));
        p.set_spot("m5.large", Some("us-west-2a"), 0.5);
        assert_eq!(
            p.price(CapacityType::Spot, "m5.large", "us-west-2a"),
            Some(0.5)
        );
        assert_ne!(
            p.price(CapacityType::Spot, "m5.large", "us-west-2b"),
            Some(0.5)
        );
        p.set_spot("m5.large", None, 0.01);
        assert_eq!(
            p.price(CapacityType::Spot, "m5.large", "us-west-2a"),
            Some(0.01)
        );
        assert_eq!(
            p.price(CapacityType::Spot, "m5.large", "us-west-2c"),
            Some(0.01)
        );
        let od = p.price(CapacityType::OnDemand, "m5.large", "us-west-2a");
        assert!(od.is_some_and(|o| o > 0.01), "on-demand is not moved");
    }
}
