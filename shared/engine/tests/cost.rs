//! Kerf minimises what it launches. On varied mixes of 100+ pods over the bundled catalog it
//! never costs more than Karpenter-style first-fit packing, no plan beats the lower bound
//! (which would mean the bound is wrong), and every plan is within 5% of that bound.
//! `cargo test --release -p kerf-engine --test cost -- --nocapture` prints the table.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::LazyLock;

use kerf_engine::{Options, Plan, provision};
use support::{lp, mixes};

struct Row {
    name: &'static str,
    optimized: Plan,
    first_fit: Plan,
    bound: f64,
}

/// Each mix is planned and bounded once for all the tests here.
static ROWS: LazyLock<Vec<Row>> = LazyLock::new(rows);

fn rows() -> Vec<Row> {
    mixes::all()
        .into_iter()
        .map(|m| {
            let optimized = provision(&m.snapshot, &Options::default());
            let first_fit = provision(
                &m.snapshot,
                &Options {
                    optimize_cost: false,
                    ..Options::default()
                },
            );
            let (groups, columns) = mixes::lp_inputs(&m);
            let bound =
                lp::lower_bound(&groups, &columns).unwrap_or_else(|e| panic!("{}: {e}", m.name));
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
            Row {
                name: m.name,
                optimized,
                first_fit,
                bound,
            }
        })
        .collect()
}

#[test]
fn plans_never_cost_more_than_first_fit_nor_less_than_the_bound() {
    for r in ROWS.iter() {
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
    let saved: f64 = ROWS
        .iter()
        .map(|r| r.first_fit.cost() - r.optimized.cost())
        .sum();
    assert!(saved > 0.0, "optimisation saves nothing on any mix");
}

#[test]
fn plans_are_within_five_percent_of_the_lower_bound() {
    for r in ROWS.iter() {
        let ratio = r.optimized.cost() / r.bound;
        assert!(ratio <= 1.05, "{}: {ratio:.4}× the bound", r.name);
    }
}
