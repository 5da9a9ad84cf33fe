//! The EC2NodeClass-derived inputs to the capacity and overhead formulas: AMI family, the
//! kubelet fields scheduling reads, block device mappings, the instance store policy, network
//! interfaces and connection tracking.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Bytes per GiB.
const GI: i64 = 1 << 30;

/// `spec.amiFamily` of an EC2NodeClass (explicit, or implied by its `amiSelectorTerms` alias).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AmiFamily {
    AL2,
    #[default]
    AL2023,
    Bottlerocket,
    Windows2019,
    Windows2022,
    Windows2025,
    Custom,
}

impl AmiFamily {
    /// Parses the EC2NodeClass spelling (`AL2023`, `Bottlerocket`, `Windows2022`, …),
    /// case-insensitively.
    pub fn parse(s: &str) -> Option<AmiFamily> {
        let all = [
            AmiFamily::AL2,
            AmiFamily::AL2023,
            AmiFamily::Bottlerocket,
            AmiFamily::Windows2019,
            AmiFamily::Windows2022,
            AmiFamily::Windows2025,
            AmiFamily::Custom,
        ];
        all.into_iter().find(|f| f.as_str().eq_ignore_ascii_case(s))
    }

    pub fn as_str(self) -> &'static str {
        match self {
            AmiFamily::AL2 => "AL2",
            AmiFamily::AL2023 => "AL2023",
            AmiFamily::Bottlerocket => "Bottlerocket",
            AmiFamily::Windows2019 => "Windows2019",
            AmiFamily::Windows2022 => "Windows2022",
            AmiFamily::Windows2025 => "Windows2025",
            AmiFamily::Custom => "Custom",
        }
    }

    pub fn is_windows(self) -> bool {
        matches!(
            self,
            AmiFamily::Windows2019 | AmiFamily::Windows2022 | AmiFamily::Windows2025
        )
    }

    /// `node.kubernetes.io/windows-build` for Windows families.
    pub fn windows_build(self) -> Option<&'static str> {
        match self {
            AmiFamily::Windows2019 => Some("10.0.17763"),
            AmiFamily::Windows2022 => Some("10.0.20348"),
            AmiFamily::Windows2025 => Some("10.0.26100"),
            _ => None,
        }
    }

    /// kube-reserved memory is sized on ENI-limited pods (not the node's max pods).
    pub fn uses_eni_limited_memory_overhead(self) -> bool {
        matches!(self, AmiFamily::AL2 | AmiFamily::AL2023 | AmiFamily::Custom)
    }

    /// `podsPerCore` is honoured (ignored on Bottlerocket).
    pub fn pods_per_core_enabled(self) -> bool {
        self != AmiFamily::Bottlerocket
    }

    /// Default max pods is ENI-limited (Windows: fixed 110).
    pub fn eni_limited_pod_density(self) -> bool {
        !self.is_windows()
    }

    /// The device whose size becomes `ephemeral-storage`, and its default size in bytes
    /// (`None` for Custom: no default mappings).
    pub fn ephemeral_device(self) -> Option<(&'static str, i64)> {
        match self {
            AmiFamily::AL2 | AmiFamily::AL2023 => Some(("/dev/xvda", 20 * GI)),
            AmiFamily::Bottlerocket => Some(("/dev/xvdb", 20 * GI)),
            AmiFamily::Windows2019 | AmiFamily::Windows2022 | AmiFamily::Windows2025 => {
                Some(("/dev/sda1", 50 * GI))
            }
            AmiFamily::Custom => None,
        }
    }
}

/// `spec.instanceStorePolicy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum InstanceStorePolicy {
    /// Local NVMe disks are striped and back `ephemeral-storage`.
    RAID0,
}

/// One `spec.blockDeviceMappings[]` entry (the fields the capacity formula reads).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlockDeviceMapping {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_name: Option<String>,
    #[serde(default)]
    pub root_volume: bool,
    /// `ebs.volumeSize` as a Kubernetes quantity (`100Gi`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_size: Option<String>,
}

/// Everything from an EC2NodeClass (and Karpenter's global options) that changes an
/// instance type's capacity, overhead or labels. `Default` = AL2023 with no overrides.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeClassSettings {
    pub ami_family: AmiFamily,
    /// `spec.kubelet.maxPods`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_pods: Option<u32>,
    /// `spec.kubelet.podsPerCore` (0 = unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pods_per_core: Option<u32>,
    /// `spec.kubelet.kubeReserved` (`cpu`, `memory`, `ephemeral-storage`, `pid`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub kube_reserved: BTreeMap<String, String>,
    /// `spec.kubelet.systemReserved`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub system_reserved: BTreeMap<String, String>,
    /// `spec.kubelet.evictionHard` (`memory.available`, `nodefs.available`, … ; values are
    /// quantities or percentages).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub eviction_hard: BTreeMap<String, String>,
    /// Karpenter's `--reserved-enis` (ENIs kept back from pod networking when sizing max pods).
    #[serde(default)]
    pub reserved_enis: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub block_device_mappings: Vec<BlockDeviceMapping>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_store_policy: Option<InstanceStorePolicy>,
    /// `spec.networkInterfaces` (empty = not set).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub network_interfaces: Vec<crate::network::NetworkInterface>,
    /// `spec.connectionTracking` is set (Nitro types only).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub connection_tracking: bool,
}

impl NodeClassSettings {
    /// Default settings for one AMI family.
    pub fn for_family(ami_family: AmiFamily) -> Self {
        NodeClassSettings {
            ami_family,
            ..NodeClassSettings::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_family_names() {
        assert_eq!(AmiFamily::parse("al2023"), Some(AmiFamily::AL2023));
        assert_eq!(
            AmiFamily::parse("Bottlerocket"),
            Some(AmiFamily::Bottlerocket)
        );
        assert_eq!(
            AmiFamily::parse("Windows2022"),
            Some(AmiFamily::Windows2022)
        );
        assert_eq!(AmiFamily::parse("Ubuntu"), None);
    }

    #[test]
    fn family_flags() {
        assert!(AmiFamily::AL2023.uses_eni_limited_memory_overhead());
        assert!(!AmiFamily::Bottlerocket.uses_eni_limited_memory_overhead());
        assert!(!AmiFamily::Bottlerocket.pods_per_core_enabled());
        assert!(!AmiFamily::Windows2019.eni_limited_pod_density());
        assert_eq!(AmiFamily::Custom.ephemeral_device(), None);
    }

    #[test]
    fn settings_deserialize_camel_case() {
        let s: NodeClassSettings = serde_json::from_str(
            r#"{"amiFamily":"Bottlerocket","maxPods":50,"kubeReserved":{"cpu":"200m"}}"#,
        )
        .unwrap();
        assert_eq!(s.ami_family, AmiFamily::Bottlerocket);
        assert_eq!(s.max_pods, Some(50));
        assert_eq!(s.kube_reserved["cpu"], "200m");
    }
}
