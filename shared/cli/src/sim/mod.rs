//! `kerf sim`: runs a scenario (a file, or the embedded getting-started walkthrough) on the
//! simulated cluster with Kerf's real handlers, prints the timeline as it goes, then the
//! NodeClaims and the cost. With `--cluster KUBECONFIG` the cluster is a real control plane
//! (in wall-clock time) instead of the in-process server.

mod beside;
mod live;
pub mod report;
pub mod serve;
pub mod table;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use kerf_sim::scenario::{Decisions, Outcome, Scenario, ScenarioError, boxed};
use kerf_sim::world::WorldOptions;

use crate::args::{Compare, SimArgs};
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
        ScenarioError::Read { .. }
        | ScenarioError::Parse { .. }
        | ScenarioError::Step { .. }
        | ScenarioError::Rejected { .. } => CliError::Usage(e.to_string()),
        ScenarioError::World { .. } | ScenarioError::Assertion { .. } => {
            CliError::Internal(e.to_string())
        }
    }
}

/// The line a run starts with: the scenario's name, and its description when it has one.
pub(crate) fn heading(s: &Scenario) -> String {
    if s.description.is_empty() {
        format!("scenario {}", s.name)
    } else {
        format!("scenario {}: {}", s.name, s.description)
    }
}

/// Runs a scenario with `decisions`, printing to `out` (`terminal` draws a progress bar;
/// `quiet` prints only the end).
pub fn simulate_with(
    s: &Scenario,
    decisions: Decisions,
    out: &mut dyn Write,
    terminal: bool,
    quiet: bool,
) -> Result<Outcome, CliError> {
    simulate_on(s, decisions, decisions.options(), out, terminal, quiet)
}

/// [`simulate_with`] on a world with `options`.
fn simulate_on(
    s: &Scenario,
    decisions: Decisions,
    options: WorldOptions,
    out: &mut dyn Write,
    terminal: bool,
    quiet: bool,
) -> Result<Outcome, CliError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CliError::Internal(format!("starting the runtime: {e}")))?;
    let wall = Instant::now();
    let result = if quiet {
        rt.block_on(boxed::run(s, decisions, options, &mut live::Quiet))
    } else {
        let _ = writeln!(out, "{}", heading(s));
        if let Some(kc) = &options.cluster {
            let _ = writeln!(
                out,
                "on the control plane of {} (wall-clock time: a simulated minute takes a minute)",
                kc.display()
            );
        }
        let mut live = live::Live::new(out, terminal);
        let r = rt.block_on(boxed::run(s, decisions, options, &mut live));
        live.finish();
        r
    };
    let outcome = result.map_err(error)?;
    if !quiet {
        let _ = out.write_all(table::claims(&outcome).as_bytes());
    }
    let _ = out.write_all(table::summary(&outcome, wall.elapsed()).as_bytes());
    held(s, outcome)
}

/// Refuses, as a usage error, the options that reach a real control plane (over HTTPS) in a
/// build without TLS (`has_tls` false), before anything runs.
pub fn reaches_tls(a: &SimArgs, has_tls: bool) -> Result<(), CliError> {
    let real = a.cluster.is_some() || a.compare == Some(Compare::KarpenterReal);
    if real && !has_tls {
        return Err(CliError::Usage(format!(
            "--cluster and --compare karpenter-real reach a real control plane: {}",
            kerf_sim::tls::NO_TLS
        )));
    }
    Ok(())
}

/// The outcome, or an error (exit 1) naming the first invariant that did not hold.
fn held(s: &Scenario, outcome: Outcome) -> Result<Outcome, CliError> {
    match outcome.violations.first() {
        Some(first) => Err(CliError::Internal(format!(
            "{}: an invariant did not hold: {first}",
            s.path
        ))),
        None => Ok(outcome),
    }
}

/// Runs a scenario with Kerf's decisions, printing to `out`.
pub fn simulate(s: &Scenario, out: &mut dyn Write, terminal: bool) -> Result<Outcome, CliError> {
    simulate_with(s, Decisions::Kerf, out, terminal, false)
}

/// `kerf sim`.
pub fn sim(a: &SimArgs) -> Result<(), CliError> {
    reaches_tls(a, cfg!(feature = "tls"))?;
    let s = load(a)?;
    if let Some(f) = &a.logs {
        // Refused before the run starts, as bad input (exit 2).
        std::fs::File::create(f).map_err(|e| CliError::File {
            file: f.clone(),
            message: format!("cannot write the log file: {e}"),
        })?;
    }
    let stdout = std::io::stdout();
    let terminal = std::io::IsTerminal::is_terminal(&stdout);
    let mut out = stdout.lock();
    if a.compare == Some(Compare::KarpenterReal) {
        let runs = beside::beside(a, &s, &mut out, terminal)?;
        return write_report(a, &s, &runs, &mut out);
    }
    if a.compare == Some(Compare::Karpenter) && a.cluster.is_some() {
        return Err(CliError::Usage(
            "--compare karpenter runs a model on the simulated cluster; with --cluster, \
             use --compare karpenter-real"
                .into(),
        ));
    }
    let kerf = if a.serve {
        serve::serve(a, &s, &mut out)?
    } else {
        let options = WorldOptions {
            cluster: a.cluster.as_ref().map(PathBuf::from),
            logs: a.logs.as_ref().map(PathBuf::from),
            ..Decisions::Kerf.options()
        };
        simulate_on(&s, Decisions::Kerf, options, &mut out, terminal, false)?
    };
    let mut runs = vec![("Kerf", kerf)];
    if a.compare == Some(Compare::Karpenter) {
        let _ = writeln!(
            out,
            "\nthe same scenario with Karpenter's decisions (first-fit packing, its consolidation limits):"
        );
        let k = simulate_with(&s, Decisions::Karpenter, &mut out, false, true)?;
        runs.push(("Karpenter", k));
        let _ = out.write_all(table::comparison(&runs).as_bytes());
    }
    write_report(a, &s, &runs, &mut out)
}

/// `--report`: the runs' charts in one page.
fn write_report(
    a: &SimArgs,
    s: &Scenario,
    runs: &[(&str, Outcome)],
    out: &mut dyn Write,
) -> Result<(), CliError> {
    if let Some(path) = &a.report {
        let refs: Vec<(&str, &Outcome)> = runs.iter().map(|(l, o)| (*l, o)).collect();
        let html = report::page(&s.name, &refs);
        std::fs::write(path, html).map_err(|e| CliError::File {
            file: path.clone(),
            message: format!("cannot write the report: {e}"),
        })?;
        let _ = writeln!(out, "report: {path}");
    }
    Ok(())
}
