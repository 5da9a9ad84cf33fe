//! Reserved offerings: price, availability and state.

use super::*;

fn it(name: &str, od_price: f64) -> InstanceType {
    InstanceType {
        name: name.into(),
        labels: Default::default(),
        capacity: Default::default(),
        overhead: Default::default(),
        allocatable: Default::default(),
        offerings: ["us-west-2a", "us-west-2b"]
            .into_iter()
            .map(|zone| Offering {
                zone: zone.into(),
                capacity_type: CapacityType::OnDemand,
                price: od_price,
                available: true,
                partition: None,
                reservation: None,
            })
            .collect(),
        ebs_volume_limit: None,
    }
}

fn catalog() -> Catalog {
    Catalog {
        region: "us-west-2".into(),
        instance_types: vec![it("m5.large", 0.096), it("p5.48xlarge", 98.32)],
    }
}

fn reservation(id: &str, instance_type: &str, zone: &str, available: u32) -> Reservation {
    Reservation {
        id: id.into(),
        instance_type: instance_type.into(),
        zone: zone.into(),
        owner_id: "012345678901".into(),
        match_criteria: MatchCriteria::Targeted,
        kind: ReservationKind::Default,
        interruptible: false,
        end_time: None,
        available,
    }
}

fn now() -> Timestamp {
    "2026-06-01T12:00:00Z".parse().unwrap()
}

fn reserved(c: &Catalog, name: &str) -> Vec<Offering> {
    c.instance_types
        .iter()
        .find(|t| t.name == name)
        .unwrap()
        .offerings
        .iter()
        .filter(|o| o.capacity_type == CapacityType::Reserved)
        .cloned()
        .collect()
}

#[test]
fn a_reservation_is_offered_at_a_token_of_the_on_demand_price() {
    let c = offer(
        catalog(),
        &[reservation("cr-1", "m5.large", "us-west-2a", 3)],
        now(),
    );
    let r = reserved(&c, "m5.large");
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].zone, "us-west-2a");
    assert!(r[0].available);
    assert!((r[0].price - 0.096 / PRICE_DIVISOR).abs() < 1e-15);
    assert_eq!(
        r[0].reservation,
        Some(ReservedOffering {
            id: "cr-1".into(),
            kind: ReservationKind::Default,
            interruptible: false,
            capacity: 3,
        })
    );
    assert!(reserved(&c, "p5.48xlarge").is_empty());
}

#[test]
fn reservations_keep_the_order_of_their_types_and_beat_every_purchase() {
    let c = offer(
        catalog(),
        &[
            reservation("cr-small", "m5.large", "us-west-2a", 1),
            reservation("cr-big", "p5.48xlarge", "us-west-2a", 1),
        ],
        now(),
    );
    let small = reserved(&c, "m5.large")[0].price;
    let big = reserved(&c, "p5.48xlarge")[0].price;
    assert!(small < big);
    assert!(big < 0.096, "a reservation is cheaper than any purchase");
}

#[test]
fn a_full_reservation_or_one_outside_the_class_zones_is_unavailable() {
    let c = offer(
        catalog(),
        &[
            reservation("cr-full", "m5.large", "us-west-2a", 0),
            reservation("cr-far", "m5.large", "us-west-2c", 5),
            reservation("cr-unknown-type", "x9.huge", "us-west-2a", 5),
        ],
        now(),
    );
    let r = reserved(&c, "m5.large");
    assert_eq!(r.len(), 2);
    assert!(r.iter().all(|o| !o.available));
}

#[test]
fn a_capacity_block_expires_forty_minutes_before_its_end() {
    let end: Timestamp = "2026-06-01T13:00:00Z".parse().unwrap();
    let block = Reservation {
        kind: ReservationKind::CapacityBlock,
        end_time: Some(end),
        ..reservation("cr-block", "p5.48xlarge", "us-west-2b", 2)
    };
    let before = end - SignedDuration::from_mins(41);
    let at = end - EXPIRING_BEFORE;
    assert_eq!(block.state(before), ReservationState::Active);
    assert_eq!(block.state(at), ReservationState::Expiring);
    assert!(
        reserved(
            &offer(catalog(), std::slice::from_ref(&block), before),
            "p5.48xlarge"
        )[0]
        .available
    );
    assert!(
        !reserved(
            &offer(catalog(), std::slice::from_ref(&block), at),
            "p5.48xlarge"
        )[0]
        .available
    );
    // An ODCR with an end date never expires early.
    let odcr = Reservation {
        end_time: Some(end),
        ..reservation("cr-odcr", "m5.large", "us-west-2a", 1)
    };
    assert_eq!(odcr.state(end), ReservationState::Active);
}

#[test]
fn unknown_on_demand_price_still_offers_the_reservation() {
    let mut c = catalog();
    for o in &mut c.instance_types[0].offerings {
        o.price = f64::NAN;
    }
    let c = offer(
        c,
        &[reservation("cr-1", "m5.large", "us-west-2b", 1)],
        now(),
    );
    let r = reserved(&c, "m5.large");
    assert_eq!(r[0].price, 0.0);
    assert!(r[0].available);
}

#[test]
fn kinds_and_criteria_read_as_ec2_writes_them() {
    assert_eq!(
        ReservationKind::parse("capacity-block"),
        Some(ReservationKind::CapacityBlock)
    );
    assert_eq!(
        ReservationKind::parse("default"),
        Some(ReservationKind::Default)
    );
    assert_eq!(ReservationKind::parse("spot-block"), None);
    for k in [ReservationKind::Default, ReservationKind::CapacityBlock] {
        assert_eq!(ReservationKind::parse(k.as_str()), Some(k));
        assert_eq!(serde_json::to_value(k).unwrap(), k.as_str());
    }
    for m in [MatchCriteria::Open, MatchCriteria::Targeted] {
        assert_eq!(MatchCriteria::parse(m.as_str()), Some(m));
    }
    assert_eq!(MatchCriteria::parse("open-ish"), None);
}
