//! The runs other crates drive, as futures boxed here: a run's code (the world, Kerf's
//! handlers, the observer) is compiled and optimised once, in this crate, instead of again in
//! every crate that awaits it (the `kerf` command's build would otherwise spend minutes on
//! it).

use std::future::Future;
use std::path::Path;
use std::pin::Pin;

use jiff::SignedDuration;

use super::run::{Decisions, RunOn, run_on, run_with, world_for};
use super::{Outcome, Pace, Progress, Scenario, ScenarioError, serve};
use crate::karpenter::{KarpenterCluster, Launch};
use crate::world::{World, WorldError, WorldOptions};

/// A boxed future of this crate.
pub type Boxed<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// [`run_with`], boxed.
pub fn run<'a>(
    s: &'a Scenario,
    decisions: Decisions,
    options: WorldOptions,
    progress: &'a mut dyn Progress,
) -> Boxed<'a, Result<Outcome, ScenarioError>> {
    Box::pin(run_with(s, decisions, options, progress))
}

/// [`world_for`], boxed.
pub fn world<'a>(
    s: &'a Scenario,
    options: WorldOptions,
) -> Boxed<'a, Result<World, ScenarioError>> {
    Box::pin(world_for(s, options))
}

/// [`run_on`] a world (Kerf's side), boxed.
pub fn run_on_world<'a>(
    s: &'a Scenario,
    w: World,
    how: RunOn,
    progress: &'a mut dyn Progress,
) -> Boxed<'a, Result<Outcome, ScenarioError>> {
    Box::pin(run_on(s, w, how, progress))
}

/// [`KarpenterCluster::start`], boxed.
pub fn karpenter<'a>(
    launch: Launch,
    crds: &'a Path,
    region: &'a str,
    boot: SignedDuration,
) -> Boxed<'a, Result<KarpenterCluster, WorldError>> {
    Box::pin(KarpenterCluster::start(launch, crds, region, boot))
}

/// [`run_on`] the real Karpenter's cluster, boxed.
pub fn run_on_karpenter<'a>(
    s: &'a Scenario,
    c: KarpenterCluster,
    how: RunOn,
    progress: &'a mut dyn Progress,
) -> Boxed<'a, Result<Outcome, ScenarioError>> {
    Box::pin(run_on(s, c, how, progress))
}

/// [`serve`], boxed.
pub fn serve_boxed<'a>(
    s: &'a Scenario,
    port: u16,
    logs: Option<std::path::PathBuf>,
    pace: Pace,
    progress: &'a mut dyn Progress,
    ready: &'a mut dyn FnMut(&str),
) -> Boxed<'a, Result<Outcome, ScenarioError>> {
    Box::pin(serve(s, port, logs, pace, progress, ready))
}
