//! Node, eviction, event and Lease writers of the Cluster port against the in-process API server.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

mod common;

use common::*;
use k8s_openapi::api::core::v1::{Event, Node, Taint};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kerf_kube::{
    Cluster, ClusterError, Deleted, EventReason, EventSpec, EventType, Evicted, InvolvedObject,
    LeaseOutcome, LeaseRequest, Target,
};
use kube::api::{Api, ListParams, PostParams};
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn nodes_are_tainted_cordoned_and_deleted_idempotently() {
    let (sim, client) = start().await;
    let kc = cluster(&client);
    seed_node(&sim, "n1");
    let taint = Taint {
        key: "karpenter.sh/disrupted".into(),
        effect: "NoSchedule".into(),
        ..Taint::default()
    };
    let a = kc.taint_node("n1", &taint).await.unwrap();
    let b = kc.taint_node("n1", &taint).await.unwrap();
    assert_eq!(
        a.metadata.resource_version, b.metadata.resource_version,
        "second taint is a no-op"
    );
    assert_eq!(b.spec.unwrap().taints.unwrap(), vec![taint.clone()]);
    let c = kc.cordon_node("n1", true).await.unwrap();
    assert_eq!(c.spec.unwrap().unschedulable, Some(true));
    let d = kc
        .untaint_node("n1", "karpenter.sh/disrupted")
        .await
        .unwrap();
    assert!(d.spec.unwrap().taints.unwrap_or_default().is_empty());
    assert!(
        kc.taint_node("missing", &taint)
            .await
            .unwrap_err()
            .is_not_found()
    );

    kc.add_finalizer(&Target::Node("n1".into()), "karpenter.sh/termination")
        .await
        .unwrap();
    assert_eq!(
        kc.delete_node("n1", None).await.unwrap(),
        Deleted::Terminating
    );
    let node = Api::<Node>::all(client.clone()).get("n1").await.unwrap();
    let rv = node.metadata.resource_version.clone().unwrap();
    kc.cordon_node("n1", false).await.unwrap();
    let stale = kc
        .remove_finalizer(
            &Target::Node("n1".into()),
            "karpenter.sh/termination",
            Some(&rv),
        )
        .await;
    assert!(matches!(stale, Err(ClusterError::Conflict(_))), "{stale:?}");
    kc.remove_finalizer(&Target::Node("n1".into()), "karpenter.sh/termination", None)
        .await
        .unwrap();
    assert!(
        Api::<Node>::all(client.clone())
            .get_opt("n1")
            .await
            .unwrap()
            .is_none(),
        "last finalizer deletes"
    );
    assert_eq!(
        kc.delete_node("n1", None).await.unwrap(),
        Deleted::AlreadyGone
    );
    kc.remove_finalizer(&Target::Node("n1".into()), "karpenter.sh/termination", None)
        .await
        .unwrap();
}

#[tokio::test]
async fn eviction_blocked_by_pdb_returns_at_once() {
    let (sim, client) = start().await;
    let kc = cluster(&client);
    seed_pod(
        &sim,
        "default",
        "w1",
        "n1",
        json!({"app": "web"}),
        "Running",
    );
    seed_pod(
        &sim,
        "default",
        "w2",
        "n1",
        json!({"app": "web"}),
        "Running",
    );
    Api::<PodDisruptionBudget>::namespaced(client.clone(), "default")
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "web"},
            "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}}}))
            .unwrap(),
        )
        .await
        .unwrap();
    let started = std::time::Instant::now();
    let e = kc.evict_pod("default", "w1", None).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(2));
    match &e {
        ClusterError::Blocked { message, .. } => {
            assert!(message.contains("DisruptionBudget"), "{message}")
        }
        other => panic!("{other:?}"),
    }
    assert!(e.is_retryable());
    assert_eq!(
        sim.requests()
            .iter()
            .filter(|r| r.uri.contains("eviction"))
            .count(),
        1
    );

    let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::namespaced(client.clone(), "default");
    // As on kube-apiserver, an eviction whose uid precondition fails has already taken its
    // disruption from the budget (the pod counts as disrupted for two minutes): the budget
    // lets both pods go, so the real eviction after it is allowed.
    let p = json!({"spec": {"minAvailable": 0}});
    Api::<PodDisruptionBudget>::namespaced(client.clone(), "default")
        .patch("web", &Default::default(), &kube::api::Patch::Merge(p))
        .await
        .unwrap();
    let uid = pods.get("w1").await.unwrap().metadata.uid;
    assert_eq!(
        kc.evict_pod("default", "w1", Some("other-uid"))
            .await
            .unwrap(),
        Evicted::AlreadyGone
    );
    assert_eq!(
        kc.evict_pod("default", "w1", uid.as_deref()).await.unwrap(),
        Evicted::Evicted
    );
    assert_eq!(
        kc.evict_pod("default", "w1", None).await.unwrap(),
        Evicted::AlreadyGone
    );
}

#[tokio::test]
async fn events_are_recorded_and_deduplicated() {
    let (_sim, client) = start().await;
    let kc = cluster(&client);
    let ev = EventSpec {
        involved: InvolvedObject {
            api_version: "karpenter.sh/v1".into(),
            kind: "NodeClaim".into(),
            name: "default-abcde".into(),
            namespace: String::new(),
            uid: "u-1".into(),
        },
        type_: EventType::Warning,
        reason: EventReason::DisruptionBlocked,
        message: "Node is nominated for a pending pod".into(),
    };
    kc.emit_event(&ev, jiff::Timestamp::now()).await.unwrap();
    kc.emit_event(&ev, jiff::Timestamp::now()).await.unwrap();
    let events: Api<Event> = Api::namespaced(client, "default");
    let list = events
        .list(&ListParams::default().fields("involvedObject.name=default-abcde"))
        .await
        .unwrap();
    assert_eq!(list.items.len(), 1);
    let e = &list.items[0];
    assert_eq!(
        (e.reason.as_deref(), e.type_.as_deref(), e.count),
        (Some("DisruptionBlocked"), Some("Warning"), Some(2))
    );
    assert_eq!(
        e.source.as_ref().unwrap().component.as_deref(),
        Some("karpenter")
    );
    assert_eq!(e.involved_object.kind.as_deref(), Some("NodeClaim"));
}

#[tokio::test]
async fn repeated_warnings_fold_into_one_event_with_the_latest_message() {
    let (_sim, client) = start().await;
    let kc = cluster(&client);
    let spec = |type_, reason: EventReason, message: String| EventSpec {
        involved: InvolvedObject {
            api_version: "v1".into(),
            kind: "Pod".into(),
            name: "web-0".into(),
            namespace: "default".into(),
            uid: "u-web-0".into(),
        },
        type_,
        reason,
        message,
    };
    for healthy in 0..10 {
        let m = format!(
            "Failed to drain node, The disruption budget web needs 2 healthy pods and has {healthy} currently"
        );
        kc.emit_event(
            &spec(EventType::Warning, EventReason::FailedDraining, m),
            jiff::Timestamp::now(),
        )
        .await
        .unwrap();
    }
    // Normal events are a history: each distinct message stays its own Event.
    for claim in ["a", "b"] {
        let m = format!("Pod should schedule on: nodeclaim/{claim}");
        kc.emit_event(
            &spec(EventType::Normal, EventReason::Nominated, m),
            jiff::Timestamp::now(),
        )
        .await
        .unwrap();
    }
    let events: Api<Event> = Api::namespaced(client, "default");
    let list = events
        .list(&ListParams::default().fields("involvedObject.name=web-0"))
        .await
        .unwrap();
    let of = |reason: &str| -> Vec<&Event> {
        list.items
            .iter()
            .filter(|e| e.reason.as_deref() == Some(reason))
            .collect()
    };
    let draining = of(EventReason::FailedDraining.as_str());
    assert_eq!(draining.len(), 1, "{draining:?}");
    assert_eq!(draining[0].count, Some(10));
    assert!(
        draining[0]
            .message
            .as_deref()
            .unwrap()
            .ends_with("has 9 currently")
    );
    assert_eq!(of(EventReason::Nominated.as_str()).len(), 2);
}

fn lease(holder: &str, now: jiff::Timestamp) -> LeaseRequest {
    LeaseRequest {
        namespace: "kube-system".into(),
        name: "kerf-leader".into(),
        holder: holder.into(),
        duration: Duration::from_secs(15),
        now,
    }
}

#[tokio::test]
async fn lease_take_renew_and_contend() {
    let (_sim, client) = start().await;
    let kc = cluster(&client);
    let t0: jiff::Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
    let s = |secs: i64| {
        t0.checked_add(jiff::SignedDuration::from_secs(secs))
            .unwrap()
    };
    let a = kc.acquire_lease(&lease("a", t0)).await.unwrap();
    assert_eq!(
        a,
        LeaseOutcome::Held {
            expires: s(15),
            transitions: 0
        }
    );
    let renewed = kc.acquire_lease(&lease("a", s(5))).await.unwrap();
    assert_eq!(
        renewed,
        LeaseOutcome::Held {
            expires: s(20),
            transitions: 0
        }
    );
    let blocked = kc.acquire_lease(&lease("b", s(10))).await.unwrap();
    assert_eq!(
        blocked,
        LeaseOutcome::HeldByOther {
            holder: "a".into(),
            expires: s(20)
        }
    );
    let taken = kc.acquire_lease(&lease("b", s(21))).await.unwrap();
    assert_eq!(
        taken,
        LeaseOutcome::Held {
            expires: s(36),
            transitions: 1
        }
    );
    kc.release_lease(&lease("b", s(22))).await.unwrap();
    let again = kc.acquire_lease(&lease("a", s(23))).await.unwrap();
    assert_eq!(
        again,
        LeaseOutcome::Held {
            expires: s(38),
            transitions: 1
        }
    );

    let api: Api<k8s_openapi::api::coordination::v1::Lease> =
        Api::namespaced(client.clone(), "kube-system");
    let mut stale = api.get("kerf-leader").await.unwrap();
    kc.acquire_lease(&lease("a", s(24))).await.unwrap();
    stale.spec.as_mut().unwrap().holder_identity = Some("c".into());
    let e = api
        .replace("kerf-leader", &PostParams::default(), &stale)
        .await
        .unwrap_err();
    assert!(
        kerf_kube::error::classify(e).is_conflict(),
        "optimistic concurrency"
    );
}

#[tokio::test]
async fn server_errors_are_typed() {
    let (sim, client) = start().await;
    let kc = cluster(&client);
    let down = |times| kerf_sim::Fault {
        method: "GET".into(),
        path_contains: "/nodes".into(),
        times,
        error: kerf_sim::ApiError::new(503, "ServiceUnavailable", "etcd is down".into(), None),
    };
    // One failed page is tried again: the snapshot succeeds.
    sim.inject(down(2));
    kc.snapshot().await.unwrap();
    // A page that fails every attempt fails the snapshot, typed as transient.
    sim.inject(down(3));
    let e = kc.snapshot().await.unwrap_err();
    assert!(
        matches!(e, ClusterError::Transient(_)) && e.is_retryable(),
        "{e:?}"
    );
    kc.snapshot().await.unwrap();
    let bad = Taint {
        key: "k".into(),
        effect: "NoSchedule".into(),
        ..Taint::default()
    };
    let e = kc.taint_node("absent", &bad).await.unwrap_err();
    assert!(e.is_not_found() && !e.is_retryable());
}

#[tokio::test]
async fn repeatable_requests_are_tried_again_on_a_transient_failure() {
    let (sim, client) = start().await;
    let kc = cluster(&client);
    seed_node(&sim, "n1");
    let fail = |method: &str, path: &str, times| kerf_sim::Fault {
        method: method.into(),
        path_contains: path.into(),
        times,
        error: kerf_sim::ApiError::new(504, "Timeout", "the request timed out".into(), None),
    };
    let now = jiff::Timestamp::UNIX_EPOCH + jiff::SignedDuration::from_hours(500_000);
    // A failed read of the Lease, then a failed create, cost no invocation: the third
    // attempt takes it.
    sim.inject(fail("GET", "/leases/kerf-leader", 1));
    sim.inject(fail("POST", "/leases", 1));
    let got = kc.acquire_lease(&lease("a", now)).await.unwrap();
    assert!(matches!(got, LeaseOutcome::Held { .. }), "{got:?}");
    sim.inject(fail("PUT", "/leases/kerf-leader", 2));
    kc.release_lease(&lease("a", now)).await.unwrap();
    let served = sim.requests();
    let lease_reads = served
        .iter()
        .filter(|r| r.method == "GET" && r.uri.contains("/leases/kerf-leader"))
        .count();
    assert_eq!(
        lease_reads, 6,
        "three attempts to take it, three to release it"
    );
    let l: k8s_openapi::api::coordination::v1::Lease =
        Api::namespaced(client.clone(), "kube-system")
            .get("kerf-leader")
            .await
            .unwrap();
    assert_eq!(l.spec.unwrap().holder_identity, None, "released");
    // Reads and patches of a Node likewise; three failures in a row reach the caller.
    sim.inject(fail("GET", "/nodes/n1", 2));
    assert!(kc.node("n1").await.unwrap().is_some());
    sim.inject(fail("PATCH", "/nodes/n1", 2));
    kc.label_node("n1", &[("a".to_string(), "b".to_string())].into())
        .await
        .unwrap();
    sim.inject(fail("GET", "/nodes/n1", 3));
    let e = kc.node("n1").await.unwrap_err();
    assert!(matches!(e, ClusterError::Transient(_)), "{e:?}");
    // A conflict is the caller's to resolve: answered at once, not repeated.
    sim.inject(kerf_sim::Fault {
        error: kerf_sim::ApiError::new(409, "Conflict", "modified".into(), None),
        ..fail("PATCH", "/nodes/n1", 1)
    });
    let e = kc
        .label_node("n1", &[("c".to_string(), "d".to_string())].into())
        .await
        .unwrap_err();
    assert!(e.is_conflict(), "{e:?}");
}
