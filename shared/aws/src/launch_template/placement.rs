//! The launch template's `Placement`: the node class's placement group and, in a partition
//! group, the partition the NodeClaim asked for. CreateFleet overrides carry no placement, so
//! each group and partition has a template of its own.

use aws_sdk_ec2::types::LaunchTemplatePlacementRequest;
use serde::Serialize;

/// Where the template's instances are placed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Placement {
    /// `Placement.GroupId`.
    pub group_id: String,
    /// `Placement.PartitionNumber` (partition groups, when the NodeClaim names partitions:
    /// the lowest of them).
    pub partition: Option<u32>,
}

impl Placement {
    pub(super) fn request(&self) -> LaunchTemplatePlacementRequest {
        LaunchTemplatePlacementRequest::builder()
            .group_id(&self.group_id)
            .set_partition_number(self.partition.and_then(|p| i32::try_from(p).ok()))
            .build()
    }
}

#[cfg(test)]
mod tests {
    use super::super::{LaunchTemplateSpec, template_data, tests};
    use super::*;

    #[test]
    fn the_request_names_the_group_and_the_partition() {
        let p = Placement {
            group_id: "pg-0abc".into(),
            partition: Some(2),
        };
        let r = p.request();
        assert_eq!(r.group_id(), Some("pg-0abc"));
        assert_eq!(r.partition_number(), Some(2));
        let spread = Placement {
            partition: None,
            ..p
        };
        assert_eq!(spread.request().partition_number(), None);
    }

    #[test]
    fn each_group_and_partition_has_its_own_template() {
        let in_group = |partition| LaunchTemplateSpec {
            placement: Some(Placement {
                group_id: "pg-0abc".into(),
                partition,
            }),
            ..tests::spec()
        };
        let names = [
            tests::spec().name(),
            in_group(None).name(),
            in_group(Some(1)).name(),
            in_group(Some(2)).name(),
        ];
        for (i, a) in names.iter().enumerate() {
            for b in &names[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert_eq!(in_group(Some(1)).name(), in_group(Some(1)).name());
        let data = template_data(&in_group(Some(2)));
        let placement = data.placement().expect("placement");
        assert_eq!(placement.group_id(), Some("pg-0abc"));
        assert_eq!(placement.partition_number(), Some(2));
        assert!(template_data(&tests::spec()).placement().is_none());
    }
}
