//! Provisioning and termination end to end on the real control plane, through Kerf's real
//! handlers under the functions' own identities: the getting-started NodePool and the
//! 5-pod inflate Deployment; the provisioner's handler invoked every second as its
//! schedule would; EC2 simulated (instances boot in 2 s); the kubelet bridge registering
//! each running instance's Node as the node itself, KWOK running it; the real
//! kube-scheduler binding the pods. Then the NodeClaim is deleted as `kubectl delete` would
//! and the termination handler drains the node through the Eviction API (a
//! PodDisruptionBudget covers the pods), terminates the instance and deletes the Node.

use std::time::{Duration, Instant};

use jiff::SignedDuration;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kerf_api::v1::NodeClaim;
use kerf_e2e::real::api::apply_all;
use kerf_e2e::real::cluster::ControlPlane;
use kerf_e2e::real::eventually;
use kerf_e2e::real::functions::{Provisioner, Shared, Terminator};
use kerf_e2e::real::kubelet::{KubeletBridge, UNREGISTERED_TAINT};
use kube::Client;
use kube::api::{Api, DeleteParams};
use serde_json::{Value, json};

use crate::observe::{
    Recorder, claims, condition, inflate_pods, node, running, summary, unschedulable,
};
use crate::setup::function;
use crate::{setup, yaml};

const CLUSTER: &str = "kerf-real";

/// Invokes the provisioner and runs the kubelet bridge every second until the 5 inflate
/// pods run; returns their names.
pub(crate) async fn provision(
    cp: &ControlPlane,
    admin: &Client,
    shared: &Shared,
    prov: &mut Provisioner,
) -> Vec<String> {
    let started = Instant::now();
    // The batching window: the first invocation comes once the Deployment's pods are all
    // pending (kube-scheduler marked them Unschedulable), as Karpenter's batch window waits
    // for pods to stop arriving.
    eventually(
        "5 unschedulable inflate pods",
        Duration::from_secs(30),
        Duration::from_millis(200),
        || {
            let admin = admin.clone();
            async move {
                let pods = inflate_pods(&admin).await;
                let pending = pods.iter().filter(|p| unschedulable(p)).count();
                (pending == 5).then_some(()).ok_or_else(|| summary(&pods))
            }
        },
    )
    .await;
    let mut bridge = KubeletBridge::new(cp).await;
    loop {
        let last = prov.sweep().await;
        for n in bridge.step(&shared.cloud).await {
            eprintln!(
                "[real] {:.1}s: the kubelet registered Node {n}",
                started.elapsed().as_secs_f64()
            );
        }
        let pods = inflate_pods(admin).await;
        let up = running(&pods);
        if up.len() == 5 {
            eprintln!(
                "[real] 5 pods Running {:.1}s after the Deployment",
                started.elapsed().as_secs_f64()
            );
            return up;
        }
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "5 inflate pods not Running within 90 s: pods: {}\nNodeClaims: {:#}\nlast sweep: {last}\nwarnings: {:#?}",
            summary(&pods),
            json!(claims(admin).await),
            shared.warnings()
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// The one NodeClaim, once Registered and Initialized (the provisioner keeps running).
pub(crate) async fn initialized_claim(admin: &Client, prov: &mut Provisioner) -> Value {
    let started = Instant::now();
    loop {
        let all = claims(admin).await;
        assert_eq!(all.len(), 1, "exactly one NodeClaim: {:#}", json!(all));
        let c = &all[0];
        if condition(c, "Registered") == Some("True") && condition(c, "Initialized") == Some("True")
        {
            return c.clone();
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "NodeClaim not Registered and Initialized: {c:#}"
        );
        prov.sweep().await;
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

fn labelled(node: &Value, key: &str) -> Option<String> {
    node["metadata"]["labels"][key].as_str().map(str::to_string)
}

/// Deletes the NodeClaim as a user would and runs the termination function until it is gone.
pub(crate) async fn terminate(cp: &ControlPlane, admin: &Client, shared: &Shared, claim: &str) {
    let term = Terminator::new(shared, &function(cp, "termination").await, CLUSTER);
    Api::<NodeClaim>::all(admin.clone())
        .delete(claim, &DeleteParams::default())
        .await
        .unwrap();
    term.enqueue(claim).await;
    let started = Instant::now();
    let claims_api = Api::<NodeClaim>::all(admin.clone());
    while claims_api.get_opt(claim).await.unwrap().is_some() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "NodeClaim {claim} not gone within 60 s: {:#}\nwarnings: {:#?}",
            json!(claims_api.get_opt(claim).await.unwrap()),
            shared.warnings()
        );
        if let Some(resp) = term.deliver().await {
            eprintln!(
                "[real] {:.1}s: termination: {resp}",
                started.elapsed().as_secs_f64()
            );
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    eprintln!(
        "[real] NodeClaim {claim} gone {:.1}s after its deletion",
        started.elapsed().as_secs_f64()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inflate_runs_on_a_node_kerf_launched_and_drains_through_evictions() {
    let (cp, admin) = setup::getting_started("prov").await;
    let shared = Shared::new(SignedDuration::from_secs(2));
    let mut prov = Provisioner::new(&shared, &function(&cp, "provisioner").await, CLUSTER);
    apply_all(&admin, &yaml::file("examples/getting-started/inflate.yaml")).await;

    let pods = provision(&cp, &admin, &shared, &mut prov).await;
    let claim = initialized_claim(&admin, &mut prov).await;
    let claim_name = claim["metadata"]["name"].as_str().unwrap().to_string();
    let node_name = claim["status"]["nodeName"]
        .as_str()
        .expect("the NodeClaim names its Node")
        .to_string();
    let n = node(&admin, &node_name)
        .await
        .expect("the NodeClaim's Node exists");
    assert_eq!(
        labelled(&n, "karpenter.sh/nodepool").as_deref(),
        Some("default"),
        "{n:#}"
    );
    assert_eq!(
        labelled(&n, "karpenter.sh/initialized").as_deref(),
        Some("true"),
        "{n:#}"
    );
    assert_eq!(
        labelled(&n, "karpenter.sh/registered").as_deref(),
        Some("true"),
        "{n:#}"
    );
    let taints = n["spec"]["taints"].as_array().cloned().unwrap_or_default();
    assert!(
        !taints.iter().any(|t| t["key"] == UNREGISTERED_TAINT),
        "unregistered taint left: {taints:?}"
    );
    for p in inflate_pods(&admin).await {
        assert_eq!(
            p["spec"]["nodeName"],
            json!(node_name),
            "{}",
            p["metadata"]["name"]
        );
    }
    let pids: Vec<&str> = vec![claim["status"]["providerID"].as_str().unwrap()];
    let live: Vec<_> = shared
        .cloud
        .instances()
        .into_iter()
        .filter(|i| i.info.state != "terminated")
        .collect();
    assert_eq!(live.len(), 1, "one instance: {live:?}");
    for i in &live {
        assert!(
            pids.contains(&i.info.provider_id.as_str()),
            "instance {} has no NodeClaim",
            i.info.id
        );
    }

    // Termination: a PDB covers the pods; once the disruption controller has computed it,
    // every eviction goes through it.
    let pdb = json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "inflate", "namespace": "default"},
        "spec": {"maxUnavailable": 5, "selector": {"matchLabels": {"app": "inflate"}}}});
    apply_all(&admin, &[pdb]).await;
    let pdbs = Api::<PodDisruptionBudget>::namespaced(admin.clone(), "default");
    eventually(
        "PDB computed",
        Duration::from_secs(30),
        Duration::from_millis(250),
        || {
            let pdbs = pdbs.clone();
            async move {
                let p = pdbs.get("inflate").await.map_err(|e| e.to_string())?;
                let s = p.status.clone().unwrap_or_default();
                (s.observed_generation == p.metadata.generation && s.disruptions_allowed == Some(5))
                    .then_some(())
                    .ok_or_else(|| format!("{s:?}"))
            }
        },
    )
    .await;
    let pod_events = Recorder::start(
        Api::<Pod>::namespaced(admin.clone(), "default"),
        "app=inflate",
    )
    .await;
    let pdb_events = Recorder::start(pdbs.clone(), "").await;
    terminate(&cp, &admin, &shared, &claim_name).await;

    assert!(
        node(&admin, &node_name).await.is_none(),
        "Node {node_name} still there"
    );
    let states: Vec<String> = shared
        .cloud
        .instances()
        .iter()
        .map(|i| i.info.state.clone())
        .collect();
    assert_eq!(states, ["terminated"], "the instance is terminated");
    let events = pod_events.events();
    for p in &pods {
        let of_pod = |t: &str| {
            events
                .iter()
                .filter(|(k, o)| k == t && o["metadata"]["name"] == json!(p))
                .count()
        };
        let evicted = events.iter().any(|(_, o)| {
            o["metadata"]["name"] == json!(p)
                && o["status"]["conditions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|c| {
                        c["type"] == "DisruptionTarget" && c["reason"] == "EvictionByEvictionAPI"
                    })
        });
        assert!(
            evicted,
            "pod {p} was not evicted through the Eviction API: {events:#?}"
        );
        assert_eq!(of_pod("DELETED"), 1, "pod {p} deleted once");
    }
    // Every request of the functions was authorized: nothing they logged was refused.
    let warnings = shared.warnings();
    eprintln!("[real] the functions' warnings and errors: {warnings:#?}");
    let refused: Vec<&String> = warnings
        .iter()
        .filter(|w| w.contains("orbidden") || w.contains(" 403"))
        .collect();
    assert!(refused.is_empty(), "requests refused: {refused:#?}");
    let disrupted: std::collections::BTreeSet<String> = pdb_events
        .events()
        .iter()
        .flat_map(|(_, o)| {
            o["status"]["disruptedPods"]
                .as_object()
                .cloned()
                .unwrap_or_default()
                .keys()
                .cloned()
                .collect::<Vec<_>>()
        })
        .collect();
    for p in &pods {
        assert!(
            disrupted.contains(p),
            "the PDB did not record the eviction of {p}: {disrupted:?}"
        );
    }
}
