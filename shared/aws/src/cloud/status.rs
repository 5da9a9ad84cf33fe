//! What a node class selects now, as `EC2NodeClass.status` shows it, with the
//! `PlacementGroupReady` condition (True with no selector or a group found; False with
//! `PlacementGroupNotFound` or `PlacementGroupResolutionFailed`), which the control layer
//! folds into `Ready`.

use kerf_api::v1::ec2nodeclass_status::{Ami, NodeSelectorRequirement, SecurityGroup, Subnet};
use kerf_api::v1::{Condition, ConditionStatus, EC2NodeClassStatus};

use crate::nodeclass::Resolved;
use crate::placement_group::Resolution;

/// The condition type.
pub const PLACEMENT_GROUP_READY: &str = "PlacementGroupReady";

/// The status of a resolved class whose selector resolved as `placement`.
pub(super) fn status(r: &Resolved, placement: &Resolution) -> EC2NodeClassStatus {
    EC2NodeClassStatus {
        subnets: r
            .subnets
            .values()
            .map(|s| Subnet {
                id: s.id.clone(),
                zone: s.zone.clone(),
                zone_id: (!s.zone_id.is_empty()).then(|| s.zone_id.clone()),
            })
            .collect(),
        security_groups: r
            .security_groups
            .iter()
            .map(|id| SecurityGroup {
                id: id.clone(),
                name: None,
            })
            .collect(),
        amis: r.amis.iter().map(ami).collect(),
        instance_profile: r.instance_profile.clone(),
        conditions: vec![placement_condition(placement)],
        ..Default::default()
    }
}

fn ami(a: &crate::ami::ResolvedAmi) -> Ami {
    let arch = if a.arch == "x86_64" {
        "amd64".to_string()
    } else {
        a.arch.clone()
    };
    Ami {
        id: a.id.clone(),
        deprecated: a.deprecated,
        name: Some(a.name.clone()),
        requirements: vec![NodeSelectorRequirement {
            key: kerf_labels::ARCH.into(),
            operator: "In".into(),
            values: vec![arch],
        }],
    }
}

/// `PlacementGroupReady` for a resolution, as Karpenter's placement group reconciler sets it.
pub fn placement_condition(placement: &Resolution) -> Condition {
    let (status, reason, message) = match placement {
        Resolution::NoSelector | Resolution::Found(_) => {
            (ConditionStatus::True, PLACEMENT_GROUP_READY, String::new())
        }
        Resolution::NotFound(q) => (
            ConditionStatus::False,
            "PlacementGroupNotFound",
            format!("Placement group {:?} not found", q.text()),
        ),
        Resolution::Failed { error, .. } => (
            ConditionStatus::False,
            "PlacementGroupResolutionFailed",
            format!("Failed to resolve placement group: {error}"),
        ),
    };
    condition(PLACEMENT_GROUP_READY, status, reason, message)
}

/// A node class condition as the status reconcilers write it (the control layer stamps the
/// generation and transition time).
pub(super) fn condition(
    type_: &str,
    status: ConditionStatus,
    reason: &str,
    message: String,
) -> Condition {
    Condition {
        type_: type_.into(),
        status,
        observed_generation: None,
        last_transition_time: String::new(),
        reason: reason.into(),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::AwsError;
    use crate::placement_group::Query;
    use kerf_catalog::placement::{PlacementGroup, Strategy};

    #[test]
    fn the_condition_follows_the_resolution() {
        let pg = PlacementGroup {
            id: "pg-0abc".into(),
            name: "kafka".into(),
            strategy: Strategy::Spread,
            partition_count: 0,
        };
        let truth = |r: &Resolution| {
            let c = placement_condition(r);
            (c.status, c.reason)
        };
        assert_eq!(truth(&Resolution::NoSelector).0, ConditionStatus::True);
        assert_eq!(
            truth(&Resolution::Found(pg.clone())).0,
            ConditionStatus::True
        );
        let missing = placement_condition(&Resolution::NotFound(Query::Name("kafka".into())));
        assert_eq!(
            (missing.status, missing.reason.as_str()),
            (ConditionStatus::False, "PlacementGroupNotFound")
        );
        assert!(missing.message.contains("kafka"));
        let failed = Resolution::Failed {
            query: Query::Id("pg-0abc".into()),
            error: AwsError::invalid("DescribePlacementGroups", "denied"),
            last_good: Some(pg),
        };
        assert_eq!(
            truth(&failed),
            (
                ConditionStatus::False,
                "PlacementGroupResolutionFailed".to_string()
            ),
            "a failed call is reported even with a group kept"
        );
    }
}
