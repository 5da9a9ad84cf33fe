//! The Events Karpenter records when an interruption concerns one of its NodeClaims, on the
//! NodeClaim and on its Node (when it has one), with Karpenter's reasons, types and messages:
//! what `kubectl describe` shows a Karpenter user. Repeats are folded by the Event writer (one
//! Event per object and reason, its count bumped), and [`dedupe`] keeps one per object and
//! reason within a batch, as Karpenter's recorder dedupes by object and reason.

use std::collections::HashSet;

use k8s_openapi::api::core::v1::Node;
use kerf_api::v1::NodeClaim;

use super::events::Interruption;
use crate::events::{claim_object, node_object};
use crate::ports::{EventReason, EventSpec, EventType};

/// An interruption Event, by Karpenter's reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Notice {
    /// A spot interruption warning.
    SpotInterrupted,
    /// A capacity-reservation interruption warning.
    CapacityReservationInstanceInterrupted,
    /// A rebalance recommendation.
    SpotRebalanceRecommendation,
    /// The instance is stopping or stopped.
    InstanceStopping,
    /// The instance is shutting down or terminated.
    InstanceTerminating,
    /// An AWS Health scheduled change, a failed status check or a scheduled event.
    InstanceUnhealthy,
    /// The interruption started the NodeClaim's termination.
    TerminatingOnInterruption,
}

/// Which of the two objects an Event is recorded on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subject {
    NodeClaim,
    Node,
}

impl Notice {
    /// The Event a message records when it concerns a NodeClaim (before any action).
    pub fn of(i: &Interruption) -> Option<Notice> {
        Some(match i {
            Interruption::SpotInterrupted { .. } => Notice::SpotInterrupted,
            Interruption::CapacityReservationInterrupted { .. } => {
                Notice::CapacityReservationInstanceInterrupted
            }
            Interruption::RebalanceRecommendation { .. } => Notice::SpotRebalanceRecommendation,
            Interruption::InstanceStopped { .. } => Notice::InstanceStopping,
            Interruption::InstanceTerminated { .. } => Notice::InstanceTerminating,
            Interruption::ScheduledChange { .. } | Interruption::InstanceUnhealthy { .. } => {
                Notice::InstanceUnhealthy
            }
            Interruption::NoOp => return None,
        })
    }

    /// Karpenter's reason.
    pub fn reason(self) -> EventReason {
        match self {
            Notice::SpotInterrupted => EventReason::SpotInterrupted,
            Notice::CapacityReservationInstanceInterrupted => {
                EventReason::CapacityReservationInstanceInterrupted
            }
            Notice::SpotRebalanceRecommendation => EventReason::SpotRebalanceRecommendation,
            Notice::InstanceStopping => EventReason::InstanceStopping,
            Notice::InstanceTerminating => EventReason::InstanceTerminating,
            Notice::InstanceUnhealthy => EventReason::InstanceUnhealthy,
            Notice::TerminatingOnInterruption => EventReason::TerminatingOnInterruption,
        }
    }

    /// Karpenter's type: a rebalance recommendation is Normal, the rest are warnings.
    pub fn event_type(self) -> EventType {
        match self {
            Notice::SpotRebalanceRecommendation => EventType::Normal,
            _ => EventType::Warning,
        }
    }

    /// Karpenter's message on `subject`.
    pub fn message(self, subject: Subject) -> &'static str {
        match (self, subject) {
            (Notice::SpotInterrupted, _) => "Spot interruption warning was triggered",
            (Notice::CapacityReservationInstanceInterrupted, _) => {
                "Capacity Reservation interruption warning was triggered"
            }
            (Notice::SpotRebalanceRecommendation, _) => {
                "Spot rebalance recommendation was triggered"
            }
            (Notice::InstanceStopping, _) => "Instance is stopping",
            (Notice::InstanceTerminating, _) => "Instance is terminating",
            (Notice::InstanceUnhealthy, _) => "An unhealthy warning was triggered for the instance",
            (Notice::TerminatingOnInterruption, Subject::NodeClaim) => {
                "Interruption triggered termination for the NodeClaim"
            }
            (Notice::TerminatingOnInterruption, Subject::Node) => {
                "Interruption triggered termination for the Node"
            }
        }
    }

    /// The Events on the NodeClaim and, when it has one, its Node.
    pub fn events(self, claim: &NodeClaim, node: Option<&Node>) -> Vec<EventSpec> {
        let on = |involved, subject| EventSpec {
            involved,
            type_: self.event_type(),
            reason: self.reason(),
            message: self.message(subject).into(),
        };
        let mut out = vec![on(claim_object(claim), Subject::NodeClaim)];
        out.extend(node.map(|n| on(node_object(n), Subject::Node)));
        out
    }
}

/// `events` with one Event per object and reason (the first kept).
pub fn dedupe(events: Vec<EventSpec>) -> Vec<EventSpec> {
    let mut seen = HashSet::new();
    events
        .into_iter()
        .filter(|e| {
            let o = &e.involved;
            seen.insert((o.kind.clone(), o.name.clone(), e.reason))
        })
        .collect()
}

#[cfg(test)]
#[path = "notice_tests.rs"]
mod tests;
