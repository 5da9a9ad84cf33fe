//! Whether a requirement set admits an offering (its zone, capacity type, placement-group
//! partition and capacity reservation), with the requirements looked up once for loops over
//! many offerings.

use std::rc::Rc;

use kerf_catalog::CapacityType;
use kerf_catalog::reservation::ReservedOffering;

use crate::labels;
use crate::requirements::{Requirement, Requirements};

/// An offering a pool may buy.
#[derive(Clone, Debug)]
pub struct Off {
    pub zone: String,
    pub capacity_type: CapacityType,
    pub price: f64,
    /// Its partition of the node class's partition placement group.
    pub partition: Option<u32>,
    /// The capacity reservation of a `reserved` offering.
    pub reservation: Option<Rc<ReservedOffering>>,
}

impl Off {
    /// The reservation id of a `reserved` offering.
    pub fn reservation_id(&self) -> Option<&str> {
        self.reservation.as_deref().map(|r| r.id.as_str())
    }
}

/// The zone, capacity-type, partition and reservation requirements of a requirement set,
/// looked up once for a loop over many offerings.
#[derive(Clone, Copy, Debug)]
pub struct OfferingFilter<'r> {
    zone: Option<&'r Requirement>,
    capacity_type: Option<&'r Requirement>,
    partition: Option<&'r Requirement>,
    /// Requirements on the reservation id, kind and interruptibility.
    reservation: [Option<&'r Requirement>; 3],
}

impl<'r> OfferingFilter<'r> {
    pub fn of(reqs: &'r Requirements) -> Self {
        // Most requirement sets name no reservation label: one lookup says so.
        let reservation = if reqs.has_prefix(labels::CAPACITY_RESERVATION_PREFIX) {
            [
                reqs.get(labels::CAPACITY_RESERVATION_ID),
                reqs.get(labels::CAPACITY_RESERVATION_TYPE),
                reqs.get(labels::CAPACITY_RESERVATION_INTERRUPTIBLE),
            ]
        } else {
            [None; 3]
        };
        OfferingFilter {
            zone: reqs.get(labels::ZONE),
            capacity_type: reqs.get(labels::CAPACITY_TYPE),
            partition: reqs.get(labels::PLACEMENT_GROUP_PARTITION),
            reservation,
        }
    }

    /// True when the requirements admit the offering's zone, capacity type and partition (an
    /// offering outside a partition group has no partition: only a requirement that allows
    /// the label to be absent admits it).
    pub fn admits(&self, o: &Off) -> bool {
        self.admits_parts(
            &o.zone,
            o.capacity_type,
            o.partition,
            o.reservation.as_deref(),
        )
    }

    /// [`OfferingFilter::admits`] for a catalog offering.
    pub fn admits_offering(&self, o: &kerf_catalog::Offering) -> bool {
        self.admits_parts(
            &o.zone,
            o.capacity_type,
            o.partition,
            o.reservation.as_ref(),
        )
    }

    fn admits_parts(
        &self,
        zone: &str,
        capacity_type: CapacityType,
        partition: Option<u32>,
        reservation: Option<&ReservedOffering>,
    ) -> bool {
        self.zone.is_none_or(|r| r.has(zone))
            && self
                .capacity_type
                .is_none_or(|r| r.has(capacity_type.as_str()))
            && self.partition.is_none_or(|r| match partition {
                Some(p) => r.has(&p.to_string()),
                None => r.allows_absent(),
            })
            && self.admits_reservation(reservation)
    }

    /// Only a reserved offering has the reservation labels: others pass a requirement on
    /// them only when it allows the label to be absent.
    fn admits_reservation(&self, r: Option<&ReservedOffering>) -> bool {
        let [id, kind, interruptible] = self.reservation;
        match r {
            Some(r) => {
                id.is_none_or(|q| q.has(&r.id))
                    && kind.is_none_or(|q| q.has(r.kind.as_str()))
                    && interruptible.is_none_or(|q| q.has(r.interruptible_label()))
            }
            None => [id, kind, interruptible]
                .iter()
                .all(|q| q.is_none_or(|q| q.allows_absent())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offering_allowed(o: &Off, reqs: &Requirements) -> bool {
        OfferingFilter::of(reqs).admits(o)
    }

    fn off(partition: Option<u32>) -> Off {
        Off {
            zone: "z".into(),
            capacity_type: CapacityType::Spot,
            price: 1.0,
            partition,
            reservation: None,
        }
    }

    fn reqs(op: &str, values: &[&str]) -> Requirements {
        let sel = crate::requirements::SelectorRequirement {
            key: labels::PLACEMENT_GROUP_PARTITION.into(),
            operator: crate::requirements::Operator::parse(op).unwrap(),
            values: values.iter().map(|v| v.to_string()).collect(),
            min_values: None,
        };
        Requirements::from_selectors(&[sel]).unwrap()
    }

    #[test]
    fn a_partition_requirement_admits_the_offerings_of_its_partitions() {
        let in_two = reqs("In", &["2"]);
        assert!(offering_allowed(&off(Some(2)), &in_two));
        assert!(!offering_allowed(&off(Some(1)), &in_two));
        assert!(!offering_allowed(&off(None), &in_two));
        let not_two = reqs("NotIn", &["2"]);
        assert!(offering_allowed(&off(Some(1)), &not_two));
        assert!(!offering_allowed(&off(Some(2)), &not_two));
        assert!(offering_allowed(&off(None), &not_two));
        assert!(offering_allowed(&off(Some(3)), &Requirements::new()));
    }
}
