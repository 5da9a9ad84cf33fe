//! Property tests of disruption planning (`kerf_engine::disrupt`) over random clusters (see
//! `support/cluster.rs`), against Karpenter's rules (reference §4): budgets are never
//! exceeded, blocked nodes are only expired, moved pods all land somewhere with room,
//! consolidation saves money, plans are deterministic and independent of input order, and
//! every managed node is accounted for exactly once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/cluster.rs"]
mod cluster;
#[path = "support/oracle.rs"]
mod oracle;

use std::collections::{BTreeMap, BTreeSet};

use cluster::{ClusterGen, cluster_gen, daemon_requests};
use kerf_catalog::CapacityType;
use kerf_engine::model::{DisruptionReason, Pod};
use kerf_engine::plan::{CommandReason, Method, Plan};
use kerf_engine::{DisruptOptions, Snapshot, allowed_disruptions, disrupt};
use kerf_labels as kl;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;

use oracle::{
    do_not_disrupt, expected_allowed, itype, launch_values, node_price, pdbs_of, pods_on, pool,
    reschedulable, shuffle, sum,
};

fn plan(snap: &Snapshot) -> Plan {
    disrupt(snap, &DisruptOptions::default())
}

/// 1. Per pool and reason, the claims disrupted for that reason stay within `plan.budgets`,
///    which match the budgets as Karpenter computes them; expirations, which no budget
///    limits, count against every reason as deleting nodes do (§4.3, §4.9).
fn budgets_hold(snap: &Snapshot, plan: &Plan) -> Result<(), TestCaseError> {
    prop_assert_eq!(&plan.budgets, &allowed_disruptions(snap));
    for np in &snap.node_pools {
        let name = &np.name;
        let nodes = snap.node_claims.iter().filter(|c| &c.node_pool == name);
        let nodes = nodes.count() as u32;
        let in_pool = |m: &dyn Fn(Method) -> bool| -> u32 {
            let ds = plan.disruptions.iter().filter(|d| m(d.method));
            ds.flat_map(|d| &d.node_pools)
                .filter(|p| *p == name)
                .count() as u32
        };
        let expired = in_pool(&|m| m == Method::Expiration);
        for reason in DisruptionReason::ALL {
            let b = plan
                .budgets
                .iter()
                .find(|b| &b.node_pool == name && b.reason == reason);
            let allowed = b.expect("a budget per pool and reason").allowed;
            let want = expected_allowed(np, nodes, reason);
            prop_assert_eq!(allowed, want, "{} {:?}", name, reason);
            let used = in_pool(&|m| m.budget_reason() == Some(reason));
            prop_assert!(
                used <= allowed,
                "{name} {reason:?}: {used} disrupted, {allowed} allowed"
            );
            prop_assert!(
                used <= allowed.saturating_sub(expired),
                "{name} {reason:?}: {used} disrupted beside {expired} expired, {allowed} allowed"
            );
        }
    }
    Ok(())
}

/// 2. Only expiration (forceful) disrupts a node with do-not-disrupt, a pod with an active
///    do-not-disrupt, or a pod whose (single) PDB allows no disruption; drift may pass the
///    pod-level blocks when the claim has a terminationGracePeriod (§4.2).
fn blocks_hold(snap: &Snapshot, plan: &Plan) -> Result<(), TestCaseError> {
    for d in plan
        .disruptions
        .iter()
        .filter(|d| d.method != Method::Expiration)
    {
        let id = &d.id;
        for (nc, n) in d.node_claims.iter().zip(&d.nodes) {
            let node = snap.nodes.iter().find(|x| &x.name == n).unwrap();
            let claim = snap.node_claims.iter().find(|c| &c.name == nc).unwrap();
            prop_assert_eq!(claim.node_name.as_ref(), Some(n));
            let dnd = node.annotations.contains_key(kl::DO_NOT_DISRUPT);
            prop_assert!(!dnd, "{id} disrupted node {n} with do-not-disrupt");
            if d.method == Method::Drift && claim.termination_grace_period.is_some() {
                continue;
            }
            for p in pods_on(snap, n) {
                let key = p.key();
                prop_assert!(
                    !do_not_disrupt(p),
                    "{id} disrupted {n} hosting do-not-disrupt {key}"
                );
                let pdbs = pdbs_of(snap, p);
                let blocked = pdbs.len() > 1 || pdbs.iter().any(|b| b.disruptions_allowed <= 0);
                prop_assert!(
                    !blocked,
                    "{id} disrupted {n} whose pod {key} is PDB-blocked"
                );
            }
        }
    }
    Ok(())
}

/// 3. Every reschedulable pod of a consolidated or drifted node is placed exactly once: on a
///    node no command disrupts, with room for it beside what runs there, or in a replacement
///    whose every instance-type option holds its pods and the DaemonSet (§4.5, §4.6).
fn pods_placed(snap: &Snapshot, plan: &Plan) -> Result<(), TestCaseError> {
    let disrupted: BTreeSet<&String> = plan.disruptions.iter().flat_map(|d| &d.nodes).collect();
    let mut nominated: BTreeMap<&String, Vec<&String>> = BTreeMap::new();
    for d in &plan.disruptions {
        let id = &d.id;
        let mut moved: Vec<String> = (d.nodes.iter())
            .flat_map(|n| pods_on(snap, n).filter(|p| reschedulable(p)).map(Pod::key))
            .collect();
        moved.sort();
        if matches!(d.reason, CommandReason::Empty | CommandReason::Expired) {
            prop_assert!(d.replacements.is_empty() && d.nominations.is_empty());
            let ok = d.reason == CommandReason::Expired || moved.is_empty();
            prop_assert!(ok, "{id} deletes pods {moved:?}");
            continue;
        }
        prop_assert_eq!(&d.pods, &moved, "{}: pods to move", id);
        for key in &moved {
            let noms: Vec<_> = d.nominations.iter().filter(|x| &x.pod == key).collect();
            let launched = d.replacements.iter().filter(|l| l.pods.contains(key));
            let times = noms.len() + launched.count();
            prop_assert_eq!(times, 1, "{}: pod {} placed {} times", id, key, times);
            for x in noms {
                let to = &x.node;
                prop_assert!(
                    !disrupted.contains(to),
                    "{id}: {key} moved onto disrupted node {to}"
                );
                nominated.entry(to).or_default().push(&x.pod);
            }
        }
        prop_assert!(d.nominations.iter().all(|x| moved.contains(&x.pod)));
        for l in &d.replacements {
            let mut used = sum(snap, &l.pods);
            used.add(&daemon_requests());
            prop_assert!(l.instance_type_options.contains(&l.instance_type));
            for o in &l.instance_type_options {
                let fits = itype(pool(snap, &l.node_pool), o).allocatable.fits(&used);
                prop_assert!(fits, "{id}: option {o} cannot hold {used:?}");
            }
        }
    }
    for (n, keys) in nominated {
        let node = snap.nodes.iter().find(|x| &x.name == n).unwrap();
        let mut used = sum(snap, keys);
        used.add(&sum(snap, pods_on(snap, n).map(Pod::key)));
        if !pods_on(snap, n).any(|p| p.daemonset.is_some()) {
            used.add(&daemon_requests());
        }
        prop_assert!(
            node.allocatable.fits(&used),
            "node {n} over-committed: {used:?}"
        );
    }
    Ok(())
}

/// 4. Consolidation saves money: the candidates cost strictly more than the replacement,
///    every replacement option's worst allowed price is below their total, a candidate's own
///    type is offered only when cheaper than that candidate, spot candidates are not replaced
///    (spot-to-spot is off), and a replacement that may be spot is spot (§4.6).
fn consolidation_saves(snap: &Snapshot, plan: &Plan) -> Result<(), TestCaseError> {
    for d in plan
        .disruptions
        .iter()
        .filter(|d| d.reason == CommandReason::Underutilized)
    {
        let id = &d.id;
        let prices: Vec<f64> = d.nodes.iter().map(|n| node_price(snap, n)).collect();
        let total: f64 = prices.iter().sum();
        for (a, b) in prices.iter().zip(&d.prices) {
            prop_assert!((a - b).abs() < 1e-9, "{id}: price {a} reported as {b}");
        }
        let replaced: f64 = d.replacements.iter().map(|l| l.price).sum();
        let saved = d.savings_per_hour;
        prop_assert!(saved > 0.0, "{id} saves {saved}");
        prop_assert!(
            total > replaced + 1e-9,
            "{id}: {total} replaced by {replaced}"
        );
        prop_assert!((saved - (total - replaced)).abs() < 1e-5);
        prop_assert!(d.replacements.len() <= 1, "{id}: consolidation is M→1");
        let label = |n: &String, k: &str| {
            snap.nodes.iter().find(|x| &x.name == n).unwrap().labels[k].clone()
        };
        let types: Vec<String> = d
            .nodes
            .iter()
            .map(|n| label(n, kl::INSTANCE_TYPE))
            .collect();
        let all_spot = d
            .nodes
            .iter()
            .all(|n| label(n, kl::CAPACITY_TYPE) == "spot");
        for l in &d.replacements {
            prop_assert!(
                !all_spot,
                "{id}: spot replaced by spot, SpotToSpotConsolidation off"
            );
            let np = pool(snap, &l.node_pool);
            let chosen = itype(np, &l.instance_type).offerings.iter();
            let mut chosen =
                chosen.filter(|o| o.zone == l.zone && o.capacity_type == l.capacity_type);
            prop_assert!(chosen.any(|o| o.available && (o.price - l.price).abs() < 1e-9));
            let cts = launch_values(l, kl::CAPACITY_TYPE);
            if np
                .requirements
                .iter()
                .any(|r| r.values.iter().any(|v| v == "spot"))
            {
                let ct = l.capacity_type;
                prop_assert_eq!(
                    ct,
                    CapacityType::Spot,
                    "{}: may be spot, launched as {}",
                    id,
                    ct
                );
                prop_assert_eq!(cts.clone(), Some(vec!["spot".to_string()]));
            }
            let zones = launch_values(l, kl::ZONE);
            let allows = |set: &Option<Vec<String>>, v: &str| {
                set.as_ref().is_none_or(|s| s.iter().any(|x| x == v))
            };
            for o in &l.instance_type_options {
                let worst = (itype(np, o).offerings.iter())
                    .filter(|x| x.available && allows(&zones, &x.zone))
                    .filter(|x| allows(&cts, x.capacity_type.as_str()))
                    .map(|x| x.price)
                    .fold(f64::NEG_INFINITY, f64::max);
                prop_assert!(
                    worst.is_finite(),
                    "{id}: option {o} has no allowed offering"
                );
                prop_assert!(
                    worst < total - 1e-9,
                    "{id}: option {o} may cost {worst} >= {total}"
                );
                for (t, p) in types.iter().zip(&prices) {
                    let ok = t != o || worst < p - 1e-9;
                    prop_assert!(ok, "{id}: same type {o} not cheaper ({worst} >= {p})");
                }
            }
        }
    }
    Ok(())
}

/// 6. Every managed node is in exactly one command or in `skipped`, under its own names.
fn all_accounted(snap: &Snapshot, plan: &Plan) -> Result<(), TestCaseError> {
    let mut seen: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for d in &plan.disruptions {
        for (c, n) in d.node_claims.iter().zip(&d.nodes) {
            *seen.entry((c, n)).or_default() += 1;
        }
    }
    for s in &plan.skipped {
        *seen.entry((&s.node_claim, &s.node)).or_default() += 1;
    }
    let managed: BTreeSet<(&str, &str)> = (snap.node_claims.iter())
        .map(|c| (c.name.as_str(), c.node_name.as_deref().unwrap()))
        .collect();
    prop_assert_eq!(seen.keys().copied().collect::<BTreeSet<_>>(), managed);
    for (k, n) in seen {
        prop_assert_eq!(n, 1, "{:?} accounted {} times", k, n);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn budgets_are_never_exceeded(g in cluster_gen()) {
        let snap = g.snapshot();
        budgets_hold(&snap, &plan(&snap))?;
    }

    #[test]
    fn blocked_nodes_are_only_expired(g in cluster_gen()) {
        let snap = g.snapshot();
        blocks_hold(&snap, &plan(&snap))?;
    }

    #[test]
    fn moved_pods_are_all_placed(g in cluster_gen()) {
        let snap = g.snapshot();
        pods_placed(&snap, &plan(&snap))?;
    }

    #[test]
    fn consolidation_saves_money(g in cluster_gen()) {
        let snap = g.snapshot();
        consolidation_saves(&snap, &plan(&snap))?;
    }

    #[test]
    fn plans_are_deterministic_and_order_free(g in cluster_gen(), seed in any::<u64>()) {
        let snap = g.snapshot();
        let a = plan(&snap);
        prop_assert_eq!(&a, &plan(&snap));
        let mut shuffled = snap.clone();
        shuffle(&mut shuffled.nodes, seed);
        shuffle(&mut shuffled.node_claims, seed.rotate_left(21));
        shuffle(&mut shuffled.pods, seed.rotate_left(42));
        let b = plan(&shuffled);
        prop_assert_eq!(&a.disruptions, &b.disruptions);
        let kinds = |p: &Plan| {
            p.skipped.iter().map(|s| (s.node_claim.clone(), s.kind)).collect::<Vec<_>>()
        };
        prop_assert_eq!(kinds(&a), kinds(&b));
    }

    #[test]
    fn every_managed_node_is_accounted_once(g in cluster_gen()) {
        let snap = g.snapshot();
        all_accounted(&snap, &plan(&snap))?;
    }
}

/// The generator is not vacuous: over a fixed sample every method plans commands, and
/// consolidation both deletes and replaces.
#[test]
fn the_generator_reaches_every_method() {
    let mut runner = TestRunner::deterministic();
    let strategy = cluster_gen();
    let mut seen: BTreeSet<(&str, String)> = BTreeSet::new();
    for _ in 0..150 {
        let g: ClusterGen = strategy.new_tree(&mut runner).unwrap().current();
        for d in plan(&g.snapshot()).disruptions {
            seen.insert((d.method.name(), d.action.as_str().to_string()));
        }
    }
    for want in [
        ("expiration", "delete"),
        ("emptiness", "delete"),
        ("drift", "delete"),
        ("drift", "replace"),
        ("consolidation", "delete"),
        ("consolidation", "replace"),
    ] {
        assert!(
            seen.contains(&(want.0, want.1.to_string())),
            "never planned {want:?}: {seen:?}"
        );
    }
}

/// The smallest clusters where property 3 failed: an expired, empty node and a busy node.
/// Expiration deletes the expired node forcefully, yet consolidation deletes the busy node
/// (or drift replaces it, when it drifted) by moving its pod onto the expired node.
#[test]
fn moved_pods_do_not_land_on_expired_nodes() {
    use cluster::{BudgetGen, NodeGen, PodGen, PoolGen};
    for drifted in [false, true] {
        let g = ClusterGen {
            // t1x4 at $0.04/h and t2x4 at $0.08/h, on-demand.
            types: vec![0, 0],
            pools: vec![PoolGen {
                budgets: vec![BudgetGen {
                    percent: true,
                    value: 4, // 100%
                    ..Default::default()
                }],
                ..Default::default()
            }],
            nodes: vec![
                NodeGen {
                    ty: 1,
                    expired: true,
                    ..Default::default()
                },
                NodeGen {
                    drifted,
                    pods: vec![PodGen::default()],
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        let snap = g.snapshot();
        pods_placed(&snap, &plan(&snap)).unwrap();
    }
}
