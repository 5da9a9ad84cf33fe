//! The census of managed nodes: every NodeClaim with a Node, what disrupting it would cost
//! and save, and what blocks it (Karpenter's `NewCandidate` and `ValidateNodeDisruptable`),
//! plus the node counts budgets are computed from.

use std::collections::BTreeMap;

use kerf_labels::conditions::{DISRUPTION_REASON, INITIALIZED};
use kerf_labels::{CAPACITY_TYPE, DISRUPTED_TAINT, DO_NOT_DISRUPT, INSTANCE_TYPE, ZONE};
use rustc_hash::FxHashMap;

use super::budgets::PoolCount;
use super::drift::drift;
use super::pods::{do_not_disrupt, eviction_cost, is_evictable, is_reschedulable, pdb_block};
use crate::model::{Node, NodeClaim, NodePool, Snapshot, Timestamp};
use crate::plan::{DriftReason, SkipKind, Skipped};
use crate::time::format_rfc3339;

/// Why a node may not be disrupted: the kind and the words.
pub type Block = (SkipKind, String);

/// A managed, initialized node that is not already going away.
#[derive(Clone, Debug)]
pub struct Candidate<'a> {
    pub claim: &'a NodeClaim,
    pub node: &'a Node,
    pub pool: &'a NodePool,
    /// The pods bound to it that must be rescheduled elsewhere.
    pub movable: Vec<usize>,
    /// Hourly price of its offering, when the catalog knows it.
    pub price: Option<f64>,
    /// Karpenter's `RescheduleDisruptionCost`: 1 + the positive eviction costs of `movable`.
    pub reschedule_cost: f64,
    /// Karpenter's `DisruptionCost`: eviction costs of every pod times the lifetime left.
    pub disruption_cost: f64,
    /// When `consolidateAfter` has passed since its last pod event (`None`: never).
    pub consolidatable_at: Option<Timestamp>,
    pub drift: Option<DriftReason>,
    /// When it drifted (the `Drifted` condition's time, or now when newly found).
    pub drift_since: Timestamp,
    /// When `expireAfter` runs out (`None`: never).
    pub expires_at: Option<Timestamp>,
    /// What stops every graceful method: nomination, the node's do-not-disrupt.
    pub node_block: Option<Block>,
    /// What its pods forbid: do-not-disrupt pods, PodDisruptionBudgets.
    pub pod_block: Option<Block>,
}

impl Candidate<'_> {
    pub fn name(&self) -> &str {
        &self.claim.name
    }

    /// Karpenter's `IsEmpty`: no pod whose rescheduling costs anything.
    pub fn is_empty(&self) -> bool {
        self.reschedule_cost <= 1.0
    }

    /// Price per unit of disruption (Karpenter's `SavingsRatio`).
    pub fn savings_ratio(&self) -> f64 {
        self.price.unwrap_or(0.0) / self.reschedule_cost
    }

    /// Its `karpenter.sh/capacity-type`.
    pub fn capacity_type(&self) -> Option<&str> {
        label(self.claim, self.node, CAPACITY_TYPE).map(String::as_str)
    }

    /// Its `node.kubernetes.io/instance-type`.
    pub fn instance_type(&self) -> Option<&str> {
        label(self.claim, self.node, INSTANCE_TYPE).map(String::as_str)
    }

    /// A termination grace period bounds its drain, so drift may ignore pod-level blocks.
    pub fn drain_is_bounded(&self) -> bool {
        self.claim.termination_grace_period.is_some()
    }

    pub fn skipped(&self, (kind, reason): Block) -> Skipped {
        Skipped {
            node_claim: self.claim.name.clone(),
            node: self.node.name.clone(),
            node_pool: self.pool.name.clone(),
            reason,
            kind,
        }
    }
}

/// Every managed node, sorted out.
#[derive(Debug, Default)]
pub struct Census<'a> {
    pub candidates: Vec<Candidate<'a>>,
    /// Managed nodes that are not candidates at all, and why.
    pub skipped: Vec<Skipped>,
    /// Budget counts per pool name.
    pub counts: BTreeMap<String, PoolCount>,
    /// Indices (into `snap.nodes`) of managed nodes already going away.
    pub going: Vec<usize>,
}

/// Sorts every NodeClaim with a Node into candidates and skipped nodes, sorted by name.
pub fn census(snap: &Snapshot) -> Census<'_> {
    let mut by_node: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
    for (i, p) in snap.pods.iter().enumerate() {
        if let Some(n) = &p.node_name
            && !p.is_terminal()
        {
            by_node.entry(n.as_str()).or_default().push(i);
        }
    }
    let nodes: FxHashMap<&str, usize> = snap
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.name.as_str(), i))
        .collect();
    let mut out = Census::default();
    for p in snap.node_pools.iter().filter(|p| p.active()) {
        out.counts.insert(p.name.clone(), PoolCount::default());
    }
    let mut claims: Vec<&NodeClaim> = snap.node_claims.iter().collect();
    claims.sort_by(|a, b| a.name.cmp(&b.name));
    for claim in claims {
        let Some(&ni) = claim.node_name.as_deref().and_then(|n| nodes.get(n)) else {
            continue;
        };
        let node = &snap.nodes[ni];
        let pods = by_node.remove(node.name.as_str()).unwrap_or_default();
        sort(snap, claim, node, ni, pods, &mut out);
    }
    out
}

fn sort<'a>(
    snap: &'a Snapshot,
    claim: &'a NodeClaim,
    node: &'a Node,
    ni: usize,
    pods: Vec<usize>,
    out: &mut Census<'a>,
) {
    let pool = snap
        .node_pools
        .iter()
        .find(|p| p.name == claim.node_pool && p.active());
    let skip = |kind, reason: String| Skipped {
        node_claim: claim.name.clone(),
        node: node.name.clone(),
        node_pool: claim.node_pool.clone(),
        reason,
        kind,
    };
    let initialized = initialized_since(claim, node);
    let going = is_going(claim, node);
    if let (Some(c), Some(_)) = (out.counts.get_mut(&claim.node_pool), initialized) {
        c.nodes += 1;
        if going || !node.ready {
            c.disrupting += 1;
        }
    }
    if going {
        out.going.push(ni);
        out.skipped.push(skip(
            SkipKind::Deleting,
            "it is already being disrupted or deleted".into(),
        ));
        return;
    }
    let Some(since) = initialized else {
        out.skipped.push(skip(
            SkipKind::NotInitialized,
            "its NodeClaim is not initialized yet".into(),
        ));
        return;
    };
    let Some(pool) = pool else {
        let why = format!("its NodePool {:?} does not exist", claim.node_pool);
        out.skipped.push(skip(SkipKind::NoNodePool, why));
        return;
    };
    out.candidates
        .push(candidate(snap, claim, node, pool, pods, since));
}

/// When the claim became initialized (its condition, or its creation when only the node's
/// `karpenter.sh/initialized` label says so); `None` when it is not.
fn initialized_since(claim: &NodeClaim, node: &Node) -> Option<Timestamp> {
    if claim.is_true(INITIALIZED) {
        return claim.condition(INITIALIZED).map(|c| c.since);
    }
    let labelled = node
        .labels
        .get(kerf_labels::INITIALIZED)
        .is_some_and(|v| v == "true");
    (labelled && claim.condition(INITIALIZED).is_none()).then_some(claim.created)
}

/// Being deleted, or owned by a disruption command already.
fn is_going(claim: &NodeClaim, node: &Node) -> bool {
    claim.deleting
        || node.deleting
        || claim.is_true(DISRUPTION_REASON)
        || node.taints.iter().any(|t| t.key == DISRUPTED_TAINT)
}

fn candidate<'a>(
    snap: &'a Snapshot,
    claim: &'a NodeClaim,
    node: &'a Node,
    pool: &'a NodePool,
    pods: Vec<usize>,
    initialized: Timestamp,
) -> Candidate<'a> {
    let now = snap.now;
    let movable: Vec<usize> = pods
        .iter()
        .copied()
        .filter(|&i| is_reschedulable(&snap.pods[i]))
        .collect();
    let reschedule_cost = 1.0
        + movable
            .iter()
            .map(|&i| eviction_cost(&snap.pods[i]).max(0.0))
            .sum::<f64>();
    let lifetime = claim.expire_after.filter(|e| *e > 0).map_or(1.0, |e| {
        ((e - (now - claim.created)) as f64 / e as f64).clamp(0.0, 1.0)
    });
    let eviction: f64 = pods
        .iter()
        .filter(|&&i| !snap.pods[i].terminating)
        .map(|&i| eviction_cost(&snap.pods[i]))
        .sum();
    let class = snap
        .node_classes
        .iter()
        .find(|c| c.name == claim.node_class);
    let drift = drift(claim, &node.labels, pool, class, now);
    let drift_since = claim
        .condition(kerf_labels::conditions::DRIFTED)
        .filter(|_| claim.is_true(kerf_labels::conditions::DRIFTED))
        .map_or(now, |c| c.since);
    let price = price(claim, node, pool);
    let last_event = claim.last_pod_event.unwrap_or(initialized).max(initialized);
    Candidate {
        claim,
        node,
        pool,
        pod_block: pod_block(snap, &pods),
        movable,
        price,
        reschedule_cost,
        disruption_cost: eviction * lifetime,
        consolidatable_at: pool.disruption.consolidate_after.map(|a| last_event + a),
        drift,
        drift_since,
        expires_at: claim.expire_after.map(|e| claim.created + e),
        node_block: node_block(claim, node, now),
    }
}

/// The label of the claim, or of its node.
fn label<'a>(claim: &'a NodeClaim, node: &'a Node, key: &str) -> Option<&'a String> {
    claim.labels.get(key).or_else(|| node.labels.get(key))
}

/// The price of the node's offering (whatever its availability now).
fn price(claim: &NodeClaim, node: &Node, pool: &NodePool) -> Option<f64> {
    let (Some(it), Some(zone), Some(ct)) = (
        label(claim, node, INSTANCE_TYPE),
        label(claim, node, ZONE),
        label(claim, node, CAPACITY_TYPE),
    ) else {
        return None;
    };
    pool.catalog
        .instance_types
        .iter()
        .find(|t| &t.name == it)
        .and_then(|t| {
            t.offerings
                .iter()
                .find(|o| &o.zone == zone && o.capacity_type.as_str() == ct)
        })
        .map(|o| o.price)
}

fn node_block(claim: &NodeClaim, node: &Node, now: Timestamp) -> Option<Block> {
    if node
        .annotations
        .get(DO_NOT_DISRUPT)
        .is_some_and(|v| v == "true")
    {
        return Some((
            SkipKind::DoNotDisrupt,
            format!("node {} has karpenter.sh/do-not-disrupt", node.name),
        ));
    }
    match claim.nominated_until {
        Some(t) if t > now => Some((
            SkipKind::Nominated,
            format!(
                "the provisioner nominated pods to it until {}",
                format_rfc3339(t)
            ),
        )),
        _ => None,
    }
}

fn pod_block(snap: &Snapshot, pods: &[usize]) -> Option<Block> {
    for &i in pods {
        let p = &snap.pods[i];
        if let Some(until) = do_not_disrupt(p, snap.now) {
            let when = until.map_or(String::new(), |t| format!(" until {}", format_rfc3339(t)));
            return Some((
                SkipKind::DoNotDisrupt,
                format!("pod {} has karpenter.sh/do-not-disrupt{when}", p.key()),
            ));
        }
    }
    pods.iter()
        .map(|&i| &snap.pods[i])
        .filter(|p| is_evictable(p))
        .find_map(|p| pdb_block(p, &snap.pdbs))
        .map(|why| (SkipKind::Pdb, why))
}
