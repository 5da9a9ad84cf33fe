//! A reserved launch's CreateFleet, as Karpenter's provider builds it: the reservation
//! "market" of its options decides the target capacity type (`on-demand` for a default ODCR,
//! `capacity-block` for a capacity block, `reserved-capacity` with `ReservedCapacityOptions`
//! for an interruptible ODCR) and whether on-demand options are sent (only for a default
//! ODCR). Before the fleet, the options are filtered as Karpenter's launch filters do: one
//! market (the one holding the cheapest option; ties default, block, interruptible), a single
//! capacity block (the cheapest), and one reservation per instance type and zone (the one with
//! the most capacity).

use std::collections::BTreeMap;

use aws_sdk_ec2::types::{
    DefaultTargetCapacityType, FleetReservationType, ReservedCapacityOptionsRequest,
};
use kerf_catalog::CapacityType;
use kerf_catalog::reservation::{ReservationKind, ReservedOffering};

use super::{LaunchOption, LaunchRequest};

/// The kinds of reservation one CreateFleet can launch into, in the order ties prefer them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Market {
    /// An on-demand capacity reservation.
    Default,
    /// A capacity block.
    CapacityBlock,
    /// An interruptible on-demand capacity reservation.
    Interruptible,
}

impl Market {
    pub fn of(r: &ReservedOffering) -> Market {
        match (r.kind, r.interruptible) {
            (ReservationKind::CapacityBlock, _) => Market::CapacityBlock,
            (ReservationKind::Default, true) => Market::Interruptible,
            (ReservationKind::Default, false) => Market::Default,
        }
    }

    /// `TargetCapacitySpecification.DefaultTargetCapacityType`.
    pub fn target(self) -> DefaultTargetCapacityType {
        match self {
            Market::Default => DefaultTargetCapacityType::OnDemand,
            Market::CapacityBlock => DefaultTargetCapacityType::CapacityBlock,
            Market::Interruptible => DefaultTargetCapacityType::ReservedCapacity,
        }
    }

    /// Whether the fleet carries `OnDemandOptions` (not for blocks or interruptible ODCRs).
    pub fn on_demand_options(self) -> bool {
        self == Market::Default
    }

    /// `ReservedCapacityOptions` (interruptible ODCRs only).
    pub fn reserved_options(self) -> Option<ReservedCapacityOptionsRequest> {
        (self == Market::Interruptible).then(|| {
            ReservedCapacityOptionsRequest::builder()
                .reservation_types(FleetReservationType::InterruptibleCapacityReservation)
                .build()
        })
    }
}

/// The market of a reserved launch: its options' (`None` for other launches).
pub fn market(req: &LaunchRequest, options: &[LaunchOption]) -> Option<Market> {
    let reserved = req.capacity_type == CapacityType::Reserved;
    let first = options.iter().find_map(|o| o.reservation.as_ref());
    first.filter(|_| reserved).map(Market::of)
}

/// The reservation of the request's option for `(instance_type, zone)` (a reserved launch
/// has one reservation per type and zone).
pub fn reservation_of<'a>(
    req: &'a LaunchRequest,
    instance_type: &str,
    zone: &str,
) -> Option<&'a ReservedOffering> {
    req.options
        .iter()
        .filter(|o| o.instance_type == instance_type && o.zone == zone)
        .find_map(|o| o.reservation.as_ref())
}

/// What the filters need of an option.
pub trait Reserved {
    fn reservation(&self) -> Option<&ReservedOffering>;
    fn price(&self) -> f64;
    /// (instance type, zone).
    fn offering(&self) -> (&str, &str);
}

impl Reserved for kerf_control::ports::LaunchOption {
    fn reservation(&self) -> Option<&ReservedOffering> {
        self.reservation.as_ref()
    }
    fn price(&self) -> f64 {
        self.price
    }
    fn offering(&self) -> (&str, &str) {
        (&self.instance_type, &self.zone)
    }
}

/// The options one reserved CreateFleet is sent, in their order (see the module
/// documentation); options without a reservation are dropped.
pub fn filter<O: Reserved + Clone>(options: &[O]) -> Vec<O> {
    let reserved = || {
        options
            .iter()
            .filter_map(|o| Some((o, Market::of(o.reservation()?))))
    };
    let cheapest =
        reserved().min_by(|(a, am), (b, bm)| a.price().total_cmp(&b.price()).then(am.cmp(bm)));
    let Some((cheapest, market)) = cheapest else {
        return Vec::new();
    };
    if market == Market::CapacityBlock {
        return vec![cheapest.clone()];
    }
    let mut best: BTreeMap<(&str, &str), (usize, u32)> = BTreeMap::new();
    for (i, (o, m)) in reserved().enumerate() {
        let capacity = o.reservation().map_or(0, |r| r.capacity);
        if m != market {
            continue;
        }
        let slot = best.entry(o.offering()).or_insert((i, capacity));
        if capacity > slot.1 {
            *slot = (i, capacity);
        }
    }
    let mut kept: Vec<usize> = best.into_values().map(|(i, _)| i).collect();
    kept.sort_unstable();
    let all: Vec<&O> = reserved().map(|(o, _)| o).collect();
    kept.into_iter().map(|i| all[i].clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Debug, PartialEq)]
    struct Opt(&'static str, &'static str, f64, Option<ReservedOffering>);

    impl Reserved for Opt {
        fn reservation(&self) -> Option<&ReservedOffering> {
            self.3.as_ref()
        }
        fn price(&self) -> f64 {
            self.2
        }
        fn offering(&self) -> (&str, &str) {
            (self.0, self.1)
        }
    }

    fn opt(t: &'static str, z: &'static str, price: f64, id: &str, m: Market, cap: u32) -> Opt {
        let (kind, interruptible) = match m {
            Market::Default => (ReservationKind::Default, false),
            Market::CapacityBlock => (ReservationKind::CapacityBlock, false),
            Market::Interruptible => (ReservationKind::Default, true),
        };
        let r = ReservedOffering {
            id: id.into(),
            kind,
            interruptible,
            capacity: cap,
        };
        Opt(t, z, price, Some(r))
    }

    fn ids(options: &[Opt]) -> Vec<&str> {
        options
            .iter()
            .filter_map(|o| o.3.as_ref().map(|r| r.id.as_str()))
            .collect()
    }

    #[test]
    fn the_market_of_the_cheapest_option_wins_and_ties_prefer_default() {
        let options = [
            opt("m5.large", "a", 2.0, "cr-od", Market::Default, 1),
            opt("c5.large", "a", 1.0, "cr-int", Market::Interruptible, 1),
            opt("c5.large", "b", 3.0, "cr-int2", Market::Interruptible, 1),
            Opt("t3.large", "a", 0.5, None),
        ];
        assert_eq!(ids(&filter(&options)), ["cr-int", "cr-int2"]);
        let tie = [
            opt("c5.large", "a", 1.0, "cr-int", Market::Interruptible, 1),
            opt("m5.large", "a", 1.0, "cr-block", Market::CapacityBlock, 1),
            opt("m5.large", "b", 1.0, "cr-od", Market::Default, 1),
        ];
        assert_eq!(ids(&filter(&tie)), ["cr-od"]);
        assert!(filter(&[Opt("t3.large", "a", 0.5, None)]).is_empty());
    }

    #[test]
    fn only_the_cheapest_capacity_block_is_kept() {
        let options = [
            opt("p5.48xlarge", "a", 2.0, "cr-b1", Market::CapacityBlock, 4),
            opt("p4d.24xlarge", "b", 1.0, "cr-b2", Market::CapacityBlock, 1),
            opt("p4d.24xlarge", "a", 1.5, "cr-b3", Market::CapacityBlock, 9),
        ];
        assert_eq!(ids(&filter(&options)), ["cr-b2"]);
    }

    #[test]
    fn one_reservation_per_type_and_zone_the_one_with_most_room() {
        let options = [
            opt("m5.large", "a", 1.0, "cr-small", Market::Default, 1),
            opt("m5.large", "b", 1.0, "cr-b", Market::Default, 1),
            opt("m5.large", "a", 1.0, "cr-big", Market::Default, 5),
            opt("m5.large", "a", 1.0, "cr-same", Market::Default, 5),
            opt("c5.large", "a", 1.0, "cr-c", Market::Default, 1),
        ];
        assert_eq!(ids(&filter(&options)), ["cr-b", "cr-big", "cr-c"]);
    }

    #[test]
    fn each_market_launches_as_karpenter_launches_it() {
        assert_eq!(
            Market::Default.target(),
            DefaultTargetCapacityType::OnDemand
        );
        assert!(Market::Default.on_demand_options());
        assert!(Market::Default.reserved_options().is_none());
        assert_eq!(
            Market::CapacityBlock.target(),
            DefaultTargetCapacityType::CapacityBlock
        );
        assert!(!Market::CapacityBlock.on_demand_options());
        assert_eq!(
            Market::Interruptible.target(),
            DefaultTargetCapacityType::ReservedCapacity
        );
        let opts = Market::Interruptible.reserved_options().unwrap();
        assert_eq!(
            opts.reservation_types(),
            [FleetReservationType::InterruptibleCapacityReservation]
        );
        assert!(!Market::Interruptible.on_demand_options());
    }
}
