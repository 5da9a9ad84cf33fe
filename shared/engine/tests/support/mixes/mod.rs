//! Workload mixes over the bundled us-east-1 catalog for measuring plan cost against the LP
//! bound: generic pods, a getting-started pool, opposite shapes, arch-pinned pods, zonal
//! spread (alone and with small pods), DaemonSet overhead (on every pool and on one of two),
//! a few large pods among many small ones, limited pools, minValues, two weighted pools, and
//! generic pods at 1,000, 5,000 and 20,000.
//!
//! How the bound stays a lower bound on every valid plan: each LP group holds identical pods
//! with the same set of pools a valid plan may put them in (the highest-weight pool that
//! admits them, and any pool whose claims they could join in flight) and, for zonal spread,
//! the same zone share; a group may use every available offering of those pools that the
//! pool's and its own requirements admit, with the DaemonSet overhead that pool's nodes
//! carry. Single-group mixes also get the exact optimum of that relaxation (a min-cost
//! cover of the pod count by whole nodes), which is tight where the LP is not. Limits and minValues are left out, and pods are packed
//! by the configuration LP (whole pods, fractional nodes) or split freely (divisible LP):
//! each is a relaxation — it drops constraints every valid plan meets — so its optimum can
//! only be lower than the cheapest valid plan.

use std::collections::BTreeMap;
use std::sync::Arc;

use kerf_catalog::settings::NodeClassSettings;
use kerf_catalog::{Catalog, Resources, quantity};
use kerf_engine::model::{
    DaemonSet, LabelSelector, NodePool, Pod, PodSpec, Snapshot, TopologySpread, WhenUnsatisfiable,
};
use kerf_engine::requirements::{Operator, Requirements, SelectorRequirement};

use super::lp::DIMS;

pub mod columns;
pub mod pools;

pub struct Mix {
    pub name: &'static str,
    pub snapshot: Snapshot,
    /// Each LP group: the pools its pods may use, the pods' own requirements, one pod's
    /// request, the pod count.
    pub groups: Vec<(Vec<usize>, Requirements, [f64; DIMS], u32)>,
    /// Whether each DaemonSet runs on each pool's nodes (`[daemonset][pool]`).
    pub daemons_on: Vec<Vec<bool>>,
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
    named_pool("default", reqs)
}

fn named_pool(name: &str, reqs: Vec<SelectorRequirement>) -> NodePool {
    NodePool {
        name: name.into(),
        weight: 0,
        labels: BTreeMap::new(),
        requirements: reqs,
        taints: vec![],
        startup_taints: vec![],
        limits: None,
        node_class: "default".into(),
        catalog: catalog(),
        deleting: false,
        ..Default::default()
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

/// One LP group per pool, distinct node selector, spread zone and request vector. Groups must
/// hold identical pods: a group's fraction on a column carries the group's shape, which is
/// only a relaxation when every pod in the group has that shape. `place` gives each pod's
/// pools (every pool a valid plan may put it in) and zone share, if any.
fn grouped_in(
    snapshot: Snapshot,
    name: &'static str,
    place: impl Fn(usize) -> (Vec<usize>, Option<String>),
) -> Mix {
    type Key = (
        Vec<usize>,
        BTreeMap<String, String>,
        Option<String>,
        Vec<(String, i64)>,
    );
    let mut by: BTreeMap<Key, Vec<&Pod>> = BTreeMap::new();
    for (i, p) in snapshot.pods.iter().enumerate() {
        let shape: Vec<(String, i64)> = p
            .spec
            .requests
            .0
            .iter()
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        let (pool, zone) = place(i);
        by.entry((pool, p.spec.node_selector.clone(), zone, shape))
            .or_default()
            .push(p);
    }
    let mut groups = Vec::new();
    for ((pool, ns, zone, _), pods) in by {
        let r = Requirements::from_labels(&ns);
        let d = request(pods[0]);
        let n = pods.len() as u32;
        match zone.as_deref() {
            None => groups.push((pool, r, d, n)),
            // Identical pods spread with maxSkew 1: every valid plan puts exactly a third in
            // each zone (the count is a multiple of three).
            Some(SPREAD) => {
                assert_eq!(n % 3, 0, "{name}: spread pods split evenly");
                for z in ZONES {
                    groups.push((pool.clone(), in_zone(&r, z), d, n / 3));
                }
            }
            Some(z) => groups.push((pool, in_zone(&r, z), d, n)),
        }
    }
    let daemons_on = snapshot
        .daemon_sets
        .iter()
        .map(|_| vec![true; snapshot.node_pools.len()])
        .collect();
    Mix {
        name,
        snapshot,
        groups,
        daemons_on,
    }
}

/// The zones spread pods are spread over.
const ZONES: [&str; 3] = ["us-east-1a", "us-east-1b", "us-east-1c"];
/// A zone share meaning "an even third in each of [`ZONES`]".
const SPREAD: &str = "*";

fn in_zone(r: &Requirements, z: &str) -> Requirements {
    let mut r = r.clone();
    r.add_all(&Requirements::from_labels(&BTreeMap::from([(
        "topology.kubernetes.io/zone".to_string(),
        z.to_string(),
    )])));
    r
}

/// [`grouped_in`] for single-pool mixes.
fn grouped(
    snapshot: Snapshot,
    name: &'static str,
    zone_of: impl Fn(usize) -> Option<String>,
) -> Mix {
    grouped_in(snapshot, name, |i| (vec![0], zone_of(i)))
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
    mixes.push(zonal_spread("zonal-spread-300", 300, 0));
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
    ds.daemons_on = vec![vec![true]];
    mixes.push(ds);
    let mut big: Vec<Pod> = (0..10).map(|i| pod(i, "16", "64Gi")).collect();
    big.extend((10..150).map(|i| pod(i, "250m", "512Mi")));
    mixes.push(grouped(snap(big, any()), "big-and-small-150", |_| None));
    mixes.push(pools::limited_dozen());
    mixes.push(pools::limited(&mut rng));
    mixes.push(pools::min_values(&mut rng));
    mixes.push(pools::weighted(&mut rng));
    mixes.push(pools::daemonset_on_one_pool(&mut rng));
    mixes.push(zonal_spread("zonal-spread-and-small-450", 300, 150));
    mixes
}

/// `spread` pods spread over three zones with maxSkew 1 (any plan puts a third in each), and
/// `small` generic pods that may go anywhere.
fn zonal_spread(name: &'static str, spread: usize, small: usize) -> Mix {
    let p = pool(vec![
        sel(
            "karpenter.sh/capacity-type",
            Operator::In,
            &["spot", "on-demand"],
        ),
        sel("topology.kubernetes.io/zone", Operator::In, &ZONES),
    ]);
    let mut pods: Vec<Pod> = (0..spread).map(|i| pod(i, "500m", "1Gi")).collect();
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
    let mut rng = Rng(7);
    for mut pd in random_pods(&mut rng, small, spread) {
        pd.labels.insert("app".into(), "small".into());
        pods.push(pd);
    }
    grouped(snap(pods, p), name, |i| {
        (i < spread).then(|| SPREAD.to_string())
    })
}

/// Parses a quantity in tests.
pub fn q(s: &str) -> i64 {
    quantity::parse(s).unwrap()
}
