//! Static NodePools: up to `replicas` within `limits.nodes`, the surplus in Karpenter's order,
//! and no launches for pending pods.

use std::sync::Arc;

use kerf_catalog::{CapacityType, Catalog, InstanceType, Offering, Resources};

use super::*;
use crate::fixtures::pending_pod;
use crate::labels;
use crate::model::{OwnerKind, Pod, Timestamp};

fn itype(name: &str, cpu_m: i64, price: f64) -> InstanceType {
    let mut r = Resources::new();
    r.set("cpu", cpu_m);
    r.set("pods", 110_000);
    InstanceType {
        name: name.into(),
        labels: [(labels::INSTANCE_TYPE.to_string(), name.to_string())].into(),
        offerings: vec![Offering {
            zone: "za".into(),
            capacity_type: CapacityType::OnDemand,
            price,
            available: true,
            partition: None,
            reservation: None,
        }],
        capacity: r.clone(),
        allocatable: r,
        overhead: Default::default(),
        ebs_volume_limit: None,
    }
}

fn pool(name: &str, replicas: Option<i64>, node_limit: Option<i64>) -> NodePool {
    let limits = node_limit.map(|n| {
        let mut r = Resources::new();
        r.set("nodes", n * 1000);
        r
    });
    NodePool {
        name: name.into(),
        replicas,
        limits,
        catalog: Arc::new(Catalog {
            region: "r".into(),
            instance_types: vec![itype("big", 8000, 0.4), itype("small", 2000, 0.1)],
        }),
        ..NodePool::default()
    }
}

fn claim(name: &str, pool: &str, launched: bool, deleting: bool) -> NodeClaim {
    NodeClaim {
        name: name.into(),
        node_pool: pool.into(),
        provider_id: if launched {
            format!("aws:///za/i-{name}")
        } else {
            String::new()
        },
        node_name: launched.then(|| format!("node-{name}")),
        deleting,
        ..NodeClaim::default()
    }
}

fn on(node: &str, name: &str) -> Pod {
    let mut p = pending_pod(name, 100);
    p.node_name = Some(node.into());
    p.phase = "Running".into();
    p
}

fn snap(pools: Vec<NodePool>, claims: Vec<NodeClaim>, pods: Vec<Pod>) -> Snapshot {
    Snapshot {
        node_pools: pools,
        node_claims: claims,
        pods,
        now: Timestamp::default(),
        ..Snapshot::default()
    }
}

#[test]
fn a_static_pool_launches_up_to_its_replicas_with_every_allowed_type_cheapest_first() {
    let s = snap(
        vec![pool("fixed", Some(3), None)],
        vec![claim("fixed-a", "fixed", true, false)],
        vec![],
    );
    let p = plan(&s, &Options::default());
    assert_eq!(p.launches.len(), 2);
    for l in &p.launches {
        assert_eq!(l.node_pool, "fixed");
        assert_eq!(l.instance_type, "small");
        assert_eq!(l.instance_type_options, vec!["small", "big"]);
        assert!(l.pods.is_empty() && l.requests.is_empty());
        assert!(l.node_claim.starts_with("fixed-"));
    }
    assert_ne!(p.launches[0].node_claim, p.launches[1].node_claim);
    assert!(p.removals.is_empty() && p.at_limit.is_empty());
}

#[test]
fn a_deleting_claim_counts_until_it_is_gone_and_dynamic_pools_are_left_alone() {
    let s = snap(
        vec![pool("fixed", Some(2), None), pool("dynamic", None, None)],
        vec![
            claim("fixed-a", "fixed", true, false),
            claim("fixed-b", "fixed", true, true),
            claim("dynamic-a", "dynamic", true, false),
        ],
        vec![],
    );
    assert_eq!(plan(&s, &Options::default()), StaticPlan::default());
}

#[test]
fn limits_nodes_stops_the_launches_short() {
    let s = snap(
        vec![pool("fixed", Some(5), Some(3))],
        vec![claim("fixed-a", "fixed", true, false)],
        vec![],
    );
    let p = plan(&s, &Options::default());
    assert_eq!(p.launches.len(), 2);
    assert_eq!(
        p.at_limit,
        vec![AtLimit {
            node_pool: "fixed".into(),
            replicas: 5,
            nodes: 1
        }]
    );
}

#[test]
fn the_surplus_goes_unlaunched_first_then_empty_then_cheapest_to_disrupt() {
    let mut priority = claim("fixed-prio", "fixed", true, false);
    priority
        .annotations
        .insert(DEPROVISIONING_PRIORITY.into(), "10".into());
    let mut daemon = on("node-fixed-empty", "ds");
    daemon.owner = OwnerKind::DaemonSet;
    let mut protected = on("node-fixed-dnd", "dnd");
    protected
        .annotations
        .insert(kerf_labels::DO_NOT_DISRUPT.into(), "true".into());
    let s = snap(
        vec![pool("fixed", Some(1), None)],
        vec![
            claim("fixed-dnd", "fixed", true, false),
            claim("fixed-busy", "fixed", true, false),
            claim("fixed-one", "fixed", true, false),
            priority,
            claim("fixed-empty", "fixed", true, false),
            claim("fixed-new", "fixed", false, false),
            claim("fixed-gone", "fixed", true, true),
        ],
        vec![
            daemon,
            protected,
            on("node-fixed-busy", "b1"),
            on("node-fixed-busy", "b2"),
            on("node-fixed-one", "o1"),
            on("node-fixed-prio", "p1"),
            on("node-fixed-prio", "p2"),
        ],
    );
    let order: Vec<String> = plan(&s, &Options::default())
        .removals
        .into_iter()
        .map(|r| r.node_claim)
        .collect();
    assert_eq!(
        order,
        vec![
            "fixed-new",
            "fixed-empty",
            "fixed-prio",
            "fixed-one",
            "fixed-busy"
        ],
        "6 live claims for 1 replica: the node with a do-not-disrupt pod stays"
    );
}

#[test]
fn pending_pods_get_no_node_from_a_static_pool() {
    let mut s = snap(vec![pool("fixed", Some(0), None)], vec![], vec![]);
    s.pods.push(pending_pod("web", 500));
    let plan = crate::provision(&s, &Options::default());
    assert!(plan.launches.is_empty());
    assert_eq!(plan.unschedulable.len(), 1);
    assert!(
        plan.unschedulable[0].reason.contains("static"),
        "{}",
        plan.unschedulable[0].reason
    );
}
