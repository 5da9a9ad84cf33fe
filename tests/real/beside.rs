//! The real Karpenter (its KWOK provider, built by `scripts/karpenter.sh build`) on a control
//! plane of its own, driven by a scenario as `kerf sim --compare karpenter-real` drives it:
//! the EC2NodeClass is played by a KWOKNodeClass, the NodePools' requirements on Kerf's
//! instance labels select from the instance-types file generated from Kerf's catalog, and the
//! run is measured (pod start, CPU and memory of Karpenter's process).

use std::path::Path;

use jiff::SignedDuration;
use jiff::Timestamp;
use kerf_e2e::real::cluster::ControlPlane;
use kerf_e2e::world::repo;
use kerf_sim::karpenter::{KarpenterCluster, Launch};
use kerf_sim::scenario::{Observation, Progress, RunOn, Scenario, TimelineEvent, run_on};

struct Quiet;

impl Progress for Quiet {
    fn step(&mut self, _: usize, _: usize, _: &str, _: Timestamp) {}
    fn tick(&mut self, _: &[TimelineEvent], _: &Observation) {}
}

#[tokio::test(flavor = "current_thread")]
async fn the_real_karpenter_runs_a_scenario_on_kerfs_catalog() {
    let dir = repo().join("target/karpenter");
    assert!(
        dir.join("bin/karpenter").exists(),
        "run scripts/karpenter.sh build first"
    );
    let cp = ControlPlane::for_karpenter("karpenter").await;
    let scenario = Scenario::load(&repo().join("examples/tainted-nodepool.yaml")).unwrap();
    let launch = Launch {
        bin: dir.join("bin/karpenter"),
        kubeconfig: cp.admin_kubeconfig(),
        dir: cp.run_dir.join("karpenter"),
        feature_gates: String::new(),
    };
    let boot = SignedDuration::from_secs(20);
    let cluster = KarpenterCluster::start(launch, &dir.join("crds"), "us-west-2", boot)
        .await
        .unwrap();
    let log = cluster.log();
    let how = RunOn {
        tolerate: true,
        settle: true,
    };
    let o = run_on(&scenario, cluster, how, &mut Quiet).await.unwrap();
    let log = std::fs::read_to_string(Path::new(&log)).unwrap_or_default();
    // The scenario's own assertions held on Karpenter's side: 9 pods running, the tolerating
    // ones on the tainted pool's node (c or m, as its requirement on Kerf's label asks).
    assert!(o.failures.is_empty(), "{:?}\n{log}", o.failures);
    assert!(o.last.running >= 9, "{:?}", o.last);
    let tainted: Vec<_> = o
        .last
        .claims
        .iter()
        .filter(|c| c.node_pool == "test-network")
        .collect();
    assert!(!tainted.is_empty(), "{:?}", o.last.claims);
    for c in &tainted {
        assert!(
            c.instance_type.starts_with('c') || c.instance_type.starts_with('m'),
            "{c:?}"
        );
        assert!(c.price > 0.0, "priced from Kerf's catalog: {c:?}");
        assert!(c.instance_id.starts_with("kwok://"), "{c:?}");
    }
    // Nodes register as long after launch as the run asked.
    assert_eq!(o.measures.pod_start.len(), o.last.placed);
    let slowest = o.measures.pod_start.iter().copied().fold(0.0, f64::max);
    assert!(slowest >= 20.0, "{:?}", o.measures.pod_start);
    let usage = o.measures.usage.expect("Karpenter's process measured");
    assert!(
        usage.cpu_seconds > 0.0 && usage.peak_rss > 10 << 20,
        "{usage:?}"
    );
    assert!(o.cost > 0.0);
}
