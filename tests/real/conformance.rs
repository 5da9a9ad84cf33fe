//! The conformance diff: the requests Kerf's functions, the simulated cluster's components and
//! kubectl make in a getting-started run on the in-process server (provisioning, a NodeClaim
//! deleted and drained through the Eviction API under a PodDisruptionBudget, emptiness, then
//! kubectl's get, describe, apply, scale, explain and delete) are recorded with their bodies
//! and replayed, in order, against a fresh in-process server and a fresh kube-apiserver
//! (etcd and kube-apiserver alone, with Kerf's CRDs, so the replay is the only writer). Every
//! difference in status code, kind, Status reason or body shape must be one the README
//! writes down ([`KNOWN`]); the whole report is printed.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use jiff::SignedDuration;
use kerf_e2e::real::cluster::ControlPlane;
use kerf_e2e::real::conformance::{Known, Report, diff, unexplained};

use crate::conformance_known::{KNOWN, OPEN};
use kerf_e2e::real::eventually;
use kerf_e2e::real::replay::{Step, replay, steps};
use kerf_e2e::world::{all_running, claims, getting_started_with, inflate, pods, replaced, repo};
use kerf_sim::world::{World, WorldOptions};
use kube::Client;
use kube::api::{Api, DeleteParams};
use serde_json::json;

use crate::setup::install_crds;

/// A budget that lets one pod go at a time: a drain's evictions are refused (429) and retried
/// until the evicted pods run again elsewhere.
const PDB: &str = "apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: inflate, namespace: default}
spec:
  maxUnavailable: 1
  selector: {matchLabels: {app: inflate}}
";

/// The getting-started run, recorded.
async fn kerf_run(w: &mut World) {
    w.apply(&inflate(5)).await.unwrap();
    w.apply(PDB).await.unwrap();
    let ran = w.run_until(SignedDuration::from_mins(3), |c| all_running(c, 5));
    assert!(ran.await.unwrap(), "5 inflate pods never ran");
    let claim = claims(&w.client).await[0].metadata.name.clone().unwrap();
    Api::<kerf_api::v1::NodeClaim>::all(w.client.clone())
        .delete(&claim, &DeleteParams::default())
        .await
        .unwrap();
    kerf_control::retire::enqueue(&w.termination_queue, &claim, 0)
        .await
        .unwrap();
    let back = replaced(w, &claim, 5, SignedDuration::from_mins(5))
        .await
        .unwrap();
    assert!(back, "the deleted NodeClaim's pods never ran again");
    w.apply(&inflate(0)).await.unwrap();
    let emptied = w.run_until(SignedDuration::from_mins(5), |c| async move {
        pods(&c).await.is_empty() && claims(&c).await.is_empty()
    });
    assert!(emptied.await.unwrap(), "the empty node was never removed");
}

/// The kubectl binaries at hand: the control plane's, and Debian's when installed.
fn kubectls() -> Vec<std::path::PathBuf> {
    ["target/cluster/bin/kubectl", ".venv/bin/kubectl"]
        .iter()
        .map(|p| repo().join(p))
        .filter(|p| p.exists())
        .collect()
}

/// What a user does with kubectl against the server at `url`.
fn kubectl_session(url: &str, dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    let kc = json!({"apiVersion": "v1", "kind": "Config", "current-context": "sim",
        "clusters": [{"name": "sim", "cluster": {"server": url}}],
        "users": [{"name": "sim", "user": {}}],
        "contexts": [{"name": "sim", "context": {"cluster": "sim", "user": "sim"}}]});
    std::fs::write(&kubeconfig, kc.to_string()).unwrap();
    let inflate = repo().join("examples/getting-started/inflate.yaml");
    let inflate = inflate.to_str().unwrap();
    let session: &[&[&str]] = &[
        &["get", "nodes", "-o", "wide"],
        &["get", "nodepools"],
        &["get", "nodeclaims", "-o", "yaml"],
        &["get", "ec2nodeclasses"],
        &["describe", "nodepool", "default"],
        &["apply", "-f", inflate],
        &["apply", "--server-side", "-f", inflate],
        &["scale", "deployment", "inflate", "--replicas", "2"],
        &["get", "pods", "-A", "-o", "wide"],
        &["get", "events", "-A"],
        &["get", "pdb", "-A"],
        &["explain", "nodepool.spec.disruption"],
        &["delete", "deployment", "inflate"],
        &["get", "deployment", "inflate"],
    ];
    for bin in kubectls() {
        let cache = dir.join(format!("cache-{}", bin.to_string_lossy().len()));
        for args in session {
            // Whatever kubectl answers, its requests are what is compared.
            let _ = Command::new(&bin)
                .env("KUBECONFIG", &kubeconfig)
                .arg("--cache-dir")
                .arg(&cache)
                .args(*args)
                .output()
                .unwrap();
        }
    }
}

/// The recording: the run and the kubectl session on one in-process server.
async fn record() -> Vec<Step> {
    let options = WorldOptions {
        serial: true,
        ..WorldOptions::default()
    };
    let mut w = getting_started_with(options).await.unwrap();
    let sim = w.sim().unwrap();
    sim.record_bodies(true);
    w.apply(
        &std::fs::read_to_string(repo().join("examples/getting-started/nodepool.yaml")).unwrap(),
    )
    .await
    .unwrap();
    kerf_run(&mut w).await;
    let url = w.sim().unwrap().url().to_string();
    let dir = repo().join(format!("target/tmp/conformance-{}", std::process::id()));
    tokio::task::spawn_blocking(move || kubectl_session(&url, &dir))
        .await
        .unwrap();
    steps(&w.sim().unwrap().requests())
}

/// What both servers have before the replay: Kerf's namespace (its Lease and offerings cache
/// live there; the in-process server would not need it) and the `default` ServiceAccount
/// pods run as (kube-controller-manager makes it, and the ServiceAccount admission plugin
/// refuses pods without it; the in-process server serves no ServiceAccounts and needs none).
async fn prelude(client: &Client, real: bool) {
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kerf"}});
    let sa = json!({"apiVersion": "v1", "kind": "ServiceAccount",
        "metadata": {"name": "default", "namespace": "default"}});
    kerf_e2e::real::api::apply(client, &ns, false)
        .await
        .unwrap();
    if !real {
        return;
    }
    kerf_e2e::real::api::apply(client, &sa, false)
        .await
        .unwrap();
    // The admission plugin reads ServiceAccounts from its cache: wait until it has this one.
    let probe = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "probe", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "pause"}]}});
    eventually(
        "pods admitted in namespace default",
        Duration::from_secs(30),
        Duration::from_millis(200),
        || {
            let (client, probe) = (client.clone(), probe.clone());
            async move {
                kerf_e2e::real::api::apply(&client, &probe, true)
                    .await
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            }
        },
    )
    .await;
}

fn print(report: &Report) {
    for (class, diffs) in report {
        eprintln!("{class}");
        for (d, n) in diffs {
            eprintln!("    {d} ({n}×)");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_servers_answer_kerfs_and_kubectls_requests_alike_or_as_written_down() {
    let steps = record().await;
    assert!(steps.len() > 200, "only {} requests recorded", steps.len());

    // The in-process server as the simulated world runs it: bound pods deleted gracefully,
    // evictions going by the budgets' status its disruption controller keeps.
    let options = kerf_sim::SimOptions {
        graceful_pod_deletion: true,
        disruption_controller: true,
        ..kerf_sim::SimOptions::default()
    };
    let fresh = kerf_sim::Sim::builder()
        .options(options)
        .start()
        .await
        .unwrap();
    let here = fresh.client().unwrap();
    prelude(&here, false).await;
    let in_process = replay(&here, &steps).await;

    let cp = ControlPlane::api_only("conformance").await;
    let admin = cp.admin().await;
    install_crds(&admin).await;
    prelude(&admin, true).await;
    let real = replay(&admin, &steps).await;

    let report = diff(&steps, &in_process, &real);
    eprintln!(
        "[conformance] {} requests replayed; {} classes differ:",
        steps.len(),
        report.len()
    );
    print(&report);
    eprintln!(
        "[conformance] {} differences open (not explained yet):",
        OPEN.len()
    );
    for k in OPEN {
        eprintln!("    {}: {}", k.class, k.why);
    }
    let written: Vec<Known> = KNOWN.iter().chain(OPEN).copied().collect();
    let left = unexplained(&report, &written);
    assert!(
        left.is_empty(),
        "{} differences are neither fixed nor written down:\n{}",
        left.len(),
        left.join("\n")
    );
}
