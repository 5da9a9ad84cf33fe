//! Runs every data-driven scenario under `tests/scenarios` (manifests in, expected plan out;
//! the format is in `tests/scenarios/README.md`). A new case is a new file.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod scenario;

use std::panic::{AssertUnwindSafe, catch_unwind};

#[test]
fn every_scenario_file_plans_as_expected() {
    let files = scenario::all();
    assert!(files.len() >= 10, "scenario files are missing: {files:?}");
    let mut failed = Vec::new();
    for f in &files {
        let at = f
            .strip_prefix(scenario::dir())
            .unwrap_or(f)
            .display()
            .to_string();
        let run = catch_unwind(AssertUnwindSafe(|| {
            let case = scenario::load(f);
            let (plan, pending) = scenario::plan(&case);
            case.scenario
                .expect
                .check(&plan, pending, &at, &scenario::cpu_capacity);
        }));
        if run.is_err() {
            failed.push(at);
        }
    }
    assert!(failed.is_empty(), "failed scenarios: {failed:?}");
}
