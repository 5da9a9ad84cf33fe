//! `kerf sim --serve`: the scenario in real time, its API server open to kubectl through a
//! kubeconfig, running until Ctrl-C; then the NodeClaims and the cost, as a run ends.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use kerf_sim::scenario::{Outcome, Pace, Scenario};

use super::{error, live, table};
use crate::args::SimArgs;
use crate::error::CliError;

/// The kubeconfig for a served cluster at `url` (plain HTTP on 127.0.0.1, any token).
pub fn kubeconfig(url: &str) -> String {
    format!(
        "apiVersion: v1
kind: Config
clusters:
- name: kerf-sim
  cluster:
    server: {url}
contexts:
- name: kerf-sim
  context:
    cluster: kerf-sim
    user: kerf-sim
    namespace: default
current-context: kerf-sim
users:
- name: kerf-sim
  user:
    token: kerf-sim
"
    )
}

/// `kerf sim --serve`: the run's outcome once Ctrl-C ends it.
pub fn serve(a: &SimArgs, s: &Scenario, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CliError::Internal(format!("starting the runtime: {e}")))?;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    rt.spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            flag.store(true, Ordering::Relaxed);
        }
    });
    let _ = writeln!(out, "{}", super::heading(s));
    let mut written: Result<(), CliError> = Ok(());
    let mut ready = |url: &str| written = announce(a, url);
    let wall = Instant::now();
    let mut live = live::Live::new(out, false);
    let pace = Pace::new(a.speed, stop);
    let result = rt.block_on(kerf_sim::scenario::boxed::serve_boxed(
        s,
        a.port,
        a.logs.as_ref().map(std::path::PathBuf::from),
        pace,
        &mut live,
        &mut ready,
    ));
    live.finish();
    written?;
    let outcome = result.map_err(error)?;
    let _ = out.write_all(table::claims(&outcome).as_bytes());
    let _ = out.write_all(table::summary(&outcome, wall.elapsed()).as_bytes());
    let _ = std::fs::remove_file(&a.kubeconfig);
    super::held(s, outcome)
}

/// Writes the kubeconfig and tells the user how to use it.
fn announce(a: &SimArgs, url: &str) -> Result<(), CliError> {
    let config = kubeconfig(url);
    std::fs::write(&a.kubeconfig, &config).map_err(|e| CliError::File {
        file: a.kubeconfig.clone(),
        message: format!("cannot write the kubeconfig: {e}"),
    })?;
    let mut out = std::io::stderr();
    let _ = writeln!(
        out,
        "serving the simulated cluster at {url} (simulated time x{}); Ctrl-C stops it\n\
         kubeconfig written to {}:\n\n{config}\n  export KUBECONFIG={}\n  kubectl get nodepools,nodeclaims,nodes,pods\n",
        a.speed, a.kubeconfig, a.kubeconfig
    );
    Ok(())
}
