//! Which zones and capacity types a pool offers, and how they make topology domains.

use std::sync::Arc;

use kerf_catalog::{CapacityType, Catalog, InstanceType, Offering, Resources};

use super::*;
use crate::model::{
    LabelSelector, Node, NodePool, Pod, PodSpec, TopologySpread, WhenUnsatisfiable,
};
use crate::offered::Offered;
use crate::requirements::{Requirement, Requirements};
use crate::{Options, provision};

fn res(cpu_m: i64) -> Resources {
    let mut r = Resources::new();
    r.set("cpu", cpu_m);
    r.set("memory", 8 << 40);
    r.set("pods", 58_000);
    r
}

fn offering(zone: &str, capacity_type: CapacityType, available: bool) -> Offering {
    Offering {
        zone: zone.into(),
        capacity_type,
        price: 0.1,
        available,
        partition: None,
        reservation: None,
    }
}

fn instance_type(name: &str, offerings: Vec<Offering>) -> InstanceType {
    InstanceType {
        name: name.into(),
        labels: [(labels::INSTANCE_TYPE.to_string(), name.to_string())].into(),
        capacity: res(4000),
        overhead: Default::default(),
        allocatable: res(4000),
        ebs_volume_limit: None,
        offerings,
    }
}

fn zones(o: &Offered) -> Vec<&str> {
    o.zones.iter().map(String::as_str).collect()
}

#[test]
fn unavailable_offerings_still_offer_their_zone() {
    let types = [instance_type(
        "m.large",
        vec![
            offering("a", CapacityType::OnDemand, true),
            offering("c", CapacityType::OnDemand, false),
            offering("c", CapacityType::Spot, false),
        ],
    )];
    let o = Offered::of(&types, "r", &Requirements::new());
    assert_eq!(zones(&o), ["a", "c"]);
    assert_eq!(
        o.capacity_types.iter().collect::<Vec<_>>(),
        ["on-demand", "spot"]
    );
}

#[test]
fn the_pool_requirements_bound_zones_capacity_types_and_types() {
    let types = [
        instance_type(
            "m.large",
            vec![
                offering("a", CapacityType::OnDemand, true),
                offering("b", CapacityType::Spot, false),
                offering("c", CapacityType::OnDemand, false),
            ],
        ),
        instance_type("x.large", vec![offering("d", CapacityType::OnDemand, true)]),
    ];
    let mut reqs = Requirements::new();
    reqs.add(labels::ZONE, Requirement::not_in(["a"]));
    reqs.add(labels::CAPACITY_TYPE, Requirement::is_in(["on-demand"]));
    reqs.add(labels::INSTANCE_TYPE, Requirement::is_in(["m.large"]));
    let o = Offered::of(&types, "r", &reqs);
    assert_eq!(zones(&o), ["c"], "zone b is spot only, d is x.large's");
    assert_eq!(o.capacity_types.iter().collect::<Vec<_>>(), ["on-demand"]);
}

#[test]
fn partitions_are_domains_within_the_pool_requirements() {
    let part = |zone: &str, p: u32| Offering {
        partition: Some(p),
        ..offering(zone, CapacityType::OnDemand, true)
    };
    let types = [instance_type(
        "m.large",
        vec![part("a", 1), part("a", 2), part("b", 3)],
    )];
    let o = Offered::of(&types, "r", &Requirements::new());
    assert_eq!(o.partitions.iter().collect::<Vec<_>>(), ["1", "2", "3"]);
    let mut reqs = Requirements::new();
    reqs.add(
        labels::PLACEMENT_GROUP_PARTITION,
        Requirement::not_in(["2"]),
    );
    let o = Offered::of(&types, "r", &reqs);
    assert_eq!(o.partitions.iter().collect::<Vec<_>>(), ["1", "3"]);
    let plain = [instance_type(
        "m.large",
        vec![offering("a", CapacityType::OnDemand, true)],
    )];
    let mut in_one = Requirements::new();
    in_one.add(labels::PLACEMENT_GROUP_PARTITION, Requirement::is_in(["1"]));
    let o = Offered::of(&plain, "r", &in_one);
    assert!(
        o.zones.is_empty() && o.partitions.is_empty(),
        "no partition to be had"
    );
}

/// A pool offering zones a (with capacity) and c (none now); a node in zone a holds one web
/// pod; one more web pod is pending under a zonal spread of maxSkew 1.
fn spread_snapshot(ready: bool) -> Snapshot {
    let it = instance_type(
        "m.xlarge",
        vec![
            offering("a", CapacityType::OnDemand, true),
            offering("c", CapacityType::OnDemand, false),
        ],
    );
    let pool = NodePool {
        name: "default".into(),
        catalog: Arc::new(Catalog {
            region: "r".into(),
            instance_types: vec![it],
        }),
        unready: (!ready).then(|| "EC2NodeClass default is not ready".to_string()),
        ..Default::default()
    };
    let node = Node {
        name: "n-a".into(),
        labels: [
            (labels::ZONE.to_string(), "a".to_string()),
            (labels::HOSTNAME.to_string(), "n-a".to_string()),
        ]
        .into(),
        allocatable: res(4000),
        capacity: res(4000),
        ..Default::default()
    };
    let web = |name: &str, node: Option<&str>| Pod {
        namespace: "default".into(),
        name: name.into(),
        uid: format!("uid-{name}"),
        labels: [("app".to_string(), "web".to_string())].into(),
        node_name: node.map(str::to_string),
        phase: if node.is_some() { "Running" } else { "Pending" }.into(),
        spec: PodSpec {
            requests: {
                let mut r = Resources::new();
                r.set("cpu", 500);
                r.set("pods", 1000);
                r
            },
            spread: vec![TopologySpread {
                max_skew: 1,
                topology_key: labels::ZONE.into(),
                when_unsatisfiable: WhenUnsatisfiable::DoNotSchedule,
                selector: LabelSelector {
                    match_labels: [("app".to_string(), "web".to_string())].into(),
                    ..Default::default()
                },
                min_domains: None,
                honor_node_affinity: true,
                honor_node_taints: false,
            }],
            ..Default::default()
        },
        ..Default::default()
    };
    Snapshot {
        pods: vec![web("old", Some("n-a")), web("new", None)],
        nodes: vec![node],
        node_pools: vec![pool],
        ..Default::default()
    }
}

#[test]
fn a_zone_without_capacity_keeps_spread_pods_pending() {
    let plan = provision(&spread_snapshot(true), &Options::default());
    assert!(plan.nominations.is_empty(), "{:?}", plan.nominations);
    assert!(plan.launches.is_empty(), "{:?}", plan.launches);
    let [u] = plan.unschedulable.as_slice() else {
        panic!("one pod should wait: {:?}", plan.unschedulable);
    };
    assert!(u.reason.contains("topology spread"), "{}", u.reason);
}

#[test]
fn a_pool_that_is_not_ready_offers_no_domains() {
    let plan = provision(&spread_snapshot(false), &Options::default());
    assert_eq!(plan.nominations.len(), 1, "{:?}", plan.unschedulable);
    assert_eq!(plan.nominations[0].node, "n-a");
}
