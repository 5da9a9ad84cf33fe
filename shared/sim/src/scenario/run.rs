//! Running a scenario: a world with Kerf's handlers, the objects applied, then each step in
//! turn, looking at the cluster after every tick to keep the timeline, the samples for the
//! charts and the cost.

use std::collections::BTreeMap;
use std::time::Instant;

use jiff::{SignedDuration, Timestamp};

use super::cluster::Cluster;
use super::measure::Measures;
use super::observe::{Kind, Observer};
use super::pace::Pace;
use super::{Observation, Scenario, ScenarioError, TimelineEvent};
use crate::world::{World, WorldOptions};

/// The cluster at one moment, for the charts.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub at: Timestamp,
    /// Instances EC2 bills per `instance-type/capacity-type` (draining nodes included).
    pub nodes: BTreeMap<String, usize>,
    pub pending: usize,
    /// USD per hour EC2 bills.
    pub cost_per_hour: f64,
}

/// What a run produced.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub name: String,
    pub start: Timestamp,
    pub samples: Vec<Sample>,
    pub timeline: Vec<TimelineEvent>,
    /// The cluster at the end.
    pub last: Observation,
    /// USD spent on instances over the run (what EC2 bills per hour, draining nodes included,
    /// integrated over simulated time).
    pub cost: f64,
    /// Instance-hours over the run (draining nodes included).
    pub node_hours: f64,
    /// Simulated time covered.
    pub simulated: SignedDuration,
    /// Assertions that did not hold (Karpenter's decisions only; Kerf's stop at the first).
    pub failures: Vec<String>,
    /// Invariants that did not hold ([`super::invariants`]), checked after every step and at
    /// the end: each with the step it was found after.
    pub violations: Vec<String>,
    /// Pod start and disruption latencies, disruptions by reason, evictions.
    pub measures: Measures,
}

/// Told as the run goes.
pub trait Progress {
    /// A step begins (1-based `index` of `total`).
    fn step(&mut self, index: usize, total: usize, text: &str, at: Timestamp);
    /// Timeline lines since the last tick, and the cluster now.
    fn tick(&mut self, lines: &[TimelineEvent], now: &Observation);
}

pub(super) struct Runner<'a, C: Cluster = World> {
    pub(super) s: &'a Scenario,
    pub(super) w: C,
    pub(super) observer: Observer,
    pub(super) out: Outcome,
    pub(super) progress: &'a mut dyn Progress,
    pub(super) index: usize,
    pub(super) pace: Option<Pace>,
    /// On the wall clock: no look before this, so that looking (listing every pod and
    /// Event) takes at most half of the loop and does not slow the decisions it watches.
    pub(super) next_look: Option<Instant>,
}

/// Whose decisions drive the simulated cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decisions {
    /// Kerf's: cost-optimised packing and consolidation search.
    Kerf,
    /// Karpenter's: first-fit packing, multi-node consolidation over at most 100 candidates,
    /// single-node consolidation taking the first candidate that can move, on Karpenter's
    /// cadence (a disruption pass every 10 s besides the passes its commands requeue).
    /// Assertions are recorded in [`Outcome::failures`] instead of ending the run (they
    /// describe Kerf).
    Karpenter,
}

/// Karpenter's disruption controller polls this often when it did nothing.
pub const KARPENTER_DISRUPTION_POLL: SignedDuration = SignedDuration::from_secs(10);

impl Decisions {
    /// The world options of a run with these decisions.
    pub fn options(self) -> WorldOptions {
        let karpenter = self == Decisions::Karpenter;
        let defaults = WorldOptions::default();
        WorldOptions {
            skip_idle: true,
            serial: true,
            karpenter_decisions: karpenter,
            disruption_every: if karpenter {
                KARPENTER_DISRUPTION_POLL
            } else {
                defaults.disruption_every
            },
            ..defaults
        }
    }
}

/// Runs `s`; with Kerf's decisions an assertion that does not hold ends the run with an error
/// naming its step.
pub async fn run(
    s: &Scenario,
    decisions: Decisions,
    progress: &mut dyn Progress,
) -> Result<Outcome, ScenarioError> {
    run_with(s, decisions, decisions.options(), progress).await
}

/// [`run`] on a world with `options` (a real control plane's, say).
pub async fn run_with(
    s: &Scenario,
    decisions: Decisions,
    options: WorldOptions,
    progress: &mut dyn Progress,
) -> Result<Outcome, ScenarioError> {
    let mut r = Runner::start(s, options, progress, None).await?;
    r.steps(decisions == Decisions::Karpenter).await?;
    r.drains_end(false).await?;
    Ok(r.finish().await)
}

/// How a run on another kind of cluster goes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunOn {
    /// A failed assertion is recorded in [`Outcome::failures`] instead of ending the run.
    pub tolerate: bool,
    /// After the last step, the run also goes on until no pod is pending (at most
    /// [`DRAIN_TAIL`]), so that runs compared side by side end recovered, not mid-way.
    pub settle: bool,
}

/// Runs `s` on a cluster of another kind (the real Karpenter's, say).
pub async fn run_on<C: Cluster>(
    s: &Scenario,
    cluster: C,
    how: RunOn,
    progress: &mut dyn Progress,
) -> Result<Outcome, ScenarioError> {
    let mut r = Runner::begin(s, cluster, progress, None).await?;
    r.steps(how.tolerate).await?;
    r.drains_end(how.settle).await?;
    Ok(r.finish().await)
}

/// How long a run goes on after its last step for the drains under way to end.
pub const DRAIN_TAIL: SignedDuration = SignedDuration::from_mins(15);

/// An error of the scenario's starting objects.
pub(super) fn objects_error(s: &Scenario, message: String) -> ScenarioError {
    ScenarioError::World {
        path: s.path.clone(),
        index: 0,
        name: " (objects)".into(),
        message,
    }
}

/// The world a scenario runs in: started with `options`, the scenario's tick and feature
/// gates, before any of its objects.
pub async fn world_for(s: &Scenario, options: WorldOptions) -> Result<World, ScenarioError> {
    let world_err = |message: String| objects_error(s, message);
    let mut options = s.in_region(options);
    options.node_overlay = gate(s, "NodeOverlay");
    options.node_repair = gate(s, "NodeRepair");
    options.static_capacity = gate(s, "StaticCapacity");
    if let Some(t) = &s.settings.tick {
        options.tick = super::duration(t).map_err(|m| world_err(format!("settings.tick: {m}")))?;
    }
    let mut w = World::start(options)
        .await
        .map_err(|e| world_err(e.to_string()))?;
    w.disruption.spot_to_spot = gate(s, "SpotToSpotConsolidation");
    w.interruption.rebalance_replacement = gate(s, "RebalanceReplacement");
    Ok(w)
}

impl<'a> Runner<'a, World> {
    pub(super) async fn start(
        s: &'a Scenario,
        options: WorldOptions,
        progress: &'a mut dyn Progress,
        pace: Option<Pace>,
    ) -> Result<Runner<'a, World>, ScenarioError> {
        let w = world_for(s, options).await?;
        Runner::begin(s, w, progress, pace).await
    }
}

impl<'a, C: Cluster> Runner<'a, C> {
    /// Applies the scenario's objects to `w` and looks at it a first time.
    pub(super) async fn begin(
        s: &'a Scenario,
        w: C,
        progress: &'a mut dyn Progress,
        mut pace: Option<Pace>,
    ) -> Result<Runner<'a, C>, ScenarioError> {
        let world_err = |message: String| objects_error(s, message);
        let mut skipped = Vec::new();
        for (i, src) in s.objects.iter().enumerate() {
            let text = s.text(src).map_err(&world_err)?;
            let done = w
                .import(&text)
                .await
                .map_err(|e| s.import_error(src, &format!("objects[{i}]"), e, world_err))?;
            skipped.extend(done.skipped);
        }
        let start = w.now();
        if let Some(p) = &mut pace {
            p.sim = start;
            p.wall = Instant::now();
        }
        let mut r = Runner {
            s,
            w,
            observer: Observer::default(),
            out: Outcome {
                name: s.name.clone(),
                start,
                samples: Vec::new(),
                timeline: Vec::new(),
                last: Observation::default(),
                cost: 0.0,
                node_hours: 0.0,
                simulated: SignedDuration::ZERO,
                failures: Vec::new(),
                violations: Vec::new(),
                measures: Measures::default(),
            },
            progress,
            index: 0,
            pace,
            next_look: None,
        };
        r.look().await?;
        r.note_skipped(&skipped);
        Ok(r)
    }

    /// Every step in turn; `tolerate`: a failed assertion is recorded, not fatal.
    pub(super) async fn steps(&mut self, tolerate: bool) -> Result<(), ScenarioError> {
        let s = self.s;
        for (i, step) in s.steps.iter().enumerate() {
            if self.stopped() {
                break;
            }
            self.index = i;
            let action = step.action().map_err(|m| s.step_error(i, m))?;
            match self.act(&action, step.name.as_deref()).await {
                Err(e @ ScenarioError::Assertion { .. }) if tolerate => {
                    if self.pace.is_some() {
                        self.progress
                            .step(i + 1, s.steps.len(), &e.to_string(), self.w.now());
                    }
                    self.out.failures.push(e.to_string());
                }
                other => other?,
            }
        }
        Ok(())
    }

    /// After the last step: the cluster runs on (at most [`DRAIN_TAIL`]) until every instance
    /// EC2 bills belongs to a live NodeClaim (and, when `settle`, no pod is pending or
    /// stranded, no NodeClaim is being deleted and no warned instance is left to reclaim), so
    /// a run's cost includes the drains it started and its end state is the steady one.
    pub(super) async fn drains_end(&mut self, settle: bool) -> Result<(), ScenarioError> {
        let end = self.w.now() + DRAIN_TAIL;
        let mut quiet = false;
        // Settling also waits out what a reclaim sets off: the instance going, its stranded
        // pods collected and recreated, the NodeClaims being deleted gone.
        let unsettled = |o: &Observation| {
            o.pending > 0 || o.deleting > 0 || o.reclaims_due > 0 || o.stranded > 0
        };
        let busy =
            |o: &Observation| o.billed_instances() > o.claims.len() || (settle && unsettled(o));
        while busy(&self.out.last) && self.w.now() < end {
            quiet = self.step(quiet, end).await?;
        }
        Ok(())
    }

    /// After the last step (served): the cluster runs on until stopped.
    pub(super) async fn forever(&mut self) -> Result<(), ScenarioError> {
        self.index = self.s.steps.len().saturating_sub(1);
        let now = self.w.now();
        if let Some(p) = &mut self.pace {
            p.real_time_from(now);
        }
        while !self.stopped() {
            self.advance(SignedDuration::from_mins(1), None).await?;
        }
        Ok(())
    }

    pub(super) fn stopped(&self) -> bool {
        self.pace.as_ref().is_some_and(Pace::stopped)
    }

    /// One timeline line for the objects an import skipped (a cluster dump's Nodes, …).
    pub(super) fn note_skipped(&mut self, skipped: &[String]) {
        if skipped.is_empty() {
            return;
        }
        let text = format!(
            "skipped {} objects: {}",
            skipped.len(),
            kerf_control::log::abbreviate(skipped, 4)
        );
        let line = TimelineEvent {
            at: self.w.now(),
            kind: Kind::Other,
            text,
        };
        self.progress
            .tick(std::slice::from_ref(&line), &self.out.last);
        self.out.timeline.push(line);
    }

    /// Records the invariants that do not hold now (once each).
    pub(super) async fn audit(&mut self, when: &str) {
        let found = match self.w.audit().await {
            Ok(v) => v,
            Err(e) => vec![format!("could not read the cluster: {e}")],
        };
        for v in found {
            if !self.out.violations.iter().any(|o| o.ends_with(&v)) {
                self.out.violations.push(format!("{when}: {v}"));
            }
        }
    }

    pub(super) async fn finish(mut self) -> Outcome {
        self.audit("at the end").await;
        self.out.measures = self.observer.measures.clone();
        self.out.simulated = self.w.now().duration_since(self.out.start);
        // The last value holds until the end.
        if let Some(mut end) = self.out.samples.last().cloned() {
            end.at = self.w.now();
            self.out.samples.push(end);
        }
        self.out
    }
}

fn gate(s: &Scenario, name: &str) -> bool {
    s.settings
        .feature_gates
        .iter()
        .any(|(k, v)| *v && k.eq_ignore_ascii_case(name))
}
