//! What disruption planning reads beside scheduling: object conditions, NodePool disruption
//! settings and budgets, PodDisruptionBudgets and node classes.

use serde::Serialize;

use super::{LabelSelector, Timestamp};
use crate::requirements::SelectorRequirement;

/// A status condition's truth value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ConditionStatus {
    True,
    False,
    #[default]
    Unknown,
}

/// A status condition of a NodeClaim.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Condition {
    /// `Initialized`, `Drifted`, ... (see `kerf_labels::conditions`).
    pub kind: String,
    pub status: ConditionStatus,
    pub reason: String,
    /// `lastTransitionTime`.
    pub since: Timestamp,
}

/// Who owns a pod (its first owner reference).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum OwnerKind {
    /// No owner: a bare pod.
    #[default]
    None,
    DaemonSet,
    ReplicaSet,
    StatefulSet,
    Job,
    /// A Node: a mirror (static) pod.
    Node,
    Other,
}

impl OwnerKind {
    pub fn parse(kind: &str) -> OwnerKind {
        match kind {
            "DaemonSet" => OwnerKind::DaemonSet,
            "ReplicaSet" => OwnerKind::ReplicaSet,
            "StatefulSet" => OwnerKind::StatefulSet,
            "Job" => OwnerKind::Job,
            "Node" => OwnerKind::Node,
            _ => OwnerKind::Other,
        }
    }
}

/// `spec.disruption.consolidationPolicy`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub enum ConsolidationPolicy {
    WhenEmpty,
    #[default]
    WhenEmptyOrUnderutilized,
    /// Moves must save enough per unit of disruption (Karpenter's k = 2).
    Balanced,
}

/// The reasons a disruption budget can be limited to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum DisruptionReason {
    Empty,
    Drifted,
    Underutilized,
}

impl DisruptionReason {
    pub const ALL: [DisruptionReason; 3] = [
        DisruptionReason::Empty,
        DisruptionReason::Drifted,
        DisruptionReason::Underutilized,
    ];

    /// Karpenter's spelling (`Empty`, `Drifted`, `Underutilized`).
    pub fn as_str(self) -> &'static str {
        match self {
            DisruptionReason::Empty => "Empty",
            DisruptionReason::Drifted => "Drifted",
            DisruptionReason::Underutilized => "Underutilized",
        }
    }
}

/// `budgets[].nodes`: a count or a percentage of the pool's nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BudgetNodes {
    Count(u32),
    Percent(u32),
}

impl Default for BudgetNodes {
    fn default() -> Self {
        BudgetNodes::Percent(10)
    }
}

/// One disruption budget of a NodePool.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Budget {
    pub nodes: BudgetNodes,
    /// Cron schedule (UTC) opening the budget's window; `None` = always active.
    pub schedule: Option<String>,
    /// Window length in seconds (set together with `schedule`).
    pub duration: Option<i64>,
    /// Reasons it applies to; empty = all.
    pub reasons: Vec<DisruptionReason>,
}

/// A NodePool's `spec.disruption`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolDisruption {
    pub policy: ConsolidationPolicy,
    /// `consolidateAfter` in seconds; `None` is `Never` (no consolidation, no emptiness).
    pub consolidate_after: Option<i64>,
    pub budgets: Vec<Budget>,
}

impl Default for PoolDisruption {
    /// Karpenter's defaults: WhenEmptyOrUnderutilized, `0s`, one budget of 10%.
    fn default() -> Self {
        PoolDisruption {
            policy: ConsolidationPolicy::default(),
            consolidate_after: Some(0),
            budgets: vec![Budget::default()],
        }
    }
}

/// A PodDisruptionBudget as the API server reports it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pdb {
    pub namespace: String,
    pub name: String,
    /// `None` (no selector) selects no pod; an empty selector selects every pod of the
    /// namespace.
    pub selector: Option<LabelSelector>,
    /// `status.disruptionsAllowed`.
    pub disruptions_allowed: i32,
    /// `unhealthyPodEvictionPolicy: AlwaysAllow`: pods that are not Ready are never blocked.
    pub unhealthy_always_allow: bool,
    /// `maxUnavailable: 0` (or `0%`), or `minAvailable: 100%`: the budget never allows an
    /// eviction, whatever its pods' state.
    pub blocks_all: bool,
}

/// An AMI a node class currently selects and the instance types it serves.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ami {
    pub id: String,
    pub requirements: Vec<SelectorRequirement>,
}

/// An EC2NodeClass as drift reads it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeClass {
    pub name: String,
    /// Kerf's hash of the drift-relevant spec (`kerf_convert::hash::nodeclass_hash`).
    pub hash: String,
    /// The version of that hash (`kerf_labels::aws::KERF_EC2NODECLASS_HASH_VERSION`).
    pub hash_version: String,
    /// `status.amis`, newest first; empty when unknown (no AMI drift then).
    pub amis: Vec<Ami>,
    /// `status.subnets` ids; empty when unknown.
    pub subnets: Vec<String>,
    /// `status.securityGroups` ids; empty when unknown.
    pub security_groups: Vec<String>,
    /// `status.capacityReservations` ids (an instance in any other reservation drifted).
    pub capacity_reservations: Vec<String>,
    /// The placement group `spec.placementGroupSelector` resolves to now.
    pub placement_group: ResolvedPlacementGroup,
}

/// The placement group a node class resolves to now, as drift reads it (there is no status
/// field for it: the cloud resolves it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ResolvedPlacementGroup {
    /// Not known (nothing asked the cloud): no placement-group drift.
    #[default]
    Unknown,
    /// The class selects no group.
    NoGroup,
    /// The id (`pg-...`) of the group the class selects.
    Group(String),
}

impl ResolvedPlacementGroup {
    /// The group's id, when one is known to be selected.
    pub fn id(&self) -> Option<&str> {
        match self {
            ResolvedPlacementGroup::Group(id) => Some(id),
            _ => None,
        }
    }
}
