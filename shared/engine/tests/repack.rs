//! Cost repacking at its edges: more pod classes than one problem holds (masks are 64 bits),
//! with every pod's own requirements kept.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use kerf_engine::{Options, provision};

#[test]
fn more_classes_than_one_problem_holds_are_repacked_and_keep_their_requirements() {
    let classes = 70;
    let m = support::mixes::pools::many_classes(classes);
    let optimized = provision(&m.snapshot, &Options::default());
    let first_fit = provision(
        &m.snapshot,
        &Options {
            optimize_cost: false,
            ..Options::default()
        },
    );
    assert_eq!(
        optimized.summary.unschedulable_pods, 0,
        "{:?}",
        optimized.unschedulable
    );
    assert!(
        optimized.cost() < first_fit.cost(),
        "repacking saved nothing: {} vs {}",
        optimized.cost(),
        first_fit.cost()
    );
    let catalog = &m.snapshot.node_pools[0].catalog;
    let cpus = |t: &str| -> i64 {
        let it = catalog.instance_types.iter().find(|x| x.name == t).unwrap();
        it.labels["karpenter.k8s.aws/instance-cpu"].parse().unwrap()
    };
    for l in &optimized.launches {
        for key in &l.pods {
            let i: usize = key.trim_start_matches("default/p").parse().unwrap();
            let max = 200 + (i % classes) as i64;
            for o in &l.instance_type_options {
                assert!(
                    cpus(o) < max,
                    "{key} needs fewer than {max} vCPUs, {o} offered"
                );
            }
        }
    }
}
