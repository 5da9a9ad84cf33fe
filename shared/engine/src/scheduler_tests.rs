//! The first-fit scan skips slots it knows refuse a pod; these tests show that every pod still
//! lands where a scan from the first slot would put it.

use std::collections::BTreeMap;
use std::sync::Arc;

use kerf_catalog::{CapacityType, Catalog, InstanceType, Offering, Resources};
use proptest::prelude::*;

use crate::Options;
use crate::labels;
use crate::model::{
    AffinityTerm, Effect, LabelSelector, NodePool, Pod, PodSpec, Snapshot, Taint, Toleration,
    TopologySpread, WhenUnsatisfiable,
};
use crate::open::Policy;
use crate::prepare;
use crate::provisioning::{Prepared, pools_for};
use crate::view::Overlay;

use super::Run;

const ZONES: [&str; 3] = ["z1", "z2", "z3"];

fn res(cpu_m: i64, mem_mi: i64, pods: i64) -> Resources {
    let mut r = Resources::new();
    r.set("cpu", cpu_m);
    r.set("memory", mem_mi << 20);
    r.set("pods", pods * 1000);
    r
}

/// Four sizes in two architectures, in three zones.
fn catalog() -> Arc<Catalog> {
    let types = (0..8)
        .map(|i| {
            let cpu = 1i64 << (i % 4);
            let arch = if i < 4 { "amd64" } else { "arm64" };
            let name = format!("t{i}.{cpu}x");
            InstanceType {
                name: name.clone(),
                labels: [
                    (labels::INSTANCE_TYPE.to_string(), name),
                    (labels::ARCH.to_string(), arch.to_string()),
                ]
                .into(),
                capacity: res(cpu * 1000, cpu * 4096, 4 * cpu),
                allocatable: res(cpu * 1000, cpu * 4096, 4 * cpu),
                overhead: Default::default(),
                ebs_volume_limit: None,
                offerings: ZONES
                    .iter()
                    .map(|z| Offering {
                        zone: z.to_string(),
                        capacity_type: CapacityType::OnDemand,
                        price: 0.05 * cpu as f64,
                        available: true,
                        partition: None,
                        reservation: None,
                    })
                    .collect(),
            }
        })
        .collect();
    Arc::new(Catalog {
        region: "r".into(),
        instance_types: types,
    })
}

fn selector(app: &str) -> LabelSelector {
    LabelSelector {
        match_labels: [("app".to_string(), app.to_string())].into(),
        ..Default::default()
    }
}

fn spread(key: &str, app: &str) -> TopologySpread {
    TopologySpread {
        max_skew: 1,
        topology_key: key.into(),
        when_unsatisfiable: WhenUnsatisfiable::DoNotSchedule,
        selector: selector(app),
        min_domains: None,
        honor_node_affinity: true,
        honor_node_taints: false,
    }
}

/// A pod from (cpu millis, constraint kind, app): no constraint, zonal spread, hostname
/// anti-affinity, hostname spread, zonal affinity, an arm64 selector, or a toleration of the
/// tainted pool.
fn make_pod(i: usize, (cpu, kind, app): (i64, u8, u8)) -> Pod {
    let app = format!("a{app}");
    let mut spec = PodSpec {
        requests: res(cpu, cpu, 1),
        ..Default::default()
    };
    let term = |key: &str| AffinityTerm {
        topology_key: key.into(),
        selector: selector(&app),
        namespaces: vec![],
        all_namespaces: false,
        namespace_selector: None,
    };
    match kind {
        1 => spec.spread.push(spread(labels::ZONE, &app)),
        2 => spec.anti_affinity.push(term(labels::HOSTNAME)),
        3 => spec.spread.push(spread(labels::HOSTNAME, &app)),
        4 => spec.affinity.push(term(labels::ZONE)),
        5 => {
            spec.node_selector
                .insert(labels::ARCH.into(), "arm64".into());
        }
        6 => spec.tolerations.push(Toleration {
            key: "dedicated".into(),
            exists: true,
            value: String::new(),
            effect: None,
        }),
        _ => {}
    }
    Pod {
        namespace: "default".into(),
        name: format!("p{i}"),
        uid: format!("u{i:04}"),
        labels: [("app".to_string(), app)].into(),
        phase: "Pending".into(),
        spec,
        ..Default::default()
    }
}

/// A default pool and a heavier tainted one.
fn snapshot(pods: Vec<(i64, u8, u8)>) -> Snapshot {
    let pool = |name: &str, weight: i32, taints: Vec<Taint>| NodePool {
        name: name.into(),
        weight,
        labels: BTreeMap::new(),
        taints,
        node_class: "default".into(),
        catalog: catalog(),
        ..Default::default()
    };
    let taint = Taint {
        key: "dedicated".into(),
        value: "x".into(),
        effect: Effect::NoSchedule,
    };
    Snapshot {
        pods: pods
            .into_iter()
            .enumerate()
            .map(|(i, p)| make_pod(i, p))
            .collect(),
        node_pools: vec![
            pool("default", 0, vec![]),
            pool("dedicated", 10, vec![taint]),
        ],
        ..Default::default()
    }
}

/// One packing run over the snapshot's pending pods.
fn solved(snap: &Snapshot, policy: Policy, full_scan: bool) -> Run<'_> {
    let prep = Prepared::new(snap);
    let opts = Options::default();
    let pools = pools_for(&prep, &opts);
    let base = prepare::base(snap, &prep.ix, pools, &prep.pending, Overlay::default());
    let mut run = Run::new(base, policy, true);
    run.full_scan = full_scan;
    run.solve();
    run
}

/// Where each pod went and each slot's pods.
fn placements(run: &Run<'_>) -> (Vec<Option<usize>>, Vec<Vec<usize>>) {
    let slots = run.slots.iter().map(|s| s.pods.clone()).collect();
    (run.placed.clone(), slots)
}

fn pod_strategy() -> impl Strategy<Value = (i64, u8, u8)> {
    (
        prop::sample::select(vec![100i64, 250, 500, 700, 1000, 1500, 3000]),
        0u8..8,
        0u8..3,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn skipping_refused_slots_places_every_pod_where_a_full_scan_does(
        pods in prop::collection::vec(pod_strategy(), 1..80),
        efficient in any::<bool>(),
    ) {
        let snap = snapshot(pods);
        let policy = if efficient { Policy::Efficient(0) } else { Policy::Largest };
        let fast = placements(&solved(&snap, policy, false));
        let full = placements(&solved(&snap, policy, true));
        prop_assert_eq!(fast, full);
    }
}

#[test]
fn a_class_frontier_passes_slots_refused_for_good_but_not_slots_short_of_room() {
    // Hostname anti-affinity pods of one app with different requests: each needs a node of
    // its own, so every slot before the last refuses the next pod for good.
    let pods = (0..6).map(|i| (1000 - 100 * i as i64, 2u8, 0u8)).collect();
    let snap = snapshot(pods);
    let run = solved(&snap, Policy::Largest, false);
    assert!(run.placed.iter().all(Option::is_some));
    assert_eq!(run.slots.len(), 6, "one node per anti-affine pod");
    let class = run.pods[0].class;
    assert!(
        run.pods.iter().all(|p| p.class == class),
        "requests are not part of the class"
    );
    let reached = run
        .frontier
        .iter()
        .filter(|((c, _), _)| *c == class)
        .map(|(_, f)| *f)
        .max();
    assert_eq!(
        reached,
        Some(5),
        "the last pod's scan started past the five full slots"
    );
}
