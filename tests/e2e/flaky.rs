//! Flaky dependencies: 20% of Kerf's EC2 request attempts throttled or failing with 5xx (each
//! call attempted three times, as the AWS SDK's standard retry mode does), 10% of its
//! API-server requests answered 409, 500 or timeout (requests that are safe to repeat are
//! tried three times too; a NodeClaim create, an eviction or a 409 is not). A simulated day
//! of a daily load curve still converges after every change (every pod running, one running
//! instance per launched NodeClaim, no NodeClaim without its instance) within a bounded
//! number of sweeps.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use std::collections::BTreeSet;

use jiff::SignedDuration;
use kerf_e2e::world::*;
use kerf_sim::world::{World, WorldOptions};

/// Replicas of `inflate` for each hour of the day.
const CURVE: [u32; 24] = [
    2, 2, 2, 2, 3, 5, 10, 20, 30, 35, 40, 40, 38, 36, 35, 30, 25, 20, 15, 10, 6, 4, 3, 2,
];

/// Whether the cluster has converged: every pod running, and instances and NodeClaims match
/// one to one.
async fn converged(w: &World, want: usize) -> bool {
    if !all_running(w.client.clone(), want).await {
        return false;
    }
    let claims = claims(&w.client).await;
    let launched: BTreeSet<String> = claims
        .iter()
        .filter_map(|c| c.status.as_ref()?.provider_id.clone())
        .collect();
    let running: BTreeSet<String> = w
        .cloud
        .instances()
        .iter()
        .filter(|i| i.info.state == "running" || i.info.state == "pending")
        .map(|i| i.info.provider_id.clone())
        .collect();
    launched == running && launched.len() == claims.len()
}

/// Minutes (each one provisioner sweep and one disruption run) until converged.
async fn minutes_to_converge(w: &mut World, want: usize, max: usize) -> Option<usize> {
    for m in 0..=max {
        if converged(w, want).await {
            return Some(m);
        }
        w.run_for(SignedDuration::from_mins(1)).await.unwrap();
    }
    None
}

/// Pods, NodeClaims, instances and the last log lines, for a failure message.
async fn state_of(w: &World) -> String {
    let pods: Vec<String> = pods(&w.client)
        .await
        .iter()
        .map(|p| {
            let phase = p.status.as_ref().and_then(|s| s.phase.clone());
            let node = p.spec.as_ref().and_then(|s| s.node_name.clone());
            format!("{:?} {phase:?} on {node:?}", p.metadata.name)
        })
        .collect();
    let claims: Vec<String> = claims(&w.client)
        .await
        .iter()
        .map(|c| {
            let pid = c.status.as_ref().and_then(|s| s.provider_id.clone());
            let deleting = c.metadata.deletion_timestamp.is_some();
            format!("{:?} {pid:?} deleting={deleting}", c.metadata.name)
        })
        .collect();
    let instances: Vec<String> = w
        .cloud
        .instances()
        .iter()
        .map(|i| format!("{} {}", i.info.provider_id, i.info.state))
        .collect();
    let logs: Vec<String> = w
        .logs
        .entries()
        .iter()
        .rev()
        .take(40)
        .map(|e| {
            format!(
                "{} {} {} {}",
                e["time"], e["controller"], e["message"], e["error"]
            )
        })
        .collect();
    format!("pods {pods:#?}\nclaims {claims:#?}\ninstances {instances:#?}\nlogs {logs:#?}")
}

/// The fault seed: `FLAKY_SEED=N` replays another day of faults (the draws are keyed by
/// request, so a seed fails the same requests whatever order concurrent requests take).
fn seed() -> u64 {
    std::env::var("FLAKY_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2026)
}

#[tokio::test]
async fn a_day_with_flaky_ec2_and_api_server_converges_after_every_change() {
    let mut w = getting_started_with(WorldOptions {
        skip_idle: true,
        ..WorldOptions::default()
    })
    .await
    .unwrap();
    let seed = seed();
    w.set_flaky(0.10, 0.20, seed).unwrap();
    let mut sweeps = Vec::new();
    for (hour, replicas) in CURVE.iter().enumerate() {
        w.apply(&inflate(*replicas)).await.unwrap();
        let m = minutes_to_converge(&mut w, *replicas as usize, 30).await;
        let Some(m) = m else {
            panic!(
                "seed {seed}, hour {hour}: {replicas} pods did not converge in 30 sweeps\n{}",
                state_of(&w).await
            );
        };
        sweeps.push(m);
        w.run_for(SignedDuration::from_mins(60 - m as i64))
            .await
            .unwrap();
        assert!(
            converged(&w, *replicas as usize).await,
            "seed {seed}, hour {hour}: the cluster drifted away from convergence"
        );
    }
    let worst = sweeps.iter().copied().max().unwrap_or(0);
    let failed_cloud = w.cloud.injected_failures();
    let requests = w.sim().unwrap().requests();
    // 500 and 504 only come from the injected faults here.
    let failed_api = requests
        .iter()
        .filter(|r| r.status == 500 || r.status == 504)
        .count();
    eprintln!(
        "flaky day (seed {seed}): worst convergence {worst} sweeps, per hour {sweeps:?}; {failed_api} of {} API-server requests and {failed_cloud} EC2 request attempts failed",
        requests.len()
    );
    assert!(failed_api > 1_000, "API faults were injected: {failed_api}");
    assert!(
        failed_cloud > 100,
        "cloud faults were injected: {failed_cloud}"
    );
    // Observed over 18 seeded days (2026 and 1 to 8, 11 to 19): 1 to 3 sweeps at worst. The
    // bound leaves room for the interleavings a seed can take: instance ids follow the order
    // concurrent launches arrive in, and the paths that draw faults follow the ids.
    assert!(
        worst <= 15,
        "seed {seed}: converged within 15 sweeps of every change, worst {worst} (per hour {sweeps:?})"
    );
}
