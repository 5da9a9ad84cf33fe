//! Property tests over random workloads: no node over-committed, every pending pod placed
//! once or reported, NodePool limits never exceeded, output deterministic.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::Arc;

use kerf_catalog::{CapacityType, Catalog, InstanceType, Offering, Overhead, Resources};
use kerf_engine::model::{
    AffinityTerm, LabelSelector, NodePool, Pod, PodSpec, Snapshot, TopologySpread,
    WhenUnsatisfiable,
};
use kerf_engine::{Options, provision};
use proptest::prelude::*;

const ZONES: [&str; 3] = ["z1", "z2", "z3"];

fn res(cpu_m: i64, mem_mi: i64, pods: i64) -> Resources {
    let mut r = Resources::new();
    r.set("cpu", cpu_m);
    r.set("memory", mem_mi * 1024 * 1024 * 1000);
    r.set("pods", pods * 1000);
    r
}

fn catalog() -> Arc<Catalog> {
    let types = (0..8)
        .map(|i| {
            let cpu = 1i64 << (i % 5);
            let mem = cpu * if i < 5 { 4096 } else { 2048 };
            let price = 0.05 * cpu as f64 * if i < 5 { 1.0 } else { 0.85 };
            let name = format!("t{i}.{cpu}x");
            let labels: BTreeMap<String, String> = [
                ("node.kubernetes.io/instance-type".to_string(), name.clone()),
                (
                    "kubernetes.io/arch".to_string(),
                    if i % 3 == 0 { "arm64" } else { "amd64" }.to_string(),
                ),
            ]
            .into();
            let offerings = ZONES
                .iter()
                .flat_map(|z| {
                    [CapacityType::Spot, CapacityType::OnDemand].map(|ct| Offering {
                        zone: z.to_string(),
                        capacity_type: ct,
                        price: if ct == CapacityType::Spot {
                            price * 0.5
                        } else {
                            price
                        },
                        available: !(i == 2 && *z == "z1"),
                        partition: None,
                        reservation: None,
                    })
                })
                .collect();
            InstanceType {
                name,
                labels,
                capacity: res(cpu * 1000, mem, 8 * cpu),
                overhead: Overhead::default(),
                allocatable: res(cpu * 1000 - 100, mem - 256, 8 * cpu),
                ebs_volume_limit: None,
                offerings,
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

/// A pod from (cpu millis, memory MiB, constraint kind, app index).
fn make_pod(i: usize, (cpu, mem, kind, app): (i64, i64, u8, u8)) -> Pod {
    let app = format!("a{app}");
    let mut spec = PodSpec {
        requests: res(cpu, mem, 1),
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
        1 => spec.spread.push(TopologySpread {
            max_skew: 1,
            topology_key: "topology.kubernetes.io/zone".into(),
            when_unsatisfiable: WhenUnsatisfiable::DoNotSchedule,
            selector: selector(&app),
            min_domains: None,
            honor_node_affinity: true,
            honor_node_taints: false,
        }),
        2 => spec.anti_affinity.push(term("kubernetes.io/hostname")),
        3 => spec.affinity.push(term("topology.kubernetes.io/zone")),
        4 => {
            spec.node_selector
                .insert("kubernetes.io/arch".into(), "arm64".into());
        }
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

fn snapshot(pods: Vec<(i64, i64, u8, u8)>, cpu_limit: Option<i64>) -> Snapshot {
    let pool = NodePool {
        name: "default".into(),
        weight: 0,
        labels: BTreeMap::new(),
        requirements: vec![],
        taints: vec![],
        startup_taints: vec![],
        limits: cpu_limit.map(|c| {
            let mut r = Resources::new();
            r.set("cpu", c * 1000);
            r
        }),
        node_class: "default".into(),
        catalog: catalog(),
        deleting: false,
        ..Default::default()
    };
    Snapshot {
        pods: pods
            .into_iter()
            .enumerate()
            .map(|(i, p)| make_pod(i, p))
            .collect(),
        node_pools: vec![pool],
        ..Default::default()
    }
}

fn pod_strategy() -> impl Strategy<Value = (i64, i64, u8, u8)> {
    (
        prop::sample::select(vec![100i64, 250, 500, 1000, 1500, 3000, 9000]),
        prop::sample::select(vec![128i64, 512, 1024, 4096, 20000]),
        0u8..5,
        0u8..3,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn every_pod_is_placed_once_or_reported(pods in prop::collection::vec(pod_strategy(), 1..60)) {
        let n = pods.len();
        let plan = provision(&snapshot(pods, None), &Options::default());
        let mut seen: Vec<&String> = plan.launches.iter().flat_map(|l| &l.pods).collect();
        seen.extend(plan.nominations.iter().map(|x| &x.pod));
        seen.extend(plan.unschedulable.iter().map(|x| &x.pod));
        let total = seen.len();
        seen.sort();
        seen.dedup();
        prop_assert_eq!(total, seen.len());
        prop_assert_eq!(total, n);
        prop_assert_eq!(plan.summary.pending_pods, n);
    }

    #[test]
    fn no_node_is_over_committed(pods in prop::collection::vec(pod_strategy(), 1..60)) {
        let snap = snapshot(pods, None);
        let plan = provision(&snap, &Options::default());
        let cat = catalog();
        for l in &plan.launches {
            let it = cat.instance_types.iter().find(|t| t.name == l.instance_type).unwrap();
            let mut used = Resources::new();
            for key in &l.pods {
                let p = snap.pods.iter().find(|p| &p.key() == key).unwrap();
                used.add(&p.spec.requests);
            }
            prop_assert!(it.allocatable.fits(&used), "{} over-committed: {:?} > {:?}", l.node_claim, used, it.allocatable);
            for o in &l.instance_type_options {
                let t = cat.instance_types.iter().find(|t| &t.name == o).unwrap();
                prop_assert!(t.allocatable.fits(&used), "option {} cannot host {}", o, l.node_claim);
            }
            let off = it.offerings.iter().find(|x| x.zone == l.zone && x.capacity_type == l.capacity_type).unwrap();
            prop_assert!(off.available, "unavailable offering chosen");
        }
    }

    #[test]
    fn limits_are_never_exceeded(pods in prop::collection::vec(pod_strategy(), 1..60), limit in 1i64..40) {
        let plan = provision(&snapshot(pods, Some(limit)), &Options::default());
        let cat = catalog();
        let cpu_of = |name: &str| {
            cat.instance_types.iter().find(|t| t.name == name).unwrap().capacity.get("cpu")
        };
        // CreateFleet may launch any option: each claim is charged its largest one, as
        // Karpenter charges the remaining limits, and every option must fit what is left.
        let mut left = limit * 1000;
        for l in &plan.launches {
            prop_assert!(!l.instance_type_options.is_empty());
            for o in &l.instance_type_options {
                prop_assert!(cpu_of(o) <= left, "{}: option {o} exceeds the {left}m cpu left", l.node_claim);
            }
            left -= l.instance_type_options.iter().map(|o| cpu_of(o)).max().unwrap();
        }
        prop_assert!(left >= 0, "launched over a limit of {limit}");
    }

    #[test]
    fn output_is_deterministic(pods in prop::collection::vec(pod_strategy(), 1..40)) {
        let a = serde_json::to_string(&provision(&snapshot(pods.clone(), None), &Options::default())).unwrap();
        let b = serde_json::to_string(&provision(&snapshot(pods, None), &Options::default())).unwrap();
        prop_assert_eq!(a, b);
    }
}
