//! A node class's capacity reservations, with the `ReservedCapacity` gate on: discovered as
//! [`crate::capacity_reservation`] does it, shown in `status.capacityReservations` (sorted by
//! id, as Karpenter sorts them) with the `CapacityReservationsReady` condition (True, or False
//! with `CapacityReservationsResolutionFailed` when discovery fails, the list then left as it
//! was), which the control layer folds into `Ready`, and offered in the class's catalog as
//! `reserved` offerings. A reserved launch is sent only the options Karpenter's launch filters
//! keep ([`crate::fleet::reserved::filter`]).

use std::borrow::Cow;

use jiff::Timestamp;
use kerf_api::v1::ec2nodeclass_status::CapacityReservation;
use kerf_api::v1::{Condition, EC2NodeClass, EC2NodeClassStatus};
use kerf_catalog::reservation;
use kerf_catalog::{CapacityType, Catalog};
use kerf_control::ports::{CloudError, LaunchRequest};

use super::Ec2Cloud;
use crate::capacity_reservation::Resolution;

/// The condition type.
pub use kerf_control::names::class_conditions::CAPACITY_RESERVATIONS_READY;

impl Ec2Cloud {
    /// The class's reservations at `now` (cached; see [`crate::capacity_reservation`]);
    /// `None` with the gate off.
    pub async fn reservations(&self, c: &EC2NodeClass, now: Timestamp) -> Option<Resolution> {
        if !self.settings.reserved_capacity {
            return None;
        }
        let terms = &c.spec.capacity_reservation_selector_terms;
        Some(
            self.reservations
                .resolve(&self.clients.ec2, terms, now)
                .await,
        )
    }
}

/// The request as launched: a reserved one with only the options the launch filters keep
/// (none kept: no capacity, so the NodeClaim is re-planned).
pub(super) fn launchable(req: &LaunchRequest) -> Result<Cow<'_, LaunchRequest>, CloudError> {
    if req.capacity_type != CapacityType::Reserved {
        return Ok(Cow::Borrowed(req));
    }
    let options = crate::fleet::reserved::filter(&req.options);
    if options.is_empty() {
        return Err(CloudError::NoCapacity(Vec::new()));
    }
    Ok(Cow::Owned(LaunchRequest {
        options,
        ..req.clone()
    }))
}

/// `catalog` with the reservations as `reserved` offerings (unchanged with the gate off).
pub(super) fn offered(catalog: Catalog, found: Option<&Resolution>, now: Timestamp) -> Catalog {
    match found {
        Some(r) => reservation::offer(catalog, &r.reservations, now),
        None => catalog,
    }
}

pub use kerf_control::class_status::reservation_entries as entries;

/// What `status.capacityReservations` shows for a resolution: its reservations, or after a
/// failed call with none kept (a new container) what the status showed before, as Karpenter
/// leaves the status alone when discovery fails.
pub(super) fn shown(
    found: &Resolution,
    current: Option<&EC2NodeClassStatus>,
    now: Timestamp,
) -> Vec<CapacityReservation> {
    match (&found.error, current) {
        (Some(_), Some(cur)) if found.reservations.is_empty() => cur.capacity_reservations.clone(),
        _ => entries(&found.reservations, now),
    }
}

/// `CapacityReservationsReady` for a resolution.
pub fn reservations_condition(found: &Resolution) -> Condition {
    let error = found.error.as_ref().map(|e| e as &dyn std::fmt::Display);
    kerf_control::class_status::reservations_ready(error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::AwsError;
    use kerf_api::v1::ConditionStatus;
    use kerf_catalog::reservation::{MatchCriteria, Reservation, ReservationKind};

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
    fn the_condition_follows_the_discovery() {
        let ok = reservations_condition(&Resolution {
            reservations: Vec::new(),
            error: None,
        });
        assert_eq!(
            (ok.type_.as_str(), ok.status),
            (CAPACITY_RESERVATIONS_READY, ConditionStatus::True)
        );
        let failed = reservations_condition(&Resolution {
            reservations: vec![block("cr-0a", t0())],
            error: Some(AwsError::invalid("DescribeCapacityReservations", "denied")),
        });
        assert_eq!(
            (failed.status, failed.reason.as_str()),
            (
                ConditionStatus::False,
                "CapacityReservationsResolutionFailed"
            )
        );
        assert!(failed.message.contains("denied"), "{}", failed.message);
    }

    #[test]
    fn a_failure_with_nothing_kept_leaves_the_status_shown() {
        let current = EC2NodeClassStatus {
            capacity_reservations: entries(&[block("cr-0a", t0())], t0()),
            ..Default::default()
        };
        let failed = Resolution {
            reservations: Vec::new(),
            error: Some(AwsError::invalid("DescribeCapacityReservations", "denied")),
        };
        let kept = shown(&failed, Some(&current), t0());
        assert_eq!(kept, current.capacity_reservations);
        assert!(shown(&failed, None, t0()).is_empty());
        let none = Resolution {
            reservations: Vec::new(),
            error: None,
        };
        assert!(
            shown(&none, Some(&current), t0()).is_empty(),
            "a discovery that finds none clears them"
        );
    }
}
