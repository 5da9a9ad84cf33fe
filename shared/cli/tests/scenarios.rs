//! Runs every data-driven scenario under `tests/scenarios` (manifests in, expected plan out;
//! the format is in `tests/scenarios/README.md`). A new case is a new file.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod scenario;

use std::panic::{AssertUnwindSafe, catch_unwind};

#[test]
fn every_scenario_file_plans_as_expected() {
    let files = scenario::all();
    assert!(files.len() >= 10, "scenario files are missing: {files:?}");
    let disruption = files
        .iter()
        .filter(|f| f.starts_with(scenario::dir().join("disruption")))
        .count();
    assert!(
        disruption >= 55,
        "disruption scenarios are missing: {disruption}"
    );
    let mut failed = Vec::new();
    for f in &files {
        let at = f
            .strip_prefix(scenario::dir())
            .unwrap_or(f)
            .display()
            .to_string();
        let run = catch_unwind(AssertUnwindSafe(|| {
            let case = scenario::load(f);
            let expect = &case.scenario.expect;
            assert!(
                case.scenario.mode != scenario::Mode::Provision || !expect.names_disruption(),
                "{at}: disruption expectations need `mode: disrupt` or `mode: all`"
            );
            let p = scenario::plan(&case);
            expect.check(&p.plan, p.pending, &at, &scenario::cpu_capacity);
            expect.check_disruption(&p.plan, &p.snapshot, &at);
        }));
        if run.is_err() {
            failed.push(at);
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {} scenarios failed: {failed:?}",
        failed.len(),
        files.len()
    );
}
