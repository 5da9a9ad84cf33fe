//! Placement groups (`EC2NodeClass.spec.placementGroupSelector`) as pure data, and what one
//! does to a node class's catalog, as Karpenter's AWS provider does it:
//!
//! - instance types that cannot launch into the group's strategy are dropped (an instance
//!   type whose supported strategies are not known is kept: the bundled data has none);
//! - every remaining type carries the `karpenter.k8s.aws/placement-group-id` label, so pods
//!   may select the group and NodeClaims record it;
//! - for a partition group, each offering is cloned once per partition `1..=PartitionCount`,
//!   the clone carrying its partition, so pods may select or spread over partitions
//!   (`karpenter.k8s.aws/placement-group-partition`).

use serde::{Deserialize, Serialize};

use crate::{Catalog, InstanceType};

/// A placement group's strategy (`PlacementGroup.Strategy`,
/// `PlacementGroupInfo.SupportedStrategies`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Strategy {
    Cluster,
    Partition,
    Spread,
}

impl Strategy {
    /// EC2's spelling: `cluster`, `partition`, `spread`.
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::Cluster => "cluster",
            Strategy::Partition => "partition",
            Strategy::Spread => "spread",
        }
    }

    pub fn parse(s: &str) -> Option<Strategy> {
        match s {
            "cluster" => Some(Strategy::Cluster),
            "partition" => Some(Strategy::Partition),
            "spread" => Some(Strategy::Spread),
            _ => None,
        }
    }
}

/// A resolved placement group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlacementGroup {
    /// `pg-...`.
    pub id: String,
    pub name: String,
    pub strategy: Strategy,
    /// Partitions of a partition group (0 for the other strategies).
    pub partition_count: u32,
}

impl PlacementGroup {
    /// The partitions offerings are cloned into: `1..=PartitionCount` for a partition group,
    /// none otherwise.
    pub fn partitions(&self) -> Vec<u32> {
        match self.strategy {
            Strategy::Partition => (1..=self.partition_count).collect(),
            _ => Vec::new(),
        }
    }
}

/// Applies `pg` to `catalog`. `supports(type)` says whether a type can launch into the
/// group's strategy: `Some(false)` drops the type, `None` (unknown) keeps it.
pub fn apply(catalog: &mut Catalog, pg: &PlacementGroup, supports: impl Fn(&str) -> Option<bool>) {
    catalog
        .instance_types
        .retain(|it| supports(&it.name) != Some(false));
    let partitions = pg.partitions();
    for it in &mut catalog.instance_types {
        it.labels
            .insert(kerf_labels::aws::PLACEMENT_GROUP_ID.into(), pg.id.clone());
        if !partitions.is_empty() {
            clone_per_partition(it, &partitions);
        }
    }
}

fn clone_per_partition(it: &mut InstanceType, partitions: &[u32]) {
    it.offerings = it
        .offerings
        .iter()
        .flat_map(|o| {
            partitions.iter().map(move |p| crate::Offering {
                partition: Some(*p),
                ..o.clone()
            })
        })
        .collect();
}

/// The placement group a catalog was built for (every type of it carries the group's id):
/// `None` when it was built for none, or has no type to tell.
pub fn group_id(catalog: &Catalog) -> Option<&str> {
    catalog.instance_types.first().and_then(|it| {
        it.labels
            .get(kerf_labels::aws::PLACEMENT_GROUP_ID)
            .map(String::as_str)
    })
}

/// Whether the type's offerings are per partition (its class uses a partition group).
pub fn is_partitioned(it: &InstanceType) -> bool {
    it.offerings.iter().any(|o| o.partition.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CapacityType, Offering};

    fn catalog() -> Catalog {
        let it = |name: &str| InstanceType {
            name: name.into(),
            labels: Default::default(),
            capacity: Default::default(),
            overhead: Default::default(),
            allocatable: Default::default(),
            offerings: vec![Offering {
                zone: "us-west-2a".into(),
                capacity_type: CapacityType::OnDemand,
                price: 0.1,
                available: true,
                partition: None,
                reservation: None,
            }],
            ebs_volume_limit: None,
        };
        Catalog {
            region: "us-west-2".into(),
            instance_types: vec![it("c5.large"), it("t3.large"), it("m5.large")],
        }
    }

    fn group(strategy: Strategy, partition_count: u32) -> PlacementGroup {
        PlacementGroup {
            id: "pg-0abc".into(),
            name: "kafka".into(),
            strategy,
            partition_count,
        }
    }

    #[test]
    fn types_that_cannot_join_the_strategy_go_and_unknown_ones_stay() {
        let mut c = catalog();
        let known = |t: &str| match t {
            "t3.large" => Some(false),
            "c5.large" => Some(true),
            _ => None,
        };
        apply(&mut c, &group(Strategy::Cluster, 0), known);
        let names: Vec<&str> = c.instance_types.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["c5.large", "m5.large"]);
        assert_eq!(group_id(&c), Some("pg-0abc"));
        assert!(c.instance_types.iter().all(|t| t.offerings.len() == 1));
        assert!(!c.instance_types.iter().any(is_partitioned));
    }

    #[test]
    fn a_partition_group_clones_each_offering_per_partition() {
        let mut c = catalog();
        apply(&mut c, &group(Strategy::Partition, 3), |_| None);
        let parts: Vec<Option<u32>> = c.instance_types[0]
            .offerings
            .iter()
            .map(|o| o.partition)
            .collect();
        assert_eq!(parts, [Some(1), Some(2), Some(3)]);
        assert!(c.instance_types.iter().all(is_partitioned));
        assert!(c.instance_types[0].offerings.iter().all(|o| o.price == 0.1));
    }

    #[test]
    fn no_group_no_id_and_strategies_spell_as_ec2() {
        assert_eq!(group_id(&catalog()), None);
        for s in [Strategy::Cluster, Strategy::Partition, Strategy::Spread] {
            assert_eq!(Strategy::parse(s.as_str()), Some(s));
        }
        assert_eq!(Strategy::parse("rack"), None);
        assert!(group(Strategy::Spread, 3).partitions().is_empty());
    }
}
