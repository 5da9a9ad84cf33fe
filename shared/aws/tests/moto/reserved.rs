//! Launches through the Cloud port with the `ReservedCapacity` gate: on-demand templates opt
//! out of open reservations, a reserved launch's template targets the reservation its
//! options were filtered down to, and the launch reports it; with the gate off templates say
//! nothing. moto keeps the template data it is sent and launches the fleet's instance (it
//! knows no reservations), so the request the adapter makes is what is checked.

use aws_sdk_ec2::types::CapacityReservationPreference;
use kerf_aws::CloudSettings;
use kerf_catalog::CapacityType;
use kerf_catalog::reservation::{ReservationKind, ReservedOffering};
use kerf_control::ports::{Cloud, LaunchOption};

use crate::support::moto::fresh;
use crate::userdata::{class, cloud_with_settings, request, template_data};

fn reserved(id: &str, capacity: u32) -> ReservedOffering {
    ReservedOffering {
        id: id.into(),
        kind: ReservationKind::Default,
        interruptible: false,
        capacity,
    }
}

fn option(reservation: Option<ReservedOffering>) -> LaunchOption {
    LaunchOption {
        instance_type: "m5.large".into(),
        zone: "us-west-2a".into(),
        price: 0.096 / 1e7,
        reservation,
    }
}

#[tokio::test]
async fn a_reserved_launch_targets_the_reservation_with_most_room() {
    let (_g, moto) = fresh().await;
    let (ec2, c) = cloud_with_settings(&moto.url, |s| s).await;
    let mut req = request(class("al2@latest", None));
    req.capacity_type = CapacityType::Reserved;
    req.options = vec![
        option(Some(reserved("cr-0a1b2c3d4e5f6000a", 1))),
        option(Some(reserved("cr-0a1b2c3d4e5f6000b", 4))),
    ];
    let l = ec2.launch(&req).await.unwrap();
    assert_eq!(l.capacity_type, CapacityType::Reserved);
    assert_eq!(l.reservation, Some(reserved("cr-0a1b2c3d4e5f6000b", 4)));
    let data = template_data(&c).await;
    let spec = data.capacity_reservation_specification().unwrap();
    assert_eq!(
        spec.capacity_reservation_preference(),
        Some(&CapacityReservationPreference::CapacityReservationsOnly)
    );
    let target = spec.capacity_reservation_target().unwrap();
    assert_eq!(
        target.capacity_reservation_id(),
        Some("cr-0a1b2c3d4e5f6000b")
    );
    assert!(data.instance_market_options().is_none(), "a default ODCR");
}

#[tokio::test]
async fn on_demand_templates_opt_out_of_reservations_only_with_the_gate_on() {
    let (_g, moto) = fresh().await;
    let (ec2, c) = cloud_with_settings(&moto.url, |s| s).await;
    let l = ec2
        .launch(&request(class("al2@latest", None)))
        .await
        .unwrap();
    assert_eq!(
        (l.capacity_type, l.reservation),
        (CapacityType::OnDemand, None)
    );
    let data = template_data(&c).await;
    let spec = data.capacity_reservation_specification().unwrap();
    assert_eq!(
        spec.capacity_reservation_preference(),
        Some(&CapacityReservationPreference::None)
    );
    moto.reset();
    let off = |s: CloudSettings| CloudSettings {
        reserved_capacity: false,
        ..s
    };
    let (ec2, c) = cloud_with_settings(&moto.url, off).await;
    ec2.launch(&request(class("al2@latest", None)))
        .await
        .unwrap();
    let data = template_data(&c).await;
    assert!(data.capacity_reservation_specification().is_none());
}

#[tokio::test]
async fn a_reserved_launch_with_no_reservation_left_is_no_capacity() {
    let (_g, moto) = fresh().await;
    let (ec2, _) = cloud_with_settings(&moto.url, |s| s).await;
    let mut req = request(class("al2@latest", None));
    req.capacity_type = CapacityType::Reserved;
    req.options = vec![option(None)];
    let e = ec2.launch(&req).await.unwrap_err();
    assert!(
        matches!(e, kerf_control::ports::CloudError::NoCapacity(_)),
        "{e}"
    );
}
