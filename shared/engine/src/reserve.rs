//! Capacity reservations within one plan. Each reservation takes as many new NodeClaims as it
//! has instances left (the fewest any pool's catalog reports, as Karpenter counts a
//! reservation several pools share). A new claim sized for a reserved offering holds one
//! instance of it; once a reservation is held in full its offerings price no type, so the
//! claims after it are sized for what can be bought. When the plan is written, a claim holding
//! a reservation launches into it alone (capacity type `reserved` and its reservation id: the
//! reservation's one instance type), a claim holding none takes a reservation still left for its options, and
//! otherwise launches without reserved offerings.

use std::collections::BTreeMap;

use kerf_catalog::CapacityType;

use crate::labels;
use crate::pools::{Off, OfferingFilter, PoolCtx, TypeCtx};
use crate::requirements::{Requirement, Requirements};

/// Instances left per reservation id.
#[derive(Clone, Debug, Default)]
pub struct Budget {
    left: BTreeMap<String, u32>,
}

impl Budget {
    /// The reservations the pools' types offer, each with the fewest instances any reports.
    pub fn of(pools: &[PoolCtx<'_>]) -> Budget {
        let mut left: BTreeMap<String, u32> = BTreeMap::new();
        let reserved = pools
            .iter()
            .flat_map(|p| p.types.iter())
            .flat_map(|t| t.offerings.iter())
            .filter_map(|o| o.reservation.as_deref());
        for r in reserved {
            left.entry(r.id.clone())
                .and_modify(|n| *n = (*n).min(r.capacity))
                .or_insert(r.capacity);
        }
        Budget { left }
    }

    /// True when no pool offers a reservation (plans then never change).
    pub fn is_empty(&self) -> bool {
        self.left.is_empty()
    }

    fn has_room(&self, id: &str) -> bool {
        self.left.get(id).is_some_and(|n| *n > 0)
    }

    /// Takes one instance of reservation `id`; false when none is left.
    pub fn take(&mut self, id: &str) -> bool {
        match self.left.get_mut(id) {
            Some(n) if *n > 0 => {
                *n -= 1;
                true
            }
            _ => false,
        }
    }

    /// Gives back one instance of reservation `id`.
    pub fn give(&mut self, id: &str) {
        if let Some(n) = self.left.get_mut(id) {
            *n += 1;
        }
    }

    /// The cheapest offering of `t` that `reqs` admit and that can still be bought: a
    /// reserved one only while its reservation has room.
    pub fn cheapest<'t>(&self, t: &'t TypeCtx<'_>, reqs: &Requirements) -> Option<&'t Off> {
        let allowed = OfferingFilter::of(reqs);
        t.offerings
            .iter()
            .filter(|o| o.reservation_id().is_none_or(|id| self.has_room(id)))
            .find(|o| allowed.admits(o))
    }

    /// Reprices candidate types `(index, price)` of `pool` by what can still be bought,
    /// dropping those with nothing left.
    pub fn reprice(&self, pool: &PoolCtx<'_>, reqs: &Requirements, cands: &mut Vec<(usize, f64)>) {
        if self.is_empty() {
            return;
        }
        cands.retain_mut(|c| match self.cheapest(&pool.types[c.0], reqs) {
            Some(o) => {
                c.1 = o.price;
                true
            }
            None => false,
        });
    }

    /// The reservation a new claim sized for `t` holds: its cheapest offering's, when that
    /// is reserved.
    pub fn held(&self, t: &TypeCtx<'_>, reqs: &Requirements) -> Option<String> {
        if self.is_empty() {
            return None;
        }
        self.cheapest(t, reqs)
            .and_then(Off::reservation_id)
            .map(str::to_string)
    }
}

/// Requirements without reserved offerings when pool `pc` offers any: cost repacking prices
/// claims at what can be bought, and leaves reservations to the claims that held them while
/// packing (and to [`choose`], which gives what is left to the repacked claims). Whether the
/// pool offers any is read once, not per claim.
#[derive(Clone, Copy, Debug)]
pub struct Purchasable {
    reserved: bool,
}

impl Purchasable {
    pub fn of(pc: &PoolCtx<'_>) -> Purchasable {
        Purchasable {
            reserved: pc
                .types
                .iter()
                .any(|t| t.offerings.iter().any(|o| o.reservation.is_some())),
        }
    }

    /// `reqs`, narrowed to purchased capacity types when the pool offers reservations.
    pub fn reqs(self, reqs: &Requirements) -> Requirements {
        let mut r = reqs.clone();
        if self.reserved {
            r.add(
                labels::CAPACITY_TYPE,
                Requirement::not_in([CapacityType::Reserved.as_str()]),
            );
        }
        r
    }
}

/// How a new claim's launch uses reservations.
#[derive(Clone, Debug, PartialEq)]
pub enum Choice {
    /// Launch into this reservation (its offerings are of one instance type).
    Reserved(String),
    /// Launch without reserved offerings.
    Without,
    /// No reserved offering concerns the claim: nothing changes.
    Untouched,
}

/// The reservation a claim launches into, given the one it `held` while packing (already
/// taken from `budget`) and its options `types` (cheapest first) under `reqs`.
pub fn choose(
    budget: &mut Budget,
    reqs: &Requirements,
    types: &[&TypeCtx<'_>],
    held: Option<&str>,
) -> Choice {
    if budget.is_empty() {
        return Choice::Untouched;
    }
    let allowed = OfferingFilter::of(reqs);
    let reserved: Vec<(&TypeCtx<'_>, &str)> = types
        .iter()
        .flat_map(|t| t.offerings.iter().map(move |o| (*t, o)))
        .filter(|(_, o)| allowed.admits(o))
        .filter_map(|(t, o)| o.reservation_id().map(|id| (t, id)))
        .collect();
    let found = |id: &str| reserved.iter().find(|(_, r)| *r == id);
    if let Some(id) = held {
        if found(id).is_some() {
            return Choice::Reserved(id.to_string());
        }
        budget.give(id);
    }
    match reserved.iter().find(|(_, id)| budget.has_room(id)) {
        Some((_, id)) => {
            budget.take(id);
            Choice::Reserved(id.to_string())
        }
        None if reserved.is_empty() => Choice::Untouched,
        None => Choice::Without,
    }
}

/// `reqs` narrowed to the choice.
pub fn narrow(reqs: &Requirements, choice: &Choice) -> Requirements {
    let mut r = reqs.clone();
    match choice {
        Choice::Reserved(id) => {
            r.add(
                labels::CAPACITY_TYPE,
                Requirement::is_in([CapacityType::Reserved.as_str()]),
            );
            r.add(labels::CAPACITY_RESERVATION_ID, Requirement::is_in([id]));
        }
        Choice::Without => r.add(
            labels::CAPACITY_TYPE,
            Requirement::not_in([CapacityType::Reserved.as_str()]),
        ),
        Choice::Untouched => {}
    }
    r
}

#[cfg(test)]
mod tests;
