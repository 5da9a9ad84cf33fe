//! Karpenter's v1 APIs: `karpenter.sh/v1` NodePool and NodeClaim, `karpenter.k8s.aws/v1`
//! EC2NodeClass.

pub mod common;
pub mod disruption;
pub mod ec2nodeclass;
pub mod ec2nodeclass_status;
pub mod ec2nodeclass_types;
pub mod nodeclaim;
pub mod nodepool;
pub mod schema;

pub use common::{
    Condition, ConditionStatus, NodeClassReference, NodeSelectorRequirementWithMinValues, Operator,
    ResourceList, Taint, TaintEffect,
};
pub use disruption::{Budget, ConsolidationPolicy, Disruption, DisruptionReason};
pub use ec2nodeclass::{
    AmiFamily, AmiSelectorTerm, CapacityReservationSelectorTerm, EC2NodeClass, EC2NodeClassSpec,
    InstanceStorePolicy, SecurityGroupSelectorTerm, SubnetSelectorTerm,
};
pub use ec2nodeclass_status::EC2NodeClassStatus;
pub use ec2nodeclass_types::{
    BlockDevice, BlockDeviceMapping, ConnectionTracking, CpuOptions, InterfaceType,
    KubeletConfiguration, MetadataOptions, NetworkInterface, PlacementGroupSelector,
};
pub use nodeclaim::{NodeClaim, NodeClaimSpec, NodeClaimStatus, ResourceRequirements};
pub use nodepool::{
    NodeClaimTemplate, NodeClaimTemplateSpec, NodePool, NodePoolSpec, NodePoolStatus,
    TemplateMetadata,
};
