//! Legacy Karpenter APIs users still bring: `karpenter.sh/v1alpha5` Provisioner,
//! `karpenter.k8s.aws/v1alpha1` AWSNodeTemplate, `karpenter.sh/v1beta1` NodePool and
//! `karpenter.k8s.aws/v1beta1` EC2NodeClass. Serde types only, read for migration to v1.
//!
//! Every spec keeps fields it does not model in `other`, so migration can name them.

pub mod v1alpha1;
pub mod v1alpha5;
pub mod v1beta1;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Fields a legacy struct does not model, by JSON name.
pub type Other = BTreeMap<String, serde_json::Value>;

/// `metadata` of a legacy object: what migration carries over.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct LegacyMeta {
    /// Object name.
    #[serde(default)]
    pub name: String,
    /// Labels of the object itself.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Annotations of the object itself.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
    /// Everything else (uid, resourceVersion, ...), dropped on migration.
    #[serde(flatten)]
    pub other: Other,
}

/// A requirement as legacy APIs wrote it (operator as free text).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct LegacyRequirement {
    /// Label key.
    pub key: String,
    /// Operator name.
    pub operator: String,
    /// Values.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
    /// minValues (v1beta1 from v0.35).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_values: Option<i32>,
}

/// `metadataOptions` as legacy APIs wrote it: every field optional and undefaulted, because
/// what an unset field meant differs between v1alpha1 and v1beta1 (see migration).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct LegacyMetadataOptions {
    /// `enabled` or `disabled`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_endpoint: Option<String>,
    /// `enabled` or `disabled`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "httpProtocolIPv6"
    )]
    pub http_protocol_ipv6: Option<String>,
    /// Hop limit of PUT responses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_put_response_hop_limit: Option<i64>,
    /// `required` or `optional`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_tokens: Option<String>,
}
