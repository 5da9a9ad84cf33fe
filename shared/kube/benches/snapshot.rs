//! Snapshot read of 5,000 nodes and 50,000 pods from the in-process API server, through
//! the real kube::Client (pages of 500, seven collections listed concurrently).

use criterion::{Criterion, criterion_group, criterion_main};
use kerf_kube::Cluster;
use kerf_sim::Sim;
use serde_json::json;
use std::time::Duration;

const NODES: usize = 5_000;

/// Benchmarks have no `?`: fail loudly with context instead.
fn must<T, E: std::fmt::Debug>(r: Result<T, E>, what: &str) -> T {
    match r {
        Ok(v) => v,
        Err(e) => panic!("{what}: {e:?}"),
    }
}
const PODS: usize = 50_000;

fn seed(sim: &Sim) {
    for n in 0..NODES {
        must(sim.seed(json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": format!("ip-10-0-{n}"),
            "labels": {"karpenter.sh/nodepool": "default", "node.kubernetes.io/instance-type": "m5.large",
                "topology.kubernetes.io/zone": "us-east-1a", "karpenter.sh/capacity-type": "spot"}},
            "spec": {"providerID": format!("aws:///us-east-1a/i-{n:017x}")},
            "status": {"capacity": {"cpu": "2", "memory": "8Gi", "pods": "29"},
                "allocatable": {"cpu": "1930m", "memory": "7Gi", "pods": "29"},
                "conditions": [{"type": "Ready", "status": "True"}]}})), "seed node");
    }
    for p in 0..PODS {
        must(sim.seed(json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": format!("web-{p}"),
            "namespace": format!("ns-{}", p % 50), "labels": {"app": "web", "pod-template-hash": "abc123"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-abc123",
                "uid": "7d9a3c0e-0000-4000-8000-000000000000", "controller": true}]},
            "spec": {"nodeName": format!("ip-10-0-{}", p % NODES), "containers": [{"name": "web",
                "image": "nginx:1.27", "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}})), "seed pod");
    }
}

fn snapshot(c: &mut Criterion) {
    let rt = must(
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build(),
        "runtime",
    );
    let sim = must(rt.block_on(Sim::start()), "sim");
    seed(&sim);
    let client = kerf_kube::KubeCluster::new(must(sim.client(), "client"), "kerf");
    let mut group = c.benchmark_group("snapshot");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(30));
    group.bench_function("5000_nodes_50000_pods", |b| {
        b.iter(|| {
            let s = must(rt.block_on(client.snapshot()), "snapshot");
            assert_eq!((s.nodes.len(), s.pods.len()), (NODES, PODS));
        })
    });
    group.finish();
}

criterion_group!(benches, snapshot);
criterion_main!(benches);
