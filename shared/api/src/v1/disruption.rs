//! NodePool disruption settings: consolidation policy, consolidateAfter and budgets.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::NILLABLE_DURATION;

/// Which nodes consolidation may act on.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash, JsonSchema)]
pub enum ConsolidationPolicy {
    /// Only nodes without workload pods.
    WhenEmpty,
    /// Empty nodes and nodes whose pods fit elsewhere (or on a cheaper replacement).
    #[default]
    WhenEmptyOrUnderutilized,
    /// Like WhenEmptyOrUnderutilized, but a move must save enough to be worth the disruption.
    Balanced,
}

/// Why a node is being disrupted; budgets may be limited to some reasons.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum DisruptionReason {
    /// Consolidation of an underutilized node.
    Underutilized,
    /// Removal of an empty node.
    Empty,
    /// Replacement of a drifted node.
    Drifted,
}

/// The disruption block of a NodePool.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Disruption {
    /// How long a node must be consolidatable before it is consolidated, or `Never`.
    #[serde(default = "default_consolidate_after")]
    #[schemars(regex(pattern = NILLABLE_DURATION))]
    pub consolidate_after: String,
    /// Which nodes consolidation considers.
    #[serde(default)]
    pub consolidation_policy: ConsolidationPolicy,
    /// Limits on how many nodes may be disrupted at once; the most restrictive active one wins.
    #[serde(default = "default_budgets")]
    #[schemars(length(max = 50))]
    #[schemars(extend("x-kubernetes-validations" = [
        {"message": "'schedule' must be set with 'duration'",
         "rule": "self.all(x, has(x.schedule) == has(x.duration))"}
    ]))]
    pub budgets: Vec<Budget>,
}

impl Default for Disruption {
    fn default() -> Self {
        Self {
            consolidate_after: default_consolidate_after(),
            consolidation_policy: ConsolidationPolicy::default(),
            budgets: default_budgets(),
        }
    }
}

/// Karpenter's default `consolidateAfter`: immediately.
pub fn default_consolidate_after() -> String {
    "0s".to_string()
}

/// Karpenter's default budgets: one budget of 10%.
pub fn default_budgets() -> Vec<Budget> {
    vec![Budget::default()]
}

/// One disruption budget.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Budget {
    /// The reasons this budget applies to; empty means all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 50))]
    pub reasons: Vec<DisruptionReason>,
    /// Maximum nodes disrupted at once: a count or a percentage of the pool.
    #[serde(default = "default_budget_nodes")]
    #[schemars(regex(pattern = r"^((100|[0-9]{1,2})%|[0-9]+)$"))]
    pub nodes: String,
    /// Cron schedule (UTC) at which the budget becomes active.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(
        pattern = r"^(@(annually|yearly|monthly|weekly|daily|midnight|hourly))|((.+)\s(.+)\s(.+)\s(.+)\s(.+))$"
    ))]
    pub schedule: Option<String>,
    /// How long the budget stays active after each schedule hit (hours and minutes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$"))]
    pub duration: Option<String>,
}

impl Default for Budget {
    fn default() -> Self {
        Self {
            reasons: Vec::new(),
            nodes: default_budget_nodes(),
            schedule: None,
            duration: None,
        }
    }
}

/// Karpenter's default budget size.
pub fn default_budget_nodes() -> String {
    "10%".to_string()
}
