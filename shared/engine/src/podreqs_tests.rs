//! Pod request arithmetic (init containers, sidecars, overhead) and the relaxation ladder.

use super::*;
use crate::model::WeightedTerm;
use crate::requirements::{Operator, SelectorRequirement};

fn res(pairs: &[(&str, &str)]) -> Resources {
    Resources::parse(pairs.iter().copied()).unwrap()
}

fn c(pairs: &[(&str, &str)]) -> ContainerResources {
    ContainerResources {
        requests: res(pairs),
        ..Default::default()
    }
}

#[test]
fn containers_sum_and_count_one_pod() {
    let r = effective_requests(
        &[c(&[("cpu", "1")]), c(&[("cpu", "500m"), ("memory", "1Gi")])],
        &[],
        &Resources::new(),
    );
    assert_eq!(r.get("cpu"), 1500);
    assert_eq!(r.get("memory"), res(&[("memory", "1Gi")]).get("memory"));
    assert_eq!(r.get("pods"), 1000);
}

#[test]
fn init_containers_take_the_max() {
    let r = effective_requests(
        &[c(&[("cpu", "1")])],
        &[c(&[("cpu", "2")]), c(&[("cpu", "500m")])],
        &Resources::new(),
    );
    assert_eq!(r.get("cpu"), 2000);
}

#[test]
fn sidecars_add_to_containers_and_later_init_steps() {
    let mut sidecar = c(&[("cpu", "300m")]);
    sidecar.sidecar = true;
    // sidecar 300m, then init 1 (runs beside the sidecar: 1.3), app 1 + sidecar = 1.3
    let r = effective_requests(
        &[c(&[("cpu", "1")])],
        &[sidecar, c(&[("cpu", "1")])],
        &Resources::new(),
    );
    assert_eq!(r.get("cpu"), 1300);
    let mut big = c(&[("cpu", "100m")]);
    big.sidecar = true;
    let r = effective_requests(
        &[c(&[("cpu", "100m")])],
        &[big, c(&[("cpu", "2")])],
        &Resources::new(),
    );
    assert_eq!(
        r.get("cpu"),
        2100,
        "init step 2 + running sidecar 100m dominates"
    );
}

#[test]
fn limits_default_requests_and_overhead_adds() {
    let lim = ContainerResources {
        limits: res(&[("cpu", "2"), ("nvidia.com/gpu", "1")]),
        ..Default::default()
    };
    let r = effective_requests(&[lim], &[], &res(&[("cpu", "250m")]));
    assert_eq!(r.get("cpu"), 2250);
    assert_eq!(r.get("nvidia.com/gpu"), 1000);
}

#[test]
fn pod_level_requests_replace_what_the_containers_sum_to() {
    let pod = c(&[("cpu", "4")]);
    let r = effective_pod_requests(
        &[c(&[("cpu", "1"), ("memory", "1Gi")]), c(&[("cpu", "500m")])],
        &[c(&[("cpu", "8")])],
        Some(&pod),
        &res(&[("cpu", "250m")]),
    );
    assert_eq!(
        r.get("cpu"),
        4250,
        "pod level 4 plus overhead, init step ignored"
    );
    assert_eq!(
        r.get("memory"),
        res(&[("memory", "1Gi")]).get("memory"),
        "memory not set at pod level keeps the container sum"
    );
    assert_eq!(r.get("pods"), 1000);
}

#[test]
fn pod_level_limits_default_requests_and_only_cpu_memory_and_hugepages_count() {
    let pod = ContainerResources {
        limits: res(&[("memory", "8Gi"), ("hugepages-2Mi", "1Gi")]),
        requests: res(&[("nvidia.com/gpu", "4")]),
        ..Default::default()
    };
    let r = effective_pod_requests(
        &[c(&[("memory", "1Gi"), ("nvidia.com/gpu", "1")])],
        &[],
        Some(&pod),
        &Resources::new(),
    );
    assert_eq!(r.get("memory"), res(&[("memory", "8Gi")]).get("memory"));
    assert_eq!(r.get("hugepages-2Mi"), res(&[("m", "1Gi")]).get("m"));
    assert_eq!(
        r.get("nvidia.com/gpu"),
        1000,
        "extended resources stay per container"
    );
}

#[test]
fn no_pod_level_resources_is_the_container_rule() {
    let cs = [c(&[("cpu", "1")])];
    let inits = [c(&[("cpu", "2")])];
    let over = res(&[("cpu", "100m")]);
    assert_eq!(
        effective_pod_requests(&cs, &inits, None, &over),
        effective_requests(&cs, &inits, &over)
    );
    assert_eq!(effective_requests(&cs, &inits, &over).get("cpu"), 2100);
}

fn term(key: &str, v: &str) -> Vec<SelectorRequirement> {
    vec![SelectorRequirement {
        key: key.into(),
        operator: Operator::In,
        values: vec![v.into()],
        min_values: None,
    }]
}

#[test]
fn relaxation_follows_karpenters_order() {
    let spec = PodSpec {
        required_terms: vec![term("a", "1"), term("a", "2")],
        preferred_terms: vec![
            WeightedTerm {
                weight: 1,
                term: term("b", "1"),
            },
            WeightedTerm {
                weight: 10,
                term: term("b", "2"),
            },
        ],
        ..Default::default()
    };
    let mut r = Relaxation::default();
    let reqs = node_requirements(&spec, &r, true).unwrap();
    assert!(reqs.get("a").unwrap().has("1"));
    assert!(reqs.get("b").unwrap().has("2"), "heaviest preference first");
    assert!(r.relax(&spec, true, false));
    assert!(
        node_requirements(&spec, &r, true)
            .unwrap()
            .get("a")
            .unwrap()
            .has("2")
    );
    assert!(r.relax(&spec, true, false));
    assert!(
        node_requirements(&spec, &r, true)
            .unwrap()
            .get("b")
            .unwrap()
            .has("1")
    );
    assert!(r.relax(&spec, true, false));
    assert!(
        node_requirements(&spec, &r, true)
            .unwrap()
            .get("b")
            .is_none()
    );
    assert!(!r.relax(&spec, true, false), "nothing left");
    assert!(r.relax(&spec, true, true) && r.tolerate_prefer_no_schedule);
}

#[test]
fn ignore_policy_drops_preferences() {
    let spec = PodSpec {
        preferred_terms: vec![WeightedTerm {
            weight: 1,
            term: term("b", "1"),
        }],
        ..Default::default()
    };
    let reqs = node_requirements(&spec, &Relaxation::default(), false).unwrap();
    assert!(reqs.is_empty());
}
