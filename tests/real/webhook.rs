//! The real API server calls Kerf's webhook: the configurations `kerf webhooks` prints,
//! applied to kube-apiserver with the webhook served over HTTPS on 127.0.0.1, so the
//! server's own CEL evaluates Kerf's `matchConditions` and its real AdmissionReview bodies,
//! timeouts and failure policies reach Kerf's real handler (under the webhook function's
//! RBAC identity). Provisioning is then driven by what the webhook queues alone — no
//! scheduled sweep: kube-scheduler marks the pods unschedulable, the `pods/status` hint
//! reaches the provisioner's queue, the Node's CREATE is patched by the registration
//! webhook, and a pod deleted from its node becomes a pod event on the disruption queue.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use jiff::SignedDuration;
use kerf_e2e::real::api::{apply, apply_all, status};
use kerf_e2e::real::cluster::ControlPlane;
use kerf_e2e::real::eventually;
use kerf_e2e::real::functions::{Provisioner, Shared};
use kerf_e2e::real::kubelet::KubeletBridge;
use kerf_e2e::real::webhook::{Call, Transition, WebhookServer};
use serde_json::{Value, json};

use crate::observe::{claims, condition, inflate_pods, running, summary};
use crate::setup::function;
use crate::{setup, yaml};

const CLUSTER: &str = "kerf-real";

/// The getting-started NodePool asking for a capacity type that does not exist: the CRD's
/// schema accepts it, Kerf's validation refuses it.
fn bad_capacity_type() -> Value {
    let mut np = yaml::file("examples/getting-started/nodepool.yaml")
        .into_iter()
        .find(|d| d["kind"] == "NodePool")
        .unwrap();
    np["metadata"]["name"] = json!("bad-capacity");
    let reqs = np["spec"]["template"]["spec"]["requirements"]
        .as_array_mut()
        .unwrap();
    for r in reqs.iter_mut() {
        if r["key"] == "karpenter.sh/capacity-type" {
            r["values"] = json!(["dedicated"]);
        }
    }
    np
}

fn of<'a>(calls: &'a [Call], resource: &str, operation: &str) -> Vec<&'a Call> {
    calls
        .iter()
        .filter(|c| c.resource == resource && c.operation == operation)
        .collect()
}

/// Delivers the provisioner's queue (as its event source mapping does) and runs the kubelet
/// bridge until the 5 inflate pods run and their NodeClaim is initialized. No sweep.
async fn provision_from_hints(cp: &ControlPlane, shared: &Shared, prov: &mut Provisioner) {
    let admin = cp.admin().await;
    let started = Instant::now();
    let mut bridge = KubeletBridge::new(cp).await;
    loop {
        let last = prov.deliver().await;
        bridge.step(&shared.cloud).await;
        let pods = inflate_pods(&admin).await;
        let cs = claims(&admin).await;
        let initialized = cs.len() == 1 && condition(&cs[0], "Initialized") == Some("True");
        if running(&pods).len() == 5 && initialized {
            eprintln!(
                "[real] 5 pods Running, NodeClaim initialized {:.1}s after the first hint, by hints alone",
                started.elapsed().as_secs_f64()
            );
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "not provisioned by the webhook's hints within 90 s: pods: {}\nNodeClaims: {:#}\nlast delivery: {last:?}\nwarnings: {:#?}",
            summary(&pods),
            json!(cs),
            shared.warnings()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_api_server_calls_kerfs_webhook_and_its_hints_provision() {
    let cp = ControlPlane::up("hook").await;
    let admin = cp.admin().await;
    setup::install_crds(&admin).await;
    setup::install_rbac(&admin).await;
    let shared = Shared::new(SignedDuration::from_secs(2));
    let mut prov = Provisioner::new(&shared, &function(&cp, "provisioner").await, CLUSTER);
    let timers = shared.queue();
    let hook_ctx = shared.ctx(&function(&cp, "webhook").await, CLUSTER);
    let secret = "s3cr3t-path-segment";
    let server = WebhookServer::start(hook_ctx, prov.queue.clone(), timers.clone(), secret).await;
    let mut configs = yaml::documents(&server.rendered(CLUSTER));
    assert_eq!(configs.len(), 2, "{configs:#?}");
    server.trust(&mut configs);
    apply_all(&admin, &configs).await;

    // Validation: the API server asks Kerf, and refuses what Kerf refuses, with its message
    // (403 Forbidden, as the in-process server answers a denial).
    let bad = bad_capacity_type();
    let message = eventually(
        "the validation webhook refuses a NodePool with capacity type \"dedicated\"",
        Duration::from_secs(30),
        Duration::from_millis(250),
        || {
            let (admin, bad) = (admin.clone(), bad.clone());
            async move {
                match apply(&admin, &bad, false).await {
                    Ok(_) => Err("accepted".to_string()),
                    Err(e) => {
                        let s = status(e);
                        (s.code == 403
                            && s.reason == "Forbidden"
                            && s.message.contains("validation.kerf.dev"))
                        .then_some(s.message.clone())
                        .ok_or_else(|| format!("{s:?}"))
                    }
                }
            }
        },
    )
    .await;
    assert!(
        message.contains("no valid capacity type in [\"dedicated\"]"),
        "{message}"
    );
    apply_all(
        &admin,
        &yaml::file("examples/getting-started/nodepool.yaml"),
    )
    .await;

    apply_all(&admin, &yaml::file("examples/getting-started/inflate.yaml")).await;
    eventually(
        "the pods' unschedulable hint on the provisioner's queue",
        Duration::from_secs(30),
        Duration::from_millis(200),
        || {
            let q = prov.queue.clone();
            async move {
                (!q.is_empty())
                    .then_some(())
                    .ok_or_else(|| "empty".to_string())
            }
        },
    )
    .await;
    provision_from_hints(&cp, &shared, &mut prov).await;

    // One pod deleted from its node: a pod event on the disruption function's queue.
    let pod = inflate_pods(&admin).await[0]["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    let pods = kube::Api::<k8s_openapi::api::core::v1::Pod>::namespaced(admin.clone(), "default");
    pods.delete(&pod, &Default::default()).await.unwrap();
    eventually(
        "a pod event on the disruption queue",
        Duration::from_secs(10),
        Duration::from_millis(200),
        || {
            let t = timers.clone();
            async move {
                (!t.is_empty())
                    .then_some(())
                    .ok_or_else(|| "empty".to_string())
            }
        },
    )
    .await;

    let calls = server.calls();
    eprintln!("[real] reviews: {calls:#?}");
    let refused = of(&calls, "nodepools", "CREATE");
    assert!(
        refused
            .iter()
            .any(|c| !c.allowed && c.name == "bad-capacity"),
        "{refused:#?}"
    );
    assert!(
        refused.iter().any(|c| c.allowed && c.name == "default"),
        "{refused:#?}"
    );
    // Kerf's own writes never depend on its webhook: the API server's CEL (the
    // configuration's matchConditions) keeps the provisioner's NodeClaim creates away from it.
    let created = of(&calls, "nodeclaims", "CREATE");
    assert!(
        created.is_empty(),
        "Kerf's own NodeClaim creates were not sent to its webhook: {created:#?}"
    );
    let registered = of(&calls, "nodes", "CREATE");
    assert!(
        registered.len() == 1 && registered[0].allowed && registered[0].patched,
        "the Node's CREATE was patched once: {registered:#?}"
    );
    // The API server's CEL let through only transitions (none of a pod's or a node's many
    // other status writes), and every one Kerf needs. A write that kube-apiserver retries
    // after a conflict is reviewed again: a transition may come more than once.
    let hinted: Vec<&Call> = calls
        .iter()
        .filter(|c| c.resource.starts_with("pods") || c.resource.starts_with("nodes/"))
        .chain(of(&calls, "nodes", "UPDATE"))
        .collect();
    let no_transition: Vec<&&Call> = hinted.iter().filter(|c| c.transition.is_none()).collect();
    assert!(
        no_transition.is_empty(),
        "reviews without a transition: {no_transition:#?}"
    );
    let saw = |t: Transition| {
        hinted
            .iter()
            .filter(|c| c.transition == Some(t))
            .map(|c| c.name.as_str())
            .collect::<BTreeSet<_>>()
    };
    assert_eq!(saw(Transition::Unschedulable).len(), 5, "{hinted:#?}");
    assert!(saw(Transition::Running).len() >= 5, "{hinted:#?}");
    assert_eq!(saw(Transition::Ready).len(), 1, "{hinted:#?}");
    assert_eq!(
        saw(Transition::LeavesNode),
        BTreeSet::from([pod.as_str()]),
        "one pod event, for {pod}: {hinted:#?}"
    );
    let warnings = shared.warnings();
    assert!(
        !warnings.iter().any(|w| w.contains("orbidden")),
        "the webhook's requests were authorized: {warnings:#?}"
    );
}
