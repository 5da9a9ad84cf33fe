//! A mass spot interruption, Kerf against a Karpenter-shaped poller on the same input in the
//! same run: `NODES` spot nodes (two pods each) get their two-minute warning within one
//! minute, evenly spread. Each side runs on its own simulated cluster (the in-process API
//! server, the simulated EC2, kubelet and scheduler, and Kerf's termination and provisioner
//! functions), in wall-clock time, with remote latencies injected: every API-server request
//! waits `KUBE`, every CreateFleet `CREATE_FLEET`, other EC2 calls `EC2`, every SQS call
//! `SQS`, every Lambda invocation `INVOKE`.
//!
//! - **Kerf**: the interruption queue's event source mapping, batches of up to 10 taken as
//!   soon as messages are visible, at most `CONCURRENCY` invocations at once, each running
//!   Kerf's interruption handler (replacements launched at the warning, then termination).
//! - **Karpenter-shaped**: one poller receiving up to 10 messages, handling them with 10
//!   workers (record the reclaimed offerings, delete the NodeClaim), deleting them, then
//!   receiving again; replacements come from the provisioner once the drain has evicted the
//!   pods, as in Karpenter.
//!
//! Both sides drain through the same consumer of the termination queue, shaped as its event
//! source mapping: batches of 10, at most [`TERMINATION_CONCURRENCY`] invocations of Kerf's
//! termination function at once (the world's own tick does not deliver that queue here).
//! The simulated components read the store directly, so the measurement's driver adds no
//! API-server load.
//!
//! Reported per side: p50/p99 from each warning's time to a replacement's CreateFleet (Kerf:
//! the last launch of the invocation that handled it; Karpenter-shaped: the provisioner's
//! first launch after it not yet counted), to its NodeClaim's termination start (the
//! handler's return, an upper bound), how
//! many nodes were drained within their two minutes, and the API calls per message (a quiet
//! batch of 10 afterwards: API-server requests, cloud calls, queue sends).
//!
//! ```sh
//! cargo run --release -p kerf-e2e --example mass-interruption -- 1000
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used)] // a measurement harness

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{Node, Pod};
use kerf_catalog::CapacityType;
use kerf_catalog::unavailable::{OfferingKey, marks};
use kerf_control::interrupt::{InterruptOptions, Message, handle_batch};
use kerf_control::ports::Cluster;
use kerf_control::retire::Retirement;
use kerf_e2e::world::{all_running, claims, getting_started_with, read};
use kerf_sim::world::queue::SimQueue;
use kerf_sim::world::{SimCtx, World, WorldOptions};
use serde_json::{Value, json};
use tokio::sync::{Notify, Semaphore};

const KUBE: Duration = Duration::from_millis(10);
const CREATE_FLEET: Duration = Duration::from_millis(1000);
const EC2: Duration = Duration::from_millis(150);
const SQS: Duration = Duration::from_millis(20);
const INVOKE: Duration = Duration::from_millis(30);
const CONCURRENCY: usize = 20;
/// The termination function's event source mapping: `MaximumConcurrency` × `BatchSize`.
const TERMINATION_CONCURRENCY: usize = 5;
const SPREAD: Duration = Duration::from_secs(60);
const NOTICE: Duration = Duration::from_secs(120);

#[derive(Clone, Copy, PartialEq)]
enum Side {
    Kerf,
    Karpenter,
}

/// A warning: its instance, NodeClaim, Node and offering.
#[derive(Clone)]
struct Target {
    instance: String,
    claim: String,
    node: String,
    offering: OfferingKey,
}

struct Outcome {
    to_fleet: Vec<Duration>,
    to_termination: Vec<Duration>,
    drained_in_time: usize,
    drained: usize,
    calls_per_message: f64,
    wall: Duration,
}

async fn cluster(nodes: usize) -> World {
    let options = WorldOptions {
        tick: SignedDuration::from_secs(10),
        ..WorldOptions::default()
    };
    let mut w = getting_started_with(options).await.unwrap();
    let pool = read("examples/getting-started/nodepool.yaml")
        .replace("values: [\"on-demand\"]", "values: [\"spot\"]")
        .replace(
            "        - key: karpenter.k8s.aws/instance-category",
            "        - key: node.kubernetes.io/instance-type\n          operator: In\n          values: [\"m5.large\", \"m6a.large\"]\n        - key: karpenter.k8s.aws/instance-category",
        )
        .replace("cpu: 1000", "cpu: 100000")
        .replace("consolidateAfter: 1m", "consolidateAfter: Never");
    w.apply(&pool).await.unwrap();
    let inflate = read("examples/getting-started/inflate.yaml")
        .replace("replicas: 5", &format!("replicas: {}", 2 * nodes))
        .replace("cpu: 1", "cpu: 800m");
    w.apply(&inflate).await.unwrap();
    let want = 2 * nodes;
    let ok = w
        .run_until(SignedDuration::from_mins(30), |c| all_running(c, want))
        .await
        .unwrap();
    assert!(ok, "the cluster did not come up");
    assert_eq!(claims(&w.client).await.len(), nodes, "two pods per node");
    w
}

async fn targets(w: &World) -> Vec<Target> {
    let mut out: Vec<Target> = claims(&w.client)
        .await
        .iter()
        .filter(|c| c.metadata.deletion_timestamp.is_none())
        .map(|c| {
            let l = c.metadata.labels.clone().unwrap_or_default();
            let s = c.status.clone().unwrap_or_default();
            let provider = s.provider_id.unwrap_or_default();
            Target {
                instance: provider.rsplit('/').next().unwrap_or_default().into(),
                claim: c.metadata.name.clone().unwrap_or_default(),
                node: s.node_name.unwrap_or_default(),
                offering: OfferingKey::new(
                    CapacityType::Spot,
                    &l["node.kubernetes.io/instance-type"],
                    &l["topology.kubernetes.io/zone"],
                ),
            }
        })
        .collect();
    out.sort_by(|a, b| a.claim.cmp(&b.claim));
    out
}

fn warning(id: usize, t: &Target, at: Timestamp) -> Value {
    let body = json!({"version": "0", "id": format!("warning-{id}"),
        "detail-type": "EC2 Spot Instance Interruption Warning", "source": "aws.ec2",
        "account": "123456789012", "time": at.to_string(), "region": "us-west-2",
        "resources": [format!("arn:aws:ec2:us-west-2:123456789012:instance/{}", t.instance)],
        "detail": {"instance-id": t.instance, "instance-action": "terminate"}});
    json!({"messageId": format!("m-{id}"), "body": body.to_string(),
           "attributes": {"SentTimestamp": at.as_millisecond().to_string()}})
}

fn latencies(w: &World, on: bool) {
    let z = Duration::ZERO;
    w.sim().unwrap().set_latency(if on { KUBE } else { z });
    w.cloud
        .set_latency("CreateFleet", if on { CREATE_FLEET } else { z });
    for op in ["DescribeInstances", "TerminateInstances", "DescribeImages"] {
        w.cloud.set_latency(op, if on { EC2 } else { z });
    }
}

/// Karpenter's handling of received messages: the reclaimed offerings into the ICE cache,
/// then each NodeClaim deleted by one of 10 workers.
async fn karpenter_batch(ctx: &SimCtx, termination: &SimQueue, batch: &[Target]) {
    let keys: Vec<OfferingKey> = batch.iter().map(|t| t.offering.clone()).collect();
    let now = ctx.now();
    let _ = ctx
        .cluster
        .record_unavailable(&marks(&keys, now), now)
        .await;
    let deletes = batch.iter().map(|t| async move {
        let why = Retirement::Interruption {
            kind: "spot_interrupted",
            forceful: false,
        };
        let r = kerf_control::retire::delete_one(ctx, termination, &t.claim, "default", why).await;
        tokio::time::sleep(SQS).await; // DeleteMessage
        r
    });
    for r in futures::future::join_all(deletes).await {
        if let Err(e) = r {
            eprintln!("karpenter-shaped delete failed: {e}");
        }
    }
}

/// Messages made visible at their warning times, taken in batches of up to 10.
#[derive(Default)]
struct Inbox {
    visible: Mutex<VecDeque<usize>>,
    notify: Notify,
}

impl Inbox {
    async fn take(&self, max: usize) -> Vec<usize> {
        loop {
            let notified = self.notify.notified();
            {
                let mut q = self.visible.lock().unwrap();
                if !q.is_empty() {
                    let n = q.len().min(max);
                    return q.drain(..n).collect();
                }
            }
            notified.await;
        }
    }
}

type Stamps = Arc<Mutex<BTreeMap<usize, Instant>>>;
/// The replacement NodeClaims launched by the invocation that handled each warning.
type Replaced = Arc<Mutex<BTreeMap<usize, Vec<String>>>>;

/// The consumer of the warnings. Its invocations run on this thread (a `LocalSet`): they
/// share one core with the cluster's driver, where Lambda would give each its own.
/// What the consumer shares with the measurement.
struct Shared {
    targets: Arc<Vec<Target>>,
    starts: Arc<Vec<Instant>>,
    t0: Timestamp,
    inbox: Arc<Inbox>,
    terminated: Stamps,
    replaced: Replaced,
}

fn consume(side: Side, w: &World, shared: Shared) -> tokio::task::JoinHandle<()> {
    let Shared {
        targets,
        starts,
        t0,
        inbox,
        terminated,
        replaced,
    } = shared;
    let (ctx, termq) = (w.provisioner.clone(), w.termination_queue.clone());
    let start = starts[0];
    tokio::task::spawn_local(async move {
        let slots = Arc::new(Semaphore::new(CONCURRENCY));
        let mut taken = 0;
        let mut running = Vec::new();
        while taken < targets.len() {
            let permit = match side {
                Side::Kerf => Some(slots.clone().acquire_owned().await.unwrap()),
                Side::Karpenter => None,
            };
            if side == Side::Karpenter {
                tokio::time::sleep(SQS).await; // ReceiveMessage
            }
            let batch = inbox.take(10).await;
            taken += batch.len();
            let replaced = replaced.clone();
            let (ctx, termq, targets, terminated, starts) = (
                ctx.clone(),
                termq.clone(),
                targets.clone(),
                terminated.clone(),
                starts.clone(),
            );
            let task = async move {
                match side {
                    Side::Kerf => {
                        tokio::time::sleep(INVOKE).await;
                        let records: Vec<Value> = batch
                            .iter()
                            .map(|&i| {
                                let at = t0 + SignedDuration::try_from(starts[i] - start).unwrap();
                                warning(i, &targets[i], at)
                            })
                            .collect();
                        let messages: Vec<Message> = records
                            .iter()
                            .map(|r| Message {
                                id: r["messageId"].as_str().unwrap_or_default().into(),
                                body: r["body"].as_str().unwrap_or_default().into(),
                                sent: None,
                            })
                            .collect();
                        let opts = InterruptOptions::default();
                        let report = handle_batch(&*ctx, &termq, &messages, &opts).await;
                        let mut r = replaced.lock().unwrap();
                        for &i in &batch {
                            r.insert(i, report.replacements.clone());
                        }
                    }
                    Side::Karpenter => {
                        let b: Vec<Target> = batch.iter().map(|&i| targets[i].clone()).collect();
                        karpenter_batch(&ctx, &termq, &b).await;
                    }
                }
                let now = Instant::now();
                let mut t = terminated.lock().unwrap();
                for i in batch {
                    t.insert(i, now);
                }
                drop(permit);
            };
            match side {
                Side::Kerf => running.push(tokio::task::spawn_local(task)),
                Side::Karpenter => task.await,
            }
        }
        for r in running {
            let _ = r.await;
        }
    })
}

/// The termination queue's event source mapping, for both sides: batches of up to 10 taken
/// as soon as messages are visible, at most [`TERMINATION_CONCURRENCY`] invocations of Kerf's
/// termination function at once, until `stop`.
fn terminations(w: &World, stop: Arc<Notify>) -> tokio::task::JoinHandle<()> {
    let (ctx, queue) = (w.terminator.clone(), w.termination_queue.clone());
    let timers = w.timer_queue.clone();
    tokio::task::spawn_local(async move {
        let slots = Arc::new(Semaphore::new(TERMINATION_CONCURRENCY));
        loop {
            let permit = slots.clone().acquire_owned().await.unwrap();
            let batch = queue.receive(10);
            if batch.is_empty() {
                drop(permit);
                tokio::select! {
                    _ = stop.notified() => return,
                    _ = tokio::time::sleep(Duration::from_millis(50)) => continue,
                }
            }
            let (ctx, queue, timers) = (ctx.clone(), queue.clone(), timers.clone());
            tokio::task::spawn_local(async move {
                tokio::time::sleep(INVOKE).await;
                let event = SimQueue::event(&batch);
                let resp =
                    kerf_control::handlers::termination::handle(&ctx, &queue, &timers, &event)
                        .await;
                queue.settle(&batch, &kerf_e2e::events::to_json(&resp));
                drop(permit);
            });
        }
    })
}

fn feed(starts: Arc<Vec<Instant>>, inbox: Arc<Inbox>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        for (i, at) in starts.iter().enumerate() {
            tokio::time::sleep_until((*at).into()).await;
            inbox.visible.lock().unwrap().push_back(i);
            inbox.notify.notify_one();
        }
    })
}

/// Nodes without a pod that is not terminating, and every Node (read straight from the
/// store, as the simulated components do: the measurement adds no API-server load).
fn node_states(w: &World) -> (BTreeSet<String>, BTreeSet<String>) {
    let reads = w.sim().unwrap().cached();
    let pods = reads.list::<Pod>("/pods").unwrap();
    let busy: BTreeSet<String> = pods
        .iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .filter_map(|p| p.spec.as_ref()?.node_name.clone())
        .collect();
    let all: BTreeSet<String> = reads
        .list::<Node>("/nodes")
        .unwrap()
        .iter()
        .filter_map(|n| n.metadata.name.clone())
        .collect();
    (all.difference(&busy).cloned().collect(), all)
}

async fn mass(side: Side, nodes: usize) -> Outcome {
    let mut w = cluster(nodes).await;
    let targets = Arc::new(targets(&w).await);
    let n = targets.len();
    latencies(&w, true);
    let begin = Instant::now() + Duration::from_millis(200);
    let starts: Arc<Vec<Instant>> = Arc::new(
        (0..n)
            .map(|i| begin + SPREAD.mul_f64(i as f64 / n as f64))
            .collect(),
    );
    let t0 = w.now() + SignedDuration::from_millis(200);
    w.options.deliver_termination = false;
    let stop = Arc::new(Notify::new());
    let terminator = terminations(&w, stop.clone());
    let inbox = Arc::new(Inbox::default());
    let terminated: Stamps = Arc::default();
    let fleet_before = w.cloud.fleet_calls().len();
    let feeder = feed(starts.clone(), inbox.clone());
    let replaced: Replaced = Arc::default();
    let consumer = consume(
        side,
        &w,
        Shared {
            targets: targets.clone(),
            starts: starts.clone(),
            t0,
            inbox,
            terminated: terminated.clone(),
            replaced: replaced.clone(),
        },
    );

    let mut drained: BTreeMap<String, Instant> = BTreeMap::new();
    let mut last = Instant::now();
    let deadline = begin + SPREAD + NOTICE + Duration::from_secs(240);
    loop {
        let now = Instant::now();
        let step = (now - last).max(Duration::from_millis(50));
        last = now;
        w.options.tick = SignedDuration::try_from(step).unwrap();
        w.tick().await.unwrap();
        let started = terminated.lock().unwrap().clone();
        let (empty, live) = node_states(&w);
        let at = Instant::now();
        for (i, t) in targets.iter().enumerate() {
            if started.contains_key(&i) && (empty.contains(&t.node) || !live.contains(&t.node)) {
                drained.entry(t.node.clone()).or_insert(at);
            }
        }
        let done = drained.len() == n && all_running(w.client.clone(), 2 * nodes).await;
        if (done && consumer.is_finished()) || at > deadline {
            break;
        }
    }
    feeder.abort();
    stop.notify_one();
    let _ = terminator.await;
    w.options.deliver_termination = true;
    let wall = begin.elapsed();
    if std::env::var_os("KERF_DEBUG").is_some() {
        for e in w.logs.entries() {
            if e.get("message").is_some() {
                eprintln!(
                    "{} {} {} {} {}",
                    e["time"], e["controller"], e["message"], e["NodeClaim"], e["reason"]
                );
            }
        }
    }
    let calls = w.cloud.fleet_calls()[fleet_before..].to_vec();
    let to_fleet = match side {
        // Each warning against its own invocation's last replacement launch.
        Side::Kerf => {
            let at: BTreeMap<&str, Instant> = calls
                .iter()
                .map(|c| (c.node_claim.as_str(), c.at))
                .collect();
            let replaced = replaced.lock().unwrap();
            (0..n)
                .filter_map(|i| {
                    let names = replaced.get(&i)?;
                    let last = names.iter().filter_map(|c| at.get(c.as_str())).max()?;
                    Some(last.saturating_duration_since(starts[i]))
                })
                .collect()
        }
        // The provisioner's launches are nobody's in particular: each warning, in order,
        // against the first launch after it not yet counted.
        Side::Karpenter => {
            let mut fleet: Vec<Instant> = calls.iter().map(|c| c.at).collect();
            fleet.sort();
            let mut next = 0;
            let mut out = Vec::new();
            for e in starts.iter() {
                while next < fleet.len() && fleet[next] < *e {
                    next += 1;
                }
                if next < fleet.len() {
                    out.push(fleet[next] - *e);
                    next += 1;
                }
            }
            out
        }
    };
    let term = terminated.lock().unwrap().clone();
    let to_termination = (0..n)
        .filter_map(|i| Some(term.get(&i)?.saturating_duration_since(starts[i])))
        .collect();
    let drained_in_time = targets
        .iter()
        .enumerate()
        .filter(|(i, t)| {
            drained
                .get(&t.node)
                .is_some_and(|d| *d <= starts[*i] + NOTICE)
        })
        .count();
    latencies(&w, false);
    let calls_per_message = quiet_batch(side, &mut w).await;
    Outcome {
        to_fleet,
        to_termination,
        drained_in_time,
        drained: drained.len(),
        calls_per_message,
        wall,
    }
}

/// API calls per message: one batch of 10 warnings on a settled cluster.
async fn quiet_batch(side: Side, w: &mut World) -> f64 {
    let ok = w
        .run_until(SignedDuration::from_mins(10), |c| async move {
            claims(&c)
                .await
                .iter()
                .all(|x| x.metadata.deletion_timestamp.is_none())
        })
        .await
        .unwrap();
    assert!(ok, "the cluster did not settle");
    let targets: Vec<Target> = targets(w).await.into_iter().take(10).collect();
    let ops = [
        "CreateFleet",
        "DescribeInstances",
        "DescribeImages",
        "DescribeInstanceTypes",
        "TerminateInstances",
    ];
    let cloud = |w: &World| ops.iter().map(|o| w.cloud.calls(o)).sum::<usize>();
    let (kube0, cloud0, queue0) = (
        w.sim().unwrap().requests().len(),
        cloud(w),
        w.termination_queue.len(),
    );
    match side {
        Side::Kerf => {
            let records: Vec<Value> = targets
                .iter()
                .enumerate()
                .map(|(i, t)| warning(100_000 + i, t, w.now()))
                .collect();
            let event = json!({"Records": records});
            kerf_control::handlers::interruption::handle(
                &w.provisioner,
                &w.termination_queue,
                &kerf_e2e::events::sqs(&event),
                &InterruptOptions::default(),
            )
            .await;
        }
        Side::Karpenter => karpenter_batch(&w.provisioner, &w.termination_queue, &targets).await,
    }
    let kube = w.sim().unwrap().requests().len() - kube0;
    let calls = kube + cloud(w) - cloud0 + (w.termination_queue.len() - queue0);
    let sqs = match side {
        Side::Kerf => 1.0,       // the event source mapping's DeleteMessageBatch
        Side::Karpenter => 11.0, // ReceiveMessage and one DeleteMessage per message
    };
    (calls as f64 + sqs) / targets.len() as f64
}

fn pct(v: &[Duration], p: f64) -> String {
    if v.is_empty() {
        return "-".into();
    }
    let mut v = v.to_vec();
    v.sort();
    let i = ((v.len() as f64 * p).ceil() as usize).clamp(1, v.len()) - 1;
    format!("{:.1} s", v[i].as_secs_f64())
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let nodes: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("NODES is a number"))
        .unwrap_or(1000);
    println!(
        "{nodes} spot warnings within {} s; latencies: API server {} ms, CreateFleet {} ms, other EC2 {} ms, SQS {} ms, invoke {} ms",
        SPREAD.as_secs(),
        KUBE.as_millis(),
        CREATE_FLEET.as_millis(),
        EC2.as_millis(),
        SQS.as_millis(),
        INVOKE.as_millis()
    );
    println!(
        "{:<28} {:>9} {:>9} {:>9} {:>9} {:>14} {:>10} {:>8}",
        "", "fleet p50", "fleet p99", "term p50", "term p99", "drained <2min", "calls/msg", "wall"
    );
    let local = tokio::task::LocalSet::new();
    local.run_until(report(nodes)).await;
}

async fn report(nodes: usize) {
    for (side, name) in [
        (Side::Kerf, "Kerf (SQS → Lambda, 20 × 10)"),
        (Side::Karpenter, "one poller, 10 workers"),
    ] {
        let o = mass(side, nodes).await;
        println!(
            "{:<28} {:>9} {:>9} {:>9} {:>9} {:>14} {:>10.1} {:>7.0}s",
            name,
            pct(&o.to_fleet, 0.5),
            pct(&o.to_fleet, 0.99),
            pct(&o.to_termination, 0.5),
            pct(&o.to_termination, 0.99),
            format!("{}/{} ({})", o.drained_in_time, nodes, o.drained),
            o.calls_per_message,
            o.wall.as_secs_f64()
        );
        if o.to_fleet.len() != nodes {
            println!(
                "  ({} of {nodes} warnings matched to a CreateFleet call)",
                o.to_fleet.len()
            );
        }
    }
}
