//! A run's moves: each step's action, letting time pass until a condition holds, looking at
//! the cluster (the timeline, the samples for the charts, the cost), and assertions explained
//! by what the cluster says when they fail.

use std::time::Instant;

use jiff::SignedDuration;

use super::cluster::{CloudChange, Cluster};
use super::observe::Kind;
use super::run::{Runner, Sample};
use super::{Action, ScenarioError, Select, TimelineEvent};
use crate::world::WorldError;

fn describe(a: &Action<'_>) -> String {
    match a {
        Action::Apply(src) => match &src.file {
            Some(f) => format!("apply {f}"),
            None => "apply manifest".into(),
        },
        Action::Delete(o) => format!("delete {}/{}", o.kind, o.name),
        Action::Scale(sc) => format!(
            "scale deployment/{} --replicas {}",
            sc.deployment, sc.replicas
        ),
        Action::Advance(d) => format!("advance {d:#}"),
        Action::Until(e, d) => format!("wait until {e} (at most {d:#})"),
        Action::Expect(e) => format!("expect {e}"),
        Action::Interrupt(_) => "interrupt".into(),
        Action::FailNode(_) => "fail node".into(),
        Action::Unavailable(_) => "make offerings unavailable".into(),
        Action::Available(_) => "make offerings available".into(),
        Action::ReleaseAmi(id) => format!("release AMI {id}"),
        Action::SpotPrice(p) => format!("spot price of {} to ${}/h", p.instance_type, p.price),
        Action::Reserve(r) => format!(
            "reserve {} {} in {} ({})",
            r.count, r.instance_type, r.zone, r.id
        ),
        Action::CancelReservation(id) => format!("cancel capacity reservation {id}"),
    }
}

/// A step's line: its name, then what it does unless the name already says all of it
/// (`kubectl scale deployment inflate --replicas 5` needs no `scale deployment/inflate
/// --replicas 5` after it).
fn titled(name: Option<&str>, action: &str) -> String {
    let words = |s: &str| -> Vec<String> {
        s.split(|c: char| !c.is_alphanumeric() && c != '.')
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    match name {
        None => action.to_string(),
        Some(n) => {
            let said = words(n);
            if words(action).iter().all(|w| said.contains(w)) {
                n.to_string()
            } else {
                format!("{n}: {action}")
            }
        }
    }
}

impl<C: Cluster> Runner<'_, C> {
    pub(super) fn fail(&self, message: String) -> ScenarioError {
        ScenarioError::World {
            path: self.s.path.clone(),
            index: self.index + 1,
            name: self.s.step_name(self.index),
            message,
        }
    }

    /// One tick toward `end` (a jump over quiet time when `quiet`), then a look; returns
    /// whether the tick was quiet.
    pub(super) async fn step(
        &mut self,
        quiet: bool,
        end: jiff::Timestamp,
    ) -> Result<bool, ScenarioError> {
        // On the heap: the world's tick and a look are large futures, and a run may be
        // driven from a small thread stack (a test's).
        let changed = Box::pin(self.w.step_toward(quiet, end))
            .await
            .map_err(|e| self.fail(e.to_string()))?;
        Box::pin(self.look_paced()).await?;
        Ok(!changed)
    }

    /// [`Self::look`] in the loops: on a wall-clock cluster, skipped until as long after the
    /// last look as that look took (a simulated clock does not wait on looks).
    pub(super) async fn look_paced(&mut self) -> Result<(), ScenarioError> {
        if !self.w.wall_clock() {
            return self.look().await;
        }
        let started = Instant::now();
        if self.next_look.is_some_and(|t| started < t) {
            return Ok(());
        }
        self.look().await?;
        let now = Instant::now();
        self.next_look = Some(now + now.duration_since(started));
        Ok(())
    }

    pub(super) async fn look(&mut self) -> Result<(), ScenarioError> {
        let (o, lines) = self
            .observer
            .look(&self.w)
            .await
            .map_err(|e| self.fail(e.to_string()))?;
        // Samples are steps: each value holds until the next sample.
        if let Some(u) = self.w.usage() {
            self.observer.measures.usage(o.at, u);
        }
        let hours = o.at.duration_since(self.out.last.at).as_secs_f64() / 3600.0;
        if let Some(prev) = self.out.samples.last() {
            self.out.cost += prev.cost_per_hour * hours;
            self.out.node_hours += prev.nodes.values().sum::<usize>() as f64 * hours;
        }
        let sample = Sample {
            at: o.at,
            nodes: o.billed.clone(),
            pending: o.pending,
            cost_per_hour: o.billed_per_hour,
        };
        let same = self.out.samples.last().is_some_and(|p| {
            p.nodes == sample.nodes
                && p.pending == sample.pending
                && p.cost_per_hour == sample.cost_per_hour
        });
        if !same {
            self.out.samples.push(sample);
        }
        self.progress.tick(&lines, &o);
        self.out.timeline.extend(lines);
        self.out.last = o;
        Ok(())
    }

    pub(super) async fn advance(
        &mut self,
        d: SignedDuration,
        until: Option<&super::Expect>,
    ) -> Result<(), ScenarioError> {
        let end = self.w.now() + d;
        let mut quiet = false;
        while self.w.now() < end && !self.stopped() {
            if let Some(p) = &self.pace {
                p.wait(self.w.now() + self.w.tick()).await;
            }
            quiet = self.step(quiet, end).await?;
            if let Some(e) = until
                && e.check(&self.out.last).is_ok()
            {
                return Ok(());
            }
        }
        match until.map(|e| e.check(&self.out.last)) {
            Some(Err(failure)) => Err(Box::pin(self.explained(failure, Some(d))).await),
            _ => Ok(()),
        }
    }

    /// The assertion, with why the cluster is where it is (a failure to read it is said in
    /// its place: the assertion is what the user needs first).
    async fn explained(
        &self,
        mut failure: super::Failure,
        within: Option<SignedDuration>,
    ) -> ScenarioError {
        let read =
            async { Ok::<_, WorldError>((self.w.snapshot().await?, self.w.node_pools().await?)) };
        failure.why = match read.await {
            Ok((snap, pools)) => super::why::why(&snap.pods, &snap.events, &pools),
            Err(e) => vec![format!("(could not read the cluster to say why: {e})")],
        };
        self.assertion(failure, within)
    }

    fn assertion(
        &self,
        mut failure: super::Failure,
        within: Option<SignedDuration>,
    ) -> ScenarioError {
        if let Some(d) = within {
            failure.found = format!("{} after {d:#}", failure.found);
        }
        ScenarioError::Assertion {
            path: self.s.path.clone(),
            index: self.index + 1,
            name: self.s.step_name(self.index),
            failure: Box::new(failure),
        }
    }

    pub(super) async fn act(
        &mut self,
        a: &Action<'_>,
        name: Option<&str>,
    ) -> Result<(), ScenarioError> {
        let text = titled(name, &describe(a));
        self.progress
            .step(self.index + 1, self.s.steps.len(), &text, self.w.now());
        self.out.timeline.push(TimelineEvent {
            at: self.w.now(),
            kind: Kind::Step,
            text,
        });
        match a {
            Action::Apply(src) => {
                let text = self.s.text(src).map_err(|m| self.fail(m))?;
                let entry = format!("steps[{}].apply", self.index);
                let done = self
                    .w
                    .import(&text)
                    .await
                    .map_err(|e| self.s.import_error(src, &entry, e, |m| self.fail(m)))?;
                self.note_skipped(&done.skipped);
            }
            Action::Delete(o) => {
                self.w
                    .delete(o)
                    .await
                    .map_err(|e| self.fail(e.to_string()))?;
            }
            Action::Scale(sc) => {
                let ns = sc.namespace.as_deref().unwrap_or("default");
                self.w
                    .scale(ns, &sc.deployment, sc.replicas)
                    .await
                    .map_err(|e| self.fail(e.to_string()))?;
            }
            Action::Advance(d) => self.advance(*d, None).await?,
            Action::Until(e, d) => {
                if e.check(&self.out.last).is_err() {
                    self.advance(*d, Some(e)).await?;
                }
            }
            Action::Expect(e) => {
                if let Err(f) = e.check(&self.out.last) {
                    return Err(Box::pin(self.explained(f, None)).await);
                }
            }
            Action::Interrupt(sel) => {
                let picked = self.pick(sel, "interrupt", Kind::Interruption, |c, id| {
                    format!("spot interruption warning for nodeclaim {c} ({id})")
                })?;
                self.change(CloudChange::Interrupt(&picked)).await?;
            }
            Action::Unavailable(sel) => self.change(CloudChange::Unavailable(sel)).await?,
            Action::Available(sel) => self.change(CloudChange::Available(sel)).await?,
            Action::ReleaseAmi(id) => self.change(CloudChange::ReleaseAmi(id)).await?,
            Action::SpotPrice(p) => self.change(CloudChange::SpotPrice(p)).await?,
            Action::FailNode(sel) => {
                let picked = self.pick(sel, "failNode", Kind::Other, |c, id| {
                    format!("kubelet of nodeclaim {c} ({id}) stops reporting")
                })?;
                self.change(CloudChange::FailNode(&picked)).await?;
            }
            Action::Reserve(r) => self.change(CloudChange::Reserve(r)).await?,
            Action::CancelReservation(id) => {
                self.change(CloudChange::CancelReservation(id)).await?
            }
        }
        self.audit(&format!("after step {}", self.index + 1)).await;
        self.look().await
    }

    /// Changes the cloud; a line on the timeline when the cluster applies it its own way.
    async fn change(&mut self, c: CloudChange<'_>) -> Result<(), ScenarioError> {
        let note = self
            .w
            .change(c)
            .await
            .map_err(|e| self.fail(e.to_string()))?;
        if let Some(text) = note {
            self.out.timeline.push(TimelineEvent {
                at: self.w.now(),
                kind: Kind::Other,
                text,
            });
        }
        Ok(())
    }

    /// The nodes `sel` matches for step `what`, each with a timeline line; an error when none
    /// does.
    fn pick(
        &mut self,
        sel: &Select,
        what: &str,
        kind: Kind,
        text: impl Fn(&str, &str) -> String,
    ) -> Result<Vec<(String, String)>, ScenarioError> {
        let picked = self.select(sel);
        if picked.is_empty() {
            return Err(self.fail(format!("no node matches the {what} selector")));
        }
        for (claim, id) in &picked {
            self.out.timeline.push(TimelineEvent {
                at: self.w.now(),
                kind,
                text: text(claim, id),
            });
        }
        Ok(picked)
    }

    /// NodeClaims and instance ids of the launched nodes `sel` matches, in name order.
    pub(super) fn select(&self, sel: &Select) -> Vec<(String, String)> {
        self.out
            .last
            .claims
            .iter()
            .filter(|r| !r.instance_id.is_empty() && matches(sel, r))
            .map(|r| (r.name.clone(), r.instance_id.clone()))
            .take(sel.count.unwrap_or(usize::MAX))
            .collect()
    }
}

fn matches(sel: &Select, r: &super::ClaimRow) -> bool {
    let is = |want: &Option<String>, have: &str| want.as_deref().is_none_or(|w| w == have);
    !r.instance_type.is_empty()
        && is(&sel.instance_type, &r.instance_type)
        && is(&sel.zone, &r.zone)
        && is(&sel.capacity_type, &r.capacity_type)
        && is(&sel.node_pool, &r.node_pool)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{Count, Expect};

    #[test]
    fn a_step_line_says_its_condition_and_does_not_repeat_its_name() {
        let wait = Expect {
            running: Some(Count::Exactly(5)),
            pending: Some(Count::Exactly(0)),
            nodes: Some(Count::Range {
                min: Some(1),
                max: None,
            }),
            ..Expect::default()
        };
        let d = jiff::SignedDuration::from_mins(3);
        assert_eq!(
            describe(&Action::Until(&wait, d)),
            "wait until nodes>=1, pending=0, running=5 (at most 3m)"
        );
        let scale = "scale deployment/inflate --replicas 5";
        assert_eq!(
            titled(Some("kubectl scale deployment inflate --replicas 5"), scale),
            "kubectl scale deployment inflate --replicas 5"
        );
        assert_eq!(
            titled(Some("the second wave"), scale),
            "the second wave: scale deployment/inflate --replicas 5"
        );
        assert_eq!(titled(None, scale), scale);
    }
}
