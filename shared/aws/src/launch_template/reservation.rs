//! The launch template's capacity reservation options, as Karpenter's templates set them with
//! the `ReservedCapacity` gate on: on-demand and spot templates say
//! `CapacityReservationPreference=none` (so they never consume an open ODCR); a reserved
//! template targets its reservation with `capacity-reservations-only`, and a capacity block's
//! or an interruptible ODCR's template sets the matching `InstanceMarketOptions.MarketType`.
//! With the gate off templates say nothing (EC2's `open` default). The reservation is part of
//! the template's name, so each reservation has a template of its own.

use aws_sdk_ec2::types::{
    CapacityReservationPreference, CapacityReservationTarget,
    LaunchTemplateCapacityReservationSpecificationRequest,
    LaunchTemplateInstanceMarketOptionsRequest, MarketType,
};
use kerf_catalog::reservation::{ReservationKind, ReservedOffering};
use serde::Serialize;

/// Which capacity reservations the template's instances may use.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ReservationTarget {
    /// Unset: EC2's default (the gate off; left out of the name's hash).
    #[default]
    Unset,
    /// None (`CapacityReservationPreference=none`): on-demand and spot with the gate on.
    NoReservation,
    /// Only this reservation.
    Reservation {
        id: String,
        kind: ReservationKind,
        interruptible: bool,
    },
}

impl ReservationTarget {
    /// The target of a launch option: its reservation, else none with the gate on.
    pub fn of(reservation: Option<&ReservedOffering>, gate: bool) -> Self {
        match reservation {
            Some(r) => ReservationTarget::Reservation {
                id: r.id.clone(),
                kind: r.kind,
                interruptible: r.interruptible,
            },
            None if gate => ReservationTarget::NoReservation,
            None => ReservationTarget::Unset,
        }
    }

    pub fn is_unset(&self) -> bool {
        *self == ReservationTarget::Unset
    }

    pub(super) fn specification(
        &self,
    ) -> Option<LaunchTemplateCapacityReservationSpecificationRequest> {
        let spec = LaunchTemplateCapacityReservationSpecificationRequest::builder();
        match self {
            ReservationTarget::Unset => None,
            ReservationTarget::NoReservation => Some(
                spec.capacity_reservation_preference(CapacityReservationPreference::None)
                    .build(),
            ),
            ReservationTarget::Reservation { id, .. } => Some(
                spec.capacity_reservation_preference(
                    CapacityReservationPreference::CapacityReservationsOnly,
                )
                .capacity_reservation_target(
                    CapacityReservationTarget::builder()
                        .capacity_reservation_id(id)
                        .build(),
                )
                .build(),
            ),
        }
    }

    pub(super) fn market(&self) -> Option<LaunchTemplateInstanceMarketOptionsRequest> {
        let market = match self {
            ReservationTarget::Reservation {
                kind: ReservationKind::CapacityBlock,
                ..
            } => MarketType::CapacityBlock,
            ReservationTarget::Reservation {
                interruptible: true,
                ..
            } => MarketType::InterruptibleCapacityReservation,
            _ => return None,
        };
        Some(
            LaunchTemplateInstanceMarketOptionsRequest::builder()
                .market_type(market)
                .build(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::{LaunchTemplateSpec, template_data, tests};
    use super::*;

    fn offering(id: &str, kind: ReservationKind, interruptible: bool) -> ReservedOffering {
        ReservedOffering {
            id: id.into(),
            kind,
            interruptible,
            capacity: 1,
        }
    }

    fn with(target: ReservationTarget) -> LaunchTemplateSpec {
        LaunchTemplateSpec {
            reservation: target,
            ..tests::spec()
        }
    }

    #[test]
    fn each_reservation_has_its_own_template_and_the_gate_off_keeps_old_names() {
        let odcr = offering("cr-0a", ReservationKind::Default, false);
        let names = [
            tests::spec().name(),
            with(ReservationTarget::of(None, true)).name(),
            with(ReservationTarget::of(Some(&odcr), true)).name(),
            with(ReservationTarget::of(
                Some(&offering("cr-0b", ReservationKind::Default, false)),
                true,
            ))
            .name(),
        ];
        for (i, a) in names.iter().enumerate() {
            for b in &names[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert_eq!(with(ReservationTarget::of(None, false)).name(), names[0]);
    }

    #[test]
    fn the_template_data_says_which_reservations_and_market() {
        let data = |t| template_data(&with(t));
        let none = data(ReservationTarget::of(None, true));
        let spec = none.capacity_reservation_specification().unwrap();
        assert_eq!(
            spec.capacity_reservation_preference(),
            Some(&CapacityReservationPreference::None)
        );
        assert!(spec.capacity_reservation_target().is_none());
        assert!(none.instance_market_options().is_none());
        let unset = data(ReservationTarget::Unset);
        assert!(unset.capacity_reservation_specification().is_none());
        let market = |kind, interruptible| {
            let d = data(ReservationTarget::of(
                Some(&offering("cr-0a", kind, interruptible)),
                true,
            ));
            let spec = d.capacity_reservation_specification().unwrap();
            assert_eq!(
                spec.capacity_reservation_preference(),
                Some(&CapacityReservationPreference::CapacityReservationsOnly)
            );
            let target = spec.capacity_reservation_target().unwrap();
            assert_eq!(target.capacity_reservation_id(), Some("cr-0a"));
            d.instance_market_options()
                .and_then(|m| m.market_type())
                .cloned()
        };
        assert_eq!(market(ReservationKind::Default, false), None);
        assert_eq!(
            market(ReservationKind::CapacityBlock, false),
            Some(MarketType::CapacityBlock)
        );
        assert_eq!(
            market(ReservationKind::Default, true),
            Some(MarketType::InterruptibleCapacityReservation)
        );
    }
}
