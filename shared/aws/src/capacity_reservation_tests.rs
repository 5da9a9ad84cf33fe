//! Unit tests of capacity reservation discovery: queries, filters, the mapping and the cache.

use super::*;
use aws_sdk_ec2::types::{CapacityReservation, CapacityReservationType, InstanceMatchCriteria};

fn term(id: Option<&str>, tags: &[(&str, &str)]) -> CapacityReservationSelectorTerm {
    CapacityReservationSelectorTerm {
        id: id.map(str::to_string),
        tags: tags
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..Default::default()
    }
}

fn t0() -> Timestamp {
    "2026-01-01T00:00:00Z".parse().unwrap()
}

fn pairs(filters: &[Filter]) -> Vec<(String, Vec<String>)> {
    filters
        .iter()
        .map(|f| (f.name().unwrap_or("").to_string(), f.values().to_vec()))
        .collect()
}

#[test]
fn each_term_queries_by_id_or_by_filters_once() {
    let owned = CapacityReservationSelectorTerm {
        owner_id: Some("123456789012".into()),
        instance_match_criteria: Some("targeted".into()),
        ..term(None, &[("team", "ml"), ("gpu", "*")])
    };
    let only_owner = CapacityReservationSelectorTerm {
        owner_id: Some("123456789012".into()),
        ..Default::default()
    };
    let qs = Query::of_terms(&[
        term(Some("cr-0b"), &[]),
        owned.clone(),
        term(Some("cr-0b"), &[]),
        only_owner,
    ]);
    assert_eq!(qs.len(), 2, "{qs:?}");
    assert_eq!(qs[0], Query::Id("cr-0b".into()));
    assert_eq!(
        pairs(&qs[0].filters()),
        [("state".to_string(), vec!["active".to_string()])]
    );
    let want = [
        ("state", "active"),
        ("owner-id", "123456789012"),
        ("tag-key", "gpu"),
        ("tag:team", "ml"),
        ("instance-match-criteria", "targeted"),
    ];
    let want: Vec<(String, Vec<String>)> = want
        .iter()
        .map(|(k, v)| (k.to_string(), vec![v.to_string()]))
        .collect();
    assert_eq!(pairs(&qs[1].filters()), want);
    assert!(Query::of_terms(&[]).is_empty());
}

fn ec2(id: &str) -> aws_sdk_ec2::types::builders::CapacityReservationBuilder {
    CapacityReservation::builder()
        .capacity_reservation_id(id)
        .instance_type("p5.48xlarge")
        .availability_zone("us-east-1a")
        .owner_id("123456789012")
        .instance_match_criteria(InstanceMatchCriteria::Targeted)
        .available_instance_count(3)
}

#[test]
fn ec2_reservations_map_or_say_why_not() {
    let end = aws_sdk_ec2::primitives::DateTime::from_secs(t0().as_second());
    let block = ec2("cr-0block")
        .reservation_type(CapacityReservationType::CapacityBlock)
        .end_date(end)
        .build();
    let r = from_sdk_reservation(&block).unwrap();
    assert_eq!(r.kind, ReservationKind::CapacityBlock);
    assert_eq!(r.end_time, Some(t0()));
    assert_eq!(
        (r.available, r.match_criteria),
        (3, MatchCriteria::Targeted)
    );
    let plain = from_sdk_reservation(&ec2("cr-0plain").interruptible(true).build()).unwrap();
    assert_eq!(
        plain.kind,
        ReservationKind::Default,
        "no type is a default ODCR"
    );
    assert!(plain.interruptible);
    let future = ec2("cr-0new")
        .reservation_type(CapacityReservationType::from("future-type"))
        .build();
    assert!(matches!(
        from_sdk_reservation(&future),
        Err(Unusable::UnknownKind { id, .. }) if id == "cr-0new"
    ));
    let criteria = ec2("cr-0odd")
        .instance_match_criteria(InstanceMatchCriteria::from("by-name"))
        .build();
    let e = from_sdk_reservation(&criteria).unwrap_err();
    assert!(e.to_string().contains("cr-0odd"), "{e}");
    let negative = from_sdk_reservation(&ec2("cr-0neg").available_instance_count(-1).build());
    assert_eq!(negative.unwrap().available, 0);
}

fn reservation(id: &str, end: Option<Timestamp>) -> Reservation {
    Reservation {
        id: id.into(),
        instance_type: "p5.48xlarge".into(),
        zone: "us-east-1a".into(),
        owner_id: "123456789012".into(),
        match_criteria: MatchCriteria::Targeted,
        kind: ReservationKind::CapacityBlock,
        interruptible: false,
        end_time: end,
        available: 1,
    }
}

#[test]
fn answers_are_kept_per_term_set_and_ended_reservations_drop_out() {
    let cache = CapacityReservations::new();
    let qs = Query::of_terms(&[term(Some("cr-0a"), &[])]);
    let end = t0() + SignedDuration::from_hours(2);
    let kept = vec![reservation("cr-0a", Some(end)), reservation("cr-0b", None)];
    cache
        .answers
        .lock()
        .unwrap()
        .insert(qs.clone(), (t0(), kept.clone()));
    assert_eq!(cache.kept(&qs, t0(), RESERVATION_TTL), Some(kept));
    assert_eq!(
        cache.kept(&qs, t0() + RESERVATION_TTL, RESERVATION_TTL),
        None
    );
    let late = cache.kept(&qs, end, LAST_GOOD_TTL).unwrap();
    assert_eq!(late.len(), 1, "the block has ended");
    assert_eq!(late[0].id, "cr-0b");
    assert_eq!(cache.kept(&qs, t0() + LAST_GOOD_TTL, LAST_GOOD_TTL), None);
    let other = Query::of_terms(&[term(Some("cr-0c"), &[])]);
    assert_eq!(cache.kept(&other, t0(), RESERVATION_TTL), None);
}
