//! Whether a requirement set admits an offering (its zone and capacity type), with the two
//! requirements looked up once for loops over many offerings.

use crate::labels;
use crate::pools::Off;
use crate::requirements::{Requirement, Requirements};

/// True when `reqs` admit the offering's zone and capacity type.
pub fn offering_allowed(o: &Off, reqs: &Requirements) -> bool {
    OfferingFilter::of(reqs).admits(o)
}

/// The zone and capacity-type requirements of a requirement set, looked up once for a loop
/// over many offerings.
#[derive(Clone, Copy, Debug)]
pub struct OfferingFilter<'r> {
    zone: Option<&'r Requirement>,
    capacity_type: Option<&'r Requirement>,
}

impl<'r> OfferingFilter<'r> {
    pub fn of(reqs: &'r Requirements) -> Self {
        OfferingFilter {
            zone: reqs.get(labels::ZONE),
            capacity_type: reqs.get(labels::CAPACITY_TYPE),
        }
    }

    /// True when the requirements admit the offering's zone and capacity type.
    pub fn admits(&self, o: &Off) -> bool {
        self.zone.is_none_or(|r| r.has(&o.zone))
            && self
                .capacity_type
                .is_none_or(|r| r.has(o.capacity_type.as_str()))
    }
}
