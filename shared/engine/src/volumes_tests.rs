use std::sync::Arc;

use kerf_catalog::{CapacityType, Catalog, InstanceType, Offering, Resources};

use crate::labels;
use crate::model::{
    AttachedVolume, Node, NodePool, Pod, PodVolumes, Snapshot, VolumeTopology, VolumeWait,
    VolumeWaitKind,
};
use crate::plan::{Plan, ReasonKind};
use crate::requirements::{Operator, SelectorRequirement};
use crate::{Options, provision};

use super::*;

fn res(cpu_m: i64, pods: i64) -> Resources {
    let mut r = Resources::new();
    r.set("cpu", cpu_m);
    r.set("memory", 64 << 40);
    r.set("pods", pods * 1000);
    r
}

fn itype(name: &str, cpu_m: i64, price: f64, ebs: Option<u32>) -> InstanceType {
    let offer = |zone: &str| Offering {
        zone: zone.into(),
        capacity_type: CapacityType::OnDemand,
        price,
        available: true,
        partition: None,
        reservation: None,
    };
    InstanceType {
        name: name.into(),
        labels: [
            (labels::ARCH.to_string(), "amd64".to_string()),
            (labels::INSTANCE_TYPE.to_string(), name.to_string()),
        ]
        .into(),
        ebs_volume_limit: ebs,
        offerings: vec![offer("za"), offer("zb")],
        capacity: res(cpu_m, 110),
        overhead: Default::default(),
        allocatable: res(cpu_m, 110),
    }
}

fn zone_in(zones: &[&str]) -> Vec<SelectorRequirement> {
    vec![SelectorRequirement {
        key: labels::ZONE.into(),
        operator: Operator::In,
        values: zones.iter().map(|z| z.to_string()).collect(),
        min_values: None,
    }]
}

use crate::fixtures::pending_pod as pod;

fn ebs(claim: &str) -> AttachedVolume {
    AttachedVolume {
        driver: EBS_CSI_DRIVER.into(),
        claim: format!("default/{claim}"),
    }
}

/// A pod with one EBS claim reachable in `alternatives`.
fn volume_pod(name: &str, claim: &str, alternatives: Vec<Vec<SelectorRequirement>>) -> Pod {
    let mut p = pod(name, 100);
    p.volumes = PodVolumes {
        topology: vec![VolumeTopology {
            claim: format!("default/{claim}"),
            alternatives,
        }],
        attached: vec![ebs(claim)],
        wait: None,
    };
    p
}

fn snapshot(types: Vec<InstanceType>, pods: Vec<Pod>) -> Snapshot {
    Snapshot {
        pods,
        node_pools: vec![NodePool {
            name: "default".into(),
            catalog: Arc::new(Catalog {
                region: "r".into(),
                instance_types: types,
            }),
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn node(name: &str, zone: &str) -> Node {
    Node {
        name: name.into(),
        labels: [
            (labels::ZONE.to_string(), zone.to_string()),
            (labels::HOSTNAME.to_string(), name.to_string()),
        ]
        .into(),
        allocatable: res(4000, 110),
        capacity: res(4000, 110),
        ..Default::default()
    }
}

fn zone_of(plan: &Plan, pod: &str) -> String {
    let l = plan
        .launches
        .iter()
        .find(|l| l.pods.iter().any(|p| p == pod))
        .unwrap_or_else(|| panic!("{pod} not launched: {plan:?}"));
    l.zone.clone()
}

fn both_policies(snap: &Snapshot, check: impl Fn(&Plan)) {
    for optimize_cost in [true, false] {
        check(&provision(
            snap,
            &Options {
                optimize_cost,
                ..Default::default()
            },
        ));
    }
}

#[test]
fn a_zonal_volume_pins_the_new_node_zone() {
    // zb is cheaper first (offerings tie: the zone order decides), the volume says zb.
    let snap = snapshot(
        vec![itype("m.large", 2000, 0.1, None)],
        vec![volume_pod("db-0", "data-db-0", vec![zone_in(&["zb"])])],
    );
    both_policies(&snap, |plan| {
        assert_eq!(zone_of(plan, "default/db-0"), "zb");
    });
}

#[test]
fn alternatives_are_tried_in_order() {
    let snap = snapshot(
        vec![itype("m.large", 2000, 0.1, None)],
        vec![volume_pod(
            "db-0",
            "data-db-0",
            vec![zone_in(&["zc"]), zone_in(&["zb"]), zone_in(&["za"])],
        )],
    );
    both_policies(&snap, |plan| {
        assert_eq!(zone_of(plan, "default/db-0"), "zb", "zc is not offered");
    });
}

#[test]
fn every_claim_must_hold() {
    let mut p = volume_pod("db-0", "a", vec![zone_in(&["za", "zb"])]);
    p.volumes.topology.push(VolumeTopology {
        claim: "default/b".into(),
        alternatives: vec![zone_in(&["zb"])],
    });
    let snap = snapshot(vec![itype("m.large", 2000, 0.1, None)], vec![p]);
    both_policies(&snap, |plan| {
        assert_eq!(zone_of(plan, "default/db-0"), "zb")
    });
}

#[test]
fn contradicting_claims_name_the_claims() {
    let mut p = volume_pod("db-0", "a", vec![zone_in(&["za"])]);
    p.volumes.topology.push(VolumeTopology {
        claim: "default/b".into(),
        alternatives: vec![zone_in(&["zb"])],
    });
    let plan = provision(
        &snapshot(vec![itype("m.large", 2000, 0.1, None)], vec![p]),
        &Options::default(),
    );
    assert_eq!(plan.unschedulable.len(), 1);
    let r = &plan.unschedulable[0].reason;
    assert!(r.contains("default/a") && r.contains("default/b"), "{r}");
}

#[test]
fn an_existing_node_outside_the_volume_zone_is_skipped() {
    let mut snap = snapshot(
        vec![itype("m.large", 2000, 0.1, None)],
        vec![volume_pod("db-0", "data-db-0", vec![zone_in(&["zb"])])],
    );
    snap.nodes = vec![node("n-a", "za")];
    let plan = provision(&snap, &Options::default());
    assert!(plan.nominations.is_empty(), "{:?}", plan.nominations);
    assert_eq!(zone_of(&plan, "default/db-0"), "zb");
    snap.nodes.push(node("n-b", "zb"));
    let plan = provision(&snap, &Options::default());
    assert_eq!(plan.nominations[0].node, "n-b");
}

#[test]
fn a_full_csinode_limit_sends_the_pod_to_a_new_node() {
    let mut bound = volume_pod("old", "old-data", vec![zone_in(&["za"])]);
    bound.node_name = Some("n-a".into());
    bound.phase = "Running".into();
    let mut n = node("n-a", "za");
    n.volume_limits = [(EBS_CSI_DRIVER.to_string(), 1)].into();
    let mut snap = snapshot(
        vec![itype("m.large", 2000, 0.1, None)],
        vec![bound, volume_pod("new", "new-data", vec![zone_in(&["za"])])],
    );
    snap.nodes = vec![n];
    let plan = provision(&snap, &Options::default());
    assert!(plan.nominations.is_empty(), "{:?}", plan.nominations);
    assert_eq!(zone_of(&plan, "default/new"), "za");
    // A claim already attached there does not count twice; another driver has no limit.
    snap.pods[1].volumes.attached = vec![ebs("old-data")];
    let plan = provision(&snap, &Options::default());
    assert_eq!(plan.nominations.len(), 1, "{plan:?}");
    snap.pods[1].volumes.attached = vec![AttachedVolume {
        driver: "efs.csi.aws.com".into(),
        claim: "default/new-data".into(),
    }];
    assert_eq!(provision(&snap, &Options::default()).nominations.len(), 1);
}

#[test]
fn the_instance_type_ebs_limit_splits_pods_over_new_nodes() {
    let pods: Vec<Pod> = (0..5)
        .map(|i| volume_pod(&format!("db-{i}"), &format!("d{i}"), vec![zone_in(&["za"])]))
        .collect();
    let snap = snapshot(vec![itype("m.large", 4000, 0.1, Some(2))], pods);
    both_policies(&snap, |plan| {
        assert_eq!(plan.launches.len(), 3, "{:?}", plan.launches);
        assert!(plan.launches.iter().all(|l| l.pods.len() <= 2));
    });
}

#[test]
fn an_in_flight_claim_takes_no_more_claims_than_its_type_attaches() {
    let pods: Vec<Pod> = (0..3)
        .map(|i| volume_pod(&format!("db-{i}"), &format!("d{i}"), vec![zone_in(&["za"])]))
        .collect();
    let mut snap = snapshot(vec![itype("m.large", 4000, 0.1, Some(2))], pods);
    snap.node_claims.push(crate::model::NodeClaim {
        name: "default-abc".into(),
        node_pool: "default".into(),
        labels: [
            (labels::ZONE.to_string(), "za".to_string()),
            (labels::INSTANCE_TYPE.to_string(), "m.large".to_string()),
        ]
        .into(),
        allocatable: res(4000, 110),
        capacity: res(4000, 110),
        ..Default::default()
    });
    both_policies(&snap, |plan| {
        let on_claim: Vec<_> = plan
            .nominations
            .iter()
            .filter(|n| n.node == "default-abc")
            .collect();
        assert_eq!(on_claim.len(), 2, "{:?}", plan.nominations);
        assert_eq!(plan.launches.len(), 1, "{:?}", plan.launches);
        assert_eq!(plan.launches[0].pods.len(), 1);
    });
    // A type without a known limit leaves the claim unbounded.
    snap.node_pools[0] =
        snapshot(vec![itype("m.large", 4000, 0.1, None)], vec![]).node_pools[0].clone();
    let plan = provision(&snap, &Options::default());
    assert_eq!(plan.nominations.len(), 3, "{plan:?}");
}

#[test]
fn options_exclude_types_that_cannot_attach_the_claims() {
    let pods: Vec<Pod> = (0..3)
        .map(|i| volume_pod(&format!("db-{i}"), &format!("d{i}"), vec![zone_in(&["za"])]))
        .collect();
    let snap = snapshot(
        vec![
            itype("big", 4000, 0.2, Some(8)),
            itype("cheap", 4000, 0.1, Some(1)),
        ],
        pods,
    );
    both_policies(&snap, |plan| {
        assert_eq!(plan.launches.len(), 1, "{:?}", plan.launches);
        assert_eq!(
            plan.launches[0].instance_type_options,
            vec!["big".to_string()]
        );
    });
}

#[test]
fn a_waiting_pod_is_reported_with_its_claim() {
    let mut p = pod("db-0", 100);
    p.volumes.wait = Some(VolumeWait {
        claim: "default/data-db-0".into(),
        kind: VolumeWaitKind::MissingClaim,
    });
    let plan = provision(
        &snapshot(vec![itype("m.large", 2000, 0.1, None)], vec![p]),
        &Options::default(),
    );
    assert!(plan.launches.is_empty());
    let u = &plan.unschedulable[0];
    assert_eq!(u.kind, ReasonKind::VolumeNotReady);
    assert!(u.reason.contains("default/data-db-0"), "{}", u.reason);
}

#[test]
fn combinations_and_across_claims_and_drop_contradictions() {
    let v = PodVolumes {
        topology: vec![
            VolumeTopology {
                claim: "a".into(),
                alternatives: vec![zone_in(&["za"]), zone_in(&["zb"])],
            },
            VolumeTopology {
                claim: "b".into(),
                alternatives: vec![zone_in(&["zb", "zc"])],
            },
        ],
        ..Default::default()
    };
    let c = combinations(&v).unwrap();
    assert_eq!(c.len(), 1);
    assert!(c[0].get(labels::ZONE).unwrap().has("zb"));
    assert!(!c[0].get(labels::ZONE).unwrap().has("zc"));
}
