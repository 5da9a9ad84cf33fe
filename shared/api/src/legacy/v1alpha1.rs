//! `karpenter.k8s.aws/v1alpha1` AWSNodeTemplate (and the v1alpha5 inline `provider` block,
//! which has the same fields).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{LegacyMeta, LegacyMetadataOptions, Other};
use crate::v1::BlockDeviceMapping;

/// An AWSNodeTemplate document.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct AWSNodeTemplate {
    /// Object metadata.
    #[serde(default)]
    pub metadata: LegacyMeta,
    /// The template.
    #[serde(default)]
    pub spec: AWSNodeTemplateSpec,
}

/// The AWS launch settings of v1alpha1 / v1alpha5.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct AWSNodeTemplateSpec {
    /// Subnet tag selector; `aws-ids` / `aws::ids` hold comma-separated ids.
    #[serde(default)]
    pub subnet_selector: BTreeMap<String, String>,
    /// Security group tag selector; `aws-ids` / `aws::ids` hold comma-separated ids.
    #[serde(default)]
    pub security_group_selector: BTreeMap<String, String>,
    /// AMI selector: tags plus `aws::ids`, `aws::name`, `aws::owners`.
    #[serde(default)]
    pub ami_selector: BTreeMap<String, String>,
    /// AL2, AL2023, Bottlerocket, Ubuntu, Windows2019, Windows2022, Custom.
    #[serde(default)]
    pub ami_family: Option<String>,
    /// Instance profile name.
    #[serde(default)]
    pub instance_profile: Option<String>,
    /// Tags for instances and volumes.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
    /// User data.
    #[serde(default)]
    pub user_data: Option<String>,
    /// A user-managed launch template (no v1 equivalent).
    #[serde(default)]
    pub launch_template: Option<String>,
    /// Block devices.
    #[serde(default)]
    pub block_device_mappings: Vec<BlockDeviceMapping>,
    /// IMDS options (unset fields were left to EC2's defaults).
    #[serde(default)]
    pub metadata_options: Option<LegacyMetadataOptions>,
    /// Detailed monitoring.
    #[serde(default)]
    pub detailed_monitoring: Option<bool>,
    /// CreateFleet context.
    #[serde(default)]
    pub context: Option<String>,
    /// Everything else.
    #[serde(flatten)]
    pub other: Other,
}
