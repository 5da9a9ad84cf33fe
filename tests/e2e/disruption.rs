//! Disruption end to end in simulated time, Kerf's real handlers against the in-process API
//! server and the simulated EC2: the getting-started consolidation walkthrough (scale up, down,
//! to one, to zero), expiration rolling nodes under a PodDisruptionBudget, and a new AMI
//! drifting nodes within the NodePool's budget. Every node is replaced before its pods are
//! evicted, no pod is lost, and every instance ends up owned by exactly one NodeClaim.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use jiff::SignedDuration;
use kerf_e2e::world::*;
use kerf_sim::world::World;

/// (name, instance type) of every live NodeClaim.
async fn fleet(w: &World) -> Vec<(String, String)> {
    claims(&w.client)
        .await
        .into_iter()
        .filter(|c| c.metadata.deletion_timestamp.is_none())
        .map(|c| {
            let t = c
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get("node.kubernetes.io/instance-type").cloned())
                .unwrap_or_default();
            (c.metadata.name.clone().unwrap_or_default(), t)
        })
        .collect()
}

/// The hourly price of the live fleet, at the bundled catalog's prices.
async fn fleet_price(w: &World) -> f64 {
    let catalog = kerf_catalog::bundled(
        "us-west-2",
        &kerf_catalog::settings::NodeClassSettings::default(),
    )
    .unwrap();
    claims(&w.client)
        .await
        .iter()
        .filter(|c| c.metadata.deletion_timestamp.is_none())
        .map(|c| kerf_control::disrupt::cost::price(&catalog, c).unwrap_or(0.0))
        .sum()
}

async fn settle(w: &mut World, replicas: usize, max: SignedDuration) {
    let ok = w
        .run_until(max, |c| all_running(c, replicas))
        .await
        .unwrap();
    assert!(
        ok,
        "{replicas} pods not running: {:?}",
        not_running(&w.client).await
    );
}

/// Ticks for `d`, failing if fewer than `floor` inflate pods ever exist (running, or
/// pending after an eviction while their Deployment replaces them): a drain moves pods, it
/// never loses one.
async fn run_watching(w: &mut World, d: SignedDuration, floor: usize) {
    let end = w.now() + d;
    while w.now() < end {
        w.tick().await.unwrap();
        let live = pods(&w.client)
            .await
            .iter()
            .filter(|p| p.metadata.deletion_timestamp.is_none() && phase(p) != "Failed")
            .count();
        assert!(live >= floor, "{live} pods < {floor} at {}", w.now());
    }
    settle(w, floor, SignedDuration::from_mins(3)).await;
}

#[tokio::test]
async fn the_consolidation_walkthrough_ends_on_one_small_node_then_none() {
    let mut w = getting_started_with(coarse()).await.unwrap();
    w.apply(&inflate(5)).await.unwrap();
    settle(&mut w, 5, SignedDuration::from_mins(3)).await;
    w.apply(&inflate(12)).await.unwrap();
    settle(&mut w, 12, SignedDuration::from_mins(3)).await;
    let big = fleet(&w).await;
    let big_price = fleet_price(&w).await;
    assert!(
        big.len() >= 2,
        "12 pods of 1 vCPU need more than one node: {big:?}"
    );

    w.apply(&inflate(5)).await.unwrap();
    run_watching(&mut w, SignedDuration::from_mins(10), 5).await;
    let five = fleet(&w).await;
    assert!(
        five.len() < big.len(),
        "scaling to 5 removed a node: {big:?} → {five:?}"
    );
    assert!(fleet_price(&w).await < big_price);

    w.apply(&inflate(1)).await.unwrap();
    run_watching(&mut w, SignedDuration::from_mins(10), 1).await;
    let one = fleet(&w).await;
    assert_eq!(one.len(), 1, "{one:?}");
    let price_one = fleet_price(&w).await;
    assert!(
        price_one < 0.1,
        "one pod of 1 vCPU runs on a small node, not {one:?} at ${price_one}/h: {:?}",
        kube::api::Api::<k8s_openapi::api::core::v1::Event>::all(w.client.clone())
            .list(&Default::default())
            .await
            .unwrap()
            .items
            .iter()
            .map(|e| format!(
                "{:?} {:?} {:?} {:?} {:?}",
                e.involved_object.name, e.reason, e.message, e.count, e.last_timestamp
            ))
            .collect::<Vec<_>>()
    );
    let disrupting: Vec<String> = w
        .logs
        .entries()
        .iter()
        .filter_map(|e| e["message"].as_str())
        .filter(|m| m.starts_with("disrupting nodeclaim(s)"))
        .map(str::to_string)
        .collect();
    assert!(
        disrupting.iter().any(|m| m.contains("via delete")),
        "scaling down deleted a node: {disrupting:?}"
    );
    assert!(
        disrupting.iter().any(|m| m.contains("via replace")),
        "one pod left moved to a cheaper node: {disrupting:?}"
    );

    w.apply(&inflate(0)).await.unwrap();
    run_watching(&mut w, SignedDuration::from_mins(5), 0).await;
    assert!(fleet(&w).await.is_empty(), "an empty pool keeps no node");
    assert!(
        claims(&w.client).await.is_empty(),
        "every NodeClaim is gone"
    );
    assert!(
        w.cloud
            .instances()
            .iter()
            .all(|i| i.info.state == "terminated")
    );
    assert!(
        violations(&w).await.is_empty(),
        "{:?}",
        violations(&w).await
    );
}

/// A PodDisruptionBudget keeping at least `min` inflate pods available.
fn inflate_pdb(min: u32) -> String {
    format!(
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: inflate\n  namespace: default\nspec:\n  minAvailable: {min}\n  selector:\n    matchLabels:\n      app: inflate\n"
    )
}

/// Inflate pods running now.
async fn running(w: &World) -> usize {
    pods(&w.client)
        .await
        .iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none() && phase(p) == "Running")
        .count()
}

#[tokio::test]
async fn expiry_rolls_every_node_after_an_hour_while_a_pdb_holds() {
    let mut w = getting_started_with(coarse()).await.unwrap();
    w.apply(
        &read("examples/getting-started/nodepool.yaml")
            .replace("expireAfter: 720h", "expireAfter: 1h")
            .replace("consolidateAfter: 1m", "consolidateAfter: Never"),
    )
    .await
    .unwrap();
    w.apply(&inflate(12)).await.unwrap();
    settle(&mut w, 12, SignedDuration::from_mins(3)).await;
    w.apply(&inflate_pdb(10)).await.unwrap();
    let first: Vec<String> = fleet(&w).await.into_iter().map(|(n, _)| n).collect();
    assert!(!first.is_empty());
    let end = w.now() + SignedDuration::from_mins(80);
    while w.now() < end {
        w.tick().await.unwrap();
        let r = running(&w).await;
        assert!(
            r >= 10,
            "the PDB keeps 10 of 12 running: {r} at {}",
            w.now()
        );
    }
    settle(&mut w, 12, SignedDuration::from_mins(3)).await;
    let now: Vec<String> = fleet(&w).await.into_iter().map(|(n, _)| n).collect();
    assert!(
        first.iter().all(|n| !now.contains(n)),
        "every node of the first hour expired: {first:?} → {now:?}"
    );
    assert!(!now.is_empty());
    assert!(
        w.logs.entries().iter().any(|e| e["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("disrupting nodeclaim(s) via delete"))
            && e["reason"] == "expired"),
        "expiry is logged as a disruption"
    );
    assert!(
        violations(&w).await.is_empty(),
        "{:?}",
        violations(&w).await
    );
}

#[tokio::test]
async fn a_new_ami_drifts_every_node_one_at_a_time() {
    let mut w = getting_started_with(coarse()).await.unwrap();
    w.apply(&read("examples/getting-started/nodepool.yaml").replace(
        "consolidateAfter: 1m",
        "consolidateAfter: Never\n    budgets:\n      - nodes: \"1\"",
    ))
    .await
    .unwrap();
    // Three nodes' worth of pods, each node full enough that none can absorb another's.
    w.apply(&inflate(20)).await.unwrap();
    settle(&mut w, 20, SignedDuration::from_mins(3)).await;
    let first: Vec<String> = fleet(&w).await.into_iter().map(|(n, _)| n).collect();
    assert!(first.len() >= 2, "{first:?}");
    w.cloud.release_ami("ami-0f00000000000new");
    let end = w.now() + SignedDuration::from_mins(40);
    let mut most = 0;
    while w.now() < end {
        w.tick().await.unwrap();
        let going = claims(&w.client)
            .await
            .iter()
            .filter(|c| {
                first.contains(&c.metadata.name.clone().unwrap_or_default())
                    && (c.metadata.deletion_timestamp.is_some() || condition(c, "DisruptionReason"))
            })
            .count();
        most = most.max(going);
        assert!(
            going <= 1,
            "the budget allows one drifted node at a time: {going}"
        );
        assert!(live_pods(&w).await >= 20, "no pod lost at {}", w.now());
    }
    settle(&mut w, 20, SignedDuration::from_mins(3)).await;
    assert_eq!(most, 1, "drift replaced nodes");
    let now = claims(&w.client).await;
    assert!(
        now.iter()
            .all(|c| !first.contains(&c.metadata.name.clone().unwrap_or_default())),
        "every node on the old AMI was replaced"
    );
    assert!(now.iter().all(|c| {
        c.status
            .as_ref()
            .and_then(|s| s.image_id.as_deref())
            .is_some_and(|i| i.contains("new"))
    }));
    assert!(
        violations(&w).await.is_empty(),
        "{:?}",
        violations(&w).await
    );
}

/// Inflate pods that exist (running, or pending while they move).
async fn live_pods(w: &World) -> usize {
    pods(&w.client)
        .await
        .iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none() && phase(p) != "Failed")
        .count()
}

/// The walkthrough scaled from 5 to 1 up to the sweep that records a replace command: the
/// next sweep 15 s or more later starts it.
pub(crate) async fn recorded_command() -> World {
    let mut w = getting_started_with(coarse()).await.unwrap();
    w.apply(&inflate(5)).await.unwrap();
    settle(&mut w, 5, SignedDuration::from_mins(3)).await;
    w.apply(&inflate(1)).await.unwrap();
    let end = w.now() + SignedDuration::from_mins(10);
    while w.now() < end {
        let r = w.tick().await.unwrap();
        let recorded = r.invocations.iter().any(|i| {
            i["recorded"].as_array().is_some_and(|a| {
                a.iter()
                    .any(|c| c.as_str().is_some_and(|c| c.starts_with("underutilized")))
            })
        });
        if recorded {
            w.clock.advance(SignedDuration::from_secs(20));
            return w;
        }
    }
    panic!("no consolidation command recorded");
}

/// How many times each node was tainted for its drain.
pub(crate) fn drains(w: &World) -> std::collections::BTreeMap<String, usize> {
    let mut out = std::collections::BTreeMap::new();
    for e in w.logs.with_message("tainted node") {
        *out.entry(e["Node"]["name"].as_str().unwrap_or_default().to_string())
            .or_default() += 1;
    }
    out
}

/// Instances launched so far.
fn launches(w: &World) -> usize {
    w.cloud.calls("CreateFleet")
}

#[tokio::test]
async fn two_disruption_sweeps_at_once_start_one_command() {
    use kerf_e2e::events::disruption as handle;
    // What one sweep alone launches when the recorded command starts.
    let single = {
        let mut w = recorded_command().await;
        let before = launches(&w);
        w.disrupt().await;
        launches(&w) - before
    };
    assert_eq!(
        single, 1,
        "the replace consolidation launches its replacement"
    );
    let mut w = recorded_command().await;
    let before = launches(&w);
    let scheduled =
        serde_json::json!({"source": "kerf.schedule", "detail-type": "Disruption Sweep"});
    let queues = w.disruption_queues();
    let (a, b) = tokio::join!(
        handle(&w.disruptor, &queues, "sweep-a", &w.disruption, &scheduled),
        handle(&w.terminator, &queues, "sweep-b", &w.disruption, &scheduled),
    );
    assert_eq!(
        launches(&w) - before,
        single,
        "one command started: {a} {b}"
    );
    w.run_for(SignedDuration::from_mins(10)).await.unwrap();
    assert!(
        drains(&w).values().all(|n| *n == 1),
        "no node drained twice: {:?}",
        drains(&w)
    );
    assert!(
        violations(&w).await.is_empty(),
        "{:?}",
        violations(&w).await
    );
    assert_eq!(live_pods(&w).await, 1);
}

#[tokio::test]
async fn a_provisioner_racing_a_sweep_never_loses_the_node_it_just_filled() {
    use kerf_e2e::events::{disruption, provisioner};
    let mut w = recorded_command().await;
    // Two more pods, pending and hinted, while the command is due to start.
    w.apply(&inflate(3)).await.unwrap();
    kerf_sim::world::workloads::step(&w.client, &w.sim().unwrap().cached())
        .await
        .unwrap();
    // kube-scheduler found no room for them a moment ago (the update the webhook hints on);
    // now they would fit beside the consolidation candidate's last pod.
    let api: kube::Api<k8s_openapi::api::core::v1::Pod> =
        kube::Api::namespaced(w.client.clone(), "default");
    for p in pods(&w.client).await {
        if p.spec.as_ref().is_some_and(|s| s.node_name.is_some()) {
            continue;
        }
        let patch = serde_json::json!({"status": {"conditions": [{"type": "PodScheduled",
            "status": "False", "reason": "Unschedulable", "message": "0/1 nodes are available"}]}});
        api.patch_status(
            p.metadata.name.as_deref().unwrap(),
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(&patch),
        )
        .await
        .unwrap();
    }
    let messages = w.queue.receive(100);
    assert!(!messages.is_empty(), "the pending pods were hinted");
    let event = kerf_e2e::events::batch(&messages);
    let (queues, scheduled) = (
        w.disruption_queues(),
        serde_json::json!({"source": "kerf.schedule", "detail-type": "Disruption Sweep"}),
    );
    let (p, d) = tokio::join!(
        provisioner(&w.provisioner, &w.queue, "provisioner-race", &event),
        disruption(
            &w.disruptor,
            &queues,
            "sweep-race",
            &w.disruption,
            &scheduled,
        ),
    );
    w.queue.settle(&messages, &p);
    // Whichever took the decision Lease first, the other saw its work: no NodeClaim the
    // provisioner nominated pods to is the one the sweep disrupts.
    let events = w
        .sim()
        .unwrap()
        .cached()
        .list::<k8s_openapi::api::core::v1::Event>("/events")
        .unwrap();
    let disrupted: Vec<String> = events
        .iter()
        .filter(|e| e.reason.as_deref() == Some("DisruptionTerminating"))
        .filter_map(|e| e.involved_object.name.clone())
        .collect();
    let nodes: Vec<String> = claims(&w.client)
        .await
        .iter()
        .filter(|c| disrupted.contains(c.metadata.name.as_ref().unwrap()))
        .filter_map(|c| c.status.as_ref()?.node_name.clone())
        .collect();
    let nominated: Vec<_> = events
        .iter()
        .filter(|e| e.reason.as_deref() == Some("Nominated"))
        .collect();
    assert!(
        !nominated.is_empty(),
        "the provisioner placed the pods ({p} / {d})"
    );
    for e in nominated {
        let m = e.message.clone().unwrap_or_default();
        assert!(
            !disrupted
                .iter()
                .chain(&nodes)
                .any(|n| m.contains(n.as_str())),
            "{m} while the sweep disrupted {disrupted:?} ({p} / {d})"
        );
    }
    w.run_for(SignedDuration::from_mins(10)).await.unwrap();
    assert_eq!(live_pods(&w).await, 3, "every pod runs");
    assert!(drains(&w).values().all(|n| *n == 1), "{:?}", drains(&w));
    assert!(
        violations(&w).await.is_empty(),
        "{:?}",
        violations(&w).await
    );
}
