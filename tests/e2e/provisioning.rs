//! Provisioning end to end in simulated time: the getting-started NodePool and the
//! `inflate` Deployment; kube-scheduler marks pods unschedulable, the webhook queues a
//! hint, the provisioner creates and launches NodeClaims, kubelets register through the
//! webhook, NodeClaims go Launched → Registered → Initialized, and the pods run.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use jiff::SignedDuration;
use k8s_openapi::api::core::v1::Event;
use kerf_e2e::world::*;
use kerf_sim::world::WorldOptions;
use kube::api::{Api, ListParams};
use serde_json::Value;

fn log_with<'a>(entries: &'a [Value], message: &str) -> Vec<&'a Value> {
    entries.iter().filter(|e| e["message"] == message).collect()
}

on_both! {
async fn inflate_gets_capacity_launched_registered_initialized_and_runs(on) {
    let mut w = getting_started_on(on, WorldOptions::default()).await;
    w.apply(&inflate(5)).await.unwrap();
    let ok = w
        .run_until(SignedDuration::from_mins(5), |c| all_running(c, 5))
        .await
        .unwrap();
    assert!(ok, "pods not running: {:?}", not_running(&w.client).await);
    // Running pods have addresses, as `kubectl get pods -o wide` shows them.
    let ips: std::collections::BTreeSet<String> = pods(&w.client)
        .await
        .iter()
        .filter_map(|p| {
            let s = p.status.as_ref()?;
            s.host_ip.as_ref()?;
            s.pod_ip.clone()
        })
        .collect();
    assert_eq!(ips.len(), 5, "a distinct pod IP and a host IP each: {ips:?}");

    let cs = claims(&w.client).await;
    assert_eq!(cs.len(), 1, "5 pods of 1 vCPU fit one node");
    let c = &cs[0];
    let name = c.metadata.name.clone().unwrap();
    assert!(name.starts_with("default-"));
    for t in ["Launched", "Registered", "Initialized", "Ready"] {
        assert!(condition(c, t), "{t} not True: {:?}", c.status);
    }
    let keys: Vec<&str> = c.spec.requirements.iter().map(|r| r.key.as_str()).collect();
    for k in [
        "karpenter.sh/nodepool",
        "kubernetes.io/arch",
        "karpenter.sh/capacity-type",
        "node.kubernetes.io/instance-type",
        "karpenter.k8s.aws/instance-category",
    ] {
        assert!(keys.contains(&k), "requirement {k} missing from {keys:?}");
    }
    let options = &c
        .spec
        .requirements
        .iter()
        .find(|r| r.key == "node.kubernetes.io/instance-type")
        .unwrap()
        .values;
    assert!(options.len() > 1 && options.len() <= 60, "{options:?}");
    assert_eq!(
        c.spec.resources.requests["cpu"].0, "5",
        "the pods' requests"
    );
    let labels = c.metadata.labels.clone().unwrap();
    assert_eq!(
        labels["node.kubernetes.io/instance-type"], "c6a.2xlarge",
        "the plan's cheapest fit"
    );
    assert_eq!(labels["karpenter.sh/capacity-type"], "on-demand");
    let status = c.status.clone().unwrap();
    let node_name = status.node_name.clone().unwrap();
    assert!(status.allocatable.contains_key("cpu"));
    assert_eq!(
        c.metadata.finalizers.clone().unwrap(),
        ["karpenter.sh/termination"]
    );

    let instances = w.cloud.instances();
    assert_eq!(instances.len(), 1);
    let tags = &instances[0].info.tags;
    assert_eq!(tags["karpenter.sh/nodepool"], "default");
    assert_eq!(tags["karpenter.sh/nodeclaim"], name);
    assert_eq!(tags["karpenter.k8s.aws/ec2nodeclass"], "default");
    assert_eq!(
        Some(instances[0].info.provider_id.as_str()),
        status.provider_id.as_deref()
    );

    let node = nodes(&w.client)
        .await
        .into_iter()
        .find(|n| n.metadata.name.as_deref() == Some(&node_name))
        .unwrap();
    let nl = node.metadata.labels.clone().unwrap();
    assert_eq!(nl["karpenter.sh/registered"], "true");
    assert_eq!(nl["karpenter.sh/initialized"], "true");
    assert_eq!(nl["karpenter.sh/nodepool"], "default");
    assert!(
        node.spec
            .clone()
            .unwrap()
            .taints
            .unwrap_or_default()
            .iter()
            .all(|t| t.key != "karpenter.sh/unregistered")
    );
    assert_eq!(
        node.metadata.finalizers.clone().unwrap(),
        ["karpenter.sh/termination"]
    );
    assert_eq!(
        node.metadata.owner_references.clone().unwrap()[0].name,
        name
    );
    assert!(
        pods(&w.client)
            .await
            .iter()
            .all(|p| p.spec.as_ref().unwrap().node_name.as_deref() == Some(&node_name))
    );

    let e = w.logs.entries();
    let found = log_with(&e, "found provisionable pod(s)");
    assert!(
        found[0]["Pods"]
            .as_str()
            .unwrap()
            .contains("default/inflate-")
    );
    assert_eq!(
        log_with(&e, "computed new nodeclaim(s) to fit pod(s)")[0]["nodeclaims"],
        1
    );
    let created = log_with(&e, "created nodeclaim");
    assert_eq!(
        (created.len(), created[0]["NodePool"]["name"].as_str()),
        (1, Some("default"))
    );
    let launched = log_with(&e, "launched nodeclaim");
    assert_eq!(launched.len(), 1);
    for k in [
        "provider-id",
        "instance-type",
        "zone",
        "capacity-type",
        "allocatable",
    ] {
        assert!(!launched[0][k].is_null(), "launched nodeclaim lacks {k}");
    }
    assert_eq!(launched[0]["NodeClaim"]["name"], name.as_str());
    assert_eq!(
        log_with(&e, "registered nodeclaim")[0]["Node"]["name"],
        node_name.as_str()
    );
    assert_eq!(log_with(&e, "initialized nodeclaim").len(), 1);
    let metric = |n: &str| e.iter().filter(|x| x.get(n).is_some()).count();
    for n in [
        "karpenter_nodeclaims_created_total",
        "karpenter_nodeclaims_launched_total",
        "karpenter_provisioner_scheduling_duration_seconds",
        "karpenter_pods_startup_duration_seconds",
    ] {
        assert!(metric(n) > 0, "no EMF line for {n}");
    }

    let published: Vec<String> = w
        .publisher
        .events()
        .iter()
        .map(|e| e.detail_type.clone())
        .collect();
    assert!(
        published.contains(&"NodeClaim Launched".to_string()),
        "{published:?}"
    );
    let events = Api::<Event>::namespaced(w.client.clone(), "default")
        .list(&ListParams::default())
        .await
        .unwrap()
        .items;
    let nominated: Vec<_> = events
        .iter()
        .filter(|e| e.reason.as_deref() == Some("Nominated"))
        .collect();
    assert!(nominated.len() >= 5, "a Nominated event per pod");
    assert!(nominated.iter().any(
        |e| e.message.as_deref() == Some(&format!("Pod should schedule on: nodeclaim/{name}"))
    ));
    assert!(
        violations(&w).await.is_empty(),
        "{:?}",
        violations(&w).await
    );
}
}

#[tokio::test]
async fn a_duplicate_delivery_launches_nothing_new() {
    let mut w = getting_started().await.unwrap();
    w.apply(&inflate(5)).await.unwrap();
    w.tick().await.unwrap();
    batch_ends(&w);
    let messages = w.queue.receive(100);
    assert!(
        !messages.is_empty(),
        "the scheduler's unschedulable marks queued hints"
    );
    let event = kerf_e2e::events::batch(&messages);
    let first = kerf_e2e::events::provisioner(&w.provisioner, &w.queue, "a", &event).await;
    let again = kerf_e2e::events::provisioner(&w.provisioner, &w.queue, "b", &event).await;
    assert_eq!(first["batchItemFailures"], serde_json::json!([]));
    assert_eq!(again["batchItemFailures"], serde_json::json!([]));
    assert_eq!(claims(&w.client).await.len(), 1);
    assert_eq!(
        w.cloud.calls("CreateFleet"),
        1,
        "the in-flight NodeClaim counts as capacity"
    );
    assert!(
        w.run_until(SignedDuration::from_mins(3), |c| all_running(c, 5))
            .await
            .unwrap()
    );
    assert_eq!(w.cloud.instances().len(), 1);
}

#[tokio::test]
async fn two_provisioners_at_once_launch_one_plan() {
    // What one provisioner alone launches for the same batch.
    let single = {
        let mut w = getting_started().await.unwrap();
        w.apply(&inflate(12)).await.unwrap();
        w.tick().await.unwrap();
        batch_ends(&w);
        let event = kerf_e2e::events::batch(&w.queue.receive(100));
        kerf_e2e::events::provisioner(&w.provisioner, &w.queue, "a", &event).await;
        claims(&w.client).await.len()
    };
    assert!(single >= 1, "12 pods of 1 vCPU need a node: {single}");
    let mut w = getting_started().await.unwrap();
    w.apply(&inflate(12)).await.unwrap();
    w.tick().await.unwrap();
    batch_ends(&w);
    let messages = w.queue.receive(100);
    let event = kerf_e2e::events::batch(&messages);
    let (a, b) = tokio::join!(
        kerf_e2e::events::provisioner(&w.provisioner, &w.queue, "a", &event),
        kerf_e2e::events::provisioner(&w.webhook, &w.queue, "b", &event),
    );
    assert_eq!(
        (
            a["batchItemFailures"].clone(),
            b["batchItemFailures"].clone()
        ),
        (serde_json::json!([]), serde_json::json!([]))
    );
    let n = claims(&w.client).await.len();
    assert_eq!(n, single, "exactly the claims of one plan");
    assert_eq!(
        w.cloud.calls("CreateFleet"),
        n,
        "one launch per claim, no second plan"
    );
    assert!(
        w.run_until(SignedDuration::from_mins(3), |c| all_running(c, 12))
            .await
            .unwrap()
    );
    assert_eq!(
        claims(&w.client).await.len(),
        n,
        "the loser's re-queued hint found nothing to do"
    );
    assert!(violations(&w).await.is_empty());
}

#[tokio::test]
async fn a_pod_no_instance_type_fits_is_published_as_unschedulable_with_its_reason() {
    let mut w = getting_started().await.unwrap();
    w.apply(&inflate(1).replace("cpu: 1", "cpu: 1000"))
        .await
        .unwrap();
    w.run_for(SignedDuration::from_secs(30)).await.unwrap();
    assert!(claims(&w.client).await.is_empty(), "nothing launched");
    let events = w.publisher.events();
    let unschedulable: Vec<_> = events
        .iter()
        .filter(|e| e.detail_type == "Pods Unschedulable")
        .collect();
    assert!(!unschedulable.is_empty(), "{events:?}");
    let detail = unschedulable[0].detail.to_string();
    assert!(
        detail.contains("inflate") && detail.contains("cpu"),
        "the event names the pod and the resource no type has: {detail}"
    );
}

#[tokio::test]
async fn a_launch_that_could_not_be_recorded_is_recorded_by_the_next_pass_with_the_same_instance() {
    let mut w = getting_started().await.unwrap();
    w.sim().unwrap().inject(kerf_sim::Fault {
        method: "PATCH".into(),
        path_contains: "karpenter.sh/v1/nodeclaims/".into(),
        // Every attempt of the claim's first patch (the launch labels).
        times: 3,
        error: kerf_sim::ApiError::internal("etcd is sad"),
    });
    w.apply(&inflate(5)).await.unwrap();
    let ok = w
        .run_until(SignedDuration::from_mins(4), |c| all_running(c, 5))
        .await
        .unwrap();
    let logs: Vec<String> = w.logs.lines();
    assert!(
        ok,
        "pods not running: {:?}\n{logs:#?}",
        not_running(&w.client).await
    );
    assert_eq!(w.cloud.instances().len(), 1, "one instance ever");
    assert_eq!(w.logs.with_message("could not record the launch").len(), 1);
}

/// Karpenter's batching: hints whose pods arrived less than a second ago are carried on as
/// one delayed hint (no pass, nothing launched); once arrivals stop, one pass plans them all.
#[tokio::test]
async fn pods_still_arriving_are_batched_until_they_stop() {
    let mut w = getting_started().await.unwrap();
    w.apply(&inflate(5)).await.unwrap();
    w.tick().await.unwrap();
    let messages = w.queue.receive(100);
    assert!(!messages.is_empty(), "the webhook queued hints");
    let event = kerf_e2e::events::batch(&messages);
    let r = kerf_e2e::events::provisioner(&w.provisioner, &w.queue, "a", &event).await;
    assert_eq!(r["batchItemFailures"], serde_json::json!([]));
    assert!(
        claims(&w.client).await.is_empty(),
        "no pass while pods arrive"
    );
    // One hint carries the batch on, a second later, with its first arrival.
    let carried = w.queue.receive(100);
    assert!(carried.is_empty(), "delayed: not visible yet");
    w.clock.advance(kerf_control::provision::batch::BATCH_IDLE);
    let carried = w.queue.receive(100);
    assert_eq!(carried.len(), 1, "{carried:?}");
    let hint = kerf_control::ports::hint::Hint::parse(&carried[0].body).unwrap();
    assert_eq!(hint.pods.len(), 5, "{hint:?}");
    assert!(hint.since.is_some(), "{hint:?}");
    let event = kerf_e2e::events::batch(&carried);
    kerf_e2e::events::provisioner(&w.provisioner, &w.queue, "b", &event).await;
    assert_eq!(
        claims(&w.client).await.len(),
        1,
        "one pass for the whole batch"
    );
}

on_both! {
async fn a_new_nodepool_and_its_class_show_ready_within_seconds(on) {
    // Karpenter writes a NodePool's readiness as soon as it sees it; Kerf's webhook wakes the
    // disruption function on the create, so READY does not wait for the next scheduled pass.
    let mut w = getting_started_on(on, WorldOptions::default()).await;
    let ready = w
        .run_until(SignedDuration::from_secs(15), |c| async move {
            let pools: Api<kerf_api::v1::NodePool> = Api::all(c.clone());
            let classes: Api<kerf_api::v1::EC2NodeClass> = Api::all(c);
            let ready = |conds: Option<&Vec<kerf_api::v1::Condition>>| {
                conds.into_iter().flatten().any(|c| {
                    c.type_ == "Ready" && c.status == kerf_api::v1::ConditionStatus::True
                })
            };
            let pool = pools.get("default").await.unwrap();
            let class = classes.get("default").await.unwrap();
            ready(pool.status.as_ref().map(|s| &s.conditions))
                && ready(class.status.as_ref().map(|s| &s.conditions))
        })
        .await
        .unwrap();
    assert!(ready, "the NodePool and its EC2NodeClass are not Ready after 15 s");
}
}
