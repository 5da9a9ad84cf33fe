//! Unit tests of the unavailable-offerings cache data.

use super::*;
use crate::{InstanceType, Offering};

fn t(s: &str) -> Timestamp {
    s.parse().unwrap()
}

fn t0() -> Timestamp {
    t("2025-01-01T00:00:00Z")
}

fn key() -> OfferingKey {
    OfferingKey::new(CapacityType::Spot, "m5.large", "us-west-2a")
}

fn catalog() -> Catalog {
    let offering = |zone: &str, ct| Offering {
        zone: zone.into(),
        capacity_type: ct,
        price: 0.1,
        available: true,
        partition: None,
        reservation: None,
    };
    Catalog {
        region: "us-west-2".into(),
        instance_types: vec![InstanceType {
            name: "m5.large".into(),
            labels: Default::default(),
            capacity: Default::default(),
            overhead: Default::default(),
            allocatable: Default::default(),
            ebs_volume_limit: None,
            offerings: vec![
                offering("us-west-2a", CapacityType::Spot),
                offering("us-west-2a", CapacityType::OnDemand),
                offering("us-west-2b", CapacityType::Spot),
            ],
        }],
    }
}

fn availability(cat: &Catalog) -> Vec<bool> {
    cat.instance_types[0]
        .offerings
        .iter()
        .map(|o| o.available)
        .collect()
}

#[test]
fn keys_round_trip_and_are_valid_configmap_keys() {
    assert_eq!(key().data_key(), "spot_m5.large_us-west-2a");
    assert_eq!(OfferingKey::parse("spot_m5.large_us-west-2a"), Some(key()));
    assert_eq!(OfferingKey::parse("spot/m5.large/us-west-2a"), Some(key()));
    let od = OfferingKey::new(CapacityType::OnDemand, "u-6tb1.metal", "us-east-1a");
    assert_eq!(OfferingKey::parse(&od.data_key()), Some(od.clone()));
    assert!(is_valid_data_key(&od.data_key()));
    assert!(!is_valid_data_key("spot/m5.large/us-west-2a"));
    assert_eq!(OfferingKey::parse("bogus_m5.large_z"), None);
    assert_eq!(OfferingKey::parse("spot_m5.large"), None);
    let mut c = UnavailableOfferings::default();
    c.mark(od, t0());
    c.mark_subnet("subnet-0abc", t0());
    assert!(c.to_data().keys().all(|k| is_valid_data_key(k)));
}

#[test]
fn entries_expire_after_three_minutes() {
    let mut c = UnavailableOfferings::default();
    c.mark(key(), t0());
    assert!(c.is_unavailable(&key(), t("2025-01-01T00:02:59Z")));
    assert!(!c.is_unavailable(&key(), t("2025-01-01T00:03:00Z")));
    let again = UnavailableOfferings::from_data(&c.to_data());
    assert_eq!(again, c);
    c.prune(t("2025-01-01T00:03:00Z"));
    assert!(c.is_empty());
}

#[test]
fn stored_data_is_rfc3339_and_junk_is_skipped() {
    let data = BTreeMap::from([
        (
            "spot_m5.large_us-west-2a".into(),
            "2025-01-01T00:03:00Z".into(),
        ),
        ("subnet_subnet-1".into(), "2025-01-01T00:01:00Z".into()),
        ("spot_m5.large_us-west-2b".into(), "tomorrow".into()),
        ("nonsense".into(), "2025-01-01T00:03:00Z".into()),
        ("subnet_".into(), "2025-01-01T00:03:00Z".into()),
    ]);
    let c = UnavailableOfferings::from_data(&data);
    assert_eq!(c.len(), 2);
    assert!(c.is_unavailable(&key(), t0()));
    assert!(c.is_subnet_unavailable("subnet-1", t0()));
    assert_eq!(
        c.to_data()["spot_m5.large_us-west-2a"],
        "2025-01-01T00:03:00Z"
    );
}

#[test]
fn re_marking_and_merging_keep_the_later_expiry() {
    let later = t0() + SignedDuration::from_secs(60);
    let mut a = marks(&[key()], later);
    a.mark(key(), t0());
    assert!(
        a.is_unavailable(&key(), t("2025-01-01T00:03:30Z")),
        "not shortened"
    );
    let other = OfferingKey::new(CapacityType::OnDemand, "c5.large", "us-west-2b");
    let mut b = marks(&[key(), other.clone()], t0());
    b.merge(&a);
    assert_eq!(b.len(), 2);
    assert!(b.is_unavailable(&key(), t("2025-01-01T00:03:30Z")));
    assert!(b.is_unavailable(&other, t0()));
}

#[test]
fn merged_for_write_prunes_stored_and_adds_marks() {
    let old = marks(&[key()], t0()).to_data();
    let now = t("2025-01-01T00:05:00Z");
    let other = OfferingKey::new(CapacityType::OnDemand, "c5.large", "us-west-2b");
    let written = UnavailableOfferings::merged_for_write(
        &old,
        &marks(std::slice::from_ref(&other), now),
        now,
    );
    assert_eq!(written.len(), 1, "expired entry pruned on write");
    assert!(written.is_unavailable(&other, now));
    let fresh = UnavailableOfferings::merged_for_write(
        &old,
        &marks(std::slice::from_ref(&other), t0()),
        t0(),
    );
    assert_eq!(fresh.len(), 2, "live entries kept");
}

#[test]
fn apply_marks_catalog_offerings() {
    let mut cat = catalog();
    marks(&[key()], t0()).apply(&mut cat, t0());
    assert_eq!(availability(&cat), vec![false, true, true]);
    let mut cat = catalog();
    marks(&[key()], t0()).apply(&mut cat, t0() + UNAVAILABLE_TTL);
    assert_eq!(availability(&cat), vec![true, true, true], "expired");
}

#[test]
fn keys_scoped_by_a_placement_group_round_trip() {
    let scoped = key().in_group(Some("pg-0abc123"));
    assert_eq!(scoped.data_key(), "spot_m5.large_us-west-2a_pg-0abc123");
    assert_eq!(OfferingKey::parse(&scoped.data_key()), Some(scoped.clone()));
    assert!(is_valid_data_key(&scoped.data_key()));
    assert_ne!(scoped, key());
    assert_eq!(OfferingKey::parse("spot_m5.large_us-west-2a_"), None);
    assert_eq!(OfferingKey::parse("spot_m5.large_us-west-2a_pg-1_x"), None);
}

#[test]
fn a_group_scoped_mark_blocks_only_the_catalog_of_that_group() {
    let scoped = key().in_group(Some("pg-0abc"));
    let mut outside = catalog();
    marks(std::slice::from_ref(&scoped), t0()).apply(&mut outside, t0());
    assert_eq!(availability(&outside), vec![true, true, true]);
    let in_group = |id: &str| {
        let mut c = catalog();
        let pg = crate::placement::PlacementGroup {
            id: id.into(),
            name: "g".into(),
            strategy: crate::placement::Strategy::Spread,
            partition_count: 0,
        };
        crate::placement::apply(&mut c, &pg, |_| None);
        c
    };
    let mut inside = in_group("pg-0abc");
    marks(std::slice::from_ref(&scoped), t0()).apply(&mut inside, t0());
    assert_eq!(availability(&inside), vec![false, true, true]);
    let mut other = in_group("pg-0def");
    marks(&[scoped], t0()).apply(&mut other, t0());
    assert_eq!(availability(&other), vec![true, true, true]);
    let mut general = in_group("pg-0abc");
    marks(&[key()], t0()).apply(&mut general, t0());
    assert_eq!(
        availability(&general),
        vec![false, true, true],
        "unscoped marks hold everywhere"
    );
}

#[test]
fn a_zone_is_exhausted_only_when_all_its_subnets_are_full() {
    let mut c = UnavailableOfferings::default();
    c.mark_subnet("subnet-a1", t0());
    let subnets = [
        ("subnet-a1", "us-west-2a"),
        ("subnet-a2", "us-west-2a"),
        ("subnet-b1", "us-west-2b"),
    ];
    assert!(c.exhausted_zones(&subnets, t0()).is_empty());
    assert_eq!(
        c.usable_subnets(&["subnet-a1", "subnet-a2"], t0()),
        vec!["subnet-a2"]
    );
    c.mark_subnet("subnet-a2", t0());
    let zones = c.exhausted_zones(&subnets, t0());
    assert_eq!(zones, BTreeSet::from(["us-west-2a".to_string()]));
    let mut cat = catalog();
    disable_zones(&mut cat, &zones);
    assert_eq!(availability(&cat), vec![false, false, true]);
    assert!(
        c.exhausted_zones(&subnets, t0() + UNAVAILABLE_TTL)
            .is_empty()
    );
}

#[test]
fn the_next_expiry_is_the_earliest_entry_still_in_force() {
    let mut c = UnavailableOfferings::default();
    assert_eq!(c.next_expiry(t0()), None);
    c.mark(key(), t0());
    c.mark_subnet("subnet-a1", t("2025-01-01T00:01:00Z"));
    assert_eq!(c.next_expiry(t0()), Some(t("2025-01-01T00:03:00Z")));
    assert_eq!(
        c.next_expiry(t("2025-01-01T00:03:00Z")),
        Some(t("2025-01-01T00:04:00Z")),
        "an entry expiring at now is no longer in force"
    );
    assert_eq!(c.next_expiry(t("2025-01-01T00:04:00Z")), None);
}

fn reserved(zone: &str, id: &str) -> Offering {
    Offering {
        zone: zone.into(),
        capacity_type: CapacityType::Reserved,
        price: 0.0,
        available: true,
        partition: None,
        reservation: Some(crate::reservation::ReservedOffering {
            id: id.into(),
            kind: crate::reservation::ReservationKind::Default,
            interruptible: false,
            capacity: 2,
        }),
    }
}

#[test]
fn keys_naming_a_reservation_round_trip_and_old_keys_still_read() {
    let base = OfferingKey::new(CapacityType::Reserved, "p5.48xlarge", "us-east-1a");
    let k = base.clone().in_reservation(Some("cr-0abc123"));
    assert_eq!(k.data_key(), "reserved_p5.48xlarge_us-east-1a_cr-0abc123");
    assert_eq!(OfferingKey::parse(&k.data_key()), Some(k.clone()));
    assert!(is_valid_data_key(&k.data_key()));
    let both = k.clone().in_group(Some("pg-0def"));
    assert_eq!(
        both.data_key(),
        "reserved_p5.48xlarge_us-east-1a_pg-0def_cr-0abc123"
    );
    assert_eq!(OfferingKey::parse(&both.data_key()), Some(both));
    assert_eq!(
        OfferingKey::parse("reserved_p5.48xlarge_us-east-1a"),
        Some(base.clone()),
        "a key from before reservations were named"
    );
    assert_eq!(
        OfferingKey::parse("reserved/p5.48xlarge/us-east-1a/cr-0abc123"),
        Some(k)
    );
    for bad in [
        "reserved_p5.48xlarge_us-east-1a_cr-1_pg-2",
        "reserved_p5.48xlarge_us-east-1a_cr-1_cr-2",
        "reserved_p5.48xlarge_us-east-1a_pg-1_",
        "reserved_p5.48xlarge_us-east-1a_pg-1_pg-2",
    ] {
        assert_eq!(OfferingKey::parse(bad), None, "{bad}");
    }
}

#[test]
fn a_reservation_mark_blocks_only_that_reservations_offering() {
    let with_reservations = || {
        let mut c = catalog();
        let offerings = &mut c.instance_types[0].offerings;
        offerings.push(reserved("us-west-2a", "cr-0aaa"));
        offerings.push(reserved("us-west-2a", "cr-0bbb"));
        c
    };
    let k = OfferingKey::new(CapacityType::Reserved, "m5.large", "us-west-2a");
    let mut c = with_reservations();
    marks(&[k.clone().in_reservation(Some("cr-0aaa"))], t0()).apply(&mut c, t0());
    assert_eq!(availability(&c), vec![true, true, true, false, true]);
    let mut c = with_reservations();
    marks(std::slice::from_ref(&k), t0()).apply(&mut c, t0());
    assert_eq!(
        availability(&c),
        vec![true, true, true, false, false],
        "an old key marks every reservation of the type and zone"
    );
    let mut c = with_reservations();
    let od = OfferingKey::new(CapacityType::OnDemand, "m5.large", "us-west-2a");
    marks(&[od.in_reservation(Some("cr-0aaa"))], t0()).apply(&mut c, t0());
    assert_eq!(availability(&c), vec![true, true, true, true, true]);
    let stored = marks(&[k.in_reservation(Some("cr-0bbb"))], t0()).to_data();
    let mut c = with_reservations();
    UnavailableOfferings::from_data(&stored).apply(&mut c, t0());
    assert_eq!(availability(&c), vec![true, true, true, true, false]);
}
