//! The capacity-reservation part of `EC2NodeClass.status` that every cloud adapter writes the
//! same way: the `status.capacityReservations` entries (sorted by id, as Karpenter sorts them,
//! each with its state at the time) and the `CapacityReservationsReady` condition (True, or
//! False with `CapacityReservationsResolutionFailed` when discovery failed). Pure.

use std::fmt::Display;

use jiff::Timestamp;
use kerf_api::v1::ec2nodeclass_status::CapacityReservation;
use kerf_api::v1::{Condition, ConditionStatus};
use kerf_catalog::reservation::Reservation;

use crate::names::class_conditions::CAPACITY_RESERVATIONS_READY;

/// The reason of a `CapacityReservationsReady` that is False.
pub const RESOLUTION_FAILED: &str = "CapacityReservationsResolutionFailed";

/// The status entries of `reservations` at `now`, sorted by id.
pub fn reservation_entries(
    reservations: &[Reservation],
    now: Timestamp,
) -> Vec<CapacityReservation> {
    let mut out: Vec<CapacityReservation> = reservations
        .iter()
        .map(|r| CapacityReservation {
            availability_zone: r.zone.clone(),
            end_time: r
                .end_time
                .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()),
            id: r.id.clone(),
            instance_match_criteria: r.match_criteria.as_str().into(),
            instance_type: r.instance_type.clone(),
            owner_id: r.owner_id.clone(),
            reservation_type: r.kind.as_str().into(),
            interruptible: r.interruptible,
            state: r.state(now).as_str().into(),
        })
        .collect();
    out.sort_by(|a, b| a.id.cmp(&b.id));
    out
}

/// `CapacityReservationsReady`: True after a discovery that worked, False with the error of
/// one that failed.
pub fn reservations_ready(error: Option<&dyn Display>) -> Condition {
    match error {
        None => crate::claim::condition(
            CAPACITY_RESERVATIONS_READY,
            ConditionStatus::True,
            CAPACITY_RESERVATIONS_READY,
            "",
        ),
        Some(e) => crate::claim::condition(
            CAPACITY_RESERVATIONS_READY,
            ConditionStatus::False,
            RESOLUTION_FAILED,
            &format!("Failed to resolve capacity reservations: {e}"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kerf_catalog::reservation::{MatchCriteria, ReservationKind};

    fn t0() -> Timestamp {
        "2026-01-01T00:00:00Z".parse().unwrap()
    }

    fn block(id: &str, end: Timestamp) -> Reservation {
        Reservation {
            id: id.into(),
            instance_type: "p5.48xlarge".into(),
            zone: "us-east-1a".into(),
            owner_id: "123456789012".into(),
            match_criteria: MatchCriteria::Targeted,
            kind: ReservationKind::CapacityBlock,
            interruptible: false,
            end_time: Some(end),
            available: 2,
        }
    }

    #[test]
    fn entries_are_sorted_by_id_with_their_state_and_end() {
        let soon = t0() + jiff::SignedDuration::from_mins(30);
        let later = t0() + jiff::SignedDuration::from_hours(5);
        let e = reservation_entries(&[block("cr-0b", later), block("cr-0a", soon)], t0());
        let ids: Vec<&str> = e.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["cr-0a", "cr-0b"]);
        assert_eq!(
            (e[0].state.as_str(), e[1].state.as_str()),
            ("expiring", "active")
        );
        assert_eq!(e[0].end_time.as_deref(), Some("2026-01-01T00:30:00Z"));
        assert_eq!(e[0].reservation_type, "capacity-block");
        assert_eq!(
            (
                e[0].owner_id.as_str(),
                e[0].instance_match_criteria.as_str()
            ),
            ("123456789012", "targeted")
        );
    }

    #[test]
    fn the_condition_follows_the_discovery() {
        let ok = reservations_ready(None);
        assert_eq!(
            (ok.type_.as_str(), ok.status, ok.reason.as_str()),
            (
                CAPACITY_RESERVATIONS_READY,
                ConditionStatus::True,
                CAPACITY_RESERVATIONS_READY
            )
        );
        let failed = reservations_ready(Some(&"denied"));
        assert_eq!(
            (failed.status, failed.reason.as_str()),
            (ConditionStatus::False, RESOLUTION_FAILED)
        );
        assert!(failed.message.contains("denied"), "{}", failed.message);
    }
}
