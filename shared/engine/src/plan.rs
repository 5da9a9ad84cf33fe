//! The plan: what Kerf would launch, where pending pods would go, what it cannot place and
//! why, and what it would disrupt. Field names are the public `kerf plan` contract.

use serde::Serialize;

mod disruption;

pub use disruption::{
    CommandAction, CommandReason, Disruption, DriftReason, Drifted, Method, PoolBudget, SkipKind,
    Skipped,
};
pub use kerf_catalog::CapacityType;

use crate::requirements::SelectorRequirement;

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub launches: Vec<Launch>,
    pub nominations: Vec<Nomination>,
    pub unschedulable: Vec<Unschedulable>,
    pub disruptions: Vec<Disruption>,
    /// Managed nodes considered for disruption and left alone, with why (disrupt mode).
    pub skipped: Vec<Skipped>,
    /// NodeClaims found drifted, disrupted or not (disrupt mode).
    pub drifted: Vec<Drifted>,
    /// What each NodePool's budgets allow now, per reason (disrupt mode).
    pub budgets: Vec<PoolBudget>,
    pub summary: Summary,
    /// Each NodePool with a dollar limit (`kerf.dev/max-cost-per-hour`): the limit, what its
    /// NodeClaims cost now and what the plan's launches are charged (provision and all modes).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cost_limits: Vec<CostLimit>,
}

/// A NodePool's dollar limit and what counts against it, in USD per hour.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CostLimit {
    pub node_pool: String,
    /// The `kerf.dev/max-cost-per-hour` annotation.
    pub max_cost_per_hour: f64,
    /// Its existing NodeClaims (and Nodes without one), each at its offering's price.
    pub current_cost_per_hour: f64,
    /// The plan's launches in the pool, each at its most expensive option.
    pub planned_cost_per_hour: f64,
    /// The limit minus the current and planned costs.
    pub remaining_per_hour: f64,
}

/// One new NodeClaim.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Launch {
    pub node_claim: String,
    pub node_pool: String,
    pub instance_type: String,
    /// Serialized as `spot`, `on-demand` or `reserved`.
    pub capacity_type: CapacityType,
    pub zone: String,
    pub price: f64,
    pub instance_type_options: Vec<String>,
    pub requirements: Vec<SelectorRequirement>,
    pub pods: Vec<String>,
    /// Sum of the pods' requests plus DaemonSet overhead (`spec.resources.requests`).
    pub requests: std::collections::BTreeMap<String, String>,
    /// A requirement's `minValues` was lowered to what the options reach
    /// (`MIN_VALUES_POLICY=BestEffort`); the NodeClaim is annotated
    /// `karpenter.sh/nodeclaim-min-values-relaxed: "true"`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub min_values_relaxed: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Nomination {
    pub pod: String,
    pub node: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Unschedulable {
    pub pod: String,
    /// What failed, in words a user understands.
    pub reason: String,
    /// Which kind of failure it is (an addition to the contract's `pod` and `reason`).
    pub kind: ReasonKind,
}

/// Why a pending pod is not placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ReasonKind {
    /// Owned by a DaemonSet: placed by the DaemonSet controller.
    DaemonSetPod,
    /// Requires `karpenter.sh/nodepool DoesNotExist`: not managed by Kerf.
    NotManaged,
    /// Its node affinity cannot be read as requirements.
    InvalidNodeAffinity,
    /// No NodePool exists.
    NoNodePools,
    /// Every NodePool rejected it; the reason says why per pool.
    NoNodePoolFits,
    /// Its claim broke minValues once the options were truncated, or had no option left.
    ClaimDropped,
    /// The pod object itself is invalid (reported by the control layer).
    InvalidPod,
    /// Its NodeClaim could not be created or launched (reported by the control layer).
    LaunchFailed,
    /// No offering of its NodeClaim had capacity; retried on the next pass.
    CapacityUnavailable,
    /// A persistent volume claim it uses is not ready for scheduling (missing, unbound with
    /// `Immediate` binding, its volume or StorageClass missing); the reason names the claim.
    VolumeNotReady,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub pending_pods: usize,
    pub scheduled_pods: usize,
    pub unschedulable_pods: usize,
    pub new_node_claims: usize,
    pub new_hourly_cost: f64,
    /// Disruption commands planned.
    pub disruptions: usize,
    /// NodeClaims those commands disrupt.
    pub disrupted_node_claims: usize,
    /// Sum of the commands' `savingsPerHour`.
    pub savings_per_hour: f64,
}

impl Plan {
    pub fn new() -> Self {
        Plan {
            api_version: "kerf.dev/v1alpha1",
            kind: "Plan",
            ..Default::default()
        }
    }

    /// Total hourly price of the launches (never a negative zero: an empty float sum is
    /// -0.0, and adding +0.0 turns it into 0.0).
    pub fn cost(&self) -> f64 {
        self.launches.iter().map(|l| l.price).sum::<f64>() + 0.0
    }
}
