//! Provisioning end to end in simulated time: the getting-started NodePool and the
//! `inflate` Deployment; kube-scheduler marks pods unschedulable, the webhook queues a
//! hint, the provisioner creates and launches NodeClaims, kubelets register through the
//! webhook, NodeClaims go Launched → Registered → Initialized, and the pods run.

use jiff::SignedDuration;
use kerf_e2e::world::*;

#[tokio::test]
async fn inflate_gets_capacity_and_runs() {
    let mut w = getting_started().await.unwrap();
    w.apply(&inflate(5)).await.unwrap();
    let ok = w
        .run_until(SignedDuration::from_mins(5), |c| all_running(c, 5))
        .await
        .unwrap();
    for l in w.logs.lines().iter().take(40) {
        eprintln!("{l}");
    }
    assert!(
        ok,
        "pods did not all run: {:?}",
        pods(&w.client)
            .await
            .iter()
            .map(|p| (p.metadata.name.clone(), phase(p).to_string()))
            .collect::<Vec<_>>()
    );
    let cs = claims(&w.client).await;
    assert!(!cs.is_empty());
    for c in &cs {
        assert!(
            condition(c, "Launched") && condition(c, "Registered"),
            "{c:?}"
        );
    }
}
