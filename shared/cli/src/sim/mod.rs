//! `kerf sim`: runs a scenario (a file, or the embedded getting-started walkthrough) on the
//! simulated cluster with Kerf's real handlers, prints the timeline as it goes, then the
//! NodeClaims and the cost.

mod live;
pub mod report;
mod table;

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use kerf_sim::scenario::{Outcome, Scenario, ScenarioError};

use crate::args::SimArgs;
use crate::error::CliError;

/// Reads the scenario `kerf sim` was given.
pub fn load(a: &SimArgs) -> Result<Scenario, CliError> {
    let s = match &a.scenario {
        Some(f) => Scenario::load(Path::new(f)),
        None => Scenario::getting_started(),
    };
    s.map_err(error)
}

fn error(e: ScenarioError) -> CliError {
    match e {
        ScenarioError::Read { .. } | ScenarioError::Parse { .. } | ScenarioError::Step { .. } => {
            CliError::Usage(e.to_string())
        }
        ScenarioError::World { .. } | ScenarioError::Assertion { .. } => {
            CliError::Internal(e.to_string())
        }
    }
}

/// Runs a scenario, printing to `out` (`terminal` draws a progress bar).
pub fn simulate(s: &Scenario, out: &mut dyn Write, terminal: bool) -> Result<Outcome, CliError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CliError::Internal(format!("starting the runtime: {e}")))?;
    let wall = Instant::now();
    let _ = writeln!(out, "scenario {}: {}", s.name, s.description);
    let mut live = live::Live::new(out, terminal);
    let result = rt.block_on(kerf_sim::scenario::run(s, &mut live));
    live.finish();
    let outcome = result.map_err(error)?;
    let _ = out.write_all(table::claims(&outcome).as_bytes());
    let _ = out.write_all(table::summary(&outcome, wall.elapsed()).as_bytes());
    Ok(outcome)
}

/// `kerf sim`.
pub fn sim(a: &SimArgs) -> Result<(), CliError> {
    let s = load(a)?;
    let stdout = std::io::stdout();
    let terminal = std::io::IsTerminal::is_terminal(&stdout);
    let mut out = stdout.lock();
    let outcome = simulate(&s, &mut out, terminal)?;
    if let Some(path) = &a.report {
        let html = report::page(&s.name, &[("Kerf", &outcome)]);
        std::fs::write(path, html).map_err(|e| CliError::File {
            file: path.clone(),
            message: format!("cannot write the report: {e}"),
        })?;
        let _ = writeln!(out, "report: {path}");
    }
    Ok(())
}
