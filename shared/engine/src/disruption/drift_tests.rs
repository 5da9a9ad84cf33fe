use std::sync::Arc;

use kerf_catalog::{CapacityType, Catalog, InstanceType, Offering};

use super::*;
use crate::model::Ami;
use crate::requirements::{Operator, SelectorRequirement};

const NOW: i64 = 1_000_000;

fn catalog() -> Arc<Catalog> {
    let it = InstanceType {
        name: "m.large".into(),
        labels: [("kubernetes.io/arch".to_string(), "amd64".to_string())].into(),
        ebs_volume_limit: None,
        offerings: vec![Offering {
            zone: "z1".into(),
            capacity_type: CapacityType::OnDemand,
            price: 0.1,
            available: false,
            partition: None,
            reservation: None,
        }],
        capacity: Default::default(),
        overhead: Default::default(),
        allocatable: Default::default(),
    };
    Arc::new(Catalog {
        region: "r".into(),
        instance_types: vec![it],
    })
}

fn pool() -> NodePool {
    NodePool {
        name: "default".into(),
        catalog: catalog(),
        requirements: vec![SelectorRequirement {
            key: "kubernetes.io/arch".into(),
            operator: Operator::In,
            values: vec!["amd64".into()],
            min_values: None,
        }],
        hash: "111".into(),
        hash_version: "kerf-v1".into(),
        ..Default::default()
    }
}

fn claim() -> NodeClaim {
    NodeClaim {
        name: "default-a".into(),
        labels: [
            (INSTANCE_TYPE, "m.large"),
            (ZONE, "z1"),
            (CAPACITY_TYPE, "on-demand"),
            ("kubernetes.io/arch", "amd64"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect(),
        annotations: [
            (NODEPOOL_HASH, "111"),
            (NODEPOOL_HASH_VERSION, "kerf-v1"),
            (EC2NODECLASS_HASH, "222"),
            (EC2NODECLASS_HASH_VERSION, "kerf-v1"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect(),
        image_id: "ami-new".into(),
        created: NOW - 7200,
        ..Default::default()
    }
}

fn class() -> NodeClass {
    NodeClass {
        name: "default".into(),
        hash: "222".into(),
        hash_version: "kerf-v1".into(),
        amis: vec![
            Ami {
                id: "ami-arm".into(),
                requirements: vec![SelectorRequirement {
                    key: "kubernetes.io/arch".into(),
                    operator: Operator::In,
                    values: vec!["arm64".into()],
                    min_values: None,
                }],
            },
            Ami {
                id: "ami-new".into(),
                requirements: vec![],
            },
        ],
        subnets: vec!["subnet-1".into()],
        security_groups: vec!["sg-1".into(), "sg-2".into()],
        capacity_reservations: Vec::new(),
        placement_group: Default::default(),
    }
}

fn check(c: &NodeClaim, p: &NodePool, k: &NodeClass) -> Option<DriftReason> {
    drift(c, &BTreeMap::new(), p, Some(k), NOW)
}

#[test]
fn an_unchanged_claim_has_not_drifted() {
    assert_eq!(check(&claim(), &pool(), &class()), None);
}

#[test]
fn nodepool_hash_drifts_only_with_the_same_version() {
    let mut p = pool();
    p.hash = "999".into();
    assert_eq!(
        check(&claim(), &p, &class()),
        Some(DriftReason::NodePoolDrifted)
    );
    let mut c = claim();
    c.annotations
        .insert(NODEPOOL_HASH_VERSION.into(), "v3".into());
    assert_eq!(check(&c, &p, &class()), None, "stamped by Karpenter");
    c.annotations.remove(NODEPOOL_HASH);
    assert_eq!(check(&c, &p, &class()), None, "never stamped");
}

#[test]
fn requirements_drift_when_a_label_leaves_the_pool() {
    let mut p = pool();
    p.requirements[0].values = vec!["arm64".into()];
    assert_eq!(
        check(&claim(), &p, &class()),
        Some(DriftReason::RequirementsDrifted)
    );
    let mut c = claim();
    c.labels.remove("kubernetes.io/arch");
    let node: BTreeMap<String, String> =
        [("kubernetes.io/arch".to_string(), "arm64".to_string())].into();
    assert_eq!(
        drift(&c, &node, &p, Some(&class()), NOW),
        None,
        "the node's label counts"
    );
}

#[test]
fn a_vanished_instance_type_drifts_after_an_hour() {
    let mut c = claim();
    c.labels.insert(INSTANCE_TYPE.into(), "gone.large".into());
    assert_eq!(
        check(&c, &pool(), &class()),
        Some(DriftReason::InstanceTypeNotFound)
    );
    c.created = NOW - 60;
    assert_eq!(check(&c, &pool(), &class()), None, "too young to check");
    let mut spot = claim();
    spot.labels.insert(CAPACITY_TYPE.into(), "spot".into());
    assert_eq!(
        check(&spot, &pool(), &class()),
        Some(DriftReason::InstanceTypeNotFound),
        "no spot offering in its zone"
    );
}

#[test]
fn node_class_drift_checks_hash_then_ami_then_security_groups_then_subnet() {
    let mut k = class();
    k.hash = "333".into();
    assert_eq!(
        check(&claim(), &pool(), &k),
        Some(DriftReason::NodeClassDrift)
    );
    let mut c = claim();
    c.image_id = "ami-old".into();
    assert_eq!(check(&c, &pool(), &class()), Some(DriftReason::AmiDrift));
    c.image_id = "ami-arm".into();
    assert_eq!(
        check(&c, &pool(), &class()),
        Some(DriftReason::AmiDrift),
        "the arm64 image is not the one an amd64 type gets"
    );
    let mut c = claim();
    c.security_group_ids = Some(vec!["sg-2".into(), "sg-1".into()]);
    c.subnet_id = Some("subnet-1".into());
    assert_eq!(check(&c, &pool(), &class()), None, "same sets in any order");
    c.security_group_ids = Some(vec!["sg-1".into()]);
    assert_eq!(
        check(&c, &pool(), &class()),
        Some(DriftReason::SecurityGroupDrift)
    );
    c.security_group_ids = None;
    c.subnet_id = Some("subnet-9".into());
    assert_eq!(check(&c, &pool(), &class()), Some(DriftReason::SubnetDrift));
}

#[test]
fn an_instance_in_a_reservation_the_class_no_longer_selects_drifts() {
    let mut k = class();
    k.capacity_reservations = vec!["cr-kept".into()];
    let mut c = claim();
    assert_eq!(check(&c, &pool(), &k), None, "no reservation known");
    c.capacity_reservation = Some("cr-kept".into());
    assert_eq!(check(&c, &pool(), &k), None, "still selected");
    c.capacity_reservation = Some("cr-gone".into());
    assert_eq!(
        check(&c, &pool(), &k),
        Some(DriftReason::CapacityReservationDrift)
    );
    k.capacity_reservations.clear();
    assert_eq!(
        check(&c, &pool(), &k),
        Some(DriftReason::CapacityReservationDrift),
        "a class that selects no reservation anymore"
    );
    c.subnet_id = Some("subnet-9".into());
    assert_eq!(
        check(&c, &pool(), &k),
        Some(DriftReason::SubnetDrift),
        "subnet drift is checked first, as Karpenter does"
    );
}

#[test]
fn a_node_outside_the_placement_group_the_class_selects_now_drifts() {
    use crate::model::ResolvedPlacementGroup as Pg;
    let in_group = |id: &str| {
        let mut c = claim();
        c.labels.insert(PLACEMENT_GROUP_ID.into(), id.into());
        c
    };
    let selecting = |pg: Pg| NodeClass {
        placement_group: pg,
        ..class()
    };
    let group = selecting(Pg::Group("pg-1".into()));
    assert_eq!(check(&in_group("pg-1"), &pool(), &group), None);
    assert_eq!(
        check(&in_group("pg-2"), &pool(), &group),
        Some(DriftReason::PlacementGroupDrift),
        "the selector changed"
    );
    assert_eq!(
        check(&claim(), &pool(), &group),
        Some(DriftReason::PlacementGroupDrift),
        "the selector was added"
    );
    assert_eq!(
        check(&in_group("pg-1"), &pool(), &selecting(Pg::NoGroup)),
        Some(DriftReason::PlacementGroupDrift),
        "the selector was removed"
    );
    assert_eq!(check(&claim(), &pool(), &selecting(Pg::NoGroup)), None);
    assert_eq!(
        check(&in_group("pg-2"), &pool(), &selecting(Pg::Unknown)),
        None,
        "nothing known, nothing drifts"
    );
}
