//! NodeOverlay: price, price adjustments, extended capacity, weights and conflicts.

use kerf_catalog::{CapacityType, Catalog, InstanceType, Offering, Resources};

use super::*;
use crate::requirements::{Operator, SelectorRequirement};

fn itype(name: &str, family: &str, od: f64) -> InstanceType {
    let offer = |capacity_type, price| Offering {
        zone: "za".into(),
        capacity_type,
        price,
        available: true,
        partition: None,
        reservation: None,
    };
    let mut r = Resources::new();
    r.set("cpu", 2000);
    InstanceType {
        name: name.into(),
        labels: [
            (labels::INSTANCE_TYPE.to_string(), name.to_string()),
            (
                "karpenter.k8s.aws/instance-family".to_string(),
                family.to_string(),
            ),
        ]
        .into(),
        offerings: vec![
            offer(CapacityType::Spot, od / 2.0),
            offer(CapacityType::OnDemand, od),
        ],
        capacity: r.clone(),
        allocatable: r,
        overhead: Default::default(),
        ebs_volume_limit: None,
    }
}

fn catalog() -> Catalog {
    Catalog {
        region: "r".into(),
        instance_types: vec![itype("m.large", "m", 0.1), itype("c.large", "c", 0.2)],
    }
}

fn req(key: &str, values: &[&str]) -> Requirements {
    Requirements::from_selectors(&[SelectorRequirement {
        key: key.into(),
        operator: Operator::In,
        values: values.iter().map(|v| v.to_string()).collect(),
        min_values: None,
    }])
    .unwrap()
}

fn overlay(name: &str, weight: i32, reqs: Requirements, price: Option<PriceChange>) -> NodeOverlay {
    NodeOverlay {
        name: name.into(),
        weight,
        requirements: reqs,
        price,
        capacity: Resources::new(),
    }
}

fn price(c: &Catalog, it: &str, ct: CapacityType) -> f64 {
    c.instance_types
        .iter()
        .find(|t| t.name == it)
        .unwrap()
        .offerings
        .iter()
        .find(|o| o.capacity_type == ct)
        .unwrap()
        .price
}

fn apply_all(overlays: &[NodeOverlay]) -> Catalog {
    apply(&catalog(), overlays, "default", &BTreeMap::new())
}

#[test]
fn price_adjustments_parse_as_karpenter_writes_them() {
    let p = |a: &str| PriceChange::parse(None, Some(a));
    assert_eq!(p("-10%"), Ok(Some(PriceChange::Percent(-10.0))));
    assert_eq!(p("+15%"), Ok(Some(PriceChange::Percent(15.0))));
    assert_eq!(p("+5.00"), Ok(Some(PriceChange::Add(5.0))));
    assert_eq!(p("-7.50"), Ok(Some(PriceChange::Add(-7.5))));
    assert_eq!(
        PriceChange::parse(Some("5.00"), None),
        Ok(Some(PriceChange::Set(5.0)))
    );
    assert_eq!(PriceChange::parse(None, None), Ok(None));
    assert_eq!(
        PriceChange::parse(Some("1"), Some("+1")),
        Err(OverlayError::Both)
    );
    for bad in ["ten%", "--1", "1e3", "%", ""] {
        assert!(p(bad).is_err(), "{bad}");
    }
    assert!(PriceChange::parse(Some("-1"), None).is_err());
    assert_eq!(PriceChange::Add(-1.0).apply(0.2), 0.0, "never below zero");
}

#[test]
fn an_overlay_prices_only_the_offerings_it_selects() {
    let c = apply_all(&[overlay(
        "od-discount",
        0,
        req(labels::CAPACITY_TYPE, &["on-demand"]),
        Some(PriceChange::Percent(-50.0)),
    )]);
    assert!((price(&c, "m.large", CapacityType::OnDemand) - 0.05).abs() < 1e-12);
    assert!((price(&c, "c.large", CapacityType::OnDemand) - 0.1).abs() < 1e-12);
    assert!((price(&c, "m.large", CapacityType::Spot) - 0.05).abs() < 1e-12);
}

#[test]
fn the_highest_weight_wins_and_equal_weights_go_by_name() {
    let all = Requirements::new();
    let m = req("karpenter.k8s.aws/instance-family", &["m"]);
    let c = apply_all(&[
        overlay("base", 1, all.clone(), Some(PriceChange::Set(1.0))),
        overlay("m-special", 10, m.clone(), Some(PriceChange::Set(0.01))),
    ]);
    assert_eq!(price(&c, "m.large", CapacityType::OnDemand), 0.01);
    assert_eq!(price(&c, "c.large", CapacityType::OnDemand), 1.0);
    let tied = [
        overlay("zeta", 5, all.clone(), Some(PriceChange::Set(3.0))),
        overlay("alpha", 5, all.clone(), Some(PriceChange::Set(2.0))),
    ];
    let c = apply_all(&tied);
    assert_eq!(price(&c, "c.large", CapacityType::Spot), 2.0);
    let conflicts = conflicts(&catalog(), &tied, "default", &BTreeMap::new());
    assert_eq!(
        conflicts,
        vec![Conflict {
            overlay: "zeta".into(),
            with: "alpha".into(),
            field: "price".into()
        }]
    );
}

#[test]
fn capacity_adds_extended_resources_to_the_selected_types() {
    let mut ov = overlay("fuse", 0, req(labels::INSTANCE_TYPE, &["c.large"]), None);
    ov.capacity.set("smarter-devices/fuse", 1000);
    ov.capacity.set("cpu", 64_000);
    let c = apply_all(&[ov]);
    let t = |n: &str| c.instance_types.iter().find(|t| t.name == n).unwrap();
    assert_eq!(t("c.large").allocatable.get("smarter-devices/fuse"), 1000);
    assert_eq!(t("c.large").capacity.get("smarter-devices/fuse"), 1000);
    assert_eq!(t("c.large").allocatable.get("cpu"), 2000, "never replaces");
    assert_eq!(t("m.large").allocatable.get("smarter-devices/fuse"), 0);
}

#[test]
fn the_pool_name_can_select_an_overlay() {
    let ov = overlay(
        "gpu-pool",
        0,
        req(labels::NODEPOOL, &["gpu"]),
        Some(PriceChange::Set(9.0)),
    );
    let other = apply(
        &catalog(),
        std::slice::from_ref(&ov),
        "default",
        &BTreeMap::new(),
    );
    assert_eq!(price(&other, "m.large", CapacityType::OnDemand), 0.1);
    let gpu = apply(&catalog(), &[ov], "gpu", &BTreeMap::new());
    assert_eq!(price(&gpu, "m.large", CapacityType::OnDemand), 9.0);
}

#[test]
fn touched_says_which_kinds_of_overlay_reach_a_claims_types() {
    let cheap = overlay(
        "cheap-c",
        0,
        req(labels::INSTANCE_TYPE, &["c.large"]),
        Some(PriceChange::Set(0.01)),
    );
    let mut fuse = overlay(
        "fuse",
        0,
        req("karpenter.k8s.aws/instance-family", &["m"]),
        None,
    );
    fuse.capacity.set("smarter-devices/fuse", 1000);
    let both = [cheap, fuse];
    let of = |types: &[&str]| {
        let types: Vec<String> = types.iter().map(|t| t.to_string()).collect();
        touched(&catalog(), &both, "default", &BTreeMap::new(), &types)
    };
    assert_eq!(
        of(&["c.large"]),
        Touched {
            price: true,
            capacity: false
        }
    );
    assert_eq!(
        of(&["m.large"]),
        Touched {
            price: false,
            capacity: true
        }
    );
    assert_eq!(
        of(&["m.large", "c.large"]),
        Touched {
            price: true,
            capacity: true
        }
    );
    assert_eq!(
        of(&["x.large"]),
        Touched::default(),
        "an unknown type is untouched"
    );
    let elsewhere = touched(
        &catalog(),
        &both,
        "gpu",
        &BTreeMap::new(),
        &["c.large".into()],
    );
    assert!(elsewhere.price, "no pool requirement: every pool");
}
