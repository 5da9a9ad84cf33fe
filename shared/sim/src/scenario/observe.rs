//! What a scenario sees of the world after each tick: the NodeClaims (as `kubectl get
//! nodeclaims` shows them), pending and running pods, cost per hour, Event reasons, and the
//! timeline lines (launches, deletions, disruptions, interruptions) since the last look.

use std::collections::{BTreeMap, BTreeSet};

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;
use kerf_api::v1::NodeClaim;
use kerf_catalog::CapacityType;
use kerf_control::claim;
use kerf_control::ports::EventReason;
use kerf_control::ports::cloud::instance_id;

use super::cluster::{Cluster, Snapshot};
use super::measure::Measures;
use crate::world::WorldError;

/// One NodeClaim, as `kubectl get nodeclaims` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimRow {
    pub name: String,
    pub instance_type: String,
    pub capacity_type: String,
    pub zone: String,
    pub node: String,
    pub ready: bool,
    pub node_pool: String,
    /// The instance id (the EC2 id, or the whole provider ID of another cloud; empty until
    /// launched).
    pub instance_id: String,
    pub created: Timestamp,
    /// USD per hour (0 until launched).
    pub price: f64,
}

/// The cluster at one moment.
#[derive(Debug, Clone, Default)]
pub struct Observation {
    pub at: Timestamp,
    /// NodeClaims not being deleted, by name.
    pub claims: Vec<ClaimRow>,
    pub pending: usize,
    pub running: usize,
    /// Pods seen running since the start (each pod once; replacements count again).
    pub placed: usize,
    /// NodeClaims launched since the start.
    pub launched: usize,
    /// Interruption messages handled since the start.
    pub interruptions: usize,
    /// Event reasons seen since the start, with counts.
    pub reasons: BTreeMap<String, usize>,
    /// Instances EC2 bills now (pending or running: draining nodes and orphans included),
    /// per `instance-type/capacity-type`.
    pub billed: BTreeMap<String, usize>,
    /// USD per hour of the instances EC2 bills now.
    pub billed_per_hour: f64,
    /// NodeClaims being deleted now.
    pub deleting: usize,
    /// Pods stranded now on a Node whose instance is gone.
    pub stranded: usize,
    /// Instances the cloud has yet to take back after its warning.
    pub reclaims_due: usize,
}

impl Observation {
    /// USD per hour of the nodes.
    pub fn cost_per_hour(&self) -> f64 {
        self.claims.iter().fold(0.0, |sum, c| sum + c.price)
    }

    /// Instances EC2 bills now.
    pub fn billed_instances(&self) -> usize {
        self.billed.values().sum()
    }

    /// Nodes per value of a field.
    pub fn by(&self, field: impl Fn(&ClaimRow) -> &String) -> BTreeMap<String, usize> {
        let mut out = BTreeMap::new();
        for c in &self.claims {
            *out.entry(field(c).clone()).or_default() += 1;
        }
        out
    }

    /// DisruptionTerminating Events seen: disruptions started.
    pub fn disruptions(&self) -> usize {
        self.reasons
            .get(EventReason::DisruptionTerminating.as_str())
            .copied()
            .unwrap_or(0)
    }

    /// Nodes per `instance-type/capacity-type`.
    pub fn shapes(&self) -> BTreeMap<String, usize> {
        let mut out = BTreeMap::new();
        for c in self.claims.iter().filter(|c| !c.instance_type.is_empty()) {
            *out.entry(format!("{}/{}", c.instance_type, c.capacity_type))
                .or_default() += 1;
        }
        out
    }
}

/// What a timeline line is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Launch,
    Delete,
    Disruption,
    Interruption,
    Step,
    Other,
}

/// One line of the timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelineEvent {
    pub at: Timestamp,
    pub kind: Kind,
    pub text: String,
}

/// Reasons worth a timeline line, and what they are.
const NOTABLE: [(EventReason, Kind); 5] = [
    (EventReason::DisruptionTerminating, Kind::Disruption),
    (EventReason::DisruptionLaunching, Kind::Disruption),
    (EventReason::InsufficientCapacityError, Kind::Other),
    (EventReason::SpotRebalanceRecommendation, Kind::Interruption),
    (EventReason::FailedDraining, Kind::Other),
];

/// Keeps what was already seen between looks.
#[derive(Debug, Default)]
pub struct Observer {
    announced: BTreeSet<String>,
    live: BTreeSet<String>,
    events: BTreeSet<String>,
    reasons: BTreeMap<String, usize>,
    placed: BTreeSet<String>,
    /// Latencies and counts for comparing runs.
    pub measures: Measures,
}

fn label(c: &NodeClaim, key: &str) -> String {
    c.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(key))
        .cloned()
        .unwrap_or_default()
}

fn row<C: Cluster>(w: &C, c: &NodeClaim) -> ClaimRow {
    let pid = claim::provider_id(c);
    let (it, ct, zone) = (
        label(c, kerf_labels::INSTANCE_TYPE),
        label(c, kerf_labels::CAPACITY_TYPE),
        label(c, kerf_labels::ZONE),
    );
    let price = CapacityType::parse(&ct)
        .filter(|_| pid.is_some())
        .and_then(|k| w.price(k, &it, &zone))
        .unwrap_or(0.0);
    ClaimRow {
        name: claim::name(c).to_string(),
        instance_type: it,
        capacity_type: ct,
        zone,
        node: c
            .status
            .as_ref()
            .and_then(|s| s.node_name.clone())
            .unwrap_or_default(),
        ready: claim::is_true(c, "Ready"),
        node_pool: claim::pool_name(c).unwrap_or_default().to_string(),
        instance_id: pid
            .map(|p| instance_id(p).unwrap_or(p))
            .unwrap_or_default()
            .to_string(),
        created: c
            .metadata
            .creation_timestamp
            .as_ref()
            .map(|t| t.0)
            .unwrap_or_default(),
        price,
    }
}

impl Observer {
    /// Looks at the world; returns what it sees and the timeline lines since the last look.
    pub async fn look<C: Cluster>(
        &mut self,
        w: &C,
    ) -> Result<(Observation, Vec<TimelineEvent>), WorldError> {
        let snap = w.snapshot().await?;
        let Snapshot {
            at,
            ref claims,
            ref pods,
            ref events,
            ..
        } = snap;
        self.measures.claims(claims);
        self.measures.stranded(&snap.stranded);
        let mut lines = Vec::new();
        let mut rows = Vec::new();
        let mut live = BTreeSet::new();
        for c in claims.iter() {
            let r = row(w, c);
            live.insert(r.name.clone());
            if !r.instance_type.is_empty() && self.announced.insert(r.name.clone()) {
                lines.push(TimelineEvent {
                    at,
                    kind: Kind::Launch,
                    text: format!(
                        "launched nodeclaim {} ({}, {}, {}, ${:.4}/h)",
                        r.name, r.instance_type, r.capacity_type, r.zone, r.price
                    ),
                });
            }
            if c.metadata.deletion_timestamp.is_none() {
                rows.push(r);
            }
        }
        for gone in self.live.difference(&live) {
            self.measures.gone(at, gone);
            lines.push(TimelineEvent {
                at,
                kind: Kind::Delete,
                text: format!("deleted nodeclaim {gone}"),
            });
        }
        self.live = live;
        for e in events.iter() {
            let name = e.metadata.name.clone().unwrap_or_default();
            let reason = e.reason.clone().unwrap_or_default();
            if !self.events.insert(name) {
                continue;
            }
            *self.reasons.entry(reason.clone()).or_default() += 1;
            self.measures.event(e);
            if let Some((_, kind)) = NOTABLE.iter().find(|(r, _)| r.as_str() == reason) {
                let what = e.involved_object.name.clone().unwrap_or_default();
                let msg = e.message.clone().unwrap_or_default();
                lines.push(TimelineEvent {
                    at,
                    kind: *kind,
                    text: format!("{reason} {what}: {msg}"),
                });
            }
        }
        let alive = |p: &&Pod| p.metadata.deletion_timestamp.is_none();
        let pending = pods
            .iter()
            .filter(alive)
            .filter(|p| p.spec.as_ref().is_none_or(|s| s.node_name.is_none()))
            .count();
        let is_running =
            |p: &&Pod| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running");
        let running = pods.iter().filter(alive).filter(is_running).count();
        for p in pods.iter().filter(is_running) {
            if let Some(uid) = &p.metadata.uid
                && self.placed.insert(uid.clone())
            {
                self.measures.running(at, p);
            }
        }
        let o = Observation {
            at,
            billed: snap.billed.clone(),
            billed_per_hour: snap.billed_per_hour,
            claims: rows,
            pending,
            running,
            placed: self.placed.len(),
            launched: self.announced.len(),
            interruptions: snap.interruptions,
            reasons: self.reasons.clone(),
            deleting: claims
                .iter()
                .filter(|c| c.metadata.deletion_timestamp.is_some())
                .count(),
            stranded: snap.stranded.len(),
            reclaims_due: snap.reclaims_due,
        };
        Ok((o, lines))
    }
}
