//! Decision latency: from an SQS batch handed to the provisioner handler to its first
//! CreateFleet call, with 1, 100 and 1,000 provisionable pods in the in-process API server
//! (the getting-started NodePool; pods of 250m CPU). Each sample starts from a fresh
//! cluster. Printed beside criterion's estimate: the median time to the last CreateFleet
//! call and to the end of the invocation, and the number of NodeClaims.

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use kerf_sim::world::{World, WorldOptions};
use serde_json::json;

fn must<T, E: std::fmt::Debug>(r: Result<T, E>, what: &str) -> T {
    match r {
        Ok(v) => v,
        Err(e) => panic!("{what}: {e:?}"),
    }
}

fn read(rel: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel);
    must(std::fs::read_to_string(&path), rel)
}

async fn cluster(pods: usize) -> World {
    let w = must(World::start(WorldOptions::default()).await, "world");
    must(
        w.apply(&read("examples/getting-started/nodepool.yaml"))
            .await,
        "nodepool",
    );
    for i in 0..pods {
        let pod = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("inflate-{i:05}"), "namespace": "default", "labels": {"app": "inflate"},
                "uid": format!("00000000-0000-4000-8000-{i:012}")},
            "spec": {"containers": [{"name": "inflate", "image": "public.ecr.aws/eks-distro/kubernetes/pause:3.7",
                "resources": {"requests": {"cpu": "250m"}}}]},
            "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]}});
        must(must(w.sim(), "in-process server").seed(pod), "seed pod");
    }
    w
}

fn event() -> kerf_control::handlers::events::Invocation {
    must(
        serde_json::from_str(&read("events/sqs-provisioning-batch.json")),
        "fixture",
    )
}

struct Sample {
    first: Duration,
    last: Duration,
    total: Duration,
    claims: usize,
}

fn sample(rt: &tokio::runtime::Runtime, pods: usize) -> Sample {
    let w = rt.block_on(cluster(pods));
    let ev = event();
    let start = Instant::now();
    rt.block_on(kerf_control::handlers::provisioner::handle(
        &w.provisioner,
        &w.queue,
        "bench",
        &ev,
    ));
    let total = start.elapsed();
    let calls = w.cloud.fleet_calls();
    let at = |i: usize| {
        calls
            .get(i)
            .map(|c| c.at.duration_since(start))
            .unwrap_or(total)
    };
    Sample {
        first: at(0),
        last: at(calls.len().saturating_sub(1)),
        total,
        claims: calls.len(),
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn decision(c: &mut Criterion) {
    let rt = must(
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build(),
        "runtime",
    );
    let mut group = c.benchmark_group("sqs-batch-to-first-createfleet");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(10));
    for pods in [1usize, 100, 1_000] {
        let mut seen = Vec::new();
        group.bench_function(format!("{pods}-pods"), |b| {
            b.iter_custom(|iters| {
                let mut t = Duration::ZERO;
                for _ in 0..iters {
                    let s = sample(&rt, pods);
                    t += s.first;
                    seen.push(s);
                }
                t
            })
        });
        let claims = seen.last().map(|s| s.claims).unwrap_or(0);
        eprintln!(
            "{pods} pods: {claims} nodeclaims; median to first CreateFleet {:?}, to last {:?}, whole invocation {:?} ({} samples)",
            median(seen.iter().map(|s| s.first).collect()),
            median(seen.iter().map(|s| s.last).collect()),
            median(seen.iter().map(|s| s.total).collect()),
            seen.len()
        );
    }
    group.finish();
}

criterion_group!(benches, decision);
criterion_main!(benches);
