//! Timers end to end in simulated time: with the disruption function's schedule pushed out of
//! reach, a scale-down is consolidated by timers alone (pod events restart `consolidateAfter`,
//! its moment is armed, the command is validated 15 s after it is recorded, the candidate is
//! deleted soon after its replacement initializes); a validation that finds churn abandons the
//! command; duplicated timer messages change nothing; lost ones cost only latency (the
//! schedule does the work); spot capacity gone everywhere falls back to on-demand in one
//! provisioner invocation. The provisioner's timers: a NodeClaim that never registers goes
//! at its registration deadline, not at the next sweep; pods left waiting on unavailable
//! offerings are placed the moment the cache lets them go, with no sweep at all.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use jiff::{SignedDuration, Timestamp};
use kerf_catalog::CapacityType;
use kerf_e2e::world::*;
use kerf_sim::world::cloud::NoCapacity;
use kerf_sim::world::{World, WorldOptions};
use serde_json::Value;

/// The disruption function runs on its timers only (its schedule comes after the test).
fn timers_only() -> WorldOptions {
    WorldOptions {
        disruption_every: SignedDuration::from_hours(24),
        ..WorldOptions::default()
    }
}

/// When the first log line starting with `message` was written.
fn first(w: &World, message: &str) -> Option<Timestamp> {
    logged_at(w, message).first().copied()
}

/// How many log lines start with `message`.
fn count(w: &World, message: &str) -> usize {
    logged_at(w, message).len()
}

/// Five pods on one node, then scaled to one: the replace consolidation's world, and when the
/// scale-down was applied.
pub(crate) async fn scaled_down(options: WorldOptions) -> (World, Timestamp) {
    let mut w = getting_started_with(options).await.unwrap();
    w.apply(&inflate(5)).await.unwrap();
    assert!(
        w.run_until(SignedDuration::from_mins(3), |c| all_running(c, 5))
            .await
            .unwrap()
    );
    w.run_for(SignedDuration::from_mins(2)).await.unwrap();
    let at = w.now();
    w.apply(&inflate(1)).await.unwrap();
    (w, at)
}

/// Ticks until the one node is replaced by another (or `max` passes); the instance type left.
async fn consolidated(w: &mut World, max: SignedDuration) -> Vec<String> {
    let before: Vec<String> = claims(&w.client)
        .await
        .iter()
        .filter_map(|c| c.metadata.name.clone())
        .collect();
    w.run_until(max, |c| {
        let before = before.clone();
        async move {
            let cs = claims(&c).await;
            cs.len() == 1
                && cs.iter().all(|x| {
                    x.metadata.deletion_timestamp.is_none()
                        && !before.contains(x.metadata.name.as_ref().unwrap())
                })
        }
    })
    .await
    .unwrap();
    claims(&w.client)
        .await
        .iter()
        .filter_map(|c| {
            c.metadata
                .labels
                .as_ref()?
                .get("node.kubernetes.io/instance-type")
                .cloned()
        })
        .collect()
}

#[tokio::test]
async fn a_scale_down_is_consolidated_by_timers_alone_at_karpenters_moments() {
    let (mut w, scaled) = scaled_down(timers_only()).await;
    let left = consolidated(&mut w, SignedDuration::from_mins(5)).await;
    assert_eq!(left, ["c6a.large"], "the last pod moved to a cheaper node");
    let started = first(&w, "disrupting nodeclaim(s) via replace").unwrap();
    // consolidateAfter (1m) from the pod event, then the 15 s validation; a tick of slack each.
    let waited = started.duration_since(scaled);
    assert!(
        waited >= SignedDuration::from_secs(75) && waited <= SignedDuration::from_secs(78),
        "command started {waited:?} after the scale-down"
    );
    let kinds: std::collections::BTreeSet<String> = w
        .logs
        .entries()
        .iter()
        .filter(|e| e.get("kerf_timers_sent_total").is_some())
        .filter_map(|e| e["kind"].as_str().map(str::to_string))
        .collect();
    for k in ["due", "validate", "requeue"] {
        assert!(kinds.contains(k), "a {k} timer was set: {kinds:?}");
    }
    assert!(
        violations(&w).await.is_empty(),
        "{:?}",
        violations(&w).await
    );
    assert!(
        w.run_until(SignedDuration::from_mins(1), |c| all_running(c, 1))
            .await
            .unwrap()
    );
}

#[tokio::test]
async fn the_candidate_goes_soon_after_its_replacement_initializes() {
    let (mut w, _) = scaled_down(timers_only()).await;
    consolidated(&mut w, SignedDuration::from_mins(5)).await;
    let initialized: Timestamp = w
        .logs
        .entries()
        .iter()
        .rev()
        .filter(|e| e["message"] == "initialized nodeclaim")
        .find_map(|e| e["time"].as_str()?.parse().ok())
        .unwrap();
    let deleted = first(&w, "deleted nodeclaim for disruption").unwrap();
    let lag = deleted.duration_since(initialized);
    assert!(
        lag <= SignedDuration::from_secs(6),
        "candidate deleted {lag:?} after its replacement initialized"
    );
}

#[tokio::test]
async fn a_validation_that_finds_churn_abandons_the_command() {
    let (mut w, _) = scaled_down(timers_only()).await;
    let recorded = w
        .run_until(SignedDuration::from_mins(3), |c| async move {
            claims(&c).await.iter().any(|x| {
                x.metadata
                    .annotations
                    .as_ref()
                    .and_then(|a| a.get(kerf_control::disrupt::record::PENDING))
                    .is_some_and(|v| !v.is_empty())
            })
        })
        .await
        .unwrap();
    assert!(recorded, "a consolidation command was recorded");
    // Before its validation, the node is marked do-not-disrupt.
    let node = nodes(&w.client).await[0].metadata.name.clone().unwrap();
    let patch =
        serde_json::json!({"metadata": {"annotations": {"karpenter.sh/do-not-disrupt": "true"}}});
    kube::api::Api::<k8s_openapi::api::core::v1::Node>::all(w.client.clone())
        .patch(&node, &Default::default(), &kube::api::Patch::Merge(&patch))
        .await
        .unwrap();
    w.run_for(SignedDuration::from_secs(30)).await.unwrap();
    assert!(
        first(&w, "abandoning consolidation command, churn: NodeClaim").is_some(),
        "{:?}",
        w.logs
            .entries()
            .iter()
            .map(|e| e["message"].clone())
            .collect::<Vec<_>>()
    );
    assert!(
        first(&w, "disrupting nodeclaim(s)").is_none(),
        "nothing started"
    );
    assert_eq!(w.cloud.calls("CreateFleet"), 1, "no replacement launched");
}

#[tokio::test]
async fn duplicated_timer_messages_change_nothing() {
    let options = WorldOptions {
        duplicate_deliveries: true,
        ..timers_only()
    };
    let (mut w, _) = scaled_down(options).await;
    let left = consolidated(&mut w, SignedDuration::from_mins(5)).await;
    assert_eq!(left, ["c6a.large"]);
    assert_eq!(
        count(&w, "disrupting nodeclaim(s) via replace"),
        1,
        "one command"
    );
    assert_eq!(w.cloud.calls("CreateFleet"), 2, "one replacement launched");
    assert!(
        violations(&w).await.is_empty(),
        "{:?}",
        violations(&w).await
    );
}

#[tokio::test]
async fn lost_timer_messages_cost_only_latency() {
    let (mut w, scaled) = scaled_down(WorldOptions::default()).await;
    // Every timer send fails from now on: only the minute schedule is left.
    w.timer_queue.fail_sends(usize::MAX);
    let left = consolidated(&mut w, SignedDuration::from_mins(10)).await;
    assert_eq!(left, ["c6a.large"]);
    let started = first(&w, "disrupting nodeclaim(s) via replace").unwrap();
    assert!(
        started.duration_since(scaled) > SignedDuration::from_secs(78),
        "without timers the schedule does the work, later"
    );
    assert!(count(&w, "could not set a timer") > 0);
    assert!(
        violations(&w).await.is_empty(),
        "{:?}",
        violations(&w).await
    );
}

#[tokio::test]
async fn no_spot_capacity_anywhere_falls_back_to_on_demand_in_one_invocation() {
    let mut w = getting_started().await.unwrap();
    let pool = read("examples/getting-started/nodepool.yaml").replace(
        "values: [\"on-demand\"]",
        "values: [\"spot\", \"on-demand\"]",
    );
    w.apply(&pool).await.unwrap();
    w.cloud.remove_capacity(NoCapacity {
        capacity_type: Some(CapacityType::Spot),
        ..NoCapacity::default()
    });
    w.apply(&inflate(5)).await.unwrap();
    w.tick().await.unwrap();
    batch_ends(&w);
    let r: Value = w.deliver().await;
    assert_eq!(r["batchItemFailures"], serde_json::json!([]));
    let live: Vec<String> = claims(&w.client)
        .await
        .iter()
        .filter(|c| kerf_control::claim::provider_id(c).is_some())
        .filter_map(|c| {
            c.metadata
                .labels
                .as_ref()?
                .get("karpenter.sh/capacity-type")
                .cloned()
        })
        .collect();
    assert_eq!(
        live,
        ["on-demand"],
        "launched on-demand in the same invocation"
    );
    assert!(
        w.run_until(SignedDuration::from_mins(2), |c| all_running(c, 5))
            .await
            .unwrap()
    );
    assert!(
        violations(&w).await.is_empty(),
        "{:?}",
        violations(&w).await
    );
}

#[tokio::test]
async fn a_registration_timeout_fires_at_its_moment_not_at_the_next_sweep() {
    let mut w = getting_started().await.unwrap();
    let start = w.now();
    w.kubelet_mut().unwrap().paused = true;
    // Mid-way between two sweeps, so that the deadline is too.
    w.run_for(SignedDuration::from_secs(20)).await.unwrap();
    w.apply(&inflate(5)).await.unwrap();
    w.run_for(SignedDuration::from_mins(2)).await.unwrap();
    let launching = claims(&w.client).await;
    assert_eq!(launching.len(), 1);
    let launched = kerf_control::claim::transition_time(&launching[0], "Launched").unwrap();
    let deadline = launched + SignedDuration::from_mins(15);
    let since_sweep = deadline.duration_since(start).as_secs() % 60;
    assert!(
        (1..=57).contains(&since_sweep),
        "the deadline must fall between sweeps for this test to tell them apart ({since_sweep} s)"
    );
    w.run_for(SignedDuration::from_mins(15)).await.unwrap();
    let gone = first(&w, "terminating due to registration ttl").unwrap();
    let late = gone.duration_since(deadline);
    assert!(
        late >= SignedDuration::ZERO && late <= SignedDuration::from_secs(2),
        "deleted {late:#} after its deadline (the sweep would have been {} s late)",
        60 - since_sweep
    );
    w.kubelet_mut().unwrap().paused = false;
    assert!(
        w.run_until(SignedDuration::from_mins(5), |c| all_running(c, 5))
            .await
            .unwrap()
    );
}

#[tokio::test]
async fn pods_waiting_on_unavailable_offerings_are_placed_when_the_cache_expires() {
    let mut w = getting_started_with(WorldOptions {
        sweep_every: SignedDuration::from_hours(24),
        ..WorldOptions::default()
    })
    .await
    .unwrap();
    w.cloud.remove_capacity(NoCapacity::default());
    w.apply(&inflate(5)).await.unwrap();
    w.run_for(SignedDuration::from_secs(30)).await.unwrap();
    assert!(claims(&w.client).await.is_empty(), "nothing could launch");
    let failed = first(&w, "failed launching nodeclaim").expect("a launch found no capacity");
    let expiry = failed + SignedDuration::from_mins(3);
    w.cloud.restore_capacity();
    assert!(
        w.run_until(SignedDuration::from_mins(5), |c| all_running(c, 5))
            .await
            .unwrap(),
        "placed without a sweep"
    );
    let relaunched = claims(&w.client).await;
    assert_eq!(relaunched.len(), 1);
    let created = relaunched[0]
        .metadata
        .creation_timestamp
        .as_ref()
        .unwrap()
        .0;
    let late = created.duration_since(expiry);
    assert!(
        late >= SignedDuration::ZERO && late <= SignedDuration::from_secs(3),
        "launched {late:#} after the cache expired"
    );
}
