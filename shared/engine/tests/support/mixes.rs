//! Workload mixes over the bundled us-east-1 catalog for measuring plan cost against the LP
//! bound: generic pods, a getting-started pool, opposite shapes, arch-pinned pods, zonal
//! spread, DaemonSet overhead, and a few large pods among many small ones.

use std::collections::BTreeMap;
use std::sync::Arc;

use kerf_catalog::settings::NodeClassSettings;
use kerf_catalog::{Catalog, Resources, quantity};
use kerf_engine::model::{
    DaemonSet, LabelSelector, NodePool, Pod, PodSpec, Snapshot, TopologySpread, WhenUnsatisfiable,
};
use kerf_engine::requirements::{Operator, Requirements, SelectorRequirement};

use super::lp::{Column, DIMS, Group};

pub struct Mix {
    pub name: &'static str,
    pub snapshot: Snapshot,
    /// Requirements of each LP group (pool ∩ pod), one pod's request, and the pod count.
    pub groups: Vec<(Requirements, [f64; DIMS], u32)>,
}

struct Rng(u64);

impl Rng {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as usize
    }
}

fn catalog() -> Arc<Catalog> {
    Arc::new(kerf_catalog::bundled::bundled("us-east-1", &NodeClassSettings::default()).unwrap())
}

fn sel(key: &str, op: Operator, values: &[&str]) -> SelectorRequirement {
    SelectorRequirement {
        key: key.into(),
        operator: op,
        values: values.iter().map(|s| s.to_string()).collect(),
        min_values: None,
    }
}

fn pool(reqs: Vec<SelectorRequirement>) -> NodePool {
    NodePool {
        name: "default".into(),
        weight: 0,
        labels: BTreeMap::new(),
        requirements: reqs,
        taints: vec![],
        startup_taints: vec![],
        limits: None,
        node_class: "default".into(),
        catalog: catalog(),
        deleting: false,
    }
}

fn requests(cpu: &str, mem: &str) -> Resources {
    let mut r = Resources::parse([("cpu", cpu), ("memory", mem)]).unwrap();
    r.set("pods", 1000);
    r
}

fn pod(i: usize, cpu: &str, mem: &str) -> Pod {
    Pod {
        namespace: "default".into(),
        name: format!("p{i:04}"),
        uid: format!("u{i:04}"),
        labels: [("app".to_string(), "mix".to_string())].into(),
        phase: "Pending".into(),
        spec: PodSpec {
            requests: requests(cpu, mem),
            ..Default::default()
        },
        ..Default::default()
    }
}

const CPUS: [&str; 5] = ["100m", "250m", "500m", "1", "1500m"];
const MEMS: [&str; 6] = ["100Mi", "256Mi", "512Mi", "1Gi", "2Gi", "4Gi"];

/// Milli-units per LP unit: cores, GiB, pods (keeps the LP well scaled).
const SCALE: [f64; DIMS] = [1000.0, 1000.0 * 1073741824.0, 1000.0];
const KEYS: [&str; DIMS] = ["cpu", "memory", "pods"];

fn request(p: &Pod) -> [f64; DIMS] {
    let mut d = [0.0; DIMS];
    for (i, k) in KEYS.iter().enumerate() {
        d[i] = p.spec.requests.get(k) as f64 / SCALE[i];
    }
    d
}

fn pool_reqs(p: &NodePool) -> Requirements {
    let mut r = Requirements::from_selectors(&p.requirements).unwrap();
    r.add_all(&Requirements::from_labels(&p.labels));
    r
}

/// One LP group per distinct node selector, spread zone and request vector. Groups must hold
/// identical pods: a group's fraction on a column carries the group's shape, which is only a
/// relaxation when every pod in the group has that shape.
fn grouped(
    snapshot: Snapshot,
    name: &'static str,
    zone_of: impl Fn(usize) -> Option<String>,
) -> Mix {
    let base = pool_reqs(&snapshot.node_pools[0]);
    type Key = (BTreeMap<String, String>, Option<String>, Vec<(String, i64)>);
    let mut by: BTreeMap<Key, Vec<&Pod>> = BTreeMap::new();
    for (i, p) in snapshot.pods.iter().enumerate() {
        let shape: Vec<(String, i64)> = p
            .spec
            .requests
            .0
            .iter()
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        by.entry((p.spec.node_selector.clone(), zone_of(i), shape))
            .or_default()
            .push(p);
    }
    let groups = by
        .into_iter()
        .map(|((ns, zone, _), pods)| {
            let mut r = base.clone();
            r.add_all(&Requirements::from_labels(&ns));
            if let Some(z) = zone {
                r.add_all(&Requirements::from_labels(&BTreeMap::from([(
                    "topology.kubernetes.io/zone".to_string(),
                    z,
                )])));
            }
            (r, request(pods[0]), pods.len() as u32)
        })
        .collect();
    Mix {
        name,
        snapshot,
        groups,
    }
}

fn random_pods(rng: &mut Rng, n: usize, from: usize) -> Vec<Pod> {
    (0..n)
        .map(|i| pod(from + i, CPUS[rng.next(5)], MEMS[rng.next(6)]))
        .collect()
}

fn snap(pods: Vec<Pod>, pool: NodePool) -> Snapshot {
    Snapshot {
        pods,
        node_pools: vec![pool],
        ..Default::default()
    }
}

pub fn all() -> Vec<Mix> {
    let mut rng = Rng(42);
    let any = || {
        pool(vec![sel(
            "karpenter.sh/capacity-type",
            Operator::In,
            &["spot", "on-demand"],
        )])
    };
    let getting_started = pool(vec![
        sel("kubernetes.io/arch", Operator::In, &["amd64"]),
        sel("karpenter.sh/capacity-type", Operator::In, &["on-demand"]),
        sel(
            "karpenter.k8s.aws/instance-category",
            Operator::In,
            &["c", "m", "r"],
        ),
        sel(
            "karpenter.k8s.aws/instance-generation",
            Operator::Gt,
            &["2"],
        ),
    ]);
    let mut mixes = vec![
        grouped(
            snap(random_pods(&mut rng, 150, 0), any()),
            "generic-150",
            |_| None,
        ),
        grouped(
            snap(
                (0..200).map(|i| pod(i, "1", "256Mi")).collect(),
                getting_started,
            ),
            "getting-started-200",
            |_| None,
        ),
    ];
    let shapes: Vec<Pod> = (0..240)
        .map(|i| {
            if i % 2 == 0 {
                pod(i, "500m", "4Gi")
            } else {
                pod(i, "2", "1Gi")
            }
        })
        .collect();
    mixes.push(grouped(snap(shapes, any()), "opposite-shapes-240", |_| {
        None
    }));
    let mut arch = random_pods(&mut rng, 150, 0);
    for p in arch.iter_mut().take(50) {
        p.spec
            .node_selector
            .insert("kubernetes.io/arch".into(), "arm64".into());
    }
    mixes.push(grouped(snap(arch, any()), "arm-pinned-150", |_| None));
    mixes.push(zonal_spread());
    let mut ds = grouped(
        snap(random_pods(&mut rng, 200, 0), any()),
        "daemonset-200",
        |_| None,
    );
    ds.snapshot.daemon_sets.push(DaemonSet {
        namespace: "kube-system".into(),
        name: "agent".into(),
        pod: PodSpec {
            requests: requests("200m", "256Mi"),
            ..Default::default()
        },
    });
    mixes.push(ds);
    let mut big: Vec<Pod> = (0..10).map(|i| pod(i, "16", "64Gi")).collect();
    big.extend((10..150).map(|i| pod(i, "250m", "512Mi")));
    mixes.push(grouped(snap(big, any()), "big-and-small-150", |_| None));
    mixes
}

/// 300 pods spread over three zones with maxSkew 1: any plan puts 100 in each zone.
fn zonal_spread() -> Mix {
    let zones = ["us-east-1a", "us-east-1b", "us-east-1c"];
    let p = pool(vec![
        sel(
            "karpenter.sh/capacity-type",
            Operator::In,
            &["spot", "on-demand"],
        ),
        sel("topology.kubernetes.io/zone", Operator::In, &zones),
    ]);
    // Identical pods, so each zone's share of the demand is exactly a third.
    let mut pods: Vec<Pod> = (0..300).map(|i| pod(i, "500m", "1Gi")).collect();
    for pd in &mut pods {
        pd.spec.spread.push(TopologySpread {
            max_skew: 1,
            topology_key: "topology.kubernetes.io/zone".into(),
            when_unsatisfiable: WhenUnsatisfiable::DoNotSchedule,
            selector: LabelSelector {
                match_labels: [("app".to_string(), "mix".to_string())].into(),
                ..Default::default()
            },
            min_domains: None,
            honor_node_affinity: true,
            honor_node_taints: false,
        });
    }
    // Which pods land in which zone depends on the plan; the bound only needs each zone's
    // share, so split the demand evenly (every zone holds exactly 100 pods).
    let mut mix = grouped(snap(pods, p), "zonal-spread-300", |_| None);
    let (base, d, n) = mix.groups.remove(0);
    for z in zones {
        let mut r = base.clone();
        r.add_all(&Requirements::from_labels(&BTreeMap::from([(
            "topology.kubernetes.io/zone".to_string(),
            z.to_string(),
        )])));
        mix.groups.push((r, d, n / 3));
    }
    mix
}

/// LP groups and columns for a mix.
pub fn lp_inputs(m: &Mix) -> (Vec<Group>, Vec<Column>) {
    let pool = &m.snapshot.node_pools[0];
    let ds: Resources = m
        .snapshot
        .daemon_sets
        .iter()
        .fold(Resources::new(), |mut a, d| {
            a.add(&d.pod.requests);
            a
        });
    let mut columns = Vec::new();
    for it in &pool.catalog.instance_types {
        let label = |k: &str| {
            it.labels
                .get(k)
                .cloned()
                .or_else(|| (k == "topology.kubernetes.io/region").then(|| "us-east-1".into()))
        };
        let mut usable = [0.0; DIMS];
        for (i, k) in KEYS.iter().enumerate() {
            usable[i] = (it.allocatable.get(k) - ds.get(k)) as f64 / SCALE[i];
        }
        for o in it.offerings.iter().filter(|o| o.available) {
            let mut groups = 0u64;
            for (g, (r, _, _)) in m.groups.iter().enumerate() {
                let ok = r.iter().all(|(k, req)| match k.as_str() {
                    "topology.kubernetes.io/zone" => req.has(&o.zone),
                    "karpenter.sh/capacity-type" => req.has(o.capacity_type.as_str()),
                    _ => label(k).map_or(req.allows_absent(), |v| req.has(&v)),
                });
                if ok {
                    groups |= 1 << g;
                }
            }
            if groups != 0 {
                columns.push(Column {
                    price: o.price,
                    usable,
                    groups,
                });
            }
        }
    }
    let groups = m
        .groups
        .iter()
        .map(|(_, d, n)| Group { req: *d, count: *n })
        .collect();
    (groups, columns)
}

/// Parses a quantity in tests.
pub fn q(s: &str) -> i64 {
    quantity::parse(s).unwrap()
}
