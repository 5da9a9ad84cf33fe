//! The dollar limit: every option of a launch within what is left, a launch charged at its
//! most expensive option, existing NodeClaims at their offering's price.

use std::sync::Arc;

use kerf_catalog::{CapacityType, Catalog, InstanceType, Offering, Resources};

use super::*;
use crate::labels;
use crate::model::{NodeClaim, Pod};
use crate::{Options, provision};

fn res(cpu_m: i64) -> Resources {
    let mut r = Resources::new();
    r.set("cpu", cpu_m);
    r.set("memory", 64 << 30);
    r.set("pods", 110_000);
    r
}

fn itype(name: &str, cpu_m: i64, spot: f64, od: f64) -> InstanceType {
    let offer = |capacity_type, price| Offering {
        zone: "za".into(),
        capacity_type,
        price,
        available: true,
        partition: None,
        reservation: None,
    };
    InstanceType {
        name: name.into(),
        labels: [(labels::INSTANCE_TYPE.to_string(), name.to_string())].into(),
        ebs_volume_limit: None,
        offerings: vec![
            offer(CapacityType::Spot, spot),
            offer(CapacityType::OnDemand, od),
        ],
        capacity: res(cpu_m),
        overhead: Default::default(),
        allocatable: res(cpu_m),
    }
}

fn pool(max: Option<f64>) -> NodePool {
    NodePool {
        name: "default".into(),
        catalog: Arc::new(Catalog {
            region: "r".into(),
            instance_types: vec![itype("small", 2000, 0.1, 0.2), itype("big", 8000, 0.4, 0.8)],
        }),
        max_cost_per_hour: max,
        ..Default::default()
    }
}

use crate::fixtures::pending_pod as pod;

fn claim(name: &str, it: &str, ct: &str) -> NodeClaim {
    NodeClaim {
        name: name.into(),
        node_pool: "default".into(),
        labels: [
            (labels::INSTANCE_TYPE.to_string(), it.to_string()),
            (labels::ZONE.to_string(), "za".to_string()),
            (labels::CAPACITY_TYPE.to_string(), ct.to_string()),
        ]
        .into(),
        capacity: res(8000),
        allocatable: res(0),
        ..Default::default()
    }
}

fn snap(max: Option<f64>, pods: Vec<Pod>, claims: Vec<NodeClaim>) -> Snapshot {
    Snapshot {
        pods,
        node_claims: claims,
        node_pools: vec![pool(max)],
        ..Default::default()
    }
}

#[test]
fn existing_claims_count_at_their_offering_price() {
    let s = snap(
        Some(5.0),
        vec![],
        vec![claim("a", "big", "spot"), claim("b", "small", "on-demand")],
    );
    assert!((pool_cost(&s, &s.node_pools[0]) - 0.6).abs() < 1e-9);
    let plan = provision(&s, &Options::default());
    assert_eq!(plan.cost_limits.len(), 1);
    let l = &plan.cost_limits[0];
    assert_eq!(l.node_pool, "default");
    assert_eq!(l.max_cost_per_hour, 5.0);
    assert_eq!(l.current_cost_per_hour, 0.6);
    assert_eq!(l.planned_cost_per_hour, 0.0);
    assert_eq!(l.remaining_per_hour, 4.4);
}

#[test]
fn a_launch_is_charged_its_dearest_option_and_every_option_fits_what_is_left() {
    // 0.5 left: "big" (dearest offering 0.8) can never be an option; "small" (0.2) can.
    let s = snap(
        Some(0.9),
        vec![pod("p", 500)],
        vec![claim("a", "big", "spot")],
    );
    let plan = provision(&s, &Options::default());
    assert_eq!(plan.launches.len(), 1, "{plan:#?}");
    assert_eq!(plan.launches[0].instance_type_options, vec!["small"]);
    assert_eq!(plan.cost_limits[0].planned_cost_per_hour, 0.2);
    assert!(plan.cost_limits[0].remaining_per_hour >= 0.0);
}

#[test]
fn pods_beyond_the_limit_are_unschedulable_and_without_a_limit_they_launch() {
    let pods: Vec<Pod> = (0..4).map(|i| pod(&format!("p{i}"), 1500)).collect();
    // 0.45 buys two "small" nodes at their dearest offering (0.2 each), not three.
    let limited = provision(&snap(Some(0.45), pods.clone(), vec![]), &Options::default());
    assert_eq!(limited.launches.len(), 2, "{limited:#?}");
    assert_eq!(limited.unschedulable.len(), 2);
    assert!(
        limited.unschedulable[0]
            .reason
            .contains("exceed the nodepool limits (kerf.dev/max-cost-per-hour: $0.0500/hour left)"),
        "{}",
        limited.unschedulable[0].reason
    );
    let charged: f64 = limited.cost_limits[0].planned_cost_per_hour;
    assert!(charged <= 0.45 + 1e-9, "{charged}");
    let free = provision(&snap(None, pods, vec![]), &Options::default());
    assert_eq!(free.unschedulable.len(), 0);
    assert!(free.cost_limits.is_empty());
}

#[test]
fn an_unlaunched_claim_counts_at_the_dearest_offering_its_labels_allow() {
    let mut c = claim("a", "big", "spot");
    c.labels.remove(labels::ZONE);
    c.labels.remove(labels::CAPACITY_TYPE);
    let s = snap(Some(5.0), vec![], vec![c]);
    assert!((pool_cost(&s, &s.node_pools[0]) - 0.8).abs() < 1e-9);
}
