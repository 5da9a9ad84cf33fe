//! A node class's catalog in its placement group: the group applied as
//! [`kerf_catalog::placement::apply`] does it, with each type's supported strategies from
//! discovery (a type discovery does not know, e.g. from the bundled catalog, is kept). A
//! selector that selects nothing leaves the class without a catalog: its NodePools are not
//! ready, as Karpenter's are while `PlacementGroupReady` is False.

use kerf_catalog::{Catalog, Ec2Spec, placement};
use kerf_control::ports::CloudError;

use crate::placement_group::Resolution;

/// `catalog` in the group `resolution` gives (unchanged without a selector).
pub(super) fn placed(
    mut catalog: Catalog,
    resolution: &Resolution,
    specs: &[Ec2Spec],
) -> Result<Catalog, CloudError> {
    match (resolution.group(), resolution) {
        (Some(pg), _) => {
            let supports = |name: &str| {
                specs
                    .iter()
                    .find(|s| s.name == name)
                    .and_then(|s| s.supports_placement(pg.strategy))
            };
            placement::apply(&mut catalog, pg, supports);
            Ok(catalog)
        }
        (None, Resolution::NoSelector) => Ok(catalog),
        (None, Resolution::NotFound(q)) => Err(CloudError::NodeClassNotReady(format!(
            "placement group {:?} not found",
            q.text()
        ))),
        (None, Resolution::Failed { error, .. }) => Err(error.clone().into()),
        (None, Resolution::Found(_)) => Ok(catalog),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::AwsError;
    use crate::placement_group::Query;
    use kerf_catalog::placement::{PlacementGroup, Strategy};
    use kerf_catalog::{CapacityType, InstanceType, Offering};

    fn catalog() -> Catalog {
        let it = |name: &str| InstanceType {
            name: name.into(),
            labels: Default::default(),
            capacity: Default::default(),
            overhead: Default::default(),
            allocatable: Default::default(),
            offerings: vec![Offering {
                zone: "a".into(),
                capacity_type: CapacityType::OnDemand,
                price: 1.0,
                available: true,
                partition: None,
                reservation: None,
            }],
            ebs_volume_limit: None,
        };
        Catalog {
            region: "us-west-2".into(),
            instance_types: vec![it("c5.large"), it("t3.medium")],
        }
    }

    fn spec(name: &str, strategies: &[Strategy]) -> Ec2Spec {
        Ec2Spec {
            name: name.into(),
            placement_strategies: strategies.to_vec(),
            ..Ec2Spec::default()
        }
    }

    #[test]
    fn types_follow_what_discovery_says_they_support() {
        let pg = PlacementGroup {
            id: "pg-0abc".into(),
            name: "ml".into(),
            strategy: Strategy::Cluster,
            partition_count: 0,
        };
        let specs = [
            spec("c5.large", &[Strategy::Cluster, Strategy::Partition]),
            spec("t3.medium", &[Strategy::Partition, Strategy::Spread]),
        ];
        let c = placed(catalog(), &Resolution::Found(pg), &specs).unwrap();
        let names: Vec<&str> = c.instance_types.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            ["c5.large"],
            "burstable types cannot join a cluster group"
        );
        assert_eq!(placement::group_id(&c), Some("pg-0abc"));
        let plain = placed(catalog(), &Resolution::NoSelector, &specs).unwrap();
        assert_eq!(plain, catalog());
    }

    #[test]
    fn a_group_that_does_not_resolve_leaves_no_catalog() {
        let missing = placed(
            catalog(),
            &Resolution::NotFound(Query::Name("ml".into())),
            &[],
        );
        assert!(matches!(missing, Err(CloudError::NodeClassNotReady(m)) if m.contains("ml")));
        let failed = Resolution::Failed {
            query: Query::Name("ml".into()),
            error: AwsError::Throttled(crate::error::ErrorInfo {
                operation: "DescribePlacementGroups",
                code: "RequestLimitExceeded".into(),
                message: "slow down".into(),
            }),
            last_good: None,
        };
        let e = placed(catalog(), &failed, &[]).unwrap_err();
        assert!(e.is_retryable(), "{e}");
    }
}
