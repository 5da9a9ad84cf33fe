//! Scenarios after Karpenter's topology suite: spread on zone, hostname, capacity type and
//! custom keys, minDomains, ScheduleAnyway, pod affinity and anti-affinity, host ports.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::BTreeMap;

use serde_json::Value;
use support::*;

const ZONE: &str = "topology.kubernetes.io/zone";
const HOST: &str = "kubernetes.io/hostname";

fn web(name: &str) -> Value {
    labels(pod(name, "500m", "512Mi"), &[("app", "web")])
}

fn zones_of(p: &kerf_engine::Plan, names: &[String]) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for n in names {
        *m.entry(launch_of(p, n).zone.clone()).or_default() += 1;
    }
    m
}

fn names(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i}")).collect()
}

#[test]
fn zonal_spread_balances_across_zones() {
    let ns = names("w", 6);
    let mut docs = vec![pool("default")];
    docs.extend(
        ns.iter()
            .map(|n| spread(web(n), ZONE, 1, "DoNotSchedule", "web")),
    );
    let p = plan(&docs);
    let z = zones_of(&p, &ns);
    assert_eq!(z.values().copied().collect::<Vec<_>>(), [2, 2, 2], "{z:?}");
}

#[test]
fn zonal_spread_counts_existing_pods() {
    let existing = bound(web("old"), "n1");
    let mut docs = vec![
        pool("default"),
        node("n1", "m.xlarge", "test-zone-a"),
        existing,
    ];
    let ns = names("w", 2);
    docs.extend(
        ns.iter()
            .map(|n| spread(web(n), ZONE, 1, "DoNotSchedule", "web")),
    );
    let p = plan(&docs);
    for n in &ns {
        assert!(nominated(&p, n).is_none());
        assert_ne!(
            launch_of(&p, n).zone,
            "test-zone-a",
            "zone a already has one"
        );
    }
}

#[test]
fn max_skew_two_allows_uneven_zones() {
    let np = pool_req(
        pool("default"),
        req(ZONE, "In", &["test-zone-a", "test-zone-b"]),
    );
    let ns = names("w", 4);
    let mut docs = vec![np];
    docs.extend(
        ns.iter()
            .map(|n| spread(web(n), ZONE, 2, "DoNotSchedule", "web")),
    );
    let z = zones_of(&plan(&docs), &ns);
    assert_eq!(z.values().sum::<usize>(), 4);
    assert!(z.values().all(|c| *c <= 4));
}

#[test]
fn hostname_spread_puts_one_pod_per_node() {
    let ns = names("w", 4);
    let mut docs = vec![pool("default")];
    docs.extend(
        ns.iter()
            .map(|n| spread(web(n), HOST, 1, "DoNotSchedule", "web")),
    );
    let p = plan(&docs);
    assert_eq!(p.launches.len(), 4);
    assert!(p.launches.iter().all(|l| l.pods.len() == 1));
}

#[test]
fn hostname_spread_lets_other_pods_share_nodes() {
    let mut docs = vec![pool("default")];
    docs.extend(
        names("w", 2)
            .iter()
            .map(|n| spread(web(n), HOST, 1, "DoNotSchedule", "web")),
    );
    docs.extend(names("other", 4).iter().map(|n| pod(n, "100m", "100Mi")));
    let p = plan(&docs);
    assert_eq!(p.launches.len(), 2);
    assert_accounted(&p, 6);
}

#[test]
fn capacity_type_spread_uses_both_capacity_types() {
    let ns = names("w", 2);
    let mut docs = vec![pool("default")];
    docs.extend(ns.iter().map(|n| {
        spread(
            web(n),
            "karpenter.sh/capacity-type",
            1,
            "DoNotSchedule",
            "web",
        )
    }));
    let p = plan(&docs);
    let mut cts: Vec<&str> = ns
        .iter()
        .map(|n| launch_of(&p, n).capacity_type.as_str())
        .collect();
    cts.sort();
    assert_eq!(cts, ["on-demand", "spot"]);
}

#[test]
fn custom_key_spread_uses_pool_values() {
    let np = pool_req(pool("default"), req("rack", "In", &["r1", "r2"]));
    let ns = names("w", 2);
    let mut docs = vec![np];
    docs.extend(
        ns.iter()
            .map(|n| spread(web(n), "rack", 1, "DoNotSchedule", "web")),
    );
    let p = plan(&docs);
    let mut racks: Vec<String> = ns
        .iter()
        .map(|n| pinned(launch_of(&p, n), "rack").unwrap())
        .collect();
    racks.sort();
    assert_eq!(racks, ["r1", "r2"]);
}

#[test]
fn spread_limited_by_node_affinity_honors_it() {
    let ns = names("w", 2);
    let mut docs = vec![pool("default")];
    docs.extend(ns.iter().map(|n| {
        node_selector(
            spread(web(n), ZONE, 1, "DoNotSchedule", "web"),
            &[(ZONE, "test-zone-b")],
        )
    }));
    let p = plan(&docs);
    assert!(
        ns.iter().all(|n| launch_of(&p, n).zone == "test-zone-b"),
        "other zones are not eligible"
    );
}

#[test]
fn min_domains_blocks_stacking_in_too_few_domains() {
    let np = pool_req(
        pool("default"),
        req(ZONE, "In", &["test-zone-a", "test-zone-b"]),
    );
    let ns = names("w", 3);
    let mut docs = vec![np];
    for n in &ns {
        docs.push(with_spread_field(
            spread(web(n), ZONE, 1, "DoNotSchedule", "web"),
            "minDomains",
            serde_json::json!(3),
        ));
    }
    let p = plan(&docs);
    assert_eq!(
        p.summary.unschedulable_pods, 1,
        "with only 2 domains, min is 0 so each zone takes 1"
    );
}

#[test]
fn schedule_anyway_is_relaxed_when_it_cannot_be_met() {
    let np = pool_req(pool("default"), req(ZONE, "In", &["test-zone-a"]));
    let mut docs = vec![np];
    docs.extend(
        names("w", 3)
            .iter()
            .map(|n| spread(web(n), HOST, 1, "ScheduleAnyway", "web")),
    );
    let p = plan(&plan_limit_nodes(docs, 1));
    assert_eq!(p.summary.unschedulable_pods, 0, "the preference gives way");
    assert_eq!(p.launches.len(), 1);
}

fn plan_limit_nodes(mut docs: Vec<Value>, nodes: i32) -> Vec<Value> {
    docs[0] = pool_limit(docs[0].clone(), "nodes", &nodes.to_string());
    docs
}

#[test]
fn do_not_schedule_is_not_relaxed() {
    let mut docs = vec![pool_limit(pool("default"), "nodes", "1")];
    docs.extend(
        names("w", 3)
            .iter()
            .map(|n| spread(web(n), HOST, 1, "DoNotSchedule", "web")),
    );
    let p = plan(&docs);
    assert_eq!(p.summary.unschedulable_pods, 2);
}

#[test]
fn zonal_affinity_follows_existing_pods() {
    let db = bound(labels(pod("db", "1", "1Gi"), &[("app", "db")]), "n1");
    let pd = affinity(pod("p", "3500m", "1Gi"), "podAffinity", ZONE, "db", None);
    let p = plan(&[
        pool("default"),
        node("n1", "m.xlarge", "test-zone-c"),
        db,
        pd,
    ]);
    assert_eq!(launch_of(&p, "p").zone, "test-zone-c");
}

#[test]
fn hostname_affinity_colocates_on_the_same_node() {
    let db = bound(labels(pod("db", "1", "1Gi"), &[("app", "db")]), "n1");
    let pd = affinity(pod("p", "1", "1Gi"), "podAffinity", HOST, "db", None);
    let p = plan(&[
        pool("default"),
        node("n1", "m.xlarge", "test-zone-c"),
        db,
        pd,
    ]);
    assert_eq!(nominated(&p, "p").as_deref(), Some("n1"));
}

#[test]
fn self_affinity_bootstraps_then_colocates() {
    let mut docs = vec![pool("default")];
    for n in names("w", 3) {
        docs.push(affinity(web(&n), "podAffinity", ZONE, "web", None));
    }
    let p = plan(&docs);
    let z = zones_of(&p, &names("w", 3));
    assert_eq!(z.len(), 1, "all in one zone: {z:?}");
}

#[test]
fn affinity_to_pods_that_do_not_exist_is_unschedulable() {
    let pd = affinity(pod("p", "1", "1Gi"), "podAffinity", ZONE, "nothing", None);
    let r = reason_of(&plan(&[pool("default"), pd]), "p");
    assert!(r.contains("pod affinity"), "{r}");
}

#[test]
fn affinity_is_satisfied_by_pods_scheduled_later_in_the_same_plan() {
    let follower = affinity(
        pod("a-follower", "4", "1Gi"),
        "podAffinity",
        ZONE,
        "leader",
        None,
    );
    let leader = node_selector(
        labels(pod("z-leader", "100m", "100Mi"), &[("app", "leader")]),
        &[(ZONE, "test-zone-b")],
    );
    let p = plan(&[pool("default"), follower, leader]);
    assert_eq!(
        launch_of(&p, "a-follower").zone,
        "test-zone-b",
        "retried after the leader is placed"
    );
}

#[test]
fn hostname_anti_affinity_separates_pods() {
    let mut docs = vec![pool("default")];
    docs.extend(
        names("w", 3)
            .iter()
            .map(|n| affinity(web(n), "podAntiAffinity", HOST, "web", None)),
    );
    let p = plan(&docs);
    assert_eq!(p.launches.len(), 3);
}

#[test]
fn zonal_anti_affinity_allows_one_pod_per_zone() {
    let mut docs = vec![pool("default")];
    docs.extend(
        names("w", 4)
            .iter()
            .map(|n| affinity(web(n), "podAntiAffinity", ZONE, "web", None)),
    );
    let p = plan(&docs);
    assert_eq!(p.summary.unschedulable_pods, 1);
    let z = zones_of(
        &p,
        &p.launches
            .iter()
            .flat_map(|l| {
                l.pods
                    .iter()
                    .map(|k| k.trim_start_matches("default/").to_string())
            })
            .collect::<Vec<_>>(),
    );
    assert_eq!(z.len(), 3);
}

#[test]
fn existing_pods_anti_affinity_repels_new_pods() {
    let guard = affinity(
        bound(
            labels(pod("guard", "100m", "100Mi"), &[("app", "guard")]),
            "n1",
        ),
        "podAntiAffinity",
        HOST,
        "web",
        None,
    );
    let p = plan(&[
        pool("default"),
        node("n1", "m.xlarge", "test-zone-a"),
        guard,
        web("w"),
    ]);
    assert_eq!(
        nominated(&p, "w"),
        None,
        "the guard's anti-affinity excludes web pods from n1"
    );
    assert_eq!(p.launches.len(), 1);
}

#[test]
fn preferred_anti_affinity_is_relaxed_when_needed() {
    let mut docs = vec![pool_limit(pool("default"), "nodes", "1")];
    docs.extend(
        names("w", 2)
            .iter()
            .map(|n| affinity(web(n), "podAntiAffinity", HOST, "web", Some(10))),
    );
    let p = plan(&docs);
    assert_eq!(p.summary.unschedulable_pods, 0);
}

#[test]
fn preferred_anti_affinity_is_honored_when_possible() {
    let mut docs = vec![pool("default")];
    docs.extend(
        names("w", 2)
            .iter()
            .map(|n| affinity(web(n), "podAntiAffinity", HOST, "web", Some(10))),
    );
    assert_eq!(plan(&docs).launches.len(), 2);
}

#[test]
fn host_port_conflicts_need_separate_nodes() {
    let a = host_port(pod("a", "100m", "100Mi"), 8080);
    let b = host_port(pod("b", "100m", "100Mi"), 8080);
    let c = host_port(pod("c", "100m", "100Mi"), 9090);
    let p = plan(&[pool("default"), a, b, c]);
    assert_eq!(p.launches.len(), 2);
    assert_ne!(launch_of(&p, "a").node_claim, launch_of(&p, "b").node_claim);
}
