//! How long Kerf waits, in simulated time, from the moment a node becomes disruptable to the
//! moment its command starts, per reason; the time per command of a one-node-at-a-time
//! scale-down; and a capacity error's relaunch on another offering. Each case runs with
//! several `consolidateAfter` values (or AMI release and expiry moments) and the median,
//! minimum and maximum are printed.
//!
//! ```sh
//! cargo run -p kerf-e2e --example timers
//! ```
//!
//! - empty / underutilized: from `consolidateAfter` running out after the scale-down (the pod
//!   event) to `disrupting nodeclaim(s) via …`;
//! - drifted: from the `Drifted` condition to the command;
//! - expired: from `creationTimestamp + expireAfter` to the command;
//! - serialized: between consecutive commands of 8 empty nodes under a budget of one node;
//! - capacity error: simulated seconds from the failed launch to the launch on another offering;
//! - what the timers cost: timer messages sent and disruption invocations by timers over an
//!   hour in which 500 one-vCPU pods scale in to 50, then over an idle hour; and at 1,000
//!   nodes (`-- 1000`: one pod per node), an idle hour and an hour in which the Deployment
//!   goes from 1,000 to 900 replicas and back every ten minutes, with the provisioning
//!   queue's messages and invocations beside the timer queue's.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a measurement program: a failure is a panic

use jiff::{SignedDuration, Timestamp};
use kerf_catalog::CapacityType;
use kerf_e2e::world::{all_running, claims, getting_started_with, inflate, read};
use kerf_sim::world::cloud::NoCapacity;
use kerf_sim::world::{World, WorldOptions};

fn options() -> WorldOptions {
    WorldOptions {
        skip_idle: true,
        ..WorldOptions::default()
    }
}

/// The getting-started NodePool with another `consolidateAfter`, budget and expiry.
fn pool(consolidate_after: &str, budget: Option<&str>, expire_after: &str) -> String {
    let mut p = read("examples/getting-started/nodepool.yaml")
        .replace(
            "consolidateAfter: 1m",
            &format!("consolidateAfter: {consolidate_after}"),
        )
        .replace("expireAfter: 720h", &format!("expireAfter: {expire_after}"));
    if let Some(b) = budget {
        p = p.replace(
            &format!("    consolidateAfter: {consolidate_after}"),
            &format!(
                "    consolidateAfter: {consolidate_after}\n    budgets: [{{nodes: \"{b}\"}}]"
            ),
        );
    }
    p
}

/// Moments of log lines starting with `message`.
fn moments(w: &World, message: &str) -> Vec<Timestamp> {
    kerf_e2e::world::logged_at(w, message)
}

async fn world(pool_yaml: &str, replicas: u32) -> World {
    let mut w = getting_started_with(options()).await.unwrap();
    w.apply(pool_yaml).await.unwrap();
    w.apply(&inflate(replicas)).await.unwrap();
    let ok = w
        .run_until(SignedDuration::from_mins(5), |c| {
            all_running(c, replicas as usize)
        })
        .await
        .unwrap();
    assert!(ok, "{replicas} pods never ran");
    w.run_for(SignedDuration::from_mins(2)).await.unwrap();
    w
}

/// Scale-down to `to` replicas; seconds from `consolidateAfter` running out to the command.
async fn consolidation(after_s: i64, to: u32, action: &str) -> f64 {
    let mut w = world(&pool(&format!("{after_s}s"), None, "720h"), 5).await;
    let scaled = w.now();
    w.apply(&inflate(to)).await.unwrap();
    let wait = SignedDuration::from_secs(after_s) + SignedDuration::from_mins(3);
    w.run_for(wait).await.unwrap();
    let started = moments(&w, &format!("disrupting nodeclaim(s) via {action}"));
    let due = scaled + SignedDuration::from_secs(after_s);
    started[0].duration_since(due).as_secs_f64()
}

async fn drift(wait_s: i64) -> f64 {
    let mut w = world(&pool("1m", None, "720h"), 5).await;
    w.run_for(SignedDuration::from_secs(wait_s)).await.unwrap();
    w.cloud.release_ami("ami-0a5e00000000000b2");
    w.run_for(SignedDuration::from_mins(3)).await.unwrap();
    let drifted = moments(&w, "marked nodeclaim as drifted");
    let started = moments(&w, "disrupting nodeclaim(s) via");
    started[0].duration_since(drifted[0]).as_secs_f64()
}

async fn expiry(minutes: i64) -> f64 {
    let mut w = world(&pool("Never", None, &format!("{minutes}m")), 5).await;
    let created = claims(&w.client).await[0]
        .metadata
        .creation_timestamp
        .clone()
        .unwrap()
        .0;
    w.run_for(SignedDuration::from_mins(minutes)).await.unwrap();
    let started = moments(&w, "disrupting nodeclaim(s) via delete");
    let due = created + SignedDuration::from_mins(minutes);
    started[0].duration_since(due).as_secs_f64()
}

/// Seconds between consecutive commands of 8 empty nodes removed one at a time.
async fn serialized() -> Vec<f64> {
    let big = read("examples/getting-started/inflate.yaml").replace("cpu: 1", "cpu: 7");
    let mut w = getting_started_with(options()).await.unwrap();
    // One 8-vCPU type: each 7-vCPU pod gets a node of its own.
    let one_type = pool("0s", Some("1"), "720h").replace(
        "      requirements:\n",
        "      requirements:\n        - key: node.kubernetes.io/instance-type\n          operator: In\n          values: [\"c6a.2xlarge\"]\n",
    );
    w.apply(&one_type).await.unwrap();
    w.apply(&big.replace("replicas: 5", "replicas: 8"))
        .await
        .unwrap();
    let ok = w
        .run_until(SignedDuration::from_mins(5), |c| all_running(c, 8))
        .await
        .unwrap();
    assert!(ok, "8 big pods never ran");
    w.apply(&big.replace("replicas: 5", "replicas: 0"))
        .await
        .unwrap();
    w.run_for(SignedDuration::from_mins(10)).await.unwrap();
    let started = moments(&w, "disrupting nodeclaim(s) via delete");
    assert_eq!(started.len(), 8, "one command per node: {started:?}");
    started
        .windows(2)
        .map(|p| p[1].duration_since(p[0]).as_secs_f64())
        .collect()
}

/// Seconds from a launch failing for capacity to the launch on another offering.
async fn capacity_error() -> f64 {
    let mut w = getting_started_with(options()).await.unwrap();
    let spot = read("examples/getting-started/nodepool.yaml").replace(
        "values: [\"on-demand\"]",
        "values: [\"spot\", \"on-demand\"]",
    );
    w.apply(&spot).await.unwrap();
    w.cloud.remove_capacity(NoCapacity {
        capacity_type: Some(CapacityType::Spot),
        ..NoCapacity::default()
    });
    w.apply(&inflate(5)).await.unwrap();
    w.run_until(SignedDuration::from_mins(3), |c| all_running(c, 5))
        .await
        .unwrap();
    let failed = moments(&w, "failed launching nodeclaim");
    let launched = moments(&w, "launched nodeclaim");
    launched[0].duration_since(failed[0]).as_secs_f64()
}

/// Timer messages sent, disruption invocations by timers, provisioning-queue messages
/// (hints and provisioner timers) and provisioner invocations, so far.
fn counts(w: &World) -> [u64; 4] {
    [
        w.timer_queue.sent(),
        w.timer_invocations as u64,
        w.queue.sent(),
        w.provisioner_invocations as u64,
    ]
}

/// How much [`counts`] grew over one hour from `w`'s now, with `during[i]` applied at the
/// start of the `i`-th ten minutes.
async fn hour(w: &mut World, during: &[String]) -> [u64; 4] {
    let before = counts(w);
    for slot in 0..6 {
        if let Some(manifest) = during.get(slot) {
            w.apply(manifest).await.unwrap();
        }
        w.run_for(SignedDuration::from_mins(10)).await.unwrap();
    }
    let after = counts(w);
    std::array::from_fn(|i| after[i] - before[i])
}

async fn timer_cost() {
    let mut w = getting_started_with(options()).await.unwrap();
    w.apply(&inflate(500)).await.unwrap();
    let ok = w
        .run_until(SignedDuration::from_mins(10), |c| all_running(c, 500))
        .await
        .unwrap();
    assert!(ok, "500 pods never ran");
    w.run_for(SignedDuration::from_mins(5)).await.unwrap();
    let nodes = claims(&w.client).await.len();
    w.apply(&inflate(50)).await.unwrap();
    let busy = hour(&mut w, &[]).await;
    let left = claims(&w.client).await.len();
    let idle = hour(&mut w, &[]).await;
    println!(
        "timers, hour of a scale-in 500 → 50 pods ({nodes} → {left} nodes): {} messages, {} invocations",
        busy[0], busy[1]
    );
    println!(
        "timers, idle hour ({left} nodes): {} messages, {} invocations",
        idle[0], idle[1]
    );
}

/// `inflate` with one pod per node (required hostname anti-affinity).
fn alone(replicas: u32) -> String {
    inflate(replicas).replace(
        "    spec:\n      terminationGracePeriodSeconds",
        "    spec:\n      affinity:\n        podAntiAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n            - topologyKey: kubernetes.io/hostname\n              labelSelector: {matchLabels: {app: inflate}}\n      terminationGracePeriodSeconds",
    )
}

async fn timer_cost_at_1000_nodes() {
    let mut w = getting_started_with(options()).await.unwrap();
    let pool = read("examples/getting-started/nodepool.yaml").replace("cpu: 1000", "cpu: 100000");
    w.apply(&pool).await.unwrap();
    w.apply(&alone(1000)).await.unwrap();
    let ok = w
        .run_until(SignedDuration::from_mins(30), |c| all_running(c, 1000))
        .await
        .unwrap();
    assert!(ok, "1000 pods never ran");
    w.run_for(SignedDuration::from_mins(5)).await.unwrap();
    let nodes = claims(&w.client).await.len();
    let print = |what: &str, c: [u64; 4]| {
        println!(
            "timers, {what}: timer queue {} messages, {} invocations; provisioning queue {} messages, {} invocations",
            c[0], c[1], c[2], c[3]
        );
    };
    print(
        &format!("idle hour ({nodes} nodes)"),
        hour(&mut w, &[]).await,
    );
    let churn = [900, 1000, 900, 1000, 900, 1000].map(alone);
    let busy = hour(&mut w, &churn).await;
    let left = claims(&w.client).await.len();
    print(
        &format!("hour of 1000 → 900 → 1000 pods every 10 min ({nodes} → {left} nodes)"),
        busy,
    );
}

fn report(what: &str, mut v: Vec<f64>) {
    v.sort_by(f64::total_cmp);
    let median = v[v.len() / 2];
    println!(
        "{what:<44} median {median:>5.1} s  min {:>5.1} s  max {:>5.1} s  ({} runs)",
        v[0],
        v[v.len() - 1],
        v.len()
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    if std::env::args().nth(1).as_deref() == Some("1000") {
        timer_cost_at_1000_nodes().await;
        return;
    }
    let afters = [0, 15, 30, 60, 90, 120, 300];
    let mut empty = Vec::new();
    let mut under = Vec::new();
    for a in afters {
        empty.push(consolidation(a, 0, "delete").await);
        under.push(consolidation(a, 1, "replace").await);
    }
    report("empty: disruptable → command", empty);
    report("underutilized: disruptable → command", under);
    let mut drifted = Vec::new();
    for s in [0, 7, 21, 33, 48] {
        drifted.push(drift(s).await);
    }
    report("drifted: Drifted → command", drifted);
    let mut expired = Vec::new();
    for m in [10, 17, 25, 40, 61] {
        expired.push(expiry(m).await);
    }
    report("expired: expireAfter → command", expired);
    report("serialized: command → next command", serialized().await);
    report(
        "capacity error → launch elsewhere",
        vec![capacity_error().await],
    );
    timer_cost().await;
}
