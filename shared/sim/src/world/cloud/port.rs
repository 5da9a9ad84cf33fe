//! The simulated EC2 behind Kerf's `Cloud` port: node class status (with the capacity
//! reservations the class selects and `CapacityReservationsReady`), catalogs, launches,
//! descriptions, health, terminations and launch-template cleanup, each call counted, delayed
//! and failed as set.

use std::sync::Arc;

use kerf_api::v1::EC2NodeClass;
use kerf_catalog::Catalog;
use kerf_control::class_status::{reservation_entries, reservations_ready};
use kerf_control::ports::{
    Cloud, CloudError, Instance, LaunchRequest, Launched, TEMPLATE_UNUSED_FOR, Unhealthy,
};

use super::*;

/// The one security group every simulated node class selects.
pub(crate) const SECURITY_GROUP_ID: &str = "sg-0a5e0000000000001";

/// The simulated subnet of `zone` (one per zone).
pub(crate) fn subnet_id(zone: &str) -> String {
    format!("subnet-{zone}")
}

impl SimCloud {
    pub(super) fn status(
        &self,
        class: &EC2NodeClass,
    ) -> Result<kerf_api::v1::EC2NodeClassStatus, CloudError> {
        use kerf_api::v1::ec2nodeclass_status::{
            Ami, NodeSelectorRequirement, SecurityGroup, Subnet,
        };
        let catalog = self.catalog_for(class)?;
        let now = self.clock.now();
        let reservations = self.selected(class, now);
        let mut zones: Vec<String> = catalog
            .instance_types
            .iter()
            .flat_map(|t| t.offerings.iter().map(|o| o.zone.clone()))
            .collect();
        zones.sort();
        zones.dedup();
        let ami = |arch: &str| Ami {
            id: self.ami(arch),
            deprecated: false,
            name: Some(format!("amazon-eks-node-al2023-{arch}")),
            requirements: vec![NodeSelectorRequirement {
                key: kerf_labels::ARCH.into(),
                operator: "In".into(),
                values: vec![arch.into()],
            }],
        };
        Ok(kerf_api::v1::EC2NodeClassStatus {
            subnets: zones
                .iter()
                .map(|z| Subnet {
                    id: subnet_id(z),
                    zone: z.clone(),
                    zone_id: None,
                })
                .collect(),
            security_groups: vec![SecurityGroup {
                id: SECURITY_GROUP_ID.into(),
                name: Some("kerf-nodes".into()),
            }],
            amis: vec![ami("amd64"), ami("arm64")],
            instance_profile: class
                .spec
                .instance_profile
                .clone()
                .or_else(|| class.spec.role.clone()),
            capacity_reservations: reservation_entries(&reservations, now),
            conditions: vec![reservations_ready(None)],
        })
    }
}

impl Cloud for SimCloud {
    async fn node_class_status(
        &self,
        class: &EC2NodeClass,
    ) -> Result<kerf_api::v1::EC2NodeClassStatus, CloudError> {
        self.enter("DescribeImages").await?;
        self.status(class)
    }

    async fn catalog(&self, class: &EC2NodeClass) -> Result<Arc<Catalog>, CloudError> {
        self.enter("DescribeInstanceTypes").await?;
        self.catalog_for(class)
    }

    async fn launch(&self, req: &LaunchRequest) -> Result<Launched, CloudError> {
        self.enter("CreateFleet").await?;
        self.launch_now(req)
    }

    async fn describe(&self, ids: &[String]) -> Result<Vec<Instance>, CloudError> {
        self.enter("DescribeInstances").await?;
        let now = self.clock.now();
        let s = self.lock();
        Ok(ids
            .iter()
            .filter_map(|id| s.instances.get(id))
            .map(|i| at(i, now).info)
            .collect())
    }

    async fn list(&self) -> Result<Vec<Instance>, CloudError> {
        self.enter("DescribeInstances").await?;
        let now = self.clock.now();
        let s = self.lock();
        Ok(s.instances
            .values()
            .map(|i| at(i, now).info)
            .filter(|i| i.state != "terminated")
            .collect())
    }

    async fn unhealthy(&self) -> Result<Vec<Unhealthy>, CloudError> {
        self.enter("DescribeInstanceStatus").await?;
        let s = self.lock();
        let running = |id: &str| {
            s.instances
                .get(id)
                .is_some_and(|i| i.info.state != "terminated")
        };
        Ok(s.health
            .iter()
            .filter(|u| running(&u.instance_id))
            .cloned()
            .collect())
    }

    async fn delete_unused_templates(&self, now: Timestamp) -> Result<Vec<String>, CloudError> {
        self.enter("DeleteLaunchTemplate").await?;
        Ok(self.delete_templates_unused_since(now - TEMPLATE_UNUSED_FOR))
    }

    async fn terminate(&self, ids: &[String]) -> Result<(), CloudError> {
        self.enter("TerminateInstances").await?;
        let mut s = self.lock();
        for id in ids {
            if let Some(i) = s.instances.get_mut(id) {
                i.info.state = "terminated".into();
            }
        }
        Ok(())
    }
}
