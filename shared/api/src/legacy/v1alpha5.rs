//! `karpenter.sh/v1alpha5` Provisioner.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::v1alpha1::AWSNodeTemplateSpec;
use super::{LegacyMeta, LegacyRequirement, Other};
use crate::v1::{KubeletConfiguration, ResourceList, Taint};

/// A Provisioner document.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Provisioner {
    /// Object metadata.
    #[serde(default)]
    pub metadata: LegacyMeta,
    /// The provisioner.
    #[serde(default)]
    pub spec: ProvisionerSpec,
}

/// The spec of a Provisioner.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ProvisionerSpec {
    /// Node annotations.
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
    /// Node labels.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// Node taints.
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
    pub kubelet_configuration: Option<LegacyKubelet>,
    /// Inline AWS settings (become an EC2NodeClass in v1).
    #[serde(default)]
    pub provider: Option<AWSNodeTemplateSpec>,
    /// Reference to an AWSNodeTemplate.
    #[serde(default)]
    pub provider_ref: Option<ProviderRef>,
    /// Seconds an empty node lives.
    #[serde(default)]
    pub ttl_seconds_after_empty: Option<i64>,
    /// Seconds any node lives.
    #[serde(default)]
    pub ttl_seconds_until_expired: Option<i64>,
    /// Consolidation switch.
    #[serde(default)]
    pub consolidation: Option<Consolidation>,
    /// Resource limits.
    #[serde(default)]
    pub limits: Option<Limits>,
    /// Priority.
    #[serde(default)]
    pub weight: Option<i32>,
    /// Everything else.
    #[serde(flatten)]
    pub other: Other,
}

/// v1alpha5 kubelet settings: the v1 fields plus `containerRuntime`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct LegacyKubelet {
    /// Container runtime (containerd only in v1).
    #[serde(default)]
    pub container_runtime: Option<String>,
    /// The fields v1 keeps.
    #[serde(flatten)]
    pub kubelet: KubeletConfiguration,
}

/// `providerRef`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ProviderRef {
    /// API version of the referent.
    #[serde(default)]
    pub api_version: Option<String>,
    /// Kind of the referent.
    #[serde(default)]
    pub kind: Option<String>,
    /// Name of the referent.
    pub name: String,
}

/// `consolidation`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Consolidation {
    /// Whether consolidation is on.
    #[serde(default)]
    pub enabled: Option<bool>,
}

/// `limits`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Limits {
    /// Resource limits.
    #[serde(default)]
    pub resources: ResourceList,
}
