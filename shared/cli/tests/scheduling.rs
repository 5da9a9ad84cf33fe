//! Scenarios after Karpenter's scheduling and instance-selection suites: well-known and custom
//! label constraints, operators, node affinity terms and preferences, capacity types, and the
//! choice of instance types.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::json;
use support::*;

const ZONE: &str = "topology.kubernetes.io/zone";
const ARCH: &str = "kubernetes.io/arch";
const CT: &str = "karpenter.sh/capacity-type";
const IT: &str = "node.kubernetes.io/instance-type";

#[test]
fn schedules_an_unconstrained_pod_on_the_cheapest_fitting_offering() {
    let p = plan(&[pool("default"), pod("p", "1", "1Gi")]);
    assert_eq!(p.launches.len(), 1);
    let l = &p.launches[0];
    assert_eq!(
        l.instance_type, "a.large",
        "cheapest type that fits 1 cpu / 1Gi"
    );
    assert_eq!(l.capacity_type, "spot");
    assert_eq!(l.zone, "test-zone-a", "zone a has the cheapest spot price");
    assert_eq!(l.node_pool, "default");
    assert!(l.node_claim.starts_with("default-") && l.node_claim.len() == "default-".len() + 5);
    assert_accounted(&p, 1);
}

#[test]
fn node_selector_on_zone_pins_the_zone() {
    let p = plan(&[
        pool("default"),
        node_selector(pod("p", "1", "1Gi"), &[(ZONE, "test-zone-b")]),
    ]);
    let l = launch_of(&p, "p");
    assert_eq!(l.zone, "test-zone-b");
    assert_eq!(pinned(l, ZONE).as_deref(), Some("test-zone-b"));
}

#[test]
fn deprecated_zone_label_is_normalized() {
    let p = plan(&[
        pool("default"),
        node_selector(
            pod("p", "1", "1Gi"),
            &[("failure-domain.beta.kubernetes.io/zone", "test-zone-c")],
        ),
    ]);
    assert_eq!(launch_of(&p, "p").zone, "test-zone-c");
}

#[test]
fn custom_label_not_declared_by_the_pool_is_unschedulable() {
    let p = plan(&[
        pool("default"),
        node_selector(pod("p", "1", "1Gi"), &[("team", "a")]),
    ]);
    let r = reason_of(&p, "p");
    assert!(
        r.contains("label \"team\" does not have known values"),
        "{r}"
    );
    assert!(r.contains("nodepool \"default\""), "{r}");
}

#[test]
fn custom_label_declared_in_pool_labels_schedules() {
    let np = pool_label(pool("default"), "team", "a");
    let p = plan(&[np, node_selector(pod("p", "1", "1Gi"), &[("team", "a")])]);
    assert_eq!(pinned(launch_of(&p, "p"), "team").as_deref(), Some("a"));
}

#[test]
fn custom_label_with_a_different_value_is_unschedulable() {
    let np = pool_label(pool("default"), "team", "a");
    let p = plan(&[np, node_selector(pod("p", "1", "1Gi"), &[("team", "b")])]);
    assert!(reason_of(&p, "p").contains("team"));
}

#[test]
fn custom_label_declared_with_exists_accepts_any_value() {
    let np = pool_req(pool("default"), req("team", "Exists", &[]));
    let p = plan(&[np, node_selector(pod("p", "1", "1Gi"), &[("team", "blue")])]);
    assert_eq!(pinned(launch_of(&p, "p"), "team").as_deref(), Some("blue"));
}

#[test]
fn in_operator_on_arch_selects_arm() {
    let pd = required_terms(pod("p", "1", "1Gi"), &[vec![req(ARCH, "In", &["arm64"])]]);
    let p = plan(&[pool("default"), pd]);
    assert!(launch_of(&p, "p").instance_type.starts_with("a."));
}

#[test]
fn not_in_operator_excludes_types() {
    let pd = required_terms(
        pod("p", "1", "1Gi"),
        &[vec![req(
            "karpenter.k8s.aws/instance-family",
            "NotIn",
            &["a", "c", "m"],
        )]],
    );
    let p = plan(&[pool("default"), pd]);
    let l = launch_of(&p, "p");
    let allowed = ["r.", "g.", "w.", "single."];
    assert!(
        l.instance_type_options
            .iter()
            .all(|t| allowed.iter().any(|a| t.starts_with(a))),
        "{:?}",
        l.instance_type_options
    );
    assert_eq!(l.instance_type, "r.large");
}

#[test]
fn exists_on_a_well_known_label_schedules() {
    let pd = required_terms(pod("p", "1", "1Gi"), &[vec![req(ZONE, "Exists", &[])]]);
    assert_eq!(plan(&[pool("default"), pd]).launches.len(), 1);
}

#[test]
fn does_not_exist_on_an_undeclared_label_schedules() {
    let pd = required_terms(
        pod("p", "1", "1Gi"),
        &[vec![req("team", "DoesNotExist", &[])]],
    );
    assert_eq!(plan(&[pool("default"), pd]).launches.len(), 1);
}

#[test]
fn gt_operator_on_instance_cpu() {
    let pd = required_terms(
        pod("p", "1", "1Gi"),
        &[vec![req("karpenter.k8s.aws/instance-cpu", "Gt", &["4"])]],
    );
    let p = plan(&[pool("default"), pd]);
    let l = launch_of(&p, "p");
    assert_eq!(l.instance_type, "m.2xlarge");
    assert!(
        l.instance_type_options
            .iter()
            .all(|t| t == "m.2xlarge" || t == "m.8xlarge")
    );
}

#[test]
fn lt_operator_on_instance_cpu() {
    let pd = required_terms(
        pod("p", "500m", "1Gi"),
        &[vec![req("karpenter.k8s.aws/instance-cpu", "Lt", &["2"])]],
    );
    assert_eq!(
        launch_of(&plan(&[pool("default"), pd]), "p").instance_type,
        "m.medium"
    );
}

#[test]
fn pool_and_pod_requirements_that_conflict_are_unschedulable() {
    let np = pool_req(pool("default"), req(ZONE, "In", &["test-zone-a"]));
    let p = plan(&[
        np,
        node_selector(pod("p", "1", "1Gi"), &[(ZONE, "test-zone-b")]),
    ]);
    let r = reason_of(&p, "p");
    assert!(r.contains("incompatible requirements"), "{r}");
}

#[test]
fn required_terms_fall_back_to_the_next_term() {
    let pd = required_terms(
        pod("p", "1", "1Gi"),
        &[
            vec![req(ZONE, "In", &["nowhere"])],
            vec![req(ZONE, "In", &["test-zone-c"])],
        ],
    );
    assert_eq!(
        launch_of(&plan(&[pool("default"), pd]), "p").zone,
        "test-zone-c"
    );
}

#[test]
fn preferred_node_affinity_is_respected() {
    let pd = preferred_term(
        pod("p", "1", "1Gi"),
        10,
        vec![req(ZONE, "In", &["test-zone-c"])],
    );
    assert_eq!(
        launch_of(&plan(&[pool("default"), pd]), "p").zone,
        "test-zone-c"
    );
}

#[test]
fn the_heaviest_preference_wins() {
    let pd = preferred_term(
        pod("p", "1", "1Gi"),
        1,
        vec![req(ZONE, "In", &["test-zone-b"])],
    );
    let pd = preferred_term(pd, 50, vec![req(ZONE, "In", &["test-zone-c"])]);
    assert_eq!(
        launch_of(&plan(&[pool("default"), pd]), "p").zone,
        "test-zone-c"
    );
}

#[test]
fn impossible_preferences_are_relaxed() {
    let pd = preferred_term(
        pod("p", "1", "1Gi"),
        10,
        vec![req(ZONE, "In", &["nowhere"])],
    );
    let p = plan(&[pool("default"), pd]);
    assert_eq!(launch_of(&p, "p").zone, "test-zone-a");
}

#[test]
fn spot_is_chosen_when_both_capacity_types_are_allowed() {
    let p = plan(&[pool("default"), pod("p", "1", "1Gi")]);
    let l = launch_of(&p, "p");
    assert_eq!(l.capacity_type, "spot");
    let ct = l.requirements.iter().find(|r| r.key == CT).unwrap();
    assert_eq!(ct.values, ["on-demand", "spot"]);
}

#[test]
fn on_demand_only_pools_launch_on_demand() {
    let mut np = pool("default");
    np["spec"]["template"]["spec"]["requirements"] = json!([req(CT, "In", &["on-demand"])]);
    let l = plan(&[np, pod("p", "1", "1Gi")]).launches.remove(0);
    assert_eq!(l.capacity_type, "on-demand");
    assert_eq!(l.price, 0.08);
}

#[test]
fn pods_can_require_a_capacity_type() {
    let pd = node_selector(pod("p", "1", "1Gi"), &[(CT, "on-demand")]);
    assert_eq!(
        launch_of(&plan(&[pool("default"), pd]), "p").capacity_type,
        "on-demand"
    );
}

#[test]
fn instance_type_options_are_cheapest_first_and_all_fit() {
    let p = plan(&[pool("default"), pod("p", "3", "10Gi")]);
    let l = launch_of(&p, "p");
    assert_eq!(l.instance_type, l.instance_type_options[0]);
    assert!(l.instance_type_options.contains(&"m.xlarge".to_string()));
    assert!(
        !l.instance_type_options.contains(&"m.large".to_string()),
        "m.large cannot fit 3 cpu"
    );
    assert!(
        !l.instance_type_options.contains(&"c.xlarge".to_string()),
        "c.xlarge cannot fit 10Gi"
    );
    let it = l.requirements.iter().find(|r| r.key == IT).unwrap();
    assert_eq!(it.values.len(), l.instance_type_options.len());
}

#[test]
fn bundled_catalog_options_are_capped_at_sixty() {
    let p = plan_bundled(&[pool("default"), pod("p", "1", "1Gi")], "us-west-2");
    let l = launch_of(&p, "p");
    assert_eq!(l.instance_type_options.len(), 60);
    assert!(l.zone.starts_with("us-west-2"));
}

#[test]
fn gpu_pods_get_gpu_instance_types() {
    let mut pd = pod("p", "1", "1Gi");
    pd["spec"]["containers"][0]["resources"]["limits"] = json!({"nvidia.com/gpu": "1"});
    let l = plan(&[pool("default"), pd]).launches.remove(0);
    assert_eq!(l.instance_type, "g.xlarge");
    assert_eq!(l.instance_type_options, ["g.xlarge"]);
}

#[test]
fn a_pod_too_big_for_every_type_is_unschedulable_with_its_size() {
    let p = plan(&[pool("default"), pod("huge", "400", "1Gi")]);
    let r = reason_of(&p, "huge");
    assert!(
        r.contains("no instance type has enough resources") && r.contains("cpu=400"),
        "{r}"
    );
    assert!(p.launches.is_empty());
}

#[test]
fn windows_pods_get_windows_types() {
    let pd = node_selector(pod("p", "1", "1Gi"), &[("kubernetes.io/os", "windows")]);
    assert_eq!(
        launch_of(&plan(&[pool("default"), pd]), "p").instance_type,
        "w.xlarge"
    );
}

#[test]
fn unavailable_offerings_are_never_chosen() {
    let cat = catalog_json(&[
        ("a.large", "test-zone-a", "spot"),
        ("a.large", "test-zone-b", "spot"),
    ]);
    let l = plan_with(&[pool("default"), pod("p", "1", "1Gi")], &cat)
        .launches
        .remove(0);
    assert_eq!(
        (
            l.instance_type.as_str(),
            l.zone.as_str(),
            l.capacity_type.as_str()
        ),
        ("a.large", "test-zone-c", "spot")
    );
}

#[test]
fn min_values_keeps_enough_families() {
    let mut r = req("karpenter.k8s.aws/instance-family", "Exists", &[]);
    r["minValues"] = json!(3);
    let p = plan(&[pool_req(pool("default"), r), pod("p", "1", "1Gi")]);
    let l = launch_of(&p, "p");
    let mut fams: Vec<&str> = l
        .instance_type_options
        .iter()
        .map(|t| t.split('.').next().unwrap())
        .collect();
    fams.sort();
    fams.dedup();
    assert!(fams.len() >= 3, "{fams:?}");
    assert_eq!(
        l.requirements
            .iter()
            .find(|r| r.key == "karpenter.k8s.aws/instance-family")
            .unwrap()
            .min_values,
        Some(3)
    );
}

#[test]
fn min_values_that_cannot_be_met_are_unschedulable() {
    let mut r = req("karpenter.k8s.aws/instance-family", "In", &["m", "c"]);
    r["minValues"] = json!(2);
    let pd = pod("p", "6", "20Gi");
    let p = plan(&[pool_req(pool("default"), r), pd]);
    assert!(
        reason_of(&p, "p").contains("minValues"),
        "{}",
        reason_of(&p, "p")
    );
}
