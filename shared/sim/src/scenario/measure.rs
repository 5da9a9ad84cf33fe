//! What a run is measured by beside its cost, the same way on every cluster: how long a pod
//! waited from its creation until it ran (its kubelet's `Ready` transition), how long a node that could be
//! disrupted (its `Consolidatable` or `Drifted` condition true) lasted until it was gone,
//! how long a pod waited for the NodeClaim launched for it (its `Nominated` Event names the
//! NodeClaim, as Karpenter's and Kerf's do: the decision's latency, without boot or
//! kube-scheduler), how long a NodeClaim took to become an initialized node (launch, boot,
//! registration), disruptions by reason (`DisruptionTerminating` Events on NodeClaims),
//! pods evicted (`Evicted` Events), and pods lost: still on a Node when its instance went away.

use std::collections::{BTreeMap, BTreeSet};

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{Event, Pod};
use kerf_api::v1::{ConditionStatus, NodeClaim};
use kerf_control::ports::EventReason;
use kerf_labels::conditions;

use crate::karpenter::process::Usage;

/// The conditions that make a NodeClaim a disruption candidate.
const DISRUPTABLE: [&str; 2] = [conditions::CONSOLIDATABLE, conditions::DRIFTED];
/// The disruptions those conditions lead to (an expiry is timed by `expireAfter`, not by
/// them).
const BY_CONDITION: [&str; 3] = ["Underutilized", "Empty", "Drifted"];

/// Measurements accumulated over a run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Measures {
    /// Seconds from each pod's creation until it ran (Ready, else first seen running).
    pub pod_start: Vec<f64>,
    /// Seconds from a disrupted NodeClaim becoming disruptable until it was gone.
    pub to_removal: Vec<f64>,
    /// Seconds from a pod's creation until the NodeClaim launched for it was created (pods
    /// nominated to a NodeClaim created before them are not counted: none was launched for
    /// them).
    pub to_launch: Vec<f64>,
    /// Seconds from each NodeClaim's creation until its node was initialized (its
    /// `Initialized` condition true: launched, registered, Ready, startup taints gone).
    pub to_initialized: Vec<f64>,
    /// Disruptions started, by reason (`Underutilized`, `Empty`, `Drifted`, …).
    pub disruptions: BTreeMap<String, usize>,
    /// Pods evicted.
    pub evicted: usize,
    /// Pods (by UID) that were still on a Node when its instance went away.
    pub lost: BTreeSet<String>,
    /// What the deciding side used (a real control plane's runs only).
    pub usage: Option<UsageSeen>,
    disruptable_since: BTreeMap<String, Timestamp>,
    disrupted: BTreeSet<String>,
    /// The NodeClaims disrupted for a reason their conditions time.
    by_condition: BTreeSet<String>,
    /// Each NodeClaim's creation.
    created: BTreeMap<String, Timestamp>,
    /// The NodeClaim each pod (by UID, else name) was first nominated to.
    nominated: BTreeMap<String, String>,
    /// The NodeClaims whose initialization is counted.
    initialized: BTreeSet<String>,
}

/// When `c`'s `Initialized` condition turned true.
fn initialized_at(c: &NodeClaim) -> Option<Timestamp> {
    c.status
        .as_ref()?
        .conditions
        .iter()
        .find(|k| k.status == ConditionStatus::True && k.type_ == conditions::INITIALIZED)?
        .last_transition_time
        .parse()
        .ok()
}

fn since(c: &NodeClaim) -> Option<Timestamp> {
    c.status
        .as_ref()?
        .conditions
        .iter()
        .filter(|k| k.status == ConditionStatus::True && DISRUPTABLE.contains(&k.type_.as_str()))
        .filter_map(|k| k.last_transition_time.parse::<Timestamp>().ok())
        .min()
}

impl Measures {
    /// Notes when each NodeClaim became disruptable.
    pub fn claims(&mut self, claims: &[NodeClaim]) {
        for c in claims {
            let Some(name) = c.metadata.name.as_deref() else {
                continue;
            };
            if let Some(t) = &c.metadata.creation_timestamp {
                self.created.entry(name.to_string()).or_insert(t.0);
                if let Some(i) = initialized_at(c)
                    && self.initialized.insert(name.to_string())
                {
                    self.to_initialized
                        .push(i.duration_since(t.0).as_secs_f64().max(0.0));
                }
            }
            match since(c) {
                Some(t) => {
                    self.disruptable_since.entry(name.to_string()).or_insert(t);
                }
                // Once a disruption took it, the pods it loses do not make it new again.
                None if c.metadata.deletion_timestamp.is_none()
                    && !self.disrupted.contains(name) =>
                {
                    self.disruptable_since.remove(name);
                }
                None => {}
            }
        }
    }

    /// Pods stranded on Nodes whose instance is gone.
    pub fn stranded(&mut self, uids: &[String]) {
        self.lost.extend(uids.iter().cloned());
    }

    /// A NodeClaim is gone at `at`.
    pub fn gone(&mut self, at: Timestamp, name: &str) {
        let since = self.disruptable_since.remove(name);
        if let Some(t) = since.filter(|_| self.by_condition.contains(name)) {
            self.to_removal
                .push(at.duration_since(t).as_secs_f64().max(0.0));
        }
    }

    /// A new Event.
    pub fn event(&mut self, e: &Event) {
        match e.reason.as_deref().and_then(EventReason::parse) {
            Some(EventReason::Evicted) => self.evicted += 1,
            Some(EventReason::Nominated) if e.involved_object.kind.as_deref() == Some("Pod") => {
                let msg = e.message.as_deref().unwrap_or_default();
                if let Some(claim) = msg.split("nodeclaim/").nth(1) {
                    let claim = claim.split_whitespace().next().unwrap_or_default();
                    self.nominated
                        .entry(pod_key(&e.involved_object))
                        .or_insert_with(|| claim.to_string());
                }
            }
            Some(EventReason::DisruptionTerminating)
                if e.involved_object.kind.as_deref() == Some("NodeClaim") =>
            {
                let name = e.involved_object.name.clone().unwrap_or_default();
                if self.disrupted.insert(name.clone()) {
                    let why = reason(e.message.as_deref().unwrap_or_default());
                    if BY_CONDITION.contains(&why.as_str()) {
                        self.by_condition.insert(name);
                    }
                    *self.disruptions.entry(why).or_default() += 1;
                }
            }
            _ => {}
        }
    }

    /// A pod is seen running for the first time at `at`: it started when its kubelet said it
    /// became Ready (its `Ready` condition's transition), else when it was seen, so that how
    /// often the cluster is looked at does not count.
    pub fn running(&mut self, at: Timestamp, p: &Pod) {
        let Some(t) = p.metadata.creation_timestamp.as_ref().map(|t| t.0) else {
            return;
        };
        let ready = ready_since(p).filter(|r| *r <= at).unwrap_or(at);
        self.pod_start
            .push(ready.duration_since(t).as_secs_f64().max(0.0));
        let key = p.metadata.uid.clone().or_else(|| p.metadata.name.clone());
        let launched = key
            .and_then(|k| self.nominated.get(&k))
            .and_then(|c| self.created.get(c))
            .filter(|&&c| c >= t);
        if let Some(c) = launched {
            self.to_launch.push(c.duration_since(t).as_secs_f64());
        }
    }
}

/// When `p`'s `Ready` condition last turned true.
fn ready_since(p: &Pod) -> Option<Timestamp> {
    p.status
        .as_ref()?
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == "Ready" && c.status == "True")?
        .last_transition_time
        .as_ref()
        .map(|t| t.0)
}

/// A pod's key in `nominated`: its UID, else its name.
fn pod_key(o: &k8s_openapi::api::core::v1::ObjectReference) -> String {
    o.uid.clone().or_else(|| o.name.clone()).unwrap_or_default()
}

/// CPU is averaged over windows this long for its peak.
const CPU_WINDOW: SignedDuration = SignedDuration::from_secs(10);

/// What the deciding side used over a run.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct UsageSeen {
    pub cpu_seconds: f64,
    /// The most CPU used in any 10 s window, in cores.
    pub peak_cores: f64,
    pub peak_rss: u64,
    window: Option<(Timestamp, f64)>,
}

impl Measures {
    /// What the deciding side has used by `at`.
    pub fn usage(&mut self, at: Timestamp, now: Usage) {
        let u = self.usage.get_or_insert_with(UsageSeen::default);
        u.cpu_seconds = now.cpu_seconds;
        u.peak_rss = u.peak_rss.max(now.peak_rss);
        match u.window {
            Some((t, cpu)) if at.duration_since(t) >= CPU_WINDOW => {
                let cores = (now.cpu_seconds - cpu) / at.duration_since(t).as_secs_f64();
                u.peak_cores = u.peak_cores.max(cores);
                u.window = Some((at, now.cpu_seconds));
            }
            Some(_) => {}
            None => u.window = Some((at, now.cpu_seconds)),
        }
    }
}

/// `Disrupting NodeClaim: Underutilized/Delete` → `Underutilized`.
fn reason(message: &str) -> String {
    let r = message.rsplit(": ").next().unwrap_or(message);
    r.split('/').next().unwrap_or(r).trim().to_string()
}

/// The `q` quantile (0–1) of `v`, nearest rank; `None` when empty.
pub fn quantile(v: &[f64], q: f64) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let rank = ((q * s.len() as f64).ceil() as usize).clamp(1, s.len());
    s.get(rank - 1).copied()
}

#[cfg(test)]
#[path = "measure_tests.rs"]
mod tests;
