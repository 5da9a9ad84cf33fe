//! The raw EC2 facts about one instance type (a subset of `DescribeInstanceTypes`) that the
//! capacity, overhead and label formulas read. Serialised in camelCase, omitting defaults.

use serde::{Deserialize, Serialize};

/// Where a spec's fields came from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SpecSource {
    /// `DescribeInstanceTypes` output (live, or moto's dump of it for the bundled data).
    #[default]
    Ec2,
    /// Rebuilt from Karpenter's published instance-type reference (labels and allocatable)
    /// because the EC2 dump lacks the type; ENI counts are unknown, `eni_limited_pods` is set.
    KarpenterReference,
}

/// One GPU entry (`GpuInfo.Gpus[]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Gpu {
    pub name: String,
    pub manufacturer: String,
    pub count: u32,
    /// Memory per GPU.
    #[serde(rename = "memoryMiB")]
    pub memory_mib: u64,
}

/// One Neuron device entry (`NeuronInfo.NeuronDevices[]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NeuronDevice {
    pub name: String,
    pub count: u32,
    pub cores_per_device: u32,
}

/// One inference accelerator entry (`InferenceAcceleratorInfo.Accelerators[]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Accelerator {
    pub name: String,
    pub manufacturer: String,
    pub count: u32,
}

/// Local instance storage (`InstanceStorageInfo`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InstanceStorage {
    /// Total size in decimal gigabytes.
    #[serde(rename = "totalGB")]
    pub total_gb: u64,
    /// NVMe `required` or `supported`.
    pub nvme: bool,
    /// Number of instance-store disks (`Disks[].Count` summed); `None` when unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disks: Option<u32>,
}

/// The EC2 spec of one instance type.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Ec2Spec {
    pub name: String,
    #[serde(default)]
    pub source: SpecSource,
    /// `VCpuInfo.DefaultVCpus`.
    pub vcpus: u32,
    /// `MemoryInfo.SizeInMiB`.
    #[serde(rename = "memoryMiB")]
    pub memory_mib: u64,
    /// `ProcessorInfo.SupportedArchitectures` as EC2 spells them (`x86_64`, `arm64`, `i386`).
    #[serde(default)]
    pub architectures: Vec<String>,
    /// `nitro`, `xen`; `None` for bare metal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hypervisor: Option<String>,
    /// `ProcessorInfo.Manufacturer` as EC2 spells it (`Intel`, `AMD`, `AWS`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_manufacturer: Option<String>,
    /// `ProcessorInfo.SustainedClockSpeedInGhz`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_ghz: Option<f64>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub bare_metal: bool,
    /// `MaximumNetworkInterfaces` of the default network card.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_enis: Option<u32>,
    /// `NetworkInfo.Ipv4AddressesPerInterface`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipv4_per_eni: Option<u32>,
    /// Known ENI-limited pod count (reservedENIs = 0) when the ENI counts are unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eni_limited_pods: Option<u32>,
    /// `NetworkInfo.EfaInfo.MaximumEfaInterfaces`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub efa_max_interfaces: u32,
    /// `MaximumNetworkInterfaces` of each network card, by `NetworkCardIndex`; empty when not
    /// known.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub network_cards: Vec<u32>,
    /// `NetworkInfo.EnaSupport`; `None` when not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ena_support: Option<crate::network::EnaSupport>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub encryption_in_transit: bool,
    /// `EbsInfo.EbsOptimizedSupport` (`default`, `supported`, `unsupported`).
    #[serde(default = "ebs_default", skip_serializing_if = "is_ebs_default")]
    pub ebs_optimized: String,
    /// `EbsOptimizedInfo.MaximumBandwidthInMbps`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ebs_bandwidth_mbps: Option<u64>,
    /// From Karpenter's generated bandwidth table (not in `DescribeInstanceTypes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_bandwidth_mbps: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpus: Vec<Gpu>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub neuron_devices: Vec<NeuronDevice>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inference_accelerators: Vec<Accelerator>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_storage: Option<InstanceStorage>,
    /// `SupportedUsageClasses` (`on-demand`, `spot`, `capacity-block`).
    #[serde(default = "usage_default")]
    pub usage_classes: Vec<String>,
    /// Trunk branch interfaces (`vpc.amazonaws.com/pod-eni`), from Karpenter's generated
    /// VPC limits table (not in `DescribeInstanceTypes`); 0 when not trunking-compatible.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pod_eni: u32,
    /// `PlacementGroupInfo.SupportedStrategies`; empty when not known (the bundled data does
    /// not record it), which lets the type join any placement group.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub placement_strategies: Vec<crate::placement::Strategy>,
}

impl Default for Ec2Spec {
    fn default() -> Self {
        Ec2Spec {
            name: String::new(),
            source: SpecSource::Ec2,
            vcpus: 0,
            memory_mib: 0,
            architectures: Vec::new(),
            hypervisor: None,
            cpu_manufacturer: None,
            clock_ghz: None,
            bare_metal: false,
            max_enis: None,
            ipv4_per_eni: None,
            eni_limited_pods: None,
            efa_max_interfaces: 0,
            network_cards: Vec::new(),
            ena_support: None,
            encryption_in_transit: false,
            ebs_optimized: ebs_default(),
            ebs_bandwidth_mbps: None,
            network_bandwidth_mbps: None,
            gpus: Vec::new(),
            neuron_devices: Vec::new(),
            inference_accelerators: Vec::new(),
            instance_storage: None,
            usage_classes: usage_default(),
            pod_eni: 0,
            placement_strategies: Vec::new(),
        }
    }
}

impl Ec2Spec {
    /// Whether the type can launch into a placement group of `strategy`; `None` when its
    /// supported strategies are not known.
    pub fn supports_placement(&self, strategy: crate::placement::Strategy) -> Option<bool> {
        (!self.placement_strategies.is_empty())
            .then(|| self.placement_strategies.contains(&strategy))
    }

    /// The first supported architecture Kubernetes knows, as `kubernetes.io/arch` names it.
    pub fn kube_arch(&self) -> Option<&'static str> {
        self.architectures.iter().find_map(|a| match a.as_str() {
            "x86_64" => Some("amd64"),
            "arm64" => Some("arm64"),
            _ => None,
        })
    }

    /// True when EC2 lists `arm64` first (Graviton: 64 MiB CMA reservation).
    pub fn arm64_first(&self) -> bool {
        self.architectures.first().is_some_and(|a| a == "arm64")
    }

    /// True when the type can be bought as `class` (`on-demand`, `spot`).
    pub fn supports(&self, class: &str) -> bool {
        self.usage_classes.iter().any(|c| c == class)
    }
}

fn ebs_default() -> String {
    "default".to_string()
}

fn is_ebs_default(s: &str) -> bool {
    s == "default"
}

fn usage_default() -> Vec<String> {
    vec!["on-demand".to_string(), "spot".to_string()]
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_compact_record_with_defaults() {
        let s: Ec2Spec = serde_json::from_str(
            r#"{"name":"m5.large","vcpus":2,"memoryMiB":8192,"architectures":["x86_64"],
                "maxEnis":3,"ipv4PerEni":10}"#,
        )
        .unwrap();
        assert_eq!(s.source, SpecSource::Ec2);
        assert_eq!(s.ebs_optimized, "default");
        assert!(s.supports("spot") && s.supports("on-demand"));
        assert_eq!(s.kube_arch(), Some("amd64"));
        assert!(!s.arm64_first());
    }

    #[test]
    fn arch_skips_i386() {
        let s = Ec2Spec {
            architectures: vec!["i386".into(), "x86_64".into()],
            ..Ec2Spec::default()
        };
        assert_eq!(s.kube_arch(), Some("amd64"));
    }

    #[test]
    fn round_trips() {
        let s = Ec2Spec {
            name: "g5.xlarge".into(),
            source: SpecSource::KarpenterReference,
            gpus: vec![Gpu {
                name: "A10G".into(),
                manufacturer: "NVIDIA".into(),
                count: 1,
                memory_mib: 24576,
            }],
            ..Ec2Spec::default()
        };
        let back: Ec2Spec = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(s, back);
    }
}
