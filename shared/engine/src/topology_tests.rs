//! Domain choice for spread, affinity and anti-affinity groups.

use super::*;

fn sel(app: &str) -> LabelSelector {
    LabelSelector {
        match_labels: [("app".to_string(), app.to_string())].into(),
        ..Default::default()
    }
}

fn zones() -> Vec<String> {
    vec!["a".into(), "b".into(), "c".into()]
}

fn topo_with_zones() -> Topology {
    let mut t = Topology::default();
    for z in zones() {
        t.add_domain("zone", &z, &[]);
    }
    t
}

fn spread(skew: i32) -> Kind {
    Kind::Spread {
        max_skew: skew,
        min_domains: None,
        honor_affinity: true,
        honor_taints: false,
    }
}

#[test]
fn spread_picks_the_emptiest_domain() {
    let mut t = topo_with_zones();
    let g = t.register(spread(1), "zone", &sel("web"), None);
    t.record(g, Some("a"));
    let c = t
        .choose(g, true, &zones(), &Requirements::new(), &[])
        .unwrap();
    assert_eq!(c, "b".to_string());
    t.record(g, Some("b"));
    t.record(g, Some("c"));
    t.record(g, Some("a"));
    // a=2, b=1, c=1 -> a is over skew
    let only_a = t.choose(g, true, &["a".into()], &Requirements::new(), &[]);
    assert!(only_a.is_err());
}

#[test]
fn min_domains_forces_zero_minimum() {
    let mut t = topo_with_zones();
    let k = Kind::Spread {
        max_skew: 1,
        min_domains: Some(5),
        honor_affinity: true,
        honor_taints: false,
    };
    let g = t.register(k, "zone", &sel("web"), None);
    for z in ["a", "b", "c"] {
        t.record(g, Some(z));
    }
    // every zone has 1; with minDomains 5 > 3 eligible, min is 0 so 1+1-0 > 1 fails
    assert!(
        t.choose(g, true, &zones(), &Requirements::new(), &[])
            .is_err()
    );
}

#[test]
fn affinity_needs_a_matching_domain_or_bootstraps() {
    let mut t = topo_with_zones();
    let g = t.register(Kind::Affinity, "zone", &sel("db"), None);
    assert!(
        t.choose(g, false, &zones(), &Requirements::new(), &[])
            .is_err()
    );
    assert_eq!(
        t.choose(g, true, &zones(), &Requirements::new(), &[])
            .unwrap(),
        "a".to_string()
    );
    t.record(g, Some("c"));
    assert_eq!(
        t.choose(g, true, &zones(), &Requirements::new(), &[])
            .unwrap(),
        "c".to_string()
    );
}

#[test]
fn anti_affinity_avoids_occupied_domains() {
    let mut t = topo_with_zones();
    let g = t.register(Kind::AntiAffinity, "zone", &sel("db"), None);
    t.record(g, Some("a"));
    t.record(g, Some("b"));
    assert_eq!(
        t.choose(g, true, &zones(), &Requirements::new(), &[])
            .unwrap(),
        "c".to_string()
    );
    t.record(g, Some("c"));
    assert!(
        t.choose(g, true, &zones(), &Requirements::new(), &[])
            .is_err()
    );
}

#[test]
fn hostname_checks() {
    let mut t = Topology::default();
    let s = t.register(spread(1), HOSTNAME, &sel("web"), None);
    assert!(t.check_host(s, true, 0).is_ok());
    assert!(t.check_host(s, true, 1).is_err());
    assert!(t.check_host(s, false, 1).is_ok());
    let a = t.register(Kind::AntiAffinity, HOSTNAME, &sel("web"), None);
    assert!(t.check_host(a, true, 1).is_err());
    let f = t.register(Kind::Affinity, HOSTNAME, &sel("web"), None);
    assert!(t.check_host(f, true, 0).is_ok(), "bootstrap");
    t.record(f, None);
    assert!(t.check_host(f, true, 0).is_err());
    assert!(t.check_host(f, true, 2).is_ok());
}

#[test]
fn groups_are_shared_by_identical_constraints() {
    let mut t = Topology::default();
    let a = t.register(spread(1), "zone", &sel("web"), None);
    let b = t.register(spread(1), "zone", &sel("web"), None);
    let c = t.register(spread(2), "zone", &sel("web"), None);
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn namespaces_scope_selection() {
    let mut t = Topology::default();
    let g = t.register(
        Kind::Affinity,
        "zone",
        &sel("web"),
        Some(["prod".to_string()].into()),
    );
    let labels = [("app".to_string(), "web".to_string())].into();
    assert!(t.groups[g].selects("prod", &labels));
    assert!(!t.groups[g].selects("dev", &labels));
}

#[test]
fn a_spread_failure_lists_the_matching_pods_per_domain() {
    let mut t = topo_with_zones();
    let g = t.register(spread(1), "zone", &sel("web"), None);
    t.record(g, Some("a"));
    t.record(g, Some("a"));
    t.record(g, Some("b"));
    let r = t
        .choose(g, true, &["a".into()], &Requirements::new(), &[])
        .unwrap_err();
    let why = t.describe(r);
    assert!(
        why.ends_with("(maxSkew 1) cannot be satisfied (matching pods per domain: a=2, b=1, c=0)"),
        "{why}"
    );
}

#[test]
fn a_spread_failure_lists_at_most_eight_domains() {
    let mut t = Topology::default();
    for d in 0..10 {
        t.add_domain("zone", &format!("z{d}"), &[]);
    }
    let g = t.register(spread(1), "zone", &sel("web"), None);
    let why = t.describe(Reject(g));
    assert!(why.contains("z7=0, and 2 more)"), "{why}");
    assert!(!why.contains("z8="), "{why}");
}
