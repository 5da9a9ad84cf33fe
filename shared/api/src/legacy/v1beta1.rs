//! `karpenter.sh/v1beta1` NodePool and `karpenter.k8s.aws/v1beta1` EC2NodeClass.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::v1alpha5::LegacyKubelet;
use super::{LegacyMeta, LegacyMetadataOptions, LegacyRequirement, Other};
use crate::v1::{
    AmiSelectorTerm, BlockDeviceMapping, Budget, ResourceList, SecurityGroupSelectorTerm,
    SubnetSelectorTerm, Taint,
};

/// A v1beta1 NodePool document.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct NodePool {
    /// Object metadata.
    #[serde(default)]
    pub metadata: LegacyMeta,
    /// The pool.
    #[serde(default)]
    pub spec: NodePoolSpec,
}

/// The spec of a v1beta1 NodePool.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct NodePoolSpec {
    /// The NodeClaim template.
    #[serde(default)]
    pub template: Template,
    /// Disruption settings.
    #[serde(default)]
    pub disruption: Option<Disruption>,
    /// Limits.
    #[serde(default)]
    pub limits: ResourceList,
    /// Priority.
    #[serde(default)]
    pub weight: Option<i32>,
    /// Everything else.
    #[serde(flatten)]
    pub other: Other,
}

/// The template of a v1beta1 NodePool.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Template {
    /// Labels and annotations.
    #[serde(default)]
    pub metadata: TemplateMeta,
    /// The NodeClaim spec.
    #[serde(default)]
    pub spec: TemplateSpec,
}

/// Template metadata.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct TemplateMeta {
    /// Node labels.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// Node annotations.
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
}

/// The NodeClaim spec of a v1beta1 template.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct TemplateSpec {
    /// Taints.
    #[serde(default)]
    pub taints: Vec<Taint>,
    /// Startup taints.
    #[serde(default)]
    pub startup_taints: Vec<Taint>,
    /// Requirements.
    #[serde(default)]
    pub requirements: Vec<LegacyRequirement>,
    /// Kubelet settings (move to the EC2NodeClass in v1).
    #[serde(default)]
    pub kubelet: Option<LegacyKubelet>,
    /// Node class reference.
    #[serde(default)]
    pub node_class_ref: Option<NodeClassRef>,
    /// Resource requests (dropped in v1 templates).
    #[serde(default)]
    pub resources: Option<serde_json::Value>,
    /// Everything else.
    #[serde(flatten)]
    pub other: Other,
}

/// A v1beta1 node class reference.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct NodeClassRef {
    /// API version, e.g. `karpenter.k8s.aws/v1beta1`.
    #[serde(default)]
    pub api_version: Option<String>,
    /// Kind.
    #[serde(default)]
    pub kind: Option<String>,
    /// Name.
    #[serde(default)]
    pub name: String,
}

/// v1beta1 disruption settings.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Disruption {
    /// WhenEmpty or WhenUnderutilized.
    #[serde(default)]
    pub consolidation_policy: Option<String>,
    /// Only with WhenEmpty.
    #[serde(default)]
    pub consolidate_after: Option<String>,
    /// Node lifetime (moves to the template in v1).
    #[serde(default)]
    pub expire_after: Option<String>,
    /// Budgets.
    #[serde(default)]
    pub budgets: Option<Vec<Budget>>,
}

/// A v1beta1 EC2NodeClass document.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct EC2NodeClass {
    /// Object metadata.
    #[serde(default)]
    pub metadata: LegacyMeta,
    /// The node class.
    #[serde(default)]
    pub spec: EC2NodeClassSpec,
}

/// The spec of a v1beta1 EC2NodeClass.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct EC2NodeClassSpec {
    /// Subnet selector terms.
    #[serde(default)]
    pub subnet_selector_terms: Vec<SubnetSelectorTerm>,
    /// Security group selector terms.
    #[serde(default)]
    pub security_group_selector_terms: Vec<SecurityGroupSelectorTerm>,
    /// AMI selector terms (no alias in v1beta1).
    #[serde(default)]
    pub ami_selector_terms: Vec<AmiSelectorTerm>,
    /// AMI family (required in v1beta1).
    #[serde(default)]
    pub ami_family: Option<String>,
    /// User data.
    #[serde(default)]
    pub user_data: Option<String>,
    /// IAM role.
    #[serde(default)]
    pub role: Option<String>,
    /// Instance profile.
    #[serde(default)]
    pub instance_profile: Option<String>,
    /// Tags.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
    /// Block devices.
    #[serde(default)]
    pub block_device_mappings: Vec<BlockDeviceMapping>,
    /// Instance store policy.
    #[serde(default)]
    pub instance_store_policy: Option<String>,
    /// Detailed monitoring.
    #[serde(default)]
    pub detailed_monitoring: Option<bool>,
    /// Public IP.
    #[serde(default, rename = "associatePublicIPAddress")]
    pub associate_public_ip_address: Option<bool>,
    /// IMDS options (the CRD defaulted unset fields, the hop limit to 2).
    #[serde(default)]
    pub metadata_options: Option<LegacyMetadataOptions>,
    /// CreateFleet context.
    #[serde(default)]
    pub context: Option<String>,
    /// Everything else.
    #[serde(flatten)]
    pub other: Other,
}
