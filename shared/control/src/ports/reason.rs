//! The reasons of the Kubernetes Events Kerf records, one variant each, spelt as Karpenter
//! spells them (what `kubectl get events` shows in its REASON column).

use std::fmt;

/// The `reason` of a Kubernetes Event Kerf records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventReason {
    /// A pending pod is nominated to a NodeClaim or Node it should schedule on.
    Nominated,
    /// No NodePool can schedule a pending pod.
    FailedScheduling,
    /// A launch found no capacity for any of its offerings.
    InsufficientCapacityError,
    /// A node cannot be disrupted (do-not-disrupt, a PDB, a budget, ...).
    DisruptionBlocked,
    /// A node cannot be consolidated.
    Unconsolidatable,
    /// A disruption is launching replacements.
    DisruptionLaunching,
    /// A disruption is terminating the node.
    DisruptionTerminating,
    /// Too many nodes are unhealthy for one to be repaired.
    NodeRepairBlocked,
    /// A pod was evicted from a draining node.
    Evicted,
    /// A drain could not evict a pod (e.g. a PDB refused).
    FailedDraining,
    /// A node waits for its volume attachments to go before it is deleted.
    AwaitingVolumeDetachment,
    /// A spot interruption warning.
    SpotInterrupted,
    /// A capacity reservation interruption warning.
    CapacityReservationInstanceInterrupted,
    /// A spot rebalance recommendation.
    SpotRebalanceRecommendation,
    /// The instance is stopping.
    InstanceStopping,
    /// The instance is terminating.
    InstanceTerminating,
    /// An unhealthy warning for the instance (a scheduled change or a health event).
    InstanceUnhealthy,
    /// An interruption is terminating the NodeClaim or Node.
    TerminatingOnInterruption,
}

impl EventReason {
    /// Every reason, in declaration order.
    pub const ALL: [EventReason; 18] = [
        EventReason::Nominated,
        EventReason::FailedScheduling,
        EventReason::InsufficientCapacityError,
        EventReason::DisruptionBlocked,
        EventReason::Unconsolidatable,
        EventReason::DisruptionLaunching,
        EventReason::DisruptionTerminating,
        EventReason::NodeRepairBlocked,
        EventReason::Evicted,
        EventReason::FailedDraining,
        EventReason::AwaitingVolumeDetachment,
        EventReason::SpotInterrupted,
        EventReason::CapacityReservationInstanceInterrupted,
        EventReason::SpotRebalanceRecommendation,
        EventReason::InstanceStopping,
        EventReason::InstanceTerminating,
        EventReason::InstanceUnhealthy,
        EventReason::TerminatingOnInterruption,
    ];

    /// The text an Event carries.
    pub const fn as_str(self) -> &'static str {
        match self {
            EventReason::Nominated => "Nominated",
            EventReason::FailedScheduling => "FailedScheduling",
            EventReason::InsufficientCapacityError => "InsufficientCapacityError",
            EventReason::DisruptionBlocked => "DisruptionBlocked",
            EventReason::Unconsolidatable => "Unconsolidatable",
            EventReason::DisruptionLaunching => "DisruptionLaunching",
            EventReason::DisruptionTerminating => "DisruptionTerminating",
            EventReason::NodeRepairBlocked => "NodeRepairBlocked",
            EventReason::Evicted => "Evicted",
            EventReason::FailedDraining => "FailedDraining",
            EventReason::AwaitingVolumeDetachment => "AwaitingVolumeDetachment",
            EventReason::SpotInterrupted => "SpotInterrupted",
            EventReason::CapacityReservationInstanceInterrupted => {
                "CapacityReservationInstanceInterrupted"
            }
            EventReason::SpotRebalanceRecommendation => "SpotRebalanceRecommendation",
            EventReason::InstanceStopping => "InstanceStopping",
            EventReason::InstanceTerminating => "InstanceTerminating",
            EventReason::InstanceUnhealthy => "InstanceUnhealthy",
            EventReason::TerminatingOnInterruption => "TerminatingOnInterruption",
        }
    }

    /// The reason an Event's text names, if it is one Kerf records.
    pub fn parse(s: &str) -> Option<EventReason> {
        EventReason::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

impl fmt::Display for EventReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::EventReason;

    #[test]
    fn every_reason_reads_back_from_its_text_and_texts_are_distinct() {
        for r in EventReason::ALL {
            assert_eq!(EventReason::parse(r.as_str()), Some(r));
            assert_eq!(r.to_string(), r.as_str());
        }
        let texts: std::collections::BTreeSet<_> =
            EventReason::ALL.iter().map(|r| r.as_str()).collect();
        assert_eq!(texts.len(), EventReason::ALL.len());
        assert_eq!(EventReason::parse("Unschedulable"), None);
    }

    #[test]
    fn texts_are_karpenters() {
        assert_eq!(
            [
                EventReason::Nominated,
                EventReason::FailedScheduling,
                EventReason::InsufficientCapacityError,
                EventReason::DisruptionBlocked,
                EventReason::Unconsolidatable,
                EventReason::DisruptionTerminating,
            ]
            .map(EventReason::as_str),
            [
                "Nominated",
                "FailedScheduling",
                "InsufficientCapacityError",
                "DisruptionBlocked",
                "Unconsolidatable",
                "DisruptionTerminating",
            ]
        );
    }
}
