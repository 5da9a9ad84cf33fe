//! Capacity reservations in the simulated EC2: on-demand capacity reservations (ODCRs) and
//! capacity blocks, each holding room for a number of instances of one type in one zone. A
//! reserved launch takes room (none left: the offering fails for capacity, keyed by the
//! reservation) and a terminated instance gives it back. A node class's
//! `capacityReservationSelectorTerms` select them as the AWS adapter's
//! `DescribeCapacityReservations` queries do: by id, or by owner, tags and match criteria
//! (a term with only an owner selects nothing), always among active reservations. Cancelling
//! an ODCR leaves its instances running as plain on-demand ones; a capacity block's
//! instances are terminated at its end.

use std::collections::BTreeMap;

use jiff::Timestamp;
use kerf_api::v1::EC2NodeClass;
use kerf_api::v1::ec2nodeclass::CapacityReservationSelectorTerm;
use kerf_catalog::CapacityType;
use kerf_catalog::reservation::{MatchCriteria, Reservation, ReservationKind};

use super::{SimCloud, State, at};

/// The account that owns reservations unless a spec names another.
pub const DEFAULT_OWNER: &str = "123456789012";

/// A capacity reservation to create in the simulated EC2.
#[derive(Debug, Clone, PartialEq)]
pub struct ReservationSpec {
    /// `cr-…`.
    pub id: String,
    pub instance_type: String,
    pub zone: String,
    /// Instances it holds room for (EC2's `TotalInstanceCount`).
    pub count: u32,
    pub kind: ReservationKind,
    pub match_criteria: MatchCriteria,
    pub owner_id: String,
    pub tags: BTreeMap<String, String>,
    /// When it ends (a capacity block's end).
    pub end_time: Option<Timestamp>,
    pub interruptible: bool,
}

fn default_kind() -> ReservationKind {
    ReservationKind::Default
}

fn default_criteria() -> MatchCriteria {
    MatchCriteria::Targeted
}

fn default_owner() -> String {
    DEFAULT_OWNER.into()
}

impl ReservationSpec {
    /// A targeted ODCR of `count` instances owned by [`DEFAULT_OWNER`], with no tags and no
    /// end.
    pub fn new(id: &str, instance_type: &str, zone: &str, count: u32) -> Self {
        ReservationSpec {
            id: id.into(),
            instance_type: instance_type.into(),
            zone: zone.into(),
            count,
            kind: default_kind(),
            match_criteria: default_criteria(),
            owner_id: default_owner(),
            tags: BTreeMap::new(),
            end_time: None,
            interruptible: false,
        }
    }

    /// The same reservation as a capacity block ending at `end`.
    pub fn block_until(self, end: Timestamp) -> Self {
        ReservationSpec {
            kind: ReservationKind::CapacityBlock,
            end_time: Some(end),
            ..self
        }
    }

    /// Whether the term selects this reservation (by id; or by owner, tags and match
    /// criteria, `*` matching any tag value).
    fn selected_by(&self, t: &CapacityReservationSelectorTerm) -> bool {
        if let Some(id) = t.id.as_deref().filter(|id| !id.is_empty()) {
            return id == self.id;
        }
        let criteria = t
            .instance_match_criteria
            .as_deref()
            .filter(|c| !c.is_empty());
        if t.tags.is_empty() && criteria.is_none() {
            return false;
        }
        let owner = t.owner_id.as_deref().filter(|o| !o.is_empty());
        let tags = t
            .tags
            .iter()
            .all(|(k, v)| self.tags.get(k).is_some_and(|have| v == "*" || have == v));
        owner.is_none_or(|o| o == self.owner_id)
            && tags
            && criteria.is_none_or(|c| c == self.match_criteria.as_str())
    }
}

/// A reservation the cloud holds.
#[derive(Debug, Clone)]
pub(super) struct Held {
    spec: ReservationSpec,
    cancelled: bool,
}

impl Held {
    /// Active: not cancelled and not ended.
    fn active(&self, now: Timestamp) -> bool {
        !self.cancelled && self.spec.end_time.is_none_or(|end| end > now)
    }
}

/// Room left in reservation `id`: its count less its instances not terminated.
fn available(s: &State, id: &str, now: Timestamp) -> u32 {
    let Some(r) = s.reservations.get(id) else {
        return 0;
    };
    let used = s
        .instances
        .values()
        .filter(|i| i.info.capacity_reservation.as_deref() == Some(id))
        .filter(|i| at(i, now).info.state != "terminated")
        .count();
    r.spec
        .count
        .saturating_sub(u32::try_from(used).unwrap_or(u32::MAX))
}

/// Whether reservation `id` is active and can take one more instance.
pub(super) fn has_room(s: &State, id: &str, now: Timestamp) -> bool {
    s.reservations.get(id).is_some_and(|r| r.active(now)) && available(s, id, now) > 0
}

/// When the capacity block `id` ends (`None` for an ODCR).
pub(super) fn block_end(s: &State, id: &str) -> Option<Timestamp> {
    let r = s.reservations.get(id)?;
    (r.spec.kind == ReservationKind::CapacityBlock)
        .then_some(r.spec.end_time)
        .flatten()
}

fn reservation(s: &State, held: &Held, now: Timestamp) -> Reservation {
    let r = &held.spec;
    Reservation {
        id: r.id.clone(),
        instance_type: r.instance_type.clone(),
        zone: r.zone.clone(),
        owner_id: r.owner_id.clone(),
        match_criteria: r.match_criteria,
        kind: r.kind,
        interruptible: r.interruptible,
        end_time: r.end_time,
        available: available(s, &r.id, now),
    }
}

impl SimCloud {
    /// Creates a capacity reservation (replacing one with the same id).
    pub fn add_reservation(&self, spec: ReservationSpec) {
        let held = Held {
            spec,
            cancelled: false,
        };
        self.lock().reservations.insert(held.spec.id.clone(), held);
    }

    /// Cancels reservation `id`, as EC2's `CancelCapacityReservation`: it is no longer
    /// selected, and its instances keep running as plain on-demand instances. False for an
    /// unknown id.
    pub fn cancel_reservation(&self, id: &str) -> bool {
        let mut s = self.lock();
        let Some(r) = s.reservations.get_mut(id) else {
            return false;
        };
        r.cancelled = true;
        for i in s.instances.values_mut() {
            if i.info.capacity_reservation.as_deref() == Some(id) {
                i.info.capacity_reservation = None;
                i.info.capacity_type = CapacityType::OnDemand;
                i.block_ends_at = None;
            }
        }
        true
    }

    /// Every reservation with the room it has left now (cancelled and ended ones included).
    pub fn reservations(&self) -> Vec<(ReservationSpec, u32)> {
        let now = self.clock.now();
        let s = self.lock();
        s.reservations
            .values()
            .map(|r| (r.spec.clone(), available(&s, &r.spec.id, now)))
            .collect()
    }

    /// The active reservations the class's terms select at `now`, ordered by id.
    pub fn selected(&self, class: &EC2NodeClass, now: Timestamp) -> Vec<Reservation> {
        let terms = &class.spec.capacity_reservation_selector_terms;
        if terms.is_empty() {
            return Vec::new();
        }
        let s = self.lock();
        s.reservations
            .values()
            .filter(|r| r.active(now) && terms.iter().any(|t| r.spec.selected_by(t)))
            .map(|r| reservation(&s, r, now))
            .collect()
    }
}

#[cfg(test)]
#[path = "reservations_tests.rs"]
mod tests;
