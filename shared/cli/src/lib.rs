//! The `kerf` command line: `plan` (Kerf's decision engine as a dry run), `catalog`, `migrate`
//! (legacy Karpenter manifests to v1), `crds`, `webhooks` (the webhook configurations of a
//! deployed stack) and `sim` (a scenario on the simulated cluster, [`sim`]).
//! Only offline work lives here: no AWS SDK; the Kubernetes client only talks to the
//! in-process API server of `kerf sim`.

pub mod args;
pub mod commands;
pub mod convert;
pub mod error;
pub mod fastyaml;
#[cfg(feature = "aws")]
pub mod from_aws;
pub mod input;
pub mod migrate;
pub mod overlays;
mod parallel;
pub mod region;
pub mod sim;
pub mod snapshot;
pub mod table;
pub mod webhooks;

use args::{Cli, Command};
use commands::Outcome;
use error::CliError;

/// Runs a parsed command line; `now` is the clock reading used when `--now` is absent.
pub fn run(cli: &Cli, now: i64) -> Result<Outcome, CliError> {
    match &cli.command {
        Command::Plan(a) => commands::plan(a, now),
        Command::Catalog(a) => commands::catalog(a),
        Command::Migrate(a) => migrate::migrate(a),
        Command::Crds => migrate::crds(),
        Command::Webhooks(a) => webhooks::webhooks(a),
        Command::Sim(a) => sim::sim(a).map(|()| Outcome::default()),
    }
}
pub mod benchcluster;
pub mod benchdata;
pub mod benchdress;
