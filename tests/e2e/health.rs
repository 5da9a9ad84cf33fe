//! Instance health end to end in simulated time, through the disruption function's minute
//! poll of instance status: a failed status check counts after two minutes and terminates
//! forcefully (a PDB that allows no eviction does not hold a broken node), a scheduled
//! retirement drains as usual (the PDB holds it until it allows evictions); both get their
//! replacement first and lose no pod.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use jiff::SignedDuration;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kerf_api::v1::NodeClaim;
use kerf_control::ports::HealthCategory;
use kerf_e2e::world::*;
use kerf_sim::world::World;
use kube::api::{Api, DeleteParams};

const PDB: &str = "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: inflate\n  namespace: default\nspec:\n  minAvailable: 6\n  selector:\n    matchLabels:\n      app: inflate\n";

/// Six `inflate` pods running, consolidation off, and a PDB that allows no eviction.
async fn cluster() -> World {
    let mut w = getting_started_with(coarse()).await.unwrap();
    let pool = read("examples/getting-started/nodepool.yaml")
        .replace("consolidateAfter: 1m", "consolidateAfter: Never");
    w.apply(&pool).await.unwrap();
    w.apply(&inflate(6)).await.unwrap();
    assert!(
        w.run_until(SignedDuration::from_mins(3), |c| all_running(c, 6))
            .await
            .unwrap()
    );
    w.apply(PDB).await.unwrap();
    w
}

fn instance_of(c: &NodeClaim) -> String {
    let p = kerf_control::claim::provider_id(c).unwrap();
    p.rsplit('/').next().unwrap().to_string()
}

async fn claim(w: &World, name: &str) -> Option<NodeClaim> {
    let claims: Api<NodeClaim> = Api::all(w.client.clone());
    claims.get_opt(name).await.unwrap()
}

fn annotation(c: &NodeClaim, k: &str) -> Option<String> {
    c.metadata.annotations.as_ref()?.get(k).cloned()
}

#[tokio::test]
async fn a_failed_status_check_replaces_and_terminates_the_node_past_its_pdb() {
    let mut w = cluster().await;
    let victim = claims(&w.client).await[0].clone();
    let name = victim.metadata.name.clone().unwrap();
    let impaired_at = w.now();
    w.cloud.impair(
        &instance_of(&victim),
        HealthCategory::InstanceStatus,
        impaired_at,
    );

    w.run_for(SignedDuration::from_secs(90)).await.unwrap();
    let c = claim(&w, &name).await.unwrap();
    assert!(
        c.metadata.deletion_timestamp.is_none(),
        "a check failing for 90 s is not acted on yet"
    );

    let name2 = name.clone();
    let deleting = w
        .run_until(SignedDuration::from_mins(2), |cl| {
            let name = name2.clone();
            async move {
                let claims: Api<NodeClaim> = Api::all(cl);
                claims
                    .get_opt(&name)
                    .await
                    .unwrap()
                    .is_none_or(|c| c.metadata.deletion_timestamp.is_some())
            }
        })
        .await
        .unwrap();
    assert!(deleting, "acted on within the next minute's poll");
    let acted = w.now();
    assert!(acted.duration_since(impaired_at) >= SignedDuration::from_secs(120));
    {
        let c = claim(&w, &name).await.expect("held by its finalizer");
        let deadline = annotation(&c, "karpenter.sh/nodeclaim-termination-timestamp");
        let deadline: jiff::Timestamp = deadline.expect("a forceful deadline").parse().unwrap();
        assert!(
            deadline <= acted,
            "the deadline is now: {deadline} > {acted}"
        );
    }

    let gone = replaced(&mut w, &name, 6, SignedDuration::from_mins(2))
        .await
        .unwrap();
    assert!(
        gone,
        "the broken node is gone despite the PDB and every pod runs again: {:?}",
        not_running(&w.client).await
    );
    let logs = w.logs.entries();
    assert!(logs.iter().any(|x| {
        x["message"] == "initiating delete from interruption message"
            && x["messageKind"] == "instance_status"
    }));
    assert!(
        logs.iter().any(|x| x
            .get("karpenter_interruption_instance_status_unhealthy_total")
            .is_some()),
        "the unhealthy metric"
    );
    assert!(
        violations(&w).await.is_empty(),
        "{:?}",
        violations(&w).await
    );
}

#[tokio::test]
async fn a_scheduled_retirement_drains_respecting_the_pdb() {
    let mut w = cluster().await;
    let victim = claims(&w.client).await[0].clone();
    let name = victim.metadata.name.clone().unwrap();
    let before = claims(&w.client).await.len();
    w.cloud
        .impair(&instance_of(&victim), HealthCategory::EventStatus, w.now());

    w.run_for(SignedDuration::from_mins(3)).await.unwrap();
    let c = claim(&w, &name).await.expect("held by the PDB");
    assert!(
        c.metadata.deletion_timestamp.is_some(),
        "its termination started"
    );
    assert!(
        claims(&w.client).await.len() > before,
        "a replacement was launched at once"
    );
    assert!(all_running(w.client.clone(), 6).await, "no pod was evicted");

    let pdbs: Api<PodDisruptionBudget> = Api::namespaced(w.client.clone(), "default");
    pdbs.delete("inflate", &DeleteParams::default())
        .await
        .unwrap();
    let gone = replaced(&mut w, &name, 6, SignedDuration::from_mins(3))
        .await
        .unwrap();
    assert!(gone, "{:?}", not_running(&w.client).await);
    assert!(
        violations(&w).await.is_empty(),
        "{:?}",
        violations(&w).await
    );
}
