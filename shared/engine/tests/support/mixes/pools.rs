//! Mixes about NodePools: limits, minValues, weights, DaemonSets on one of two pools, and
//! generic pods at scale.

use kerf_catalog::Resources;
use kerf_engine::model::{DaemonSet, Effect, PodSpec, Snapshot, Taint, Toleration};
use kerf_engine::requirements::Operator;

use super::{
    Mix, Rng, grouped, grouped_in, named_pool, pod, pool, random_pods, requests, sel, snap,
};

/// Generic pods at scale (1,000, 5,000 or 20,000).
pub fn at_scale(name: &'static str, n: usize) -> Mix {
    let mut rng = Rng(n as u64);
    let any = pool(vec![sel(
        "karpenter.sh/capacity-type",
        Operator::In,
        &["spot", "on-demand"],
    )]);
    grouped(snap(random_pods(&mut rng, n, 0), any), name, |_| None)
}

fn limits(cpu: &str, memory: &str) -> Option<Resources> {
    Some(Resources::parse([("cpu", cpu), ("memory", memory)]).unwrap())
}

/// The getting-started NodePool with its limits and a dozen identical pods.
pub(super) fn limited_dozen() -> Mix {
    let mut p = pool(vec![
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
    p.limits = limits("1000", "1000Gi");
    let pods = (0..12).map(|i| pod(i, "1", "1536Mi")).collect();
    grouped(snap(pods, p), "limited-dozen-12", |_| None)
}

/// Random pods under limits of about twice what they request.
pub(super) fn limited(rng: &mut Rng) -> Mix {
    let mut p = pool(vec![sel(
        "karpenter.sh/capacity-type",
        Operator::In,
        &["spot", "on-demand"],
    )]);
    p.limits = limits("400", "1600Gi");
    grouped(snap(random_pods(rng, 300, 0), p), "limited-300", |_| None)
}

/// Every claim must offer at least five instance families.
pub(super) fn min_values(rng: &mut Rng) -> Mix {
    let mut family = sel("karpenter.k8s.aws/instance-family", Operator::Exists, &[]);
    family.min_values = Some(5);
    let p = pool(vec![
        sel(
            "karpenter.sh/capacity-type",
            Operator::In,
            &["spot", "on-demand"],
        ),
        family,
    ]);
    grouped(snap(random_pods(rng, 200, 0), p), "min-values-200", |_| {
        None
    })
}

/// A heavier spot arm64 pool takes every pod it can host; amd64-pinned pods fall back to
/// the default pool.
pub(super) fn weighted(rng: &mut Rng) -> Mix {
    let mut arm = named_pool(
        "spot-arm",
        vec![
            sel("kubernetes.io/arch", Operator::In, &["arm64"]),
            sel("karpenter.sh/capacity-type", Operator::In, &["spot"]),
        ],
    );
    arm.weight = 50;
    let default = pool(vec![sel(
        "karpenter.sh/capacity-type",
        Operator::In,
        &["spot", "on-demand"],
    )]);
    let mut pods = random_pods(rng, 200, 0);
    for p in pods.iter_mut().take(60) {
        p.spec
            .node_selector
            .insert("kubernetes.io/arch".into(), "amd64".into());
    }
    let snapshot = Snapshot {
        pods,
        node_pools: vec![arm, default],
        ..Default::default()
    };
    // In-flight claims are tried before new ones, so an unpinned pod may also land on a
    // default-pool claim opened for a pinned one: unpinned pods may use either pool.
    grouped_in(snapshot, "weighted-pools-200", |i| {
        (if i < 60 { vec![1] } else { vec![0, 1] }, None)
    })
}

/// A DaemonSet that does not tolerate the dedicated pool's taint runs on the default pool
/// only; pods tolerating the taint go to the (heavier) dedicated pool.
pub(super) fn daemonset_on_one_pool(rng: &mut Rng) -> Mix {
    let mut dedicated = named_pool(
        "dedicated",
        vec![sel(
            "karpenter.sh/capacity-type",
            Operator::In,
            &["spot", "on-demand"],
        )],
    );
    dedicated.weight = 10;
    dedicated.taints = vec![Taint {
        key: "dedicated".into(),
        value: "batch".into(),
        effect: Effect::NoSchedule,
    }];
    let default = pool(vec![sel(
        "karpenter.sh/capacity-type",
        Operator::In,
        &["spot", "on-demand"],
    )]);
    let mut pods = random_pods(rng, 400, 0);
    for p in pods.iter_mut().take(200) {
        p.spec.tolerations.push(Toleration {
            key: "dedicated".into(),
            exists: true,
            value: String::new(),
            effect: None,
        });
    }
    let snapshot = Snapshot {
        pods,
        node_pools: vec![dedicated, default],
        daemon_sets: vec![DaemonSet {
            namespace: "kube-system".into(),
            name: "agent".into(),
            pod: PodSpec {
                requests: requests("200m", "256Mi"),
                ..Default::default()
            },
        }],
        ..Default::default()
    };
    // Tolerating pods may also land on in-flight default-pool claims.
    let mut mix = grouped_in(snapshot, "daemonset-one-pool-400", |i| {
        (if i < 200 { vec![0, 1] } else { vec![1] }, None)
    });
    mix.daemons_on = vec![vec![false, true]];
    mix
}

/// `classes` pod classes in one free group: pod `i` requires fewer than `200 + i % classes`
/// vCPUs (two pods per class), so no two classes have the same requirements while every
/// class admits the small types.
pub fn many_classes(classes: usize) -> Mix {
    let mut rng = Rng(3);
    let mut pods = random_pods(&mut rng, 2 * classes, 0);
    for (i, p) in pods.iter_mut().enumerate() {
        p.spec.required_terms = vec![vec![sel(
            "karpenter.k8s.aws/instance-cpu",
            Operator::Lt,
            &[&(200 + i % classes).to_string()],
        )]];
    }
    let any = pool(vec![sel(
        "karpenter.sh/capacity-type",
        Operator::In,
        &["spot", "on-demand"],
    )]);
    grouped(snap(pods, any), "many-classes", |_| None)
}
