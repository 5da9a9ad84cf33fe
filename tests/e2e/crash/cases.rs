//! The reconcilers the crash harness kills: for each, a world where it has work and the
//! input it gets (an SQS event as delivered), on the in-process server or, for the cases
//! whose preparation needs neither simulated time nor the in-process kubelet, on a real
//! control plane.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use std::future::Future;
use std::pin::Pin;

use jiff::SignedDuration;
use kerf_e2e::events;
use kerf_e2e::world::*;
use kerf_sim::world::crash::CrashSwitch;
use kerf_sim::world::{SimQueue, World};
use serde_json::{Value, json};

pub(super) type Boxed<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// One reconciler under test.
pub(super) struct Case {
    pub name: &'static str,
    /// A world where the reconciler has work, and the SQS event (or other input) it gets.
    pub prepare: fn(On) -> Boxed<'static, (TestWorld, Value)>,
    /// Runs the reconciler once, its calls going through `switch`.
    pub run: for<'a> fn(&'a World, &'a CrashSwitch, &'a Value) -> Boxed<'a, ()>,
    /// The pods that must run in the end.
    pub pods: usize,
    /// Instances that may ever be launched, when the case knows (one for a batch of five).
    pub instances: Option<usize>,
    /// Whether `prepare` works on a real control plane.
    pub real: bool,
}

/// Receives every visible message of `q` as one SQS event (in flight: a crash leaves them
/// to come back after the visibility timeout).
fn receive(q: &SimQueue) -> Value {
    events::batch(&q.receive(100))
}

/// Waits until `q` has a message, then receives them all: in process, tick by tick; on a
/// real control plane, without ticking (a tick could deliver the message to the world's own
/// functions), while the real controllers and the webhook do their part.
async fn receive_when_there(w: &mut World, on: On, q: fn(&World) -> &SimQueue) -> Value {
    for _ in 0..120 {
        if !q(w).is_empty() {
            break;
        }
        match on {
            On::InProcess => {
                w.tick().await.unwrap();
            }
            On::Real => tokio::time::sleep(std::time::Duration::from_millis(500)).await,
        }
    }
    receive(q(w))
}

fn in_process_only(on: On, name: &str) {
    assert_eq!(on, On::InProcess, "{name} needs the in-process server");
}

/// Whether kube-scheduler has marked `want` pods unschedulable (each one's hint is then
/// queued: the webhook sends it while admitting that status).
async fn unschedulable(w: &World, want: usize) -> bool {
    let marked = pods(&w.client)
        .await
        .iter()
        .filter(|p| {
            p.status
                .iter()
                .flat_map(|s| s.conditions.iter().flatten())
                .any(|c| c.type_ == "PodScheduled" && c.reason.as_deref() == Some("Unschedulable"))
        })
        .count();
    marked >= want
}

fn provision(on: On) -> Boxed<'static, (TestWorld, Value)> {
    Box::pin(async move {
        let mut w = getting_started_on(on, Default::default()).await;
        w.apply(&inflate(5)).await.unwrap();
        // On a real control plane the ReplicaSet controller and kube-scheduler take their
        // time: the batch is received once every pod of it is pending, as the provisioner's
        // own batching would have it.
        for _ in 0..120 {
            if on == On::InProcess || unschedulable(&w, 5).await {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(250)).await;
        }
        let event = receive_when_there(&mut w, on, |w| &w.queue).await;
        batch_ends(&w);
        (w, event)
    })
}

fn run_provision<'a>(w: &'a World, s: &'a CrashSwitch, event: &'a Value) -> Boxed<'a, ()> {
    Box::pin(async move {
        events::provisioner(&w.crashing(s), &w.queue, "crashing", event).await;
    })
}

fn scheduled(w: &World) -> Value {
    json!({"version": "0", "id": "crashing-sweep", "detail-type": "Scheduled Event",
        "source": "aws.events", "time": kerf_sim::world::rfc3339(w.now()),
        "region": "us-west-2", "resources": [], "detail": {}})
}

/// A Node Ready but its NodeClaim not registered yet: Kerf's API requests failed while the
/// Node was created (its webhook failed open), so the sweep registers and initializes it.
fn unregistered_node(on: On) -> Boxed<'static, (TestWorld, Value)> {
    Box::pin(async move {
        in_process_only(on, "an unregistered node");
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
        (w.into(), event)
    })
}

/// A NodeClaim whose instance never registered, past the registration timeout, and an
/// instance tagged for a NodeClaim that does not exist, past the collection grace period.
fn expired_and_orphaned(on: On) -> Boxed<'static, (TestWorld, Value)> {
    Box::pin(async move {
        in_process_only(on, "an expired registration");
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
        (w.into(), event)
    })
}

fn run_sweep<'a>(w: &'a World, s: &'a CrashSwitch, event: &'a Value) -> Boxed<'a, ()> {
    Box::pin(async move {
        events::provisioner(&w.crashing(s), &w.queue, "crashing-sweep", event).await;
    })
}

fn disruption(on: On) -> Boxed<'static, (TestWorld, Value)> {
    Box::pin(async move {
        in_process_only(on, "a recorded disruption command");
        let w = crate::disruption::recorded_command().await;
        (w.into(), Value::Null)
    })
}

fn run_disruption<'a>(w: &'a World, s: &'a CrashSwitch, _: &'a Value) -> Boxed<'a, ()> {
    Box::pin(async move {
        let (q, opts) = (&w.disruption_queues(), &w.disruption);
        let event = json!({"source": "kerf.schedule", "detail-type": "Disruption Sweep"});
        events::disruption(&w.crashing(s), q, "crashing-disruption", opts, &event).await;
    })
}

/// A recorded command whose validation timer is due: the timer batch, as SQS delivers it.
fn validation_timer(on: On) -> Boxed<'static, (TestWorld, Value)> {
    Box::pin(async move {
        in_process_only(on, "a validation timer");
        let w = crate::disruption::recorded_command().await;
        let event = receive(&w.timer_queue);
        assert!(
            event.to_string().contains("validate"),
            "a validation timer is due: {event}"
        );
        (w.into(), event)
    })
}

/// Five pods scaled to one: the webhook's pod events on the timer queue.
fn pod_events(on: On) -> Boxed<'static, (TestWorld, Value)> {
    Box::pin(async move {
        in_process_only(on, "pod events");
        let (w, _) = crate::timers::scaled_down(Default::default()).await;
        // Earlier timers go; the scale-down wrote only the Deployment, so no pod event is lost.
        w.timer_queue.receive(1000);
        // The Deployment controller deletes the pods (the webhook sees each DELETE).
        kerf_sim::world::workloads::step(&w.client, &w.sim().unwrap().cached())
            .await
            .unwrap();
        let event = receive(&w.timer_queue);
        assert!(event.to_string().contains("podEvent"), "{event}");
        (w.into(), event)
    })
}

fn run_timers<'a>(w: &'a World, s: &'a CrashSwitch, event: &'a Value) -> Boxed<'a, ()> {
    Box::pin(async move {
        let (q, opts) = (&w.disruption_queues(), &w.disruption);
        events::disruption(&w.crashing(s), q, "crashing-timers", opts, event).await;
    })
}

fn termination(on: On) -> Boxed<'static, (TestWorld, Value)> {
    Box::pin(async move {
        let (mut w, name) = crate::termination::running_cluster_on(on).await;
        crate::termination::delete_claim(&w, &name).await;
        let event = receive_when_there(&mut w, on, |w| &w.termination_queue).await;
        (w, event)
    })
}

fn run_termination<'a>(w: &'a World, s: &'a CrashSwitch, event: &'a Value) -> Boxed<'a, ()> {
    Box::pin(async move {
        let (q, t) = (&w.termination_queue, &w.timer_queue);
        events::termination(&w.crashing(s), q, t, event).await;
    })
}

fn interruption(on: On) -> Boxed<'static, (TestWorld, Value)> {
    Box::pin(async move {
        let mut w = crate::interruption::spot_cluster_on(on).await;
        let mut cs = claims(&w.client).await;
        cs.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        let id = crate::interruption::instance_of(&cs[0]);
        w.interrupt(&[id]).await;
        let event = receive_when_there(&mut w, on, |w| &w.interruption_queue).await;
        (w, event)
    })
}

fn run_interruption<'a>(w: &'a World, s: &'a CrashSwitch, event: &'a Value) -> Boxed<'a, ()> {
    Box::pin(async move {
        let q = &w.termination_queue;
        events::interruption(&w.crashing(s), q, event, &w.interruption).await;
    })
}

pub(super) const CASES: [Case; 8] = [
    Case {
        name: "provision a batch",
        prepare: provision,
        run: run_provision,
        pods: 5,
        instances: Some(1),
        real: true,
    },
    Case {
        name: "sweep: register and initialize",
        prepare: unregistered_node,
        run: run_sweep,
        pods: 5,
        instances: None,
        real: false,
    },
    Case {
        name: "sweep: registration timeout and orphan instance",
        prepare: expired_and_orphaned,
        run: run_sweep,
        pods: 5,
        instances: None,
        real: false,
    },
    Case {
        name: "disruption: start a command",
        prepare: disruption,
        run: run_disruption,
        pods: 1,
        instances: None,
        real: false,
    },
    Case {
        name: "disruption: a validation timer",
        prepare: validation_timer,
        run: run_timers,
        pods: 1,
        instances: None,
        real: false,
    },
    Case {
        name: "disruption: pod events",
        prepare: pod_events,
        run: run_timers,
        pods: 1,
        instances: None,
        real: false,
    },
    Case {
        name: "termination: drain a node",
        prepare: termination,
        run: run_termination,
        pods: 5,
        instances: None,
        real: true,
    },
    Case {
        name: "interruption: a spot warning",
        prepare: interruption,
        run: run_interruption,
        pods: 6,
        instances: None,
        real: true,
    },
];
