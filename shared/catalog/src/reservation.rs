//! Capacity reservations as offerings. A node class's `capacityReservationSelectorTerms` select
//! on-demand capacity reservations (ODCRs) and capacity blocks; each one becomes a `reserved`
//! offering of its instance type in its zone, priced at the on-demand price divided by
//! [`PRICE_DIVISOR`] (as Karpenter prices them: any reservation beats any purchase, and
//! reservations keep the order of their types), available while it has instances left and is
//! not expiring. Pure: adapters discover the reservations, this module offers them.

use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use crate::{CapacityType, Catalog, InstanceType, Offering};

/// A reserved offering's price is the on-demand price over this.
pub const PRICE_DIVISOR: f64 = 10_000_000.0;

/// A capacity block counts as expiring this long before its end: EC2 starts reclaiming its
/// instances 30 minutes before the end, and nodes are drained ten minutes before that.
pub const EXPIRING_BEFORE: SignedDuration = SignedDuration::from_mins(40);

/// `karpenter.k8s.aws/capacity-reservation-type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReservationKind {
    /// An on-demand capacity reservation.
    Default,
    /// A capacity block (for ML): a fixed window, reclaimed at its end.
    CapacityBlock,
}

impl ReservationKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ReservationKind::Default => "default",
            ReservationKind::CapacityBlock => "capacity-block",
        }
    }

    /// EC2's `ReservationType` (`default`, `capacity-block`); `None` for a kind Kerf does not
    /// know.
    pub fn parse(s: &str) -> Option<ReservationKind> {
        match s {
            "default" => Some(ReservationKind::Default),
            "capacity-block" => Some(ReservationKind::CapacityBlock),
            _ => None,
        }
    }
}

/// `active`, or `expiring` within [`EXPIRING_BEFORE`] of a capacity block's end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReservationState {
    Active,
    Expiring,
}

impl ReservationState {
    pub fn as_str(self) -> &'static str {
        match self {
            ReservationState::Active => "active",
            ReservationState::Expiring => "expiring",
        }
    }
}

/// Which launches a reservation takes: any matching one (`open`) or only those naming it
/// (`targeted`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MatchCriteria {
    Open,
    Targeted,
}

impl MatchCriteria {
    pub fn as_str(self) -> &'static str {
        match self {
            MatchCriteria::Open => "open",
            MatchCriteria::Targeted => "targeted",
        }
    }

    pub fn parse(s: &str) -> Option<MatchCriteria> {
        match s {
            "open" => Some(MatchCriteria::Open),
            "targeted" => Some(MatchCriteria::Targeted),
            _ => None,
        }
    }
}

/// One capacity reservation a node class selected.
#[derive(Clone, Debug, PartialEq)]
pub struct Reservation {
    /// `cr-…`.
    pub id: String,
    pub instance_type: String,
    pub zone: String,
    pub owner_id: String,
    pub match_criteria: MatchCriteria,
    pub kind: ReservationKind,
    pub interruptible: bool,
    /// When it ends (capacity blocks, and reservations with an end date).
    pub end_time: Option<Timestamp>,
    /// Instances it can still take (EC2's `AvailableInstanceCount`).
    pub available: u32,
}

impl Reservation {
    /// Expiring once a capacity block is within [`EXPIRING_BEFORE`] of its end; every other
    /// reservation is active.
    pub fn state(&self, now: Timestamp) -> ReservationState {
        match (self.kind, self.end_time) {
            (ReservationKind::CapacityBlock, Some(end)) if now >= end - EXPIRING_BEFORE => {
                ReservationState::Expiring
            }
            _ => ReservationState::Active,
        }
    }
}

/// What a `reserved` offering carries: the reservation it launches into.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReservedOffering {
    pub id: String,
    pub kind: ReservationKind,
    pub interruptible: bool,
    /// Instances the reservation can still take.
    pub capacity: u32,
}

impl ReservedOffering {
    /// The offering's value of `karpenter.k8s.aws/capacity-reservation-interruptible`.
    pub fn interruptible_label(&self) -> &'static str {
        if self.interruptible { "true" } else { "false" }
    }
}

/// `catalog` with one `reserved` offering per reservation whose instance type it holds,
/// after that type's other offerings. The offering is available when the reservation has
/// room, is not expiring, and its zone is one the type is offered in here (the node class's
/// subnets' zones); a reservation for a type the catalog lacks is left out.
pub fn offer(mut catalog: Catalog, reservations: &[Reservation], now: Timestamp) -> Catalog {
    for r in reservations {
        let Some(it) = catalog
            .instance_types
            .iter_mut()
            .find(|t| t.name == r.instance_type)
        else {
            continue;
        };
        let offering = reserved_offering(it, r, now);
        it.offerings.push(offering);
    }
    catalog
}

fn reserved_offering(it: &InstanceType, r: &Reservation, now: Timestamp) -> Offering {
    let in_zone = it.offerings.iter().any(|o| o.zone == r.zone);
    Offering {
        zone: r.zone.clone(),
        capacity_type: CapacityType::Reserved,
        price: on_demand_price(it) / PRICE_DIVISOR,
        available: in_zone && r.available > 0 && r.state(now) == ReservationState::Active,
        partition: None,
        reservation: Some(ReservedOffering {
            id: r.id.clone(),
            kind: r.kind,
            interruptible: r.interruptible,
            capacity: r.available,
        }),
    }
}

/// The type's on-demand price (0 when unknown: the reservation is still offered, as
/// Karpenter offers it, since its instances are already paid for).
fn on_demand_price(it: &InstanceType) -> f64 {
    it.offerings
        .iter()
        .filter(|o| o.capacity_type == CapacityType::OnDemand)
        .map(|o| o.price)
        .find(|p| p.is_finite() && *p > 0.0)
        .unwrap_or(0.0)
}

#[cfg(test)]
mod tests;
