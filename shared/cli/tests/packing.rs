//! Scenarios after Karpenter's binpacking, DaemonSet overhead, existing and in-flight capacity,
//! taints, NodePool weight and limit suites.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::json;
use support::*;

#[test]
fn small_pods_pack_onto_one_node() {
    let pods: Vec<_> = (0..10)
        .map(|i| pod(&format!("p{i}"), "100m", "128Mi"))
        .collect();
    let mut docs = vec![pool("default")];
    docs.extend(pods);
    let p = plan(&docs);
    assert_eq!(p.launches.len(), 1);
    assert_eq!(p.launches[0].pods.len(), 10);
    assert_accounted(&p, 10);
}

#[test]
fn pods_beyond_the_largest_node_open_more_nodes() {
    let mut docs = vec![pool("default")];
    docs.extend((0..40).map(|i| pod(&format!("p{i}"), "3", "1Gi")));
    let p = plan(&docs);
    let cpus: f64 = p.launches.iter().map(|l| l.pods.len() as f64 * 3.0).sum();
    assert_eq!(cpus, 120.0);
    assert!(p.launches.len() >= 4, "32-cpu nodes hold 10 pods at most");
    for l in &p.launches {
        let cap = FAKES
            .iter()
            .find(|f| f.name == l.instance_type)
            .unwrap()
            .cpu as f64
            - 0.1;
        assert!(
            l.pods.len() as f64 * 3.0 <= cap,
            "{} over-committed",
            l.node_claim
        );
    }
}

#[test]
fn the_pods_resource_limits_density() {
    let mut docs = vec![pool_req(
        pool("default"),
        req("node.kubernetes.io/instance-type", "In", &["single.large"]),
    )];
    docs.extend((0..3).map(|i| pod(&format!("p{i}"), "100m", "100Mi")));
    let p = plan(&docs);
    assert_eq!(p.launches.len(), 3, "single.large holds one pod");
}

#[test]
fn init_containers_and_sidecars_count_as_kube_scheduler_counts_them() {
    let mut pd = pod("p", "1", "1Gi");
    pd["spec"]["initContainers"] = json!([
        {"name": "side", "image": "s", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}},
        {"name": "init", "image": "i", "resources": {"requests": {"cpu": "2500m"}}}
    ]);
    // init step 2.5 + sidecar 1 = 3.5 > app 1 + sidecar 1 = 2: needs a 4-cpu node
    let l = plan(&[pool("default"), pd]).launches.remove(0);
    assert_eq!(l.requests["cpu"], "3500m");
    assert_eq!(l.instance_type, "a.xlarge");
}

#[test]
fn pod_overhead_is_added() {
    let mut pd = pod("p", "1800m", "1Gi");
    pd["spec"]["overhead"] = json!({"cpu": "250m"});
    let l = plan(&[pool("default"), pd]).launches.remove(0);
    assert_eq!(l.requests["cpu"], "2050m");
    assert_ne!(
        l.instance_type, "a.large",
        "1.9 allocatable cpu is not enough"
    );
}

#[test]
fn daemonset_overhead_sizes_the_node() {
    let p = plan(&[
        pool("default"),
        daemonset("logs", "500m", "256Mi"),
        pod("p", "1500m", "1Gi"),
    ]);
    let l = launch_of(&p, "p");
    assert_eq!(
        l.requests["cpu"], "2",
        "1.5 for the pod + 0.5 for the daemonset"
    );
    assert_eq!(l.instance_type, "a.xlarge", "a.large allocates 1.9 cpu");
}

#[test]
fn daemonsets_that_do_not_tolerate_pool_taints_are_not_counted() {
    let np = pool_taint(pool("default"), "taints", "dedicated", "NoSchedule");
    let pd = toleration(
        pod("p", "1500m", "1Gi"),
        "dedicated",
        "Exists",
        "NoSchedule",
    );
    let l = plan(&[np, daemonset("logs", "500m", "256Mi"), pd])
        .launches
        .remove(0);
    assert_eq!(l.requests["cpu"], "1500m");
    assert_eq!(l.instance_type, "a.large");
}

#[test]
fn daemonsets_selecting_other_nodes_are_not_counted() {
    let mut ds = daemonset("gpu-plugin", "1", "1Gi");
    ds["spec"]["template"]["spec"]["nodeSelector"] = json!({"kubernetes.io/arch": "arm64"});
    let pd = node_selector(pod("p", "1", "1Gi"), &[("kubernetes.io/arch", "amd64")]);
    let l = plan(&[pool("default"), ds, pd]).launches.remove(0);
    assert_eq!(l.requests["cpu"], "1");
}

#[test]
fn existing_nodes_with_room_are_used_first() {
    let p = plan(&[
        pool("default"),
        node("n1", "m.xlarge", "test-zone-b"),
        pod("p", "1", "1Gi"),
    ]);
    assert_eq!(nominated(&p, "p").as_deref(), Some("n1"));
    assert!(p.launches.is_empty());
}

#[test]
fn full_existing_nodes_are_skipped() {
    let busy = bound(pod("busy", "3500m", "1Gi"), "n1");
    let p = plan(&[
        pool("default"),
        node("n1", "m.xlarge", "test-zone-b"),
        busy,
        pod("p", "1", "1Gi"),
    ]);
    assert_eq!(nominated(&p, "p"), None);
    assert_eq!(p.launches.len(), 1);
    assert_accounted(&p, 1);
}

#[test]
fn untolerated_node_taints_block_existing_nodes() {
    let mut n = node("n1", "m.xlarge", "test-zone-a");
    n["spec"]["taints"] = json!([{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]);
    let p = plan(&[pool("default"), n, pod("p", "1", "1Gi")]);
    assert_eq!(nominated(&p, "p"), None);
}

#[test]
fn prefer_no_schedule_taints_on_existing_nodes_must_be_tolerated() {
    let mut n = node("n1", "m.xlarge", "test-zone-a");
    n["spec"]["taints"] = json!([{"key": "soft", "effect": "PreferNoSchedule"}]);
    let p = plan(&[pool("default"), n, pod("p", "1", "1Gi")]);
    assert_eq!(
        nominated(&p, "p"),
        None,
        "Karpenter does not place on PreferNoSchedule nodes"
    );
}

#[test]
fn cordoned_nodes_are_skipped() {
    let mut n = node("n1", "m.xlarge", "test-zone-a");
    n["spec"]["unschedulable"] = json!(true);
    assert_eq!(
        nominated(&plan(&[pool("default"), n, pod("p", "1", "1Gi")]), "p"),
        None
    );
}

#[test]
fn deleting_and_disrupted_nodes_are_skipped() {
    let mut n1 = node("n1", "m.xlarge", "test-zone-a");
    n1["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
    n1["metadata"]["finalizers"] = json!(["karpenter.sh/termination"]);
    let mut n2 = node("n2", "m.xlarge", "test-zone-a");
    n2["spec"]["taints"] = json!([{"key": "karpenter.sh/disrupted", "effect": "NoSchedule"}]);
    let p = plan(&[pool("default"), n1, n2, pod("p", "1", "1Gi")]);
    assert_eq!(nominated(&p, "p"), None);
}

#[test]
fn uninitialized_nodes_ignore_ephemeral_taints() {
    let mut n = node("n1", "m.xlarge", "test-zone-a");
    n["metadata"]["labels"]
        .as_object_mut()
        .unwrap()
        .remove("karpenter.sh/initialized");
    n["spec"]["taints"] = json!([{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]);
    assert_eq!(
        nominated(&plan(&[pool("default"), n, pod("p", "1", "1Gi")]), "p").as_deref(),
        Some("n1")
    );
}

#[test]
fn existing_node_labels_must_satisfy_the_pod() {
    let pd = node_selector(
        pod("p", "1", "1Gi"),
        &[("topology.kubernetes.io/zone", "test-zone-c")],
    );
    let p = plan(&[pool("default"), node("n1", "m.xlarge", "test-zone-a"), pd]);
    assert_eq!(nominated(&p, "p"), None);
    assert_eq!(launch_of(&p, "p").zone, "test-zone-c");
}

#[test]
fn in_flight_node_claims_take_pods() {
    let nc = json!({
        "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": {"name": "default-abcde", "labels": {"karpenter.sh/nodepool": "default"}},
        "spec": {
            "requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m.xlarge"]},
                             {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["test-zone-a"]}],
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}
        },
        "status": {"allocatable": {"cpu": "3900m", "memory": "15Gi", "pods": "58"}}
    });
    let p = plan(&[pool("default"), nc, pod("p", "1", "1Gi")]);
    assert_eq!(nominated(&p, "p").as_deref(), Some("default-abcde"));
    assert!(p.launches.is_empty());
}

#[test]
fn in_flight_claims_without_status_assume_their_smallest_option() {
    let nc = json!({
        "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": {"name": "default-fghij", "labels": {"karpenter.sh/nodepool": "default"}},
        "spec": {
            "requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m.large", "m.xlarge"]}],
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}
        }
    });
    let p = plan(&[
        pool("default"),
        nc,
        pod("a", "1", "1Gi"),
        pod("b", "1", "1Gi"),
    ]);
    assert_eq!(nominated(&p, "a").as_deref(), Some("default-fghij"));
    assert_eq!(
        nominated(&p, "b"),
        None,
        "m.large (1.9 cpu) holds one of the two"
    );
}

#[test]
fn untolerated_pool_taints_make_pods_unschedulable() {
    let np = pool_taint(pool("default"), "taints", "dedicated", "NoSchedule");
    let r = reason_of(&plan(&[np, pod("p", "1", "1Gi")]), "p");
    assert!(
        r.contains("did not tolerate taint dedicated=true:NoSchedule"),
        "{r}"
    );
}

#[test]
fn tolerated_pool_taints_schedule() {
    let np = pool_taint(pool("default"), "taints", "dedicated", "NoSchedule");
    let pd = toleration(pod("p", "1", "1Gi"), "dedicated", "Equal", "NoSchedule");
    assert_eq!(plan(&[np, pd]).launches.len(), 1);
}

#[test]
fn startup_taints_do_not_block_scheduling() {
    let np = pool_taint(
        pool("default"),
        "startupTaints",
        "cilium.io/agent-not-ready",
        "NoExecute",
    );
    assert_eq!(plan(&[np, pod("p", "1", "1Gi")]).launches.len(), 1);
}

#[test]
fn prefer_no_schedule_pool_taints_are_tolerated_after_relaxation() {
    let np = pool_taint(pool("default"), "taints", "soft", "PreferNoSchedule");
    assert_eq!(plan(&[np, pod("p", "1", "1Gi")]).launches.len(), 1);
}

#[test]
fn higher_weight_pools_are_tried_first() {
    let low = pool_req(pool("low"), req("kubernetes.io/arch", "In", &["arm64"]));
    let high = pool_weight(
        pool_req(pool("high"), req("kubernetes.io/arch", "In", &["amd64"])),
        50,
    );
    let l = plan(&[low, high, pod("p", "1", "1Gi")]).launches.remove(0);
    assert_eq!(l.node_pool, "high");
    assert!(l.node_claim.starts_with("high-"));
}

#[test]
fn lower_weight_pools_are_used_when_higher_ones_cannot_host_the_pod() {
    let high = pool_weight(
        pool_req(pool("high"), req("kubernetes.io/arch", "In", &["arm64"])),
        50,
    );
    let pd = node_selector(pod("p", "1", "1Gi"), &[("kubernetes.io/arch", "amd64")]);
    assert_eq!(plan(&[high, pool("low"), pd]).launches[0].node_pool, "low");
}

#[test]
fn equal_weights_are_ordered_by_name_descending() {
    let p = plan(&[pool("alpha"), pool("beta"), pod("p", "1", "1Gi")]);
    assert_eq!(p.launches[0].node_pool, "beta");
}

#[test]
fn cpu_limits_stop_launches() {
    let np = pool_limit(pool("default"), "cpu", "2");
    let r = reason_of(&plan(&[np, pod("p", "3", "1Gi")]), "p");
    assert!(r.contains("exceed the nodepool limits"), "{r}");
}

#[test]
fn node_limits_count_nodes_launched_in_the_same_plan() {
    let np = pool_limit(pool("default"), "nodes", "1");
    let a = affinity(
        labels(pod("a", "1", "1Gi"), &[("app", "x")]),
        "podAntiAffinity",
        "kubernetes.io/hostname",
        "x",
        None,
    );
    let b = affinity(
        labels(pod("b", "1", "1Gi"), &[("app", "x")]),
        "podAntiAffinity",
        "kubernetes.io/hostname",
        "x",
        None,
    );
    let p = plan(&[np, a, b]);
    assert_eq!(p.launches.len(), 1);
    assert_eq!(p.unschedulable.len(), 1);
    assert_accounted(&p, 2);
}

#[test]
fn limits_account_for_existing_nodes() {
    let np = pool_limit(pool("default"), "cpu", "5");
    let busy = bound(pod("busy", "3800m", "1Gi"), "n1");
    let p = plan(&[
        np,
        node("n1", "m.xlarge", "test-zone-a"),
        busy,
        pod("p", "2", "1Gi"),
    ]);
    assert!(
        reason_of(&p, "p").contains("limits"),
        "4 existing + 2 or more > 5"
    );
}

#[test]
fn limits_hold_across_several_new_nodes() {
    let np = pool_limit(
        pool_req(
            pool("default"),
            req("node.kubernetes.io/instance-type", "In", &["m.xlarge"]),
        ),
        "cpu",
        "8",
    );
    let mut docs = vec![np];
    docs.extend((0..12).map(|i| pod(&format!("p{i}"), "1", "1Gi")));
    let p = plan(&docs);
    assert_eq!(p.launches.len(), 2, "two 4-cpu nodes fit in a limit of 8");
    assert_eq!(p.summary.scheduled_pods + p.summary.unschedulable_pods, 12);
    assert_eq!(p.summary.unschedulable_pods, 6);
}

#[test]
fn limits_leave_room_for_one_node_per_pod() {
    // Host ports force one node per pod; three nodes must fit a 10-cpu limit, so none of
    // them may be sized for the pool's largest types.
    let np = pool_limit(pool("default"), "cpu", "10");
    let mut docs = vec![np];
    docs.extend((0..3).map(|i| host_port(pod(&format!("p{i}"), "1", "1Gi"), 8080)));
    let p = plan(&docs);
    assert_eq!(p.summary.unschedulable_pods, 0, "{:?}", p.unschedulable);
    assert_eq!(p.launches.len(), 3);
}

fn capacity_cpu(t: &str) -> u32 {
    FAKES.iter().find(|f| f.name == t).unwrap().cpu
}

#[test]
fn limits_bound_every_instance_type_option() {
    // 3 cpu fits a 4-vCPU node; the 8- and 32-vCPU types also fit it, but a 32-vCPU
    // instance would break the 10-cpu limit, so it may not be offered to CreateFleet.
    let np = pool_limit(pool("default"), "cpu", "10");
    let p = plan(&[np, pod("p", "3", "1Gi")]);
    let l = launch_of(&p, "p");
    assert!(!l.instance_type_options.is_empty());
    for o in &l.instance_type_options {
        assert!(capacity_cpu(o) <= 10, "option {o} exceeds the limit");
    }
}

#[test]
fn each_claim_is_charged_its_largest_option() {
    // Two claims (anti-affinity): the second's options must fit what the first claim's
    // largest option left of the limit.
    let np = pool_limit(pool("default"), "cpu", "10");
    let anti = |n: &str| {
        affinity(
            labels(pod(n, "3", "1Gi"), &[("app", "x")]),
            "podAntiAffinity",
            "kubernetes.io/hostname",
            "x",
            None,
        )
    };
    let p = plan(&[np, anti("a"), anti("b")]);
    assert_eq!(p.launches.len(), 2, "{:?}", p.unschedulable);
    let mut left = 10;
    for l in &p.launches {
        for o in &l.instance_type_options {
            assert!(capacity_cpu(o) <= left, "{o} exceeds the {left} cpu left");
        }
        left -= l
            .instance_type_options
            .iter()
            .map(|o| capacity_cpu(o))
            .max()
            .unwrap();
    }
}
