use std::collections::BTreeMap;

use super::*;
use crate::model::{LabelSelector, PodSpec, Toleration};

fn pod(annotations: &[(&str, &str)]) -> Pod {
    Pod {
        namespace: "default".into(),
        name: "p".into(),
        labels: [("app".to_string(), "web".to_string())].into(),
        node_name: Some("n".into()),
        phase: "Running".into(),
        annotations: annotations
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..Default::default()
    }
}

fn pdb(allowed: i32, always_allow: bool) -> Pdb {
    Pdb {
        namespace: "default".into(),
        name: "web".into(),
        selector: Some(LabelSelector {
            match_labels: [("app".to_string(), "web".to_string())].into(),
            ..Default::default()
        }),
        disruptions_allowed: allowed,
        unhealthy_always_allow: always_allow,
        blocks_all: false,
    }
}

#[test]
fn eviction_cost_follows_deletion_cost_and_priority_and_is_clamped() {
    assert_eq!(eviction_cost(&pod(&[])), 1.0);
    let cheap = pod(&[(POD_DELETION_COST, "-134217728")]);
    assert_eq!(eviction_cost(&cheap), 0.0);
    let mut critical = pod(&[]);
    critical.priority = 2_000_000_000;
    assert_eq!(eviction_cost(&critical), 10.0);
    critical.priority = -2_000_000_000;
    assert_eq!(eviction_cost(&critical), -10.0);
    assert_eq!(eviction_cost(&pod(&[(POD_DELETION_COST, "junk")])), 1.0);
}

#[test]
fn do_not_disrupt_is_true_or_a_duration_from_start_time() {
    assert_eq!(
        do_not_disrupt(&pod(&[(DO_NOT_DISRUPT, "true")]), 100),
        Some(None)
    );
    let mut p = pod(&[(DO_NOT_DISRUPT, "5m")]);
    p.start_time = Some(1000);
    assert_eq!(do_not_disrupt(&p, 1299), Some(Some(1300)));
    assert_eq!(do_not_disrupt(&p, 1300), None, "the window ran out");
    assert_eq!(do_not_disrupt(&pod(&[(DO_NOT_DISRUPT, "nope")]), 0), None);
    assert_eq!(do_not_disrupt(&pod(&[(DO_NOT_DISRUPT, "false")]), 0), None);
    let mut done = pod(&[(DO_NOT_DISRUPT, "true")]);
    done.phase = "Succeeded".into();
    assert_eq!(do_not_disrupt(&done, 0), None, "finished pods do not count");
    let mut going = pod(&[(DO_NOT_DISRUPT, "true")]);
    going.terminating = true;
    assert_eq!(
        do_not_disrupt(&going, 0),
        None,
        "terminating pods do not count"
    );
}

#[test]
fn reschedulable_pods_exclude_daemons_mirrors_and_finished_pods() {
    assert!(is_reschedulable(&pod(&[])));
    let mut ds = pod(&[]);
    ds.owner = OwnerKind::DaemonSet;
    assert!(!is_reschedulable(&ds));
    let mut mirror = pod(&[]);
    mirror.mirror = true;
    assert!(!is_reschedulable(&mirror));
    let mut done = pod(&[]);
    done.phase = "Failed".into();
    assert!(!is_reschedulable(&done));
    let mut sts = pod(&[]);
    sts.terminating = true;
    assert!(!is_reschedulable(&sts));
    sts.owner = OwnerKind::StatefulSet;
    assert!(
        is_reschedulable(&sts),
        "terminating StatefulSet pods come back"
    );
}

#[test]
fn pods_tolerating_the_disrupted_taint_are_not_evicted() {
    let mut p = pod(&[]);
    assert!(is_evictable(&p));
    p.spec = PodSpec {
        tolerations: vec![Toleration {
            key: String::new(),
            exists: true,
            value: String::new(),
            effect: None,
        }],
        ..Default::default()
    };
    assert!(!is_evictable(&p));
}

#[test]
fn pdbs_block_when_they_allow_nothing_or_overlap() {
    let p = pod(&[]);
    assert_eq!(pdb_block(&p, &[pdb(1, false)]), None);
    let why = pdb_block(&p, &[pdb(0, false)]).unwrap();
    assert!(why.contains("default/web allows no disruption"), "{why}");
    let why = pdb_block(&p, &[pdb(1, false), pdb(1, false)]).unwrap();
    assert!(why.contains("more than one"), "{why}");
    let mut other_ns = pdb(0, false);
    other_ns.namespace = "kube-system".into();
    assert_eq!(pdb_block(&p, &[other_ns]), None);
    let mut no_selector = pdb(0, false);
    no_selector.selector = None;
    assert_eq!(
        pdb_block(&p, &[no_selector]),
        None,
        "a nil selector selects nothing"
    );
    let mut everything = pdb(0, false);
    everything.selector = Some(LabelSelector::default());
    assert!(
        pdb_block(&p, &[everything]).is_some(),
        "an empty selector selects all"
    );
}

#[test]
fn always_allow_lets_unready_pods_go() {
    let mut p = pod(&[]);
    p.ready = false;
    assert_eq!(pdb_block(&p, &[pdb(0, true)]), None);
    assert!(pdb_block(&p, &[pdb(0, false)]).is_some());
    p.ready = true;
    assert!(pdb_block(&p, &[pdb(0, true)]).is_some());
    let _ = BTreeMap::<String, String>::new();
}
