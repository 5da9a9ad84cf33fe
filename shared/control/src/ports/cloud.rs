//! The Cloud port: instance types for a node class, and the life of an instance (launch,
//! describe, list, terminate). Implemented on EC2 by `kerf-aws` and in memory by `kerf-sim`.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use jiff::Timestamp;
use kerf_api::v1::{EC2NodeClass, EC2NodeClassStatus};
use kerf_catalog::reservation::ReservedOffering;
use kerf_catalog::unavailable::OfferingKey;
use kerf_catalog::{CapacityType, Catalog};

/// One offering a launch may use.
#[derive(Clone, Debug, PartialEq)]
pub struct LaunchOption {
    pub instance_type: String,
    pub zone: String,
    pub price: f64,
    /// The capacity reservation a `reserved` launch takes this option from; `None` for spot
    /// and on-demand.
    pub reservation: Option<ReservedOffering>,
}

/// A node taint, as the instance registers it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct NodeTaint {
    pub key: String,
    pub value: Option<String>,
    pub effect: String,
}

/// Everything needed to launch the instance of one NodeClaim.
#[derive(Clone, Debug, PartialEq)]
pub struct LaunchRequest {
    pub node_claim: String,
    /// The NodeClaim's UID: the idempotency key of the launch (CreateFleet ClientToken).
    pub node_claim_uid: String,
    pub node_pool: String,
    pub node_class: Arc<EC2NodeClass>,
    pub capacity_type: CapacityType,
    /// Offerings of `capacity_type`, cheapest first, at most 60 instance types.
    pub options: Vec<LaunchOption>,
    /// A NodeOverlay set some options' prices (the claim says
    /// `karpenter.sh/price-overlay-applied`): the cloud is to prefer the options by their
    /// prices here, as priorities, rather than by its own price list.
    pub prioritized: bool,
    /// Labels the kubelet registers the node with.
    pub labels: BTreeMap<String, String>,
    /// Taints the kubelet registers the node with (taints and startup taints).
    pub taints: Vec<NodeTaint>,
    /// The NodeClaim requests `vpc.amazonaws.com/efa`: each instance type launches with as
    /// many EFA interfaces as it advertises.
    pub efa_requested: bool,
}

/// The launched instance.
#[derive(Clone, Debug, PartialEq)]
pub struct Launched {
    pub instance_id: String,
    /// `aws:///<zone>/<instance id>`.
    pub provider_id: String,
    pub instance_type: String,
    pub zone: String,
    pub capacity_type: CapacityType,
    pub image_id: Option<String>,
    /// The capacity reservation a `reserved` launch went into.
    pub reservation: Option<ReservedOffering>,
    /// Offerings that failed for capacity on the way (they go to the unavailable cache).
    pub unavailable: Vec<OfferingKey>,
}

/// An instance as the cloud knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instance {
    pub id: String,
    pub provider_id: String,
    pub instance_type: String,
    pub zone: String,
    /// `pending`, `running`, `stopping`, `stopped`, `shutting-down` or `terminated`.
    pub state: String,
    pub capacity_type: CapacityType,
    pub launch_time: Option<Timestamp>,
    pub image_id: Option<String>,
    pub tags: BTreeMap<String, String>,
    /// EC2's private DNS name: the name its kubelet registers the Node under on EKS.
    pub private_dns_name: Option<String>,
    /// `Placement.PartitionNumber`: its partition of a partition placement group.
    pub partition: Option<u32>,
    /// The capacity reservation it runs in (`CapacityReservationId`), if any.
    pub capacity_reservation: Option<String>,
    /// Its subnet (`SubnetId`), when EC2 reports one.
    pub subnet_id: Option<String>,
    /// Its security groups (`SecurityGroups[].GroupId`).
    pub security_group_ids: Vec<String>,
}

impl Instance {
    /// The NodeClaim the instance was launched for (its `karpenter.sh/nodeclaim` tag).
    pub fn node_claim(&self) -> Option<&str> {
        self.tags
            .get(kerf_labels::aws::NODECLAIM_TAG)
            .map(String::as_str)
    }

    /// Whether `node` is the name this instance's kubelet registers under: its private DNS
    /// name, or its id (resource-name hostnames).
    pub fn names_node(&self, node: &str) -> bool {
        let dns = self.private_dns_name.as_deref().filter(|d| !d.is_empty());
        dns.is_some_and(|d| d.eq_ignore_ascii_case(node)) || node.eq_ignore_ascii_case(&self.id)
    }

    /// Whether the instance is gone or going.
    pub fn is_terminating(&self) -> bool {
        matches!(self.state.as_str(), "shutting-down" | "terminated")
    }
}

/// Which of an instance's health signals is bad (Karpenter's instance-status poller).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HealthCategory {
    /// The instance status check failed.
    InstanceStatus,
    /// The system status check failed (the host).
    SystemStatus,
    /// A scheduled event: reboot, maintenance, retirement or stop.
    EventStatus,
}

impl HealthCategory {
    /// Karpenter's message kind and metric `category` label.
    pub fn kind(self) -> &'static str {
        match self {
            HealthCategory::InstanceStatus => "instance_status",
            HealthCategory::SystemStatus => "system_status",
            HealthCategory::EventStatus => "event_status",
        }
    }
}

/// One bad health signal of an instance, as DescribeInstanceStatus reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unhealthy {
    pub instance_id: String,
    pub category: HealthCategory,
    /// Since when a failed status check has been failing (`None` for scheduled events and for
    /// checks that report no start).
    pub since: Option<Timestamp>,
}

/// Failures of the Cloud port.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CloudError {
    /// Every offering tried failed for capacity; re-plan without them.
    #[error("insufficient capacity for {} offering(s)", .0.len())]
    NoCapacity(Vec<OfferingKey>),
    /// The node class cannot be used to launch (missing subnets, AMIs, role, ...).
    #[error("node class not ready: {0}")]
    NodeClassNotReady(String),
    #[error("not found: {0}")]
    NotFound(String),
    #[error("throttled: {0}")]
    Throttled(String),
    #[error("unauthorized: {0}")]
    Unauthorized(String),
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    /// Network failures, timeouts, 5xx.
    #[error("transient: {0}")]
    Transient(String),
}

impl CloudError {
    /// Whether the same call may succeed later.
    pub fn is_retryable(&self) -> bool {
        matches!(self, CloudError::Throttled(_) | CloudError::Transient(_))
    }

    /// The condition reason Karpenter reports for a failed launch.
    pub fn reason(&self) -> &'static str {
        match self {
            CloudError::NoCapacity(_) => "InsufficientCapacity",
            CloudError::NodeClassNotReady(_) => "NodeClassNotReady",
            CloudError::NotFound(_) => "NotFound",
            CloudError::Throttled(_) => "RequestLimitExceeded",
            CloudError::Unauthorized(_) => "Unauthorized",
            CloudError::InvalidRequest(_) => "LaunchFailed",
            CloudError::Transient(_) => "InternalError",
        }
    }
}

/// How long a launch template may go unused before it is deleted ([`Cloud::delete_unused_templates`]).
pub const TEMPLATE_UNUSED_FOR: jiff::SignedDuration = jiff::SignedDuration::from_hours(1);

/// Instances and instance types.
pub trait Cloud: Send + Sync {
    /// The instance types a NodePool using `class` may launch, with their offerings and
    /// prices (before the unavailable-offerings cache, which the caller applies).
    fn catalog(
        &self,
        class: &EC2NodeClass,
    ) -> impl Future<Output = Result<Arc<Catalog>, CloudError>> + Send;
    /// What the class selects now: its subnets, security groups, AMIs (each with its
    /// architecture requirement) and instance profile, as `EC2NodeClass.status` shows them.
    fn node_class_status(
        &self,
        class: &EC2NodeClass,
    ) -> impl Future<Output = Result<EC2NodeClassStatus, CloudError>> + Send;
    /// Launches (or, for a NodeClaim launched before, re-finds) the instance of a NodeClaim.
    fn launch(
        &self,
        req: &LaunchRequest,
    ) -> impl Future<Output = Result<Launched, CloudError>> + Send;
    /// Describes instances by id; unknown ids are absent.
    fn describe(
        &self,
        ids: &[String],
    ) -> impl Future<Output = Result<Vec<Instance>, CloudError>> + Send;
    /// The cluster's instances that are not terminated yet.
    fn list(&self) -> impl Future<Output = Result<Vec<Instance>, CloudError>> + Send;
    /// Terminates instances; unknown and terminated ones count as done.
    fn terminate(&self, ids: &[String]) -> impl Future<Output = Result<(), CloudError>> + Send;
    /// The account's instances with an impaired instance or system status check (failed
    /// details only) or a scheduled reboot, maintenance, retirement or stop event.
    fn unhealthy(&self) -> impl Future<Output = Result<Vec<Unhealthy>, CloudError>> + Send;
    /// Deletes the launch templates made for the cluster that no launch has used for
    /// [`TEMPLATE_UNUSED_FOR`] at `now` (a launch records its template's use, and re-creates
    /// one deleted under it); returns their names.
    fn delete_unused_templates(
        &self,
        now: Timestamp,
    ) -> impl Future<Output = Result<Vec<String>, CloudError>> + Send;
}

impl<T: Cloud> Cloud for Arc<T> {
    async fn catalog(&self, class: &EC2NodeClass) -> Result<Arc<Catalog>, CloudError> {
        (**self).catalog(class).await
    }
    async fn node_class_status(
        &self,
        class: &EC2NodeClass,
    ) -> Result<EC2NodeClassStatus, CloudError> {
        (**self).node_class_status(class).await
    }
    async fn launch(&self, req: &LaunchRequest) -> Result<Launched, CloudError> {
        (**self).launch(req).await
    }
    async fn describe(&self, ids: &[String]) -> Result<Vec<Instance>, CloudError> {
        (**self).describe(ids).await
    }
    async fn list(&self) -> Result<Vec<Instance>, CloudError> {
        (**self).list().await
    }
    async fn terminate(&self, ids: &[String]) -> Result<(), CloudError> {
        (**self).terminate(ids).await
    }
    async fn unhealthy(&self) -> Result<Vec<Unhealthy>, CloudError> {
        (**self).unhealthy().await
    }
    async fn delete_unused_templates(&self, now: Timestamp) -> Result<Vec<String>, CloudError> {
        (**self).delete_unused_templates(now).await
    }
}

/// `aws:///<zone>/<instance id>`.
pub fn provider_id(zone: &str, instance_id: &str) -> String {
    format!("aws:///{zone}/{instance_id}")
}

/// The instance id of a provider ID (`aws:///<zone>/<id>`), if it has that shape.
pub fn instance_id(provider_id: &str) -> Option<&str> {
    let rest = provider_id.strip_prefix("aws:///")?;
    let (_, id) = rest.rsplit_once('/')?;
    (!id.is_empty()).then_some(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_ids_round_trip() {
        let p = provider_id("us-west-2a", "i-0abc");
        assert_eq!(p, "aws:///us-west-2a/i-0abc");
        assert_eq!(instance_id(&p), Some("i-0abc"));
        assert_eq!(instance_id("kind://x/y"), None);
        assert_eq!(instance_id("aws:///us-west-2a/"), None);
    }
}
