//! Crash everywhere: each reconciler (provisioning a batch; the scheduled sweep registering
//! and initializing a node; the sweep enforcing the registration timeout and collecting an
//! orphan instance; the disruption function starting a command; the termination function
//! draining a node; the interruption function handling a spot warning; the disruption
//! function on its timers: a due validation, pod events) is run with its function killed
//! right after each of its external calls in turn: that call's effect stays, nothing after it
//! happens, and its SQS message, not deleted, comes back. The system then runs on to
//! quiescence, and every time: no orphan instance survived garbage collection, no NodeClaim
//! without an instance survived liveness, every pod (all of them fit) runs, no NodeClaim was
//! launched twice and no node was drained twice. The number of crash points is printed
//! (`cargo nextest run -p kerf-e2e crash --no-capture`).
//!
//! On a real control plane (`crash::*::real`, a fresh one per crash point, four at a time,
//! in wall-clock time) the cases whose preparation works there are killed after the first call of each
//! kind that writes (a NodeClaim created, an instance launched, a pod evicted, a finalizer
//! removed, ...), where kube-apiserver's answers to the retry (AlreadyExists, Conflict,
//! NotFound, a budget's 429) decide whether anything is lost; `KERF_REAL_CRASH=all` kills
//! them after every call.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

mod cases;

use cases::{CASES, Case};
use jiff::SignedDuration;
use kerf_e2e::world::*;
use kerf_sim::world::World;
use kerf_sim::world::crash::CrashSwitch;

fn twice(w: &World) -> Vec<(String, usize)> {
    crate::disruption::drains(w)
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .collect()
}

/// Nothing lost, nothing done twice: the checks every crash point ends with.
async fn check(w: &World, case: &Case, k: usize) {
    let at = |what: &str| format!("{}: crash after call {k}: {what}", case.name);
    let v = violations(w).await;
    assert!(v.is_empty(), "{}", at(&format!("{v:?}")));
    let twice = twice(w);
    assert!(
        twice.is_empty(),
        "{}",
        at(&format!("drained twice: {twice:?}"))
    );
    if let Some(n) = case.instances {
        assert_eq!(w.cloud.instances().len(), n, "{}", at("instances launched"));
    }
}

/// Runs until every pod runs, then on for the collectors, then checks the invariants.
async fn quiesce_and_check(w: &mut World, case: &Case, k: usize) {
    let at = |what: &str| format!("{}: crash after call {k}: {what}", case.name);
    let pods = case.pods;
    for (i, max) in [20, 10].into_iter().enumerate() {
        let running = w
            .run_until(SignedDuration::from_mins(max), |c| all_running(c, pods))
            .await
            .unwrap();
        assert!(
            running,
            "{}",
            at(&format!("{:?}", not_running(&w.client).await))
        );
        if i == 0 {
            w.run_for(SignedDuration::from_mins(5)).await.unwrap();
        }
    }
    check(w, case, k).await;
}

/// On a real control plane, where time cannot jump: runs until every pod runs, no message
/// is left in any queue (a message the crash left in flight has come back and been handled)
/// and nothing is orphaned, then checks the invariants.
async fn quiesce_and_check_real(w: &mut World, case: &Case, k: usize) {
    let end = w.now() + SignedDuration::from_mins(12);
    while w.now() < end {
        w.tick().await.unwrap();
        let queues = [&w.queue, &w.termination_queue, &w.interruption_queue];
        if queues.iter().all(|q| q.is_empty())
            && all_running(w.client.clone(), case.pods).await
            && violations(w).await.is_empty()
        {
            break;
        }
    }
    assert!(
        all_running(w.client.clone(), case.pods).await,
        "{}: crash after call {k}: {:?}",
        case.name,
        not_running(&w.client).await
    );
    check(w, case, k).await;
}

/// A clean run's calls: how many, and after which a write of a new kind happened.
async fn calls(case: &Case, on: On) -> (usize, Vec<usize>) {
    let (w, input) = (case.prepare)(on).await;
    let switch = CrashSwitch::after(usize::MAX);
    (case.run)(&w, &switch, &input).await;
    (switch.calls(), switch.first_writes())
}

async fn crash_after(case: &Case, on: On, k: usize) {
    let (mut w, input) = (case.prepare)(on).await;
    let switch = CrashSwitch::after(k);
    (case.run)(&w, &switch, &input).await;
    assert_eq!(switch.calls(), k, "{}", case.name);
    // On the heap: the worlds' futures together overflow a test thread's stack.
    match on {
        On::InProcess => Box::pin(quiesce_and_check(&mut w, case, k)).await,
        On::Real => Box::pin(quiesce_and_check_real(&mut w, case, k)).await,
    }
}

#[tokio::test]
async fn a_crash_after_any_external_call_of_any_reconciler_loses_nothing() {
    let mut covered = 0;
    for case in &CASES {
        let (total, _) = calls(case, On::InProcess).await;
        assert!(total >= 3, "{}: only {total} calls", case.name);
        for k in 1..=total {
            Box::pin(crash_after(case, On::InProcess, k)).await;
        }
        eprintln!("{}: {total} crash points", case.name);
        covered += total;
    }
    eprintln!("crash points covered: {covered}");
}

/// How many crash points run at once on real control planes.
const REAL_AT_ONCE: usize = 4;

/// The crash harness on a real control plane for the case named `name`.
async fn on_real(name: &str) {
    let case = CASES.iter().find(|c| c.name == name && c.real).unwrap();
    let (total, writes) = calls(case, On::Real).await;
    assert!(
        !writes.is_empty(),
        "{}: no write among {total} calls",
        case.name
    );
    let points: Vec<usize> = match std::env::var("KERF_REAL_CRASH").as_deref() {
        Ok("all") => (1..=total).collect(),
        _ => writes,
    };
    // Each crash point on a control plane of its own, a few at a time (they mostly wait on
    // the wall clock).
    for batch in points.chunks(REAL_AT_ONCE) {
        futures::future::join_all(
            batch
                .iter()
                .map(|&k| Box::pin(crash_after(case, On::Real, k))),
        )
        .await;
    }
    eprintln!(
        "{} on a real control plane: {} of {total} crash points",
        case.name,
        points.len()
    );
}

/// `crash::NAME::real`, as the end-to-end matrix names its real-control-plane runs.
macro_rules! on_real {
    ($name:ident, $case:literal) => {
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn real() {
                super::on_real($case).await
            }
        }
    };
}

on_real!(provisioning, "provision a batch");
on_real!(termination, "termination: drain a node");
on_real!(interruption, "interruption: a spot warning");
