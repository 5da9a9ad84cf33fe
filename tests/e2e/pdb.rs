//! The simulated cluster's disruption controller keeps every PodDisruptionBudget's status
//! current, as kube-controller-manager does, so Kerf sees what a budget allows before any
//! eviction: a budget that blocks holds a drift, and relaxing it lets the drift go on.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use jiff::SignedDuration;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kerf_e2e::world::*;
use kerf_sim::world::World;
use kube::api::Api;

fn pdb(spec: &str) -> String {
    format!(
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: inflate, namespace: default}}\nspec:\n  {spec}\n  selector: {{matchLabels: {{app: inflate}}}}\n"
    )
}

async fn status(w: &World) -> (Option<i32>, Option<i32>, Option<i32>) {
    let p = Api::<PodDisruptionBudget>::namespaced(w.client.clone(), "default")
        .get("inflate")
        .await
        .unwrap();
    let s = p.status.unwrap_or_default();
    (s.expected_pods, s.current_healthy, s.disruptions_allowed)
}

/// Five inflate pods running under a budget with `spec`.
async fn inflate_under(on: On, spec: &str) -> TestWorld {
    let mut w = getting_started_on(on, coarse()).await;
    w.apply(&inflate(5)).await.unwrap();
    w.apply(&pdb(spec)).await.unwrap();
    let ran = w.run_until(SignedDuration::from_mins(3), |c| all_running(c, 5));
    assert!(ran.await.unwrap(), "5 inflate pods never ran");
    w
}

on_both! {
async fn a_budgets_status_follows_its_pods_without_an_eviction(on) {
    let mut w = inflate_under(on, "maxUnavailable: 1").await;
    w.run_for(SignedDuration::from_secs(10)).await.unwrap();
    assert_eq!(status(&w).await, (Some(5), Some(5), Some(1)));
    w.apply(&inflate(3)).await.unwrap();
    w.run_for(SignedDuration::from_secs(20)).await.unwrap();
    assert_eq!(status(&w).await, (Some(3), Some(3), Some(1)));
    w.apply(&pdb("minAvailable: 3")).await.unwrap();
    w.run_for(SignedDuration::from_secs(10)).await.unwrap();
    assert_eq!(
        status(&w).await,
        (Some(3), Some(3), Some(0)),
        "a budget that allows nothing says so"
    );
}
}

on_both! {
async fn a_drift_held_by_a_budget_goes_on_once_the_budget_is_relaxed(on) {
    let mut w = inflate_under(on, "minAvailable: 5").await;
    let before = claims(&w.client).await[0].metadata.name.clone().unwrap();
    w.cloud.release_ami("ami-0a5e00000000000b2");
    // Unheld, the drift is acted on within two minutes (a sweep resolves the AMI, the next
    // disruption run replaces the node); the wall clock makes the real run hold for less.
    let hold = match on {
        On::InProcess => 5,
        On::Real => 3,
    };
    w.run_for(SignedDuration::from_mins(hold)).await.unwrap();
    let names = |w: &World| {
        let c = w.client.clone();
        async move {
            claims(&c)
                .await
                .iter()
                .filter(|c| c.metadata.deletion_timestamp.is_none())
                .filter_map(|c| c.metadata.name.clone())
                .collect::<Vec<_>>()
        }
    };
    assert!(
        names(&w).await.contains(&before),
        "the budget holds the drifted node"
    );
    w.apply(&pdb("maxUnavailable: 1")).await.unwrap();
    let replaced = w
        .run_until(SignedDuration::from_mins(10), |c| {
            let before = before.clone();
            async move {
                let live: Vec<_> = claims(&c)
                    .await
                    .into_iter()
                    .filter(|x| x.metadata.deletion_timestamp.is_none())
                    .collect();
                !live.is_empty()
                    && live
                        .iter()
                        .all(|x| x.metadata.name.as_deref() != Some(before.as_str()))
            }
        })
        .await
        .unwrap();
    assert!(
        replaced,
        "the drifted node is replaced once the budget allows it"
    );
}
}
