//! Tests of drain ordering and protection.

use super::*;
use serde_json::{Value, json};

fn pod(name: &str, extra: Value) -> Pod {
    let mut v = json!({"metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "i"}], "nodeName": "n1"},
        "status": {"phase": "Running", "startTime": "2026-01-01T00:00:00Z"}});
    merge(&mut v, extra);
    serde_json::from_value(v).unwrap()
}

fn merge(a: &mut Value, b: Value) {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                merge(a.entry(k).or_insert(Value::Null), v);
            }
        }
        (a, b) => *a = b,
    }
}

fn t(secs: i64) -> Timestamp {
    "2026-01-01T00:00:00Z".parse::<Timestamp>().unwrap() + SignedDuration::from_secs(secs)
}

#[test]
fn waiting_pods_exclude_terminal_mirror_tolerating_and_stuck() {
    let pods = vec![
        pod("app", json!({})),
        pod("done", json!({"status": {"phase": "Succeeded"}})),
        pod(
            "mirror",
            json!({"metadata": {"annotations": {"kubernetes.io/config.mirror": "x"}}}),
        ),
        pod(
            "tolerant",
            json!({"spec": {"tolerations": [{"key": "karpenter.sh/disrupted", "operator": "Exists"}]}}),
        ),
        pod(
            "stuck",
            json!({"metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z"}}),
        ),
        pod(
            "leaving",
            json!({"metadata": {"deletionTimestamp": "2026-01-01T00:00:30Z"}}),
        ),
    ];
    let names: Vec<&str> = waiting(&pods, t(70))
        .iter()
        .map(|p| p.metadata.name.as_deref().unwrap())
        .collect();
    assert_eq!(names, ["app", "leaving"]);
}

#[test]
fn tiers_go_non_critical_first_daemonsets_last() {
    let ds = json!({"metadata": {"ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "d", "uid": "u"}]}});
    let crit = json!({"spec": {"priorityClassName": "system-node-critical"}});
    let pods = [
        pod("ds", ds.clone()),
        pod("crit", crit.clone()),
        pod("app", json!({})),
        pod("crit-ds", {
            let mut v = ds.clone();
            merge(&mut v, crit.clone());
            v
        }),
    ];
    let refs: Vec<&Pod> = pods.iter().collect();
    let name = |v: Vec<&Pod>| {
        v.iter()
            .map(|p| p.metadata.name.clone().unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(name(first_tier(&refs)), ["app"]);
    assert_eq!(name(first_tier(&refs[..2])), ["ds"]);
    assert_eq!(name(first_tier(&[refs[1], refs[3]])), ["crit"]);
    assert_eq!(name(first_tier(&[refs[3]])), ["crit-ds"]);
}

#[test]
fn do_not_disrupt_is_true_or_a_duration_from_start() {
    let forever = pod(
        "a",
        json!({"metadata": {"annotations": {"karpenter.sh/do-not-disrupt": "true"}}}),
    );
    let five = pod(
        "b",
        json!({"metadata": {"annotations": {"karpenter.sh/do-not-disrupt": "5m"}}}),
    );
    let junk = pod(
        "c",
        json!({"metadata": {"annotations": {"karpenter.sh/do-not-disrupt": "soon"}}}),
    );
    assert!(do_not_disrupt(&forever, t(1_000_000)));
    assert!(do_not_disrupt(&five, t(299)));
    assert!(!do_not_disrupt(&five, t(300)));
    assert!(
        !do_not_disrupt(&junk, t(0)),
        "an invalid value is treated as absent"
    );
}

#[test]
fn the_next_forced_deletion_is_the_deadline_less_each_waiting_pods_grace() {
    let pods = vec![
        pod(
            "quick",
            json!({"spec": {"terminationGracePeriodSeconds": 0}}),
        ),
        pod(
            "slow",
            json!({"spec": {"terminationGracePeriodSeconds": 20}}),
        ),
        pod("default", json!({})),
        pod("done", json!({"status": {"phase": "Succeeded"}})),
    ];
    // Deadline at 60 s: `default` (30 s) is due at 30, `slow` at 40, `quick` at 60.
    assert_eq!(next_force(&pods, Some(t(60)), t(0)), Some(t(30)));
    assert_eq!(next_force(&pods, Some(t(60)), t(30)), Some(t(40)));
    assert_eq!(next_force(&pods, Some(t(60)), t(45)), Some(t(60)));
    assert_eq!(
        next_force(&pods, Some(t(60)), t(60)),
        None,
        "all due: forced this pass"
    );
    assert_eq!(
        next_force(&pods, None, t(0)),
        None,
        "no deadline, nothing forced"
    );
}
