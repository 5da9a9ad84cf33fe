//! Crash everywhere: each reconciler (provisioning a batch; the scheduled sweep registering
//! and initializing a node; the sweep enforcing the registration timeout and collecting an
//! orphan instance; the disruption function starting a command; the termination function
//! draining a node; the interruption function handling a spot warning; the disruption
//! function on its timers: a due validation, pod events) is run with its
//! function killed right after each of its external calls in turn: that call's effect stays,
//! nothing after it happens, and its SQS message, not deleted, comes back. The system then
//! runs on to quiescence, and every time: no orphan instance survived garbage collection, no
//! NodeClaim without an instance survived liveness, every pod (all of them fit) runs, no
//! NodeClaim was launched twice and no node was drained twice. The number of crash points is
//! printed (`cargo nextest run -p kerf-e2e crash --no-capture`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use std::future::Future;
use std::pin::Pin;

use jiff::SignedDuration;
use kerf_control::handlers;
use kerf_e2e::world::*;
use kerf_sim::world::crash::CrashSwitch;
use kerf_sim::world::{SimQueue, World};
use serde_json::{Value, json};

type Boxed<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// One reconciler under test.
struct Case {
    name: &'static str,
    /// A world where the reconciler has work, and the SQS event (or other input) it gets.
    prepare: fn() -> Boxed<'static, (World, Value)>,
    /// Runs the reconciler once, its calls going through `switch`.
    run: for<'a> fn(&'a World, &'a CrashSwitch, &'a Value) -> Boxed<'a, ()>,
    /// The pods that must run in the end.
    pods: usize,
    /// Instances that may ever be launched, when the case knows (one for a batch of five).
    instances: Option<usize>,
}

/// Receives every visible message of `q` as one SQS event (in flight: a crash leaves them
/// to come back after the visibility timeout).
fn receive(q: &SimQueue) -> Value {
    SimQueue::event(&q.receive(100))
}

fn provision() -> Boxed<'static, (World, Value)> {
    Box::pin(async {
        let mut w = getting_started().await.unwrap();
        w.apply(&inflate(5)).await.unwrap();
        w.tick().await.unwrap();
        let event = receive(&w.queue);
        (w, event)
    })
}

fn run_provision<'a>(w: &'a World, s: &'a CrashSwitch, event: &'a Value) -> Boxed<'a, ()> {
    Box::pin(async move {
        handlers::provisioner::handle(&w.crashing(s), &w.queue, "crashing", event).await;
    })
}

fn scheduled(w: &World) -> Value {
    json!({"version": "0", "id": "crashing-sweep", "detail-type": "Scheduled Event",
        "source": "aws.events", "time": kerf_sim::world::rfc3339(w.now()),
        "region": "us-west-2", "resources": [], "detail": {}})
}

/// A Node Ready but its NodeClaim not registered yet: Kerf's API requests failed while the
/// Node was created (its webhook failed open), so the sweep registers and initializes it.
fn unregistered_node() -> Boxed<'static, (World, Value)> {
    Box::pin(async {
        let mut w = getting_started().await.unwrap();
        w.apply(&inflate(5)).await.unwrap();
        while claims(&w.client).await.is_empty() {
            w.tick().await.unwrap();
        }
        w.set_flaky(1.0, 0.0, 7).unwrap();
        for _ in 0..120 {
            w.tick().await.unwrap();
            let ready = nodes(&w.client).await.iter().any(|n| {
                n.status
                    .iter()
                    .flat_map(|s| s.conditions.iter().flatten())
                    .any(|c| c.type_ == "Ready" && c.status == "True")
            });
            if ready {
                break;
            }
        }
        w.set_flaky(0.0, 0.0, 7).unwrap();
        let cs = claims(&w.client).await;
        assert_eq!(cs.len(), 1);
        assert!(!kerf_control::claim::is_true(&cs[0], "Registered"));
        assert_eq!(nodes(&w.client).await.len(), 1);
        let event = scheduled(&w);
        (w, event)
    })
}

/// A NodeClaim whose instance never registered, past the registration timeout, and an
/// instance tagged for a NodeClaim that does not exist, past the collection grace period.
fn expired_and_orphaned() -> Boxed<'static, (World, Value)> {
    Box::pin(async {
        let mut w = getting_started().await.unwrap();
        w.kubelet_mut().unwrap().paused = true;
        w.apply(&inflate(5)).await.unwrap();
        w.run_for(SignedDuration::from_secs(20)).await.unwrap();
        assert_eq!(claims(&w.client).await.len(), 1);
        let tags = std::collections::BTreeMap::from([(
            "karpenter.sh/nodeclaim".to_string(),
            "default-gone1".to_string(),
        )]);
        w.cloud.start_stray("m5.large", "us-west-2a", tags);
        // Time passes with no sweep (the schedule was down).
        w.clock.advance(SignedDuration::from_mins(16));
        w.kubelet_mut().unwrap().paused = false;
        let event = scheduled(&w);
        (w, event)
    })
}

fn run_sweep<'a>(w: &'a World, s: &'a CrashSwitch, event: &'a Value) -> Boxed<'a, ()> {
    Box::pin(async move {
        handlers::provisioner::handle(&w.crashing(s), &w.queue, "crashing-sweep", event).await;
    })
}

fn disruption() -> Boxed<'static, (World, Value)> {
    Box::pin(async { (crate::disruption::recorded_command().await, Value::Null) })
}

fn run_disruption<'a>(w: &'a World, s: &'a CrashSwitch, _: &'a Value) -> Boxed<'a, ()> {
    Box::pin(async move {
        let (q, opts) = (&w.disruption_queues(), &w.disruption);
        let event = serde_json::json!({"source": "kerf.schedule"});
        handlers::disruption::handle(&w.crashing(s), q, "crashing-disruption", opts, &event).await;
    })
}

/// A recorded command whose validation timer is due: the timer batch, as SQS delivers it.
fn validation_timer() -> Boxed<'static, (World, Value)> {
    Box::pin(async {
        let w = crate::disruption::recorded_command().await;
        let event = receive(&w.timer_queue);
        assert!(
            event.to_string().contains("validate"),
            "a validation timer is due: {event}"
        );
        (w, event)
    })
}

/// Five pods scaled to one: the webhook's pod events on the timer queue.
fn pod_events() -> Boxed<'static, (World, Value)> {
    Box::pin(async {
        let mut w = getting_started().await.unwrap();
        w.apply(&inflate(5)).await.unwrap();
        assert!(
            w.run_until(SignedDuration::from_mins(3), |c| all_running(c, 5))
                .await
                .unwrap()
        );
        w.run_for(SignedDuration::from_mins(2)).await.unwrap();
        w.timer_queue.receive(1000);
        w.apply(&inflate(1)).await.unwrap();
        // The Deployment controller deletes the pods (the webhook sees each DELETE).
        kerf_sim::world::workloads::step(&w.client, &w.sim().unwrap().cached())
            .await
            .unwrap();
        let event = receive(&w.timer_queue);
        assert!(event.to_string().contains("podEvent"), "{event}");
        (w, event)
    })
}

fn run_timers<'a>(w: &'a World, s: &'a CrashSwitch, event: &'a Value) -> Boxed<'a, ()> {
    Box::pin(async move {
        let (q, opts) = (&w.disruption_queues(), &w.disruption);
        handlers::disruption::handle(&w.crashing(s), q, "crashing-timers", opts, event).await;
    })
}

fn termination() -> Boxed<'static, (World, Value)> {
    Box::pin(async {
        let (w, name) = crate::termination::running_cluster().await;
        crate::termination::delete_claim(&w, &name).await;
        let event = receive(&w.termination_queue);
        (w.into_world(), event)
    })
}

fn run_termination<'a>(w: &'a World, s: &'a CrashSwitch, event: &'a Value) -> Boxed<'a, ()> {
    Box::pin(async move {
        let (q, t) = (&w.termination_queue, &w.timer_queue);
        handlers::termination::handle(&w.crashing(s), q, t, event).await;
    })
}

fn interruption() -> Boxed<'static, (World, Value)> {
    Box::pin(async {
        let mut w = crate::interruption::spot_cluster().await.into_world();
        let mut cs = claims(&w.client).await;
        cs.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        let id = crate::interruption::instance_of(&cs[0]);
        w.interrupt(&[id]).await;
        let event = receive(&w.interruption_queue);
        (w, event)
    })
}

fn run_interruption<'a>(w: &'a World, s: &'a CrashSwitch, event: &'a Value) -> Boxed<'a, ()> {
    Box::pin(async move {
        let q = &w.termination_queue;
        handlers::interruption::handle(&w.crashing(s), q, event, &w.interruption).await;
    })
}

const CASES: [Case; 8] = [
    Case {
        name: "provision a batch",
        prepare: provision,
        run: run_provision,
        pods: 5,
        instances: Some(1),
    },
    Case {
        name: "sweep: register and initialize",
        prepare: unregistered_node,
        run: run_sweep,
        pods: 5,
        instances: None,
    },
    Case {
        name: "sweep: registration timeout and orphan instance",
        prepare: expired_and_orphaned,
        run: run_sweep,
        pods: 5,
        instances: None,
    },
    Case {
        name: "disruption: start a command",
        prepare: disruption,
        run: run_disruption,
        pods: 1,
        instances: None,
    },
    Case {
        name: "disruption: a validation timer",
        prepare: validation_timer,
        run: run_timers,
        pods: 1,
        instances: None,
    },
    Case {
        name: "disruption: pod events",
        prepare: pod_events,
        run: run_timers,
        pods: 1,
        instances: None,
    },
    Case {
        name: "termination: drain a node",
        prepare: termination,
        run: run_termination,
        pods: 5,
        instances: None,
    },
    Case {
        name: "interruption: a spot warning",
        prepare: interruption,
        run: run_interruption,
        pods: 6,
        instances: None,
    },
];

/// Runs until every pod runs, then on for the collectors, then checks the invariants.
async fn quiesce_and_check(w: &mut World, case: &Case, k: usize) {
    let at = |what: &str| format!("{}: crash after call {k}: {what}", case.name);
    let pods = case.pods;
    let running = w
        .run_until(SignedDuration::from_mins(20), |c| all_running(c, pods))
        .await
        .unwrap();
    assert!(
        running,
        "{}",
        at(&format!("{:?}", not_running(&w.client).await))
    );
    w.run_for(SignedDuration::from_mins(5)).await.unwrap();
    let settled = w
        .run_until(SignedDuration::from_mins(10), |c| all_running(c, pods))
        .await
        .unwrap();
    assert!(
        settled,
        "{}",
        at(&format!("{:?}", not_running(&w.client).await))
    );
    let v = violations(w).await;
    assert!(v.is_empty(), "{}", at(&format!("{v:?}")));
    let twice: Vec<_> = crate::disruption::drains(w)
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .collect();
    assert!(
        twice.is_empty(),
        "{}",
        at(&format!("drained twice: {twice:?}"))
    );
    if let Some(n) = case.instances {
        assert_eq!(w.cloud.instances().len(), n, "{}", at("instances launched"));
    }
}

#[tokio::test]
async fn a_crash_after_any_external_call_of_any_reconciler_loses_nothing() {
    let mut covered = 0;
    for case in &CASES {
        let total = {
            let (w, input) = (case.prepare)().await;
            let switch = CrashSwitch::after(usize::MAX);
            (case.run)(&w, &switch, &input).await;
            switch.calls()
        };
        assert!(total >= 3, "{}: only {total} calls", case.name);
        for k in 1..=total {
            let (mut w, input) = (case.prepare)().await;
            let switch = CrashSwitch::after(k);
            (case.run)(&w, &switch, &input).await;
            assert_eq!(switch.calls(), k, "{}", case.name);
            quiesce_and_check(&mut w, case, k).await;
        }
        eprintln!("{}: {total} crash points", case.name);
        covered += total;
    }
    eprintln!("crash points covered: {covered}");
}
