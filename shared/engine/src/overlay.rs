//! Karpenter's NodeOverlay (`karpenter.sh/v1alpha1`, gate `NodeOverlay`): overlays whose
//! requirements select instance types and offerings change what the scheduler believes about
//! them — an offering's price (`price`, or `priceAdjustment` by an amount or a percentage,
//! never below 0) and extended resources a type provides (`capacity`). Several overlays
//! matching the same offering merge field by field: the highest `weight` wins each field, and
//! equal weights go by name (alphabetical), the later one being in conflict.
//!
//! Applied to a NodePool's catalog before scheduling, so provisioning, limits, the dollar
//! limit and consolidation all see the overlaid prices and capacity.

mod price;

pub use price::{OverlayError, PriceChange};

use std::collections::BTreeMap;

use kerf_catalog::{Catalog, InstanceType, Offering, Resources};

use crate::labels;
use crate::requirements::Requirements;

/// One NodeOverlay, validated.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeOverlay {
    pub name: String,
    /// `spec.weight` (default 0).
    pub weight: i32,
    /// `spec.requirements`: the instance types and offerings it applies to (empty: all).
    pub requirements: Requirements,
    /// `spec.price` or `spec.priceAdjustment`.
    pub price: Option<PriceChange>,
    /// `spec.capacity`: extended resources the selected types provide.
    pub capacity: Resources,
}

/// An overlay that sets the same field as a higher-priority overlay of equal weight on some
/// offering, with another value (Karpenter marks it not `Ready`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    pub overlay: String,
    pub with: String,
    /// `price` or the resource name.
    pub field: String,
}

/// Highest weight first, then by name.
fn ordered(overlays: &[NodeOverlay]) -> Vec<&NodeOverlay> {
    let mut v: Vec<&NodeOverlay> = overlays.iter().collect();
    v.sort_by(|a, b| b.weight.cmp(&a.weight).then(a.name.cmp(&b.name)));
    v
}

/// The labels an overlay's requirements are matched against for a type in a pool, and for
/// one of its offerings when given.
fn labels_of(
    it: &InstanceType,
    region: &str,
    pool: &str,
    pool_labels: &BTreeMap<String, String>,
    o: Option<&Offering>,
) -> BTreeMap<String, String> {
    let mut l = pool_labels.clone();
    l.extend(it.labels.iter().map(|(k, v)| (k.clone(), v.clone())));
    if !region.is_empty() {
        l.insert(labels::REGION.into(), region.into());
    }
    l.insert(labels::NODEPOOL.into(), pool.into());
    if let Some(o) = o {
        l.insert(labels::ZONE.into(), o.zone.clone());
        l.insert(
            labels::CAPACITY_TYPE.into(),
            o.capacity_type.as_str().into(),
        );
        if let Some(p) = o.partition {
            l.insert(labels::PLACEMENT_GROUP_PARTITION.into(), p.to_string());
        }
    }
    l
}

fn matches(reqs: &Requirements, l: &BTreeMap<String, String>) -> bool {
    reqs.iter().all(|(k, r)| match l.get(k) {
        Some(v) => r.has(v),
        None => r.allows_absent(),
    })
}

/// True when the overlay selects one of the type's offerings.
fn selects_type(
    ov: &NodeOverlay,
    it: &InstanceType,
    at: &dyn Fn(Option<&Offering>) -> Labels,
) -> bool {
    if it.offerings.is_empty() {
        return matches(&ov.requirements, &at(None));
    }
    it.offerings
        .iter()
        .any(|o| matches(&ov.requirements, &at(Some(o))))
}

type Labels = BTreeMap<String, String>;

/// The catalog as a NodePool named `pool` (with template labels `pool_labels`) sees it once
/// `overlays` are applied.
pub fn apply(
    catalog: &Catalog,
    overlays: &[NodeOverlay],
    pool: &str,
    pool_labels: &BTreeMap<String, String>,
) -> Catalog {
    let order = ordered(overlays);
    let mut out = catalog.clone();
    for it in &mut out.instance_types {
        let at = |o: Option<&Offering>| labels_of(it, &catalog.region, pool, pool_labels, o);
        let offers: Vec<Option<f64>> = it
            .offerings
            .iter()
            .map(|o| {
                let l = at(Some(o));
                order
                    .iter()
                    .find(|ov| ov.price.is_some() && matches(&ov.requirements, &l))
                    .and_then(|ov| ov.price)
                    .map(|p| p.apply(o.price))
            })
            .collect();
        let mut added = Resources::new();
        for ov in order.iter().filter(|ov| !ov.capacity.0.is_empty()) {
            if !selects_type(ov, it, &at) {
                continue;
            }
            for (k, v) in &ov.capacity.0 {
                if !added.0.contains_key(k) && !it.capacity.0.contains_key(k) {
                    added.set(k, *v);
                }
            }
        }
        for (o, p) in it.offerings.iter_mut().zip(offers) {
            if let Some(p) = p {
                o.price = p;
            }
        }
        for (k, v) in &added.0 {
            it.capacity.set(k, *v);
            it.allocatable.set(k, *v);
        }
    }
    out
}

/// Which kinds of overlay reach some of a NodeClaim's instance types in a pool's view:
/// Karpenter annotates such a claim, and launches it by the overlaid prices when a price
/// reached it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Touched {
    /// An overlay with `price` or `priceAdjustment` selects an offering of one of the types.
    pub price: bool,
    /// An overlay with `capacity` selects one of the types.
    pub capacity: bool,
}

/// What of `overlays` reaches the instance types named `types` in the pool's view.
pub fn touched(
    catalog: &Catalog,
    overlays: &[NodeOverlay],
    pool: &str,
    pool_labels: &BTreeMap<String, String>,
    types: &[String],
) -> Touched {
    let mut t = Touched::default();
    for it in catalog
        .instance_types
        .iter()
        .filter(|it| types.contains(&it.name))
    {
        let at = |o: Option<&Offering>| labels_of(it, &catalog.region, pool, pool_labels, o);
        for ov in overlays {
            t.price |= ov.price.is_some() && selects_type(ov, it, &at);
            t.capacity |= !ov.capacity.0.is_empty() && selects_type(ov, it, &at);
        }
    }
    t
}

/// Overlays in conflict in a pool's view of the catalog: equal weight, both selecting an
/// offering and setting the same field to different values; the later name is the one in
/// conflict (the earlier one applies).
pub fn conflicts(
    catalog: &Catalog,
    overlays: &[NodeOverlay],
    pool: &str,
    pool_labels: &BTreeMap<String, String>,
) -> Vec<Conflict> {
    let order = ordered(overlays);
    let mut out: Vec<Conflict> = Vec::new();
    let mut push = |c: Conflict| {
        if !out.contains(&c) {
            out.push(c);
        }
    };
    for it in &catalog.instance_types {
        let at = |o: Option<&Offering>| labels_of(it, &catalog.region, pool, pool_labels, o);
        for (i, a) in order.iter().enumerate() {
            for b in order[i + 1..].iter().filter(|b| b.weight == a.weight) {
                if let (Some(pa), Some(pb)) = (a.price, b.price)
                    && pa != pb
                    && it.offerings.iter().any(|o| {
                        let l = at(Some(o));
                        matches(&a.requirements, &l) && matches(&b.requirements, &l)
                    })
                {
                    push(Conflict {
                        overlay: b.name.clone(),
                        with: a.name.clone(),
                        field: "price".into(),
                    });
                }
                for (k, v) in &b.capacity.0 {
                    if a.capacity.0.get(k).is_some_and(|w| w != v)
                        && selects_type(a, it, &at)
                        && selects_type(b, it, &at)
                    {
                        push(Conflict {
                            overlay: b.name.clone(),
                            with: a.name.clone(),
                            field: k.clone(),
                        });
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
#[path = "overlay_tests.rs"]
mod tests;
