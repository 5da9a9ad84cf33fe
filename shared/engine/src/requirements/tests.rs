//! Truth tables for the requirements algebra, after Karpenter's requirement tests.

use super::*;

fn sel(key: &str, op: Operator, values: &[&str]) -> Requirement {
    Requirement::from_selector(&SelectorRequirement {
        key: key.into(),
        operator: op,
        values: values.iter().map(|s| s.to_string()).collect(),
        min_values: None,
    })
    .unwrap()
}

#[test]
fn operators_round_trip() {
    use Operator::*;
    assert_eq!(sel("k", In, &["a"]).operator(), In);
    assert_eq!(sel("k", NotIn, &["a"]).operator(), NotIn);
    assert_eq!(sel("k", Exists, &[]).operator(), Exists);
    assert_eq!(sel("k", DoesNotExist, &[]).operator(), DoesNotExist);
    assert_eq!(sel("k", Gt, &["1"]).operator(), Exists);
}

#[test]
fn intersection_truth_table() {
    use Operator::*;
    let a = sel("k", In, &["a", "b"]);
    let b = sel("k", In, &["b", "c"]);
    assert_eq!(a.intersection(&b).values(), ["b"]);
    let n = sel("k", NotIn, &["b"]);
    assert_eq!(a.intersection(&n).values(), ["a"]);
    assert_eq!(n.intersection(&a).values(), ["a"]);
    let n2 = sel("k", NotIn, &["c"]);
    let nn = n.intersection(&n2);
    assert_eq!(nn.operator(), NotIn);
    assert_eq!(nn.values(), ["b", "c"]);
    let e = sel("k", Exists, &[]);
    assert_eq!(e.intersection(&a), a);
    let d = sel("k", DoesNotExist, &[]);
    assert!(a.intersection(&d).is_empty());
    assert_eq!(e.intersection(&d).operator(), DoesNotExist);
}

#[test]
fn bounds_filter_values() {
    use Operator::*;
    let gt = sel("cpu", Gt, &["2"]);
    let lt = sel("cpu", Lt, &["8"]);
    let both = gt.intersection(&lt);
    assert!(both.has("3") && both.has("7"));
    assert!(!both.has("2") && !both.has("8") && !both.has("x"));
    let vals = sel("cpu", In, &["1", "4", "16", "x"]).intersection(&both);
    assert_eq!(vals.values(), ["4"]);
    assert_eq!(vals.operator(), In);
    let empty = sel("cpu", Gt, &["10"]).intersection(&sel("cpu", Lt, &["5"]));
    assert_eq!(empty.operator(), DoesNotExist);
    let gte = sel("cpu", Gte, &["4"]).intersection(&sel("cpu", Lte, &["4"]));
    assert!(gte.has("4") && !gte.has("5"));
}

#[test]
fn gt_max_is_does_not_exist() {
    let r = sel("k", Operator::Gt, &[&i64::MAX.to_string()]);
    assert_eq!(r.operator(), Operator::DoesNotExist);
}

#[test]
fn bad_values_are_rejected() {
    let mk = |op, values: &[&str]| {
        Requirement::from_selector(&SelectorRequirement {
            key: "k".into(),
            operator: op,
            values: values.iter().map(|s| s.to_string()).collect(),
            min_values: None,
        })
    };
    assert!(mk(Operator::In, &[]).is_err());
    assert!(mk(Operator::Exists, &["a"]).is_err());
    assert!(mk(Operator::Gt, &["a"]).is_err());
    assert!(mk(Operator::Gt, &["1", "2"]).is_err());
}

#[test]
fn any_picks_a_member() {
    assert_eq!(
        sel("k", Operator::In, &["b", "a"]).any().as_deref(),
        Some("a")
    );
    let r = sel("k", Operator::Gt, &["5"]);
    assert_eq!(r.any().as_deref(), Some("6"));
    let r = sel("k", Operator::NotIn, &["0", "1"]);
    assert_eq!(r.any().as_deref(), Some("2"));
    assert_eq!(sel("k", Operator::DoesNotExist, &[]).any(), None);
}

#[test]
fn min_values_take_the_max() {
    let mut a = sel("k", Operator::In, &["a", "b"]);
    a.min_values = Some(2);
    let mut b = sel("k", Operator::Exists, &[]);
    b.min_values = Some(3);
    assert_eq!(a.intersection(&b).min_values, Some(3));
}

#[test]
fn compatible_requires_custom_keys_to_be_declared() {
    let mut pool = Requirements::new();
    pool.add(labels::ARCH, Requirement::is_in(["amd64"]));
    let mut pod = Requirements::new();
    pod.add("team", Requirement::is_in(["a"]));
    let err = pool.compatible(&pod).unwrap_err().to_string();
    assert!(err.contains("does not have known values"), "{err}");
    pool.add("team", Requirement::exists());
    assert!(pool.compatible(&pod).is_ok());
    let mut wk = Requirements::new();
    wk.add(labels::ZONE, Requirement::is_in(["z1"]));
    assert!(
        pool.compatible(&wk).is_ok(),
        "well-known keys need not be declared"
    );
    let mut not = Requirements::new();
    not.add("other", Requirement::not_in(["x"]));
    assert!(
        pool.compatible(&not).is_ok(),
        "NotIn on an undeclared key is fine"
    );
}

#[test]
fn intersects_allows_two_exclusions() {
    let mut a = Requirements::new();
    a.add("k", Requirement::does_not_exist());
    let mut b = Requirements::new();
    b.add("k", Requirement::not_in(["x"]));
    assert!(a.intersects(&b).is_ok());
    let mut c = Requirements::new();
    c.add("k", Requirement::is_in(["x"]));
    assert!(a.intersects(&c).is_err());
}

#[test]
fn aliases_are_normalized() {
    let r = Requirements::from_selectors(&[SelectorRequirement {
        key: "failure-domain.beta.kubernetes.io/zone".into(),
        operator: Operator::In,
        values: vec!["z".into()],
        min_values: None,
    }])
    .unwrap();
    assert!(r.has_key(labels::ZONE));
}

#[test]
fn has_prefix_finds_a_key_by_its_start() {
    let sel = |key: &str| SelectorRequirement {
        key: key.into(),
        operator: Operator::Exists,
        values: vec![],
        min_values: None,
    };
    let r = Requirements::from_selectors(&[
        sel("karpenter.k8s.aws/capacity-reservation-id"),
        sel("topology.kubernetes.io/zone"),
    ])
    .unwrap();
    assert!(r.has_prefix("karpenter.k8s.aws/capacity-reservation-"));
    assert!(r.has_prefix("topology."));
    assert!(!r.has_prefix("karpenter.k8s.aws/capacity-reservation-type-x"));
    assert!(!r.has_prefix("karpenter.sh/"));
    assert!(!Requirements::new().has_prefix("a"));
}
