//! The nested parts of an EC2NodeClass spec: kubelet, block devices, metadata options,
//! network interfaces, connection tracking, CPU options and placement groups.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::schema::{
    EVICTION_SIGNAL_RULE_KEYS, QUANTITY, THRESHOLD, eviction_rules, kubelet_rules, reserved_rules,
};

/// Kubelet settings (the typed v1 contract).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = kubelet_rules()))]
pub struct KubeletConfiguration {
    /// Cluster DNS server IPs.
    #[serde(default, skip_serializing_if = "Vec::is_empty", rename = "clusterDNS")]
    pub cluster_dns: Vec<String>,
    /// Maximum pods per node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub max_pods: Option<i32>,
    /// Maximum pods per vCPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub pods_per_core: Option<i32>,
    /// Resources reserved for the OS (`cpu`, `memory`, `ephemeral-storage`, `pid`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("additionalProperties" = {"type": "string", "pattern": QUANTITY}))]
    #[schemars(extend("x-kubernetes-validations" = reserved_rules("systemReserved")))]
    pub system_reserved: BTreeMap<String, String>,
    /// Resources reserved for Kubernetes daemons.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("additionalProperties" = {"type": "string", "pattern": QUANTITY}))]
    #[schemars(extend("x-kubernetes-validations" = reserved_rules("kubeReserved")))]
    pub kube_reserved: BTreeMap<String, String>,
    /// Hard eviction thresholds, e.g. `memory.available: 5%`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("additionalProperties" = {"type": "string", "pattern": THRESHOLD}))]
    #[schemars(extend("x-kubernetes-validations" = eviction_rules("evictionHard")))]
    pub eviction_hard: BTreeMap<String, String>,
    /// Soft eviction thresholds.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("additionalProperties" = {"type": "string", "pattern": THRESHOLD}))]
    #[schemars(extend("x-kubernetes-validations" = eviction_rules("evictionSoft")))]
    pub eviction_soft: BTreeMap<String, String>,
    /// Grace periods of the soft eviction thresholds.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("x-kubernetes-validations" = eviction_rules("evictionSoftGracePeriod")))]
    pub eviction_soft_grace_period: BTreeMap<String, String>,
    /// Maximum pod termination grace period (seconds) on soft eviction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eviction_max_pod_grace_period: Option<i32>,
    /// Disk usage percent above which image GC always runs.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "imageGCHighThresholdPercent"
    )]
    #[schemars(range(min = 0, max = 100))]
    pub image_gc_high_threshold_percent: Option<i32>,
    /// Disk usage percent image GC frees down to.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "imageGCLowThresholdPercent"
    )]
    #[schemars(range(min = 0, max = 100))]
    pub image_gc_low_threshold_percent: Option<i32>,
    /// Whether CPU CFS quota is enforced for containers with limits.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "cpuCFSQuota"
    )]
    pub cpu_cfs_quota: Option<bool>,
}

/// The eviction signals kubelet settings may name.
pub const EVICTION_SIGNALS: [&str; 6] = EVICTION_SIGNAL_RULE_KEYS;

/// A block device mapping of the launch template.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BlockDeviceMapping {
    /// Device name, e.g. `/dev/xvda`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_name: Option<String>,
    /// The EBS volume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ebs: Option<BlockDevice>,
    /// Whether this is the root volume (ephemeral storage is computed from it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub root_volume: bool,
}

/// An EBS volume.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [
    {"message": "snapshotID or volumeSize must be defined", "rule": "has(self.snapshotID) || has(self.volumeSize)"},
    {"message": "snapshotID must be set when volumeInitializationRate is set",
     "rule": "!has(self.volumeInitializationRate) || (has(self.snapshotID) && self.snapshotID != '')"}
]))]
pub struct BlockDevice {
    /// Delete the volume when the instance terminates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete_on_termination: Option<bool>,
    /// Encrypt the volume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encrypted: Option<bool>,
    /// Provisioned IOPS (io1, io2, gp3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iops: Option<i64>,
    /// KMS key for encryption.
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "kmsKeyID")]
    pub kms_key_id: Option<String>,
    /// Snapshot to create the volume from.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "snapshotID"
    )]
    pub snapshot_id: Option<String>,
    /// Throughput in MiB/s (gp3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput: Option<i64>,
    /// Snapshot initialization rate in MiB/s (100..300).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 100, max = 300))]
    pub volume_initialization_rate: Option<i32>,
    /// Size, e.g. `100Gi`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(
        pattern = r"^((?:[1-9][0-9]{0,3}|[1-4][0-9]{4}|[5][0-8][0-9]{3}|59000)Gi|(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|[6][0-3][0-9]{3}|64000)G|([1-9]||[1-5][0-7]|58)Ti|([1-9]||[1-5][0-9]|6[0-3]|64)T)$"
    ))]
    pub volume_size: Option<String>,
    /// Volume type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["standard", "io1", "io2", "gp2", "sc1", "st1", "gp3"]))]
    pub volume_type: Option<String>,
}

/// Instance metadata service options.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MetadataOptions {
    /// `enabled` or `disabled`.
    #[serde(default = "enabled", skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["enabled", "disabled"]))]
    pub http_endpoint: Option<String>,
    /// IPv6 endpoint: `enabled` or `disabled`.
    #[serde(
        default = "disabled",
        skip_serializing_if = "Option::is_none",
        rename = "httpProtocolIPv6"
    )]
    #[schemars(extend("enum" = ["enabled", "disabled"]))]
    pub http_protocol_ipv6: Option<String>,
    /// Hop limit of PUT responses (1..64).
    #[serde(default = "hop_limit", skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 64))]
    pub http_put_response_hop_limit: Option<i64>,
    /// `required` (IMDSv2) or `optional`.
    #[serde(default = "required", skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["required", "optional"]))]
    pub http_tokens: Option<String>,
}

impl Default for MetadataOptions {
    fn default() -> Self {
        Self {
            http_endpoint: enabled(),
            http_protocol_ipv6: disabled(),
            http_put_response_hop_limit: hop_limit(),
            http_tokens: required(),
        }
    }
}

fn enabled() -> Option<String> {
    Some("enabled".to_string())
}

fn disabled() -> Option<String> {
    Some("disabled".to_string())
}

fn hop_limit() -> Option<i64> {
    Some(1)
}

fn required() -> Option<String> {
    Some("required".to_string())
}

/// Karpenter's CRD default for `metadataOptions`.
pub fn default_metadata_options() -> Option<MetadataOptions> {
    Some(MetadataOptions::default())
}

/// One network interface of the launch template.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NetworkInterface {
    /// Network card index.
    #[schemars(range(min = 0))]
    pub network_card_index: i32,
    /// Device index on the card.
    #[schemars(range(min = 0))]
    pub device_index: i32,
    /// `interface` or `efa-only`.
    pub interface_type: InterfaceType,
}

/// `interface` or `efa-only`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum InterfaceType {
    /// An ENA interface.
    #[serde(rename = "interface")]
    Interface,
    /// An EFA-only interface: no IP address, OS-bypass traffic only.
    #[serde(rename = "efa-only")]
    EfaOnly,
}

/// Connection-tracking timeouts (seconds).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [
    {"message": "at least one of tcpEstablishedTimeout, udpStreamTimeout, or udpTimeout must be set",
     "rule": "has(self.tcpEstablishedTimeout) || has(self.udpStreamTimeout) || has(self.udpTimeout)"}
]))]
pub struct ConnectionTracking {
    /// Idle timeout of established TCP connections.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "tcpEstablishedTimeout"
    )]
    #[schemars(range(min = 60, max = 432000))]
    pub tcp_established_timeout: Option<i32>,
    /// Idle timeout of UDP streams.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "udpStreamTimeout"
    )]
    #[schemars(range(min = 60, max = 180))]
    pub udp_stream_timeout: Option<i32>,
    /// Idle timeout of other UDP flows.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "udpTimeout"
    )]
    #[schemars(range(min = 30, max = 60))]
    pub udp_timeout: Option<i32>,
}

/// CPU options.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CpuOptions {
    /// `enabled` or `disabled`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["enabled", "disabled"]))]
    pub nested_virtualization: Option<String>,
}

/// Selects one placement group by name or id.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(extend("x-kubernetes-validations" = [
    {"message": "expected at least one, got none, ['name', 'id']", "rule": "has(self.name) || has(self.id)"},
    {"message": "'name' and 'id' are mutually exclusive", "rule": "!(has(self.name) && has(self.id))"}
]))]
pub struct PlacementGroupSelector {
    /// Placement group name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub name: Option<String>,
    /// Placement group id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = "^pg-[0-9a-z]+$"))]
    pub id: Option<String>,
}
