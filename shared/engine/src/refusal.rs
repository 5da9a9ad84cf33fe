//! Why a NodePool refuses to open a new NodeClaim for a pod; shown to users as the pod's
//! unschedulable reason.

use crate::model::Taint;
use crate::pools::PoolUnusable;
use crate::requirements::Conflict;

/// Why no NodePool opens a new claim for a pod.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Unplaceable {
    #[error("no nodepools are defined")]
    NoNodePools,
    /// Every pool refused, in the order they were tried.
    #[error("{}", join(.0))]
    Refused(Vec<PoolRefusal>),
}

/// One pool's refusal.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("nodepool {pool:?}: {why}")]
pub struct PoolRefusal {
    pub pool: String,
    pub why: Refusal,
}

/// Why one NodePool cannot open a claim for a pod.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Refusal {
    #[error("{0}")]
    Unusable(PoolUnusable),
    #[error("is static (spec.replicas): it launches only to keep its replica count")]
    Static,
    #[error("required node affinity matchFields on metadata.name only matches existing nodes")]
    MatchFields,
    #[error("did not tolerate taint {}={}:{:?}", .0.key, .0.value, .0.effect)]
    Untolerated(Taint),
    #[error("incompatible requirements, {0}")]
    Incompatible(Conflict),
    /// No instance type satisfies the pool's and the pod's requirements (the explanation
    /// names the requirement no type meets).
    #[error("{0}")]
    NoCompatibleType(String),
    /// No compatible type holds the pod; `requests` are those that do not fit.
    #[error("no instance type has enough resources for {requests}")]
    TooSmall { requests: String },
    /// Every fitting type breaks the limits; `cost_left` is the dollar limit's remainder
    /// when it is what every fitting type breaks.
    #[error("all instance types that fit would exceed the nodepool limits{}", cost_note(*.cost_left))]
    OverLimits { cost_left: Option<f64> },
    #[error("its capacity reservations are held in full by other claims")]
    ReservationsHeld,
    #[error("minValues cannot be satisfied")]
    MinValues,
    /// A topology constraint admits no domain (described with its group).
    #[error("{0}")]
    Topology(String),
    #[error("anti-affinity of existing pods on {key} excludes every domain")]
    AntiAffinity { key: String },
    #[error("no instance type is offered in the chosen topology domain")]
    NotOffered,
}

fn join(refusals: &[PoolRefusal]) -> String {
    refusals
        .iter()
        .map(PoolRefusal::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

fn cost_note(left: Option<f64>) -> String {
    left.map(|l| format!(" (kerf.dev/max-cost-per-hour: ${l:.4}/hour left)"))
        .unwrap_or_default()
}
