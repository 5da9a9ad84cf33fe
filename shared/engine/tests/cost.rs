//! Kerf minimises what it launches: on varied mixes of 100+ pods over the bundled catalog,
//! the plan's hourly cost stays within 5% of the LP lower bound.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use kerf_engine::{Options, provision};
use support::{lp, mixes};

#[test]
fn plans_are_within_five_percent_of_the_lower_bound() {
    let mut report = Vec::new();
    for m in mixes::all() {
        let plan = provision(&m.snapshot, &Options::default());
        assert_eq!(
            plan.summary.unschedulable_pods,
            0,
            "{}: {:?}",
            m.name,
            plan.unschedulable.first()
        );
        let (groups, columns) = mixes::lp_inputs(&m);
        let bound = lp::lower_bound(&groups, &columns).expect("feasible LP");
        let ratio = plan.cost() / bound;
        report.push(format!(
            "{:<22} pods {:>4} nodes {:>3} cost {:>9.4} bound {:>9.4} ratio {:.4}",
            m.name,
            m.snapshot.pods.len(),
            plan.launches.len(),
            plan.cost(),
            bound,
            ratio
        ));
        assert!(
            ratio >= 1.0 - 1e-6,
            "{}: a plan cheaper than the bound means the bound is wrong",
            m.name
        );
    }
    println!("{}", report.join("\n"));
    for line in &report {
        let ratio: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
        assert!(ratio <= 1.05, "over 5% above the bound: {line}");
    }
}
