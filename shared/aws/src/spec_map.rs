//! Maps the SDK's `InstanceTypeInfo` onto the catalog's [`Ec2Spec`].
//!
//! Two fields are not in `DescribeInstanceTypes` (network bandwidth and trunk branch
//! interfaces come from Karpenter's generated tables); they are taken from the bundled spec
//! of the same name when there is one.

use aws_sdk_ec2::types::{InstanceStorageInfo, InstanceTypeInfo, NetworkInfo};
use kerf_catalog::network::EnaSupport;
use kerf_catalog::placement::Strategy;
use kerf_catalog::spec::{Accelerator, Gpu, InstanceStorage, NeuronDevice};
use kerf_catalog::{Ec2Spec, SpecSource};

fn u32_of(v: Option<i32>) -> Option<u32> {
    v.and_then(|n| u32::try_from(n).ok())
}

/// The default network card's ENI count, else the type-wide maximum.
fn max_enis(net: &NetworkInfo) -> Option<u32> {
    let card = net.default_network_card_index().unwrap_or(0);
    net.network_cards()
        .iter()
        .find(|c| c.network_card_index() == Some(card))
        .and_then(|c| u32_of(c.maximum_network_interfaces()))
        .or_else(|| u32_of(net.maximum_network_interfaces()))
}

/// `MaximumNetworkInterfaces` of each network card, by `NetworkCardIndex`; empty (not known)
/// when a card's index or limit is missing or the indices are not `0..n`.
fn network_cards(net: &NetworkInfo) -> Vec<u32> {
    let mut cards: Vec<(i32, u32)> = Vec::new();
    for c in net.network_cards() {
        let (Some(i), Some(max)) = (
            c.network_card_index(),
            u32_of(c.maximum_network_interfaces()),
        ) else {
            return Vec::new();
        };
        cards.push((i, max));
    }
    cards.sort_unstable();
    let contiguous = cards
        .iter()
        .enumerate()
        .all(|(n, (i, _))| usize::try_from(*i).is_ok_and(|i| i == n));
    if !contiguous {
        return Vec::new();
    }
    cards.into_iter().map(|(_, max)| max).collect()
}

fn ena_support(net: &NetworkInfo) -> Option<EnaSupport> {
    match net.ena_support()?.as_str() {
        "unsupported" => Some(EnaSupport::Unsupported),
        "supported" => Some(EnaSupport::Supported),
        "required" => Some(EnaSupport::Required),
        _ => None,
    }
}

fn storage(s: &InstanceStorageInfo) -> Option<InstanceStorage> {
    let total_gb = u64::try_from(s.total_size_in_gb()?).ok()?;
    let nvme = s
        .nvme_support()
        .is_some_and(|n| matches!(n.as_str(), "required" | "supported"));
    let disks = s
        .disks()
        .iter()
        .filter_map(|d| d.count())
        .filter_map(|c| u32::try_from(c).ok())
        .sum();
    Some(InstanceStorage {
        total_gb,
        nvme,
        disks: Some(disks),
    })
}

fn gpus(info: &InstanceTypeInfo) -> Vec<Gpu> {
    let Some(g) = info.gpu_info() else {
        return Vec::new();
    };
    g.gpus()
        .iter()
        .map(|d| Gpu {
            name: d.name().unwrap_or_default().to_string(),
            manufacturer: d.manufacturer().unwrap_or_default().to_string(),
            count: u32_of(d.count()).unwrap_or(0),
            memory_mib: d
                .memory_info()
                .and_then(|m| m.size_in_mib())
                .map_or(0, |m| m.max(0) as u64),
        })
        .collect()
}

fn neuron(info: &InstanceTypeInfo) -> Vec<NeuronDevice> {
    let Some(n) = info.neuron_info() else {
        return Vec::new();
    };
    n.neuron_devices()
        .iter()
        .map(|d| NeuronDevice {
            name: d.name().unwrap_or_default().to_string(),
            count: u32_of(d.count()).unwrap_or(0),
            cores_per_device: d.core_info().and_then(|c| u32_of(c.count())).unwrap_or(0),
        })
        .collect()
}

fn accelerators(info: &InstanceTypeInfo) -> Vec<Accelerator> {
    let Some(a) = info.inference_accelerator_info() else {
        return Vec::new();
    };
    a.accelerators()
        .iter()
        .map(|d| Accelerator {
            name: d.name().unwrap_or_default().to_string(),
            manufacturer: d.manufacturer().unwrap_or_default().to_string(),
            count: u32_of(d.count()).unwrap_or(0),
        })
        .collect()
}

/// The catalog spec of one described type; `None` without a name, vCPUs or memory.
pub fn spec_from_sdk(info: &InstanceTypeInfo) -> Option<Ec2Spec> {
    let name = info.instance_type()?.as_str().to_string();
    let vcpus = u32_of(info.v_cpu_info()?.default_v_cpus())?;
    let memory_mib = u64::try_from(info.memory_info()?.size_in_mib()?).ok()?;
    let proc = info.processor_info();
    let net = info.network_info();
    let ebs = info.ebs_info();
    let bundled = bundled_spec(&name);
    Some(Ec2Spec {
        source: SpecSource::Ec2,
        vcpus,
        memory_mib,
        architectures: proc
            .map(|p| {
                p.supported_architectures()
                    .iter()
                    .map(|a| a.as_str().to_string())
                    .collect()
            })
            .unwrap_or_default(),
        hypervisor: info.hypervisor().map(|h| h.as_str().to_string()),
        cpu_manufacturer: proc.and_then(|p| p.manufacturer()).map(str::to_string),
        clock_ghz: proc.and_then(|p| p.sustained_clock_speed_in_ghz()),
        bare_metal: info.bare_metal().unwrap_or(false),
        max_enis: net.and_then(max_enis),
        ipv4_per_eni: net.and_then(|n| u32_of(n.ipv4_addresses_per_interface())),
        eni_limited_pods: None,
        efa_max_interfaces: net
            .and_then(|n| n.efa_info())
            .and_then(|e| u32_of(e.maximum_efa_interfaces()))
            .unwrap_or(0),
        network_cards: net.map(network_cards).unwrap_or_default(),
        ena_support: net.and_then(ena_support),
        encryption_in_transit: net
            .and_then(|n| n.encryption_in_transit_supported())
            .unwrap_or(false),
        ebs_optimized: ebs
            .and_then(|e| e.ebs_optimized_support())
            .map_or_else(|| "default".to_string(), |s| s.as_str().to_string()),
        ebs_bandwidth_mbps: ebs
            .and_then(|e| e.ebs_optimized_info())
            .and_then(|o| o.maximum_bandwidth_in_mbps())
            .and_then(|b| u64::try_from(b).ok()),
        network_bandwidth_mbps: bundled.and_then(|b| b.network_bandwidth_mbps),
        gpus: gpus(info),
        neuron_devices: neuron(info),
        inference_accelerators: accelerators(info),
        instance_storage: info.instance_storage_info().and_then(storage),
        usage_classes: info
            .supported_usage_classes()
            .iter()
            .map(|u| u.as_str().to_string())
            .collect(),
        pod_eni: bundled.map_or(0, |b| b.pod_eni),
        placement_strategies: placement_strategies(info),
        name,
    })
}

/// `PlacementGroupInfo.SupportedStrategies` (strategies EC2 adds later are left out).
fn placement_strategies(info: &InstanceTypeInfo) -> Vec<Strategy> {
    info.placement_group_info()
        .map(|p| {
            p.supported_strategies()
                .iter()
                .filter_map(|s| Strategy::parse(s.as_str()))
                .collect()
        })
        .unwrap_or_default()
}

fn bundled_spec(name: &str) -> Option<&'static Ec2Spec> {
    let specs = kerf_catalog::bundled::bundled_specs().ok()?;
    specs
        .binary_search_by(|s| s.name.as_str().cmp(name))
        .ok()
        .map(|i| &specs[i])
}
