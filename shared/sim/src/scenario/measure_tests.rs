//! Unit tests of the run measures.

use super::*;
use serde_json::json;

fn claim(name: &str, conds: serde_json::Value, deleting: bool) -> NodeClaim {
    let mut c = json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": {"name": name}, "spec": {"nodeClassRef": {"group": "g", "kind": "k",
        "name": "n"}, "requirements": []}, "status": {"conditions": conds}});
    if deleting {
        c["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:10:00Z");
    }
    serde_json::from_value(c).unwrap()
}

fn cond(t: &str, status: &str, at: &str) -> serde_json::Value {
    json!({"type": t, "status": status, "lastTransitionTime": at, "reason": t,
        "message": ""})
}

fn event(reason: &str, kind: &str, name: &str, message: &str) -> Event {
    serde_json::from_value(json!({"metadata": {"name": format!("{name}.{reason}")},
        "reason": reason, "message": message,
        "involvedObject": {"kind": kind, "name": name}}))
    .unwrap()
}

fn ts(s: &str) -> Timestamp {
    s.parse().unwrap()
}

#[test]
fn a_disrupted_claim_counts_from_its_condition_to_its_end() {
    let mut m = Measures::default();
    let c = claim(
        "a",
        json!([
            cond("Consolidatable", "True", "2026-01-01T00:05:00Z"),
            cond("Drifted", "True", "2026-01-01T00:07:00Z")
        ]),
        false,
    );
    let other = claim(
        "b",
        json!([cond("Consolidatable", "False", "2026-01-01T00:05:00Z")]),
        false,
    );
    m.claims(&[c, other]);
    for e in [
        event(
            "DisruptionTerminating",
            "Node",
            "n-a",
            "Disrupting Node: Underutilized/Delete",
        ),
        event(
            "DisruptionTerminating",
            "NodeClaim",
            "a",
            "Disrupting NodeClaim: Underutilized/Delete",
        ),
        event("Evicted", "Pod", "p", "Evicted pod: Underutilized"),
    ] {
        m.event(&e);
    }
    m.gone(ts("2026-01-01T00:06:30Z"), "a");
    // A claim gone without a disruption (deleted by hand) is not counted.
    m.gone(ts("2026-01-01T00:07:00Z"), "b");
    assert_eq!(m.to_removal, [90.0]);
    // Nor one expired while consolidatable: its conditions did not time it.
    m.claims(&[claim(
        "old",
        json!([cond("Consolidatable", "True", "2026-01-01T00:00:00Z")]),
        false,
    )]);
    m.event(&event(
        "DisruptionTerminating",
        "NodeClaim",
        "old",
        "Disrupting NodeClaim: Expired/Delete",
    ));
    m.gone(ts("2026-01-01T01:00:10Z"), "old");
    assert_eq!(m.to_removal, [90.0]);
    assert_eq!(
        m.disruptions,
        BTreeMap::from([("Expired".to_string(), 1), ("Underutilized".to_string(), 1)])
    );
    assert_eq!(m.evicted, 1);
}

#[test]
fn a_claim_no_longer_disruptable_starts_again() {
    let mut m = Measures::default();
    let on = claim(
        "a",
        json!([cond("Consolidatable", "True", "2026-01-01T00:01:00Z")]),
        false,
    );
    m.claims(&[on]);
    let off = claim("a", json!([]), false);
    m.claims(&[off]);
    let again = claim(
        "a",
        json!([cond("Consolidatable", "True", "2026-01-01T00:04:00Z")]),
        true,
    );
    m.claims(&[again]);
    m.event(&event(
        "DisruptionTerminating",
        "NodeClaim",
        "a",
        "Disrupting NodeClaim: Empty/Delete",
    ));
    m.gone(ts("2026-01-01T00:05:00Z"), "a");
    assert_eq!(m.to_removal, [60.0]);
}

#[test]
fn a_disrupted_claim_losing_its_condition_keeps_its_start() {
    let mut m = Measures::default();
    let on = claim(
        "a",
        json!([cond("Consolidatable", "True", "2026-01-01T00:01:00Z")]),
        false,
    );
    m.claims(&[on]);
    m.event(&event(
        "DisruptionTerminating",
        "NodeClaim",
        "a",
        "Disrupting NodeClaim: Underutilized/Replace",
    ));
    // Its pods evicted: a pod event clears the condition while the command runs.
    m.claims(&[claim("a", json!([]), false)]);
    m.gone(ts("2026-01-01T00:03:00Z"), "a");
    assert_eq!(m.to_removal, [120.0]);
}

#[test]
fn pods_count_from_creation_and_quantiles_take_the_nearest_rank() {
    let mut m = Measures::default();
    let pod: Pod = serde_json::from_value(json!({"metadata": {"name": "p",
        "creationTimestamp": "2026-01-01T00:00:00Z"}}))
    .unwrap();
    m.running(ts("2026-01-01T00:00:42Z"), &pod);
    assert_eq!(m.pod_start, [42.0]);
    // Seen later than its kubelet made it Ready: the Ready transition counts.
    let ready: Pod = serde_json::from_value(json!({"metadata": {"name": "r",
        "creationTimestamp": "2026-01-01T00:00:00Z"}, "status": {"conditions": [
        {"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:53Z"}]}}))
    .unwrap();
    m.running(ts("2026-01-01T00:01:10Z"), &ready);
    assert_eq!(m.pod_start, [42.0, 53.0]);
    let v: Vec<f64> = (1..=100).map(f64::from).collect();
    assert_eq!(quantile(&v, 0.5), Some(50.0));
    assert_eq!(quantile(&v, 0.99), Some(99.0));
    assert_eq!(quantile(&[], 0.5), None);
    assert_eq!(reason("Disrupting NodeClaim: Drifted"), "Drifted");
}

#[test]
fn a_pod_waits_for_the_claim_launched_for_it_not_for_one_launched_before_it() {
    let mut m = Measures::default();
    let created = |name: &str, at: &str| {
        let mut c = claim(name, json!([]), false);
        c.metadata.creation_timestamp =
            Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(ts(at)));
        c
    };
    m.claims(&[
        created("old", "2026-01-01T00:00:00Z"),
        created("new", "2026-01-01T00:01:02Z"),
    ]);
    let nominated = |pod: &str, claim: &str| {
        event(
            "Nominated",
            "Pod",
            pod,
            &format!("Pod should schedule on: nodeclaim/{claim}"),
        )
    };
    m.event(&nominated("p", "new"));
    // A later nomination (to the node, or elsewhere) does not replace the first.
    m.event(&event(
        "Nominated",
        "Pod",
        "p",
        "Pod should schedule on: node/n1",
    ));
    m.event(&nominated("q", "old"));
    let pod = |name: &str| -> Pod {
        serde_json::from_value(json!({"metadata": {"name": name,
            "creationTimestamp": "2026-01-01T00:01:00Z"}}))
        .unwrap()
    };
    m.running(ts("2026-01-01T00:01:55Z"), &pod("p"));
    m.running(ts("2026-01-01T00:01:05Z"), &pod("q"));
    m.running(ts("2026-01-01T00:01:05Z"), &pod("r"));
    assert_eq!(m.to_launch, [2.0]);
    assert_eq!(m.pod_start, [55.0, 5.0, 5.0]);
}

#[test]
fn a_claim_counts_once_from_its_creation_to_its_initialized_condition() {
    let mut m = Measures::default();
    let mut c = claim(
        "a",
        json!([cond("Initialized", "True", "2026-01-01T00:00:58Z")]),
        false,
    );
    c.metadata.creation_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(ts(
        "2026-01-01T00:00:02Z",
    )));
    let mut booting = claim(
        "b",
        json!([cond("Initialized", "Unknown", "2026-01-01T00:00:02Z")]),
        false,
    );
    booting.metadata.creation_timestamp = c.metadata.creation_timestamp.clone();
    m.claims(&[c.clone(), booting]);
    m.claims(&[c]);
    assert_eq!(m.to_initialized, [56.0]);
}

#[test]
fn cpu_peaks_over_ten_second_windows_and_memory_keeps_its_peak() {
    let mut m = Measures::default();
    let u = |cpu: f64, rss: u64| Usage {
        cpu_seconds: cpu,
        peak_rss: rss,
    };
    m.usage(ts("2026-01-01T00:00:00Z"), u(1.0, 100));
    m.usage(ts("2026-01-01T00:00:05Z"), u(2.0, 300));
    m.usage(ts("2026-01-01T00:00:10Z"), u(6.0, 200));
    m.usage(ts("2026-01-01T00:00:20Z"), u(7.0, 200));
    let seen = m.usage.unwrap();
    assert_eq!(seen.cpu_seconds, 7.0);
    assert_eq!(seen.peak_cores, 0.5);
    assert_eq!(seen.peak_rss, 300);
}
