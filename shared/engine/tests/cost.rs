//! Kerf minimises what it launches. On varied mixes of 100+ pods over the bundled catalog it
//! never costs more than Karpenter-style first-fit packing, and no plan beats the lower bound
//! (which would mean the bound is wrong). The target — within 5% of the bound on every mix —
//! is measured by the ignored test:
//! `cargo test --release -p kerf-engine --test cost -- --ignored --nocapture` (it fails until it is met).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use kerf_engine::{Options, Plan, provision};
use support::{lp, mixes};

struct Row {
    name: &'static str,
    optimized: Plan,
    first_fit: Plan,
    bound: f64,
}

fn rows() -> Vec<Row> {
    mixes::all()
        .into_iter()
        .map(|m| {
            let optimized = provision(&m.snapshot, &Options::default());
            let first_fit = provision(&m.snapshot, &Options { optimize_cost: false, ..Options::default() });
            let (groups, columns) = mixes::lp_inputs(&m);
            let bound = lp::lower_bound(&groups, &columns).unwrap_or_else(|e| panic!("{}: {e}", m.name));
            println!(
                "{:<22} pods {:>4}  first-fit {:>9.4}  kerf {:>9.4} ({:>3} nodes)  bound {:>9.4}  ratio {:.4}",
                m.name,
                m.snapshot.pods.len(),
                first_fit.cost(),
                optimized.cost(),
                optimized.launches.len(),
                bound,
                optimized.cost() / bound
            );
            Row { name: m.name, optimized, first_fit, bound }
        })
        .collect()
}

#[test]
fn plans_never_cost_more_than_first_fit_nor_less_than_the_bound() {
    let rows = rows();
    for r in &rows {
        assert_eq!(r.optimized.summary.unschedulable_pods, 0, "{}", r.name);
        assert!(
            r.optimized.cost() <= r.first_fit.cost() + 1e-9,
            "{}: optimisation made it dearer",
            r.name
        );
        assert!(
            r.first_fit.cost() >= r.bound * (1.0 - 1e-6),
            "{}: first-fit under the bound",
            r.name
        );
        assert!(
            r.optimized.cost() >= r.bound * (1.0 - 1e-6),
            "{}: a plan under the bound means the bound is wrong",
            r.name
        );
    }
    let saved: f64 = rows
        .iter()
        .map(|r| r.first_fit.cost() - r.optimized.cost())
        .sum();
    assert!(saved > 0.0, "optimisation saves nothing on any mix");
}

#[test]
#[ignore = "the 5% target is not met on every mix yet; run it to measure"]
fn plans_are_within_five_percent_of_the_lower_bound() {
    let worst = rows()
        .iter()
        .map(|r| r.optimized.cost() / r.bound)
        .fold(0.0, f64::max);
    assert!(worst <= 1.05, "the worst mix is {worst:.4}× the bound");
}
