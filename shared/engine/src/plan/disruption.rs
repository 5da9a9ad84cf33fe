//! The disruption half of a plan: the commands Kerf would run (which NodeClaims go, what
//! replaces them, what it saves), why every other managed node stays, which claims drifted,
//! and what each NodePool's budgets allow now.

use serde::{Deserialize, Serialize};

use super::{Launch, Nomination};
use crate::model::DisruptionReason;

/// Why a command disrupts its nodes, spelt in the contract as `expired`, `empty`, `drifted` or
/// `underutilized`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CommandReason {
    Expired,
    Empty,
    Drifted,
    Underutilized,
}

impl CommandReason {
    /// The contract's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            CommandReason::Expired => "expired",
            CommandReason::Empty => "empty",
            CommandReason::Drifted => "drifted",
            CommandReason::Underutilized => "underutilized",
        }
    }

    /// The NodeClaim `DisruptionReason` condition's spelling (`Expired`, `Empty`, `Drifted`,
    /// `Underutilized`).
    pub fn condition_reason(self) -> &'static str {
        match self {
            CommandReason::Expired => "Expired",
            CommandReason::Empty => "Empty",
            CommandReason::Drifted => "Drifted",
            CommandReason::Underutilized => "Underutilized",
        }
    }

    /// Reads [`CommandReason::condition_reason`]'s spelling.
    pub fn from_condition_reason(s: &str) -> Option<Self> {
        [
            CommandReason::Expired,
            CommandReason::Empty,
            CommandReason::Drifted,
            CommandReason::Underutilized,
        ]
        .into_iter()
        .find(|r| r.condition_reason() == s)
    }
}

/// What a command does with its nodes: deletes them, or replaces them first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CommandAction {
    Delete,
    Replace,
}

impl CommandAction {
    /// The contract's spelling (`delete`, `replace`).
    pub fn as_str(self) -> &'static str {
        match self {
            CommandAction::Delete => "delete",
            CommandAction::Replace => "replace",
        }
    }
}

/// One disruption command: its candidates are tainted, its replacements launched, and the
/// candidates deleted once every replacement is initialized.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Disruption {
    /// `empty`, `underutilized`, `drifted` or `expired`.
    pub reason: CommandReason,
    /// `delete` or `replace`.
    pub action: CommandAction,
    pub node_claims: Vec<String>,
    /// The Node of each NodeClaim (same order).
    pub nodes: Vec<String>,
    /// The first of `replacements` (the contract's original field).
    pub replacement: Option<Launch>,
    /// Prices of the disrupted nodes minus the prices of the replacements.
    pub savings_per_hour: f64,
    /// Every replacement NodeClaim to launch before the candidates are deleted.
    pub replacements: Vec<Launch>,
    /// The method that planned it.
    pub method: Method,
    /// A stable identifier of the command (method, action and NodeClaims), for recording it
    /// on its candidates and recognising it on a later pass.
    pub id: String,
    /// The NodePool of each NodeClaim (same order).
    pub node_pools: Vec<String>,
    /// Hourly price of each disrupted node (same order; 0 when unknown).
    pub prices: Vec<f64>,
    /// Pods that must be rescheduled (`namespace/name`), sorted.
    pub pods: Vec<String>,
    /// Moved pods that land on existing nodes (the rest go to `replacements`).
    pub nominations: Vec<Nomination>,
    /// Why each NodeClaim drifted (drift commands only; same order).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub drift_reasons: Vec<DriftReason>,
    /// Karpenter's disruption cost of the candidates (eviction costs of their pods, scaled by
    /// the lifetime they have left).
    pub disruption_cost: f64,
}

impl Disruption {
    /// Karpenter's two-phase check: a command recorded on an earlier pass is confirmed by
    /// this freshly computed one when both disrupt the same NodeClaims the same way and, for a
    /// replacement, every instance type recorded is still an option now (so it is no more
    /// expensive).
    pub fn confirms(&self, recorded: &Disruption) -> bool {
        if self.id != recorded.id || self.replacements.len() != recorded.replacements.len() {
            return false;
        }
        self.replacements
            .iter()
            .zip(&recorded.replacements)
            .all(|(now, then)| {
                then.instance_type_options
                    .iter()
                    .all(|t| now.instance_type_options.contains(t))
            })
    }
}

/// Which method planned a command, in Karpenter's order (expiration is forceful and runs
/// beside them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Method {
    Expiration,
    Emptiness,
    Drift,
    MultiNodeConsolidation,
    SingleNodeConsolidation,
}

impl Method {
    /// How people call it: `expiration`, `emptiness`, `drift`, `consolidation`.
    pub fn name(self) -> &'static str {
        match self {
            Method::Expiration => "expiration",
            Method::Emptiness => "emptiness",
            Method::Drift => "drift",
            Method::MultiNodeConsolidation | Method::SingleNodeConsolidation => "consolidation",
        }
    }

    /// The contract's `reason` of its commands.
    pub fn reason(self) -> CommandReason {
        match self {
            Method::Expiration => CommandReason::Expired,
            Method::Emptiness => CommandReason::Empty,
            Method::Drift => CommandReason::Drifted,
            Method::MultiNodeConsolidation | Method::SingleNodeConsolidation => {
                CommandReason::Underutilized
            }
        }
    }

    /// The budget reason it spends (`None` for expiration, which budgets do not limit).
    pub fn budget_reason(self) -> Option<DisruptionReason> {
        match self {
            Method::Expiration => None,
            Method::Emptiness => Some(DisruptionReason::Empty),
            Method::Drift => Some(DisruptionReason::Drifted),
            Method::MultiNodeConsolidation | Method::SingleNodeConsolidation => {
                Some(DisruptionReason::Underutilized)
            }
        }
    }

    /// The NodeClaim `DisruptionReason` condition's reason (`Empty`, `Drifted`,
    /// `Underutilized`, `Expired`).
    pub fn condition_reason(self) -> &'static str {
        self.reason().condition_reason()
    }
}

/// Why a NodeClaim drifted, with Karpenter's condition reasons.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum DriftReason {
    /// The NodePool template hash differs (same hash version).
    NodePoolDrifted,
    /// The claim's labels no longer meet the NodePool's requirements.
    RequirementsDrifted,
    /// The instance type, or its offering in the claim's zone and capacity type, is gone.
    InstanceTypeNotFound,
    /// The EC2NodeClass hash differs (same hash version).
    #[serde(rename = "NodeClassDrift")]
    NodeClassDrift,
    /// The image is not the one the node class selects now for the instance type.
    #[serde(rename = "AMIDrift")]
    AmiDrift,
    /// The instance's subnet is no longer selected.
    SubnetDrift,
    /// The instance's security groups differ from those selected.
    SecurityGroupDrift,
    /// The instance runs in a capacity reservation the node class no longer selects.
    CapacityReservationDrift,
    /// The node's placement group (its `karpenter.k8s.aws/placement-group-id` label) is not
    /// the one the node class resolves to now.
    PlacementGroupDrift,
}

impl DriftReason {
    pub fn as_str(self) -> &'static str {
        match self {
            DriftReason::NodePoolDrifted => "NodePoolDrifted",
            DriftReason::RequirementsDrifted => "RequirementsDrifted",
            DriftReason::InstanceTypeNotFound => "InstanceTypeNotFound",
            DriftReason::NodeClassDrift => "NodeClassDrift",
            DriftReason::AmiDrift => "AMIDrift",
            DriftReason::SubnetDrift => "SubnetDrift",
            DriftReason::SecurityGroupDrift => "SecurityGroupDrift",
            DriftReason::CapacityReservationDrift => "CapacityReservationDrift",
            DriftReason::PlacementGroupDrift => "PlacementGroupDrift",
        }
    }
}

/// A NodeClaim found drifted (whether or not it is disrupted this pass), so the control layer
/// can set its `Drifted` condition.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Drifted {
    pub node_claim: String,
    pub reason: DriftReason,
}

/// A managed node that was considered and is not disrupted, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Skipped {
    pub node_claim: String,
    pub node: String,
    pub node_pool: String,
    /// Why, in words a user understands.
    pub reason: String,
    pub kind: SkipKind,
}

/// Why a managed node is not disrupted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum SkipKind {
    /// Its NodeClaim is not initialized yet.
    NotInitialized,
    /// It is already being deleted or disrupted.
    Deleting,
    /// Its NodePool is not in the snapshot.
    NoNodePool,
    /// The provisioner counts on it for pods it nominated.
    Nominated,
    /// The node, or one of its pods, has `karpenter.sh/do-not-disrupt`.
    DoNotDisrupt,
    /// Evicting one of its pods would violate a PodDisruptionBudget.
    Pdb,
    /// Its NodePool's disruption budget allows no more disruptions now.
    Budget,
    /// `consolidateAfter` has not passed since its last pod event.
    NotConsolidatable,
    /// `consolidateAfter: Never`.
    ConsolidationDisabled,
    /// Its NodePool only consolidates empty nodes (`WhenEmpty`).
    WhenEmpty,
    /// Its NodePool is static (`replicas`).
    StaticPool,
    /// Its instance type or offering is not in the catalog, so its price is unknown.
    UnknownPrice,
    /// Its pods fit elsewhere only on a node that costs as much or more.
    NoCheaperOption,
    /// Some of its pods would not fit anywhere else.
    PodsDoNotFit,
    /// The saving is too small for the disruption it causes (`Balanced`).
    NotWorthDisruption,
    /// An earlier method planned commands this pass; it is considered on a later pass.
    Deferred,
    /// A move that saves more per unit of disruption was chosen.
    NotChosen,
    /// Nothing to do: it is not empty, not drifted, not expired, and no move saves money.
    Nothing,
}

impl SkipKind {
    /// Whether it blocks every method (the control layer's `DisruptionBlocked` Event), not
    /// only consolidation (its `Unconsolidatable` Event).
    pub fn blocks_every_method(self) -> bool {
        matches!(
            self,
            SkipKind::Nominated
                | SkipKind::DoNotDisrupt
                | SkipKind::Pdb
                | SkipKind::Budget
                | SkipKind::NotInitialized
                | SkipKind::Deleting
                | SkipKind::NoNodePool
        )
    }
}

/// What one NodePool's budgets allow now, per reason (Karpenter's
/// `karpenter_nodepools_allowed_disruptions`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolBudget {
    pub node_pool: String,
    pub reason: DisruptionReason,
    /// Disruptions allowed now, after those already under way.
    pub allowed: u32,
    /// Managed, initialized nodes of the pool that are not terminating.
    pub nodes: u32,
    /// Of those, nodes NotReady or being deleted (they count against every reason).
    pub disrupting: u32,
}

#[cfg(test)]
mod tests {
    use super::{CommandAction, CommandReason};

    #[test]
    fn a_command_reason_and_action_are_written_as_the_contract_spells_them() {
        let reasons = [
            CommandReason::Expired,
            CommandReason::Empty,
            CommandReason::Drifted,
            CommandReason::Underutilized,
        ];
        for r in reasons {
            assert_eq!(serde_json::to_value(r).unwrap(), r.as_str());
        }
        for a in [CommandAction::Delete, CommandAction::Replace] {
            assert_eq!(serde_json::to_value(a).unwrap(), a.as_str());
        }
        let spelt: Vec<&str> = reasons.iter().map(|r| r.as_str()).collect();
        assert_eq!(spelt, ["expired", "empty", "drifted", "underutilized"]);
    }
}
