//! The disruption controller's arithmetic: expected pods from the workloads' scale, healthy
//! pods without the ones just evicted, fail-safe for pods without a workload.

use super::*;

const NOW: &str = "2026-01-01T00:10:00Z";

fn now() -> Timestamp {
    NOW.parse().unwrap()
}

fn deployment(name: &str, uid: &str, replicas: i64) -> Value {
    json!({"kind": "Deployment", "metadata": {"name": name, "uid": uid},
        "spec": {"replicas": replicas}})
}

fn pod(name: &str, owner: Option<(&str, &str, &str)>, ready: bool) -> Value {
    let mut p = json!({"kind": "Pod", "metadata": {"name": name, "labels": {"app": "a"}},
        "status": {"phase": "Running",
            "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}]}});
    if let Some((kind, name, uid)) = owner {
        p["metadata"]["ownerReferences"] =
            json!([{"kind": kind, "name": name, "uid": uid, "controller": true}]);
    }
    p
}

fn pdb(spec: Value, status: Value) -> Value {
    let mut spec = spec;
    spec["selector"] = json!({"matchLabels": {"app": "a"}});
    json!({"metadata": {"name": "b", "generation": 2}, "spec": spec, "status": status})
}

fn of_rs(names: &[&str]) -> Vec<Value> {
    names
        .iter()
        .map(|n| pod(n, Some(("ReplicaSet", "web-abc", "d1")), true))
        .collect()
}

fn run(pdb: &Value, pods: &[Value], workloads: &[Value]) -> Value {
    let pods: Vec<&Value> = pods.iter().collect();
    let workloads: Vec<&Value> = workloads.iter().collect();
    status(
        pdb,
        Inputs {
            pods: &pods,
            workloads: &workloads,
            now: now(),
        },
    )
}

#[test]
fn max_unavailable_counts_the_deployments_replicas_not_the_pods_left() {
    let b = pdb(json!({"maxUnavailable": 1}), json!({}));
    let d = [deployment("web", "d1", 5)];
    let all = run(&b, &of_rs(&["p1", "p2", "p3", "p4", "p5"]), &d);
    assert_eq!(all["expectedPods"], 5);
    assert_eq!(all["desiredHealthy"], 4);
    assert_eq!(all["disruptionsAllowed"], 1);
    assert_eq!(all["observedGeneration"], 2);
    // One evicted and gone: its replacement is not there yet, so no other may go.
    let four = run(&b, &of_rs(&["p1", "p2", "p3", "p4"]), &d);
    assert_eq!(four["expectedPods"], 5);
    assert_eq!(four["currentHealthy"], 4);
    assert_eq!(four["disruptionsAllowed"], 0);
}

#[test]
fn a_pod_evicted_lately_is_not_healthy_until_the_timeout_and_then_dropped() {
    let d = [deployment("web", "d1", 5)];
    let pods = of_rs(&["p1", "p2", "p3", "p4", "p5"]);
    let lately = pdb(
        json!({"maxUnavailable": 1}),
        json!({"disruptedPods": {"p1": "2026-01-01T00:09:30Z", "gone": "2026-01-01T00:09:30Z"}}),
    );
    let s = run(&lately, &pods, &d);
    assert_eq!(s["currentHealthy"], 4);
    assert_eq!(s["disruptionsAllowed"], 0);
    assert_eq!(s["disruptedPods"], json!({"p1": "2026-01-01T00:09:30Z"}));
    let long_ago = pdb(
        json!({"maxUnavailable": 1}),
        json!({"disruptedPods": {"p1": "2026-01-01T00:07:00Z"}}),
    );
    let s = run(&long_ago, &pods, &d);
    assert_eq!(s["currentHealthy"], 5);
    assert_eq!(s["disruptionsAllowed"], 1);
    assert!(s.get("disruptedPods").is_none(), "{s}");
}

#[test]
fn integer_min_available_counts_the_selected_pods() {
    let b = pdb(json!({"minAvailable": 2}), json!({}));
    let mut pods = of_rs(&["p1", "p2", "p3"]);
    pods.push(pod("p4", None, false));
    let s = run(&b, &pods, &[]);
    assert_eq!(s["expectedPods"], 4);
    assert_eq!(s["currentHealthy"], 3);
    assert_eq!(s["disruptionsAllowed"], 1);
}

#[test]
fn a_percentage_is_of_the_scale_rounded_up() {
    let b = pdb(json!({"minAvailable": "50%"}), json!({}));
    let ss = json!({"kind": "StatefulSet", "metadata": {"name": "db", "uid": "s1"},
        "spec": {"replicas": 3}});
    let pods: Vec<Value> = ["db-0", "db-1", "db-2"]
        .iter()
        .map(|n| pod(n, Some(("StatefulSet", "db", "s1")), true))
        .collect();
    let s = run(&b, &pods, &[ss]);
    assert_eq!(s["expectedPods"], 3);
    assert_eq!(s["desiredHealthy"], 2);
    assert_eq!(s["disruptionsAllowed"], 1);
}

#[test]
fn a_stored_replica_set_counts_its_deployments_scale() {
    let b = pdb(json!({"maxUnavailable": "25%"}), json!({}));
    let rs = json!({"kind": "ReplicaSet", "metadata": {"name": "web-abc", "uid": "r1",
        "ownerReferences": [{"kind": "Deployment", "name": "web", "controller": true}]},
        "spec": {"replicas": 2}});
    let s = run(&b, &of_rs(&["p1", "p2"]), &[rs, deployment("web", "d9", 8)]);
    assert_eq!(s["expectedPods"], 8);
    assert_eq!(s["desiredHealthy"], 6);
    assert_eq!(s["disruptionsAllowed"], 0);
}

#[test]
fn pods_without_a_workload_fail_safe() {
    let b = pdb(
        json!({"maxUnavailable": 1}),
        json!({"currentHealthy": 3, "disruptionsAllowed": 1}),
    );
    let pods = vec![pod("bare", None, true), pod("bare2", None, true)];
    let s = run(&b, &pods, &[]);
    assert_eq!(s["disruptionsAllowed"], 0);
    assert_eq!(s["observedGeneration"], 2);
    assert_eq!(s["currentHealthy"], 3, "the other counts are kept");
}

#[test]
fn a_budget_with_neither_bound_allows_nothing() {
    let s = run(&pdb(json!({}), json!({})), &of_rs(&["p1"]), &[]);
    assert_eq!(s["expectedPods"], 0);
    assert_eq!(s["disruptionsAllowed"], 0);
}
