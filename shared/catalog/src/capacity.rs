//! Node capacity from an EC2 spec, exactly as Karpenter's `computeCapacity` derives it:
//! cpu, memory (VM overhead, Graviton CMA), ephemeral-storage, pods and extended resources.

use crate::network::{self, NetworkInterface};
use crate::quantity;
use crate::settings::{InstanceStorePolicy, NodeClassSettings};
use crate::spec::Ec2Spec;
use crate::{CatalogError, Resources};

/// `--vm-memory-overhead-percent` default: memory the hypervisor and firmware keep.
pub const VM_MEMORY_OVERHEAD_PERCENT: f64 = 0.075;
/// Graviton (arm64) instances reserve 64 MiB of CMA memory the OS cannot use.
pub const ARM64_CMA_MIB: i64 = 64;
/// Bytes per MiB.
pub const MIB: i64 = 1 << 20;
/// Bytes per GiB.
pub const GIB: i64 = 1 << 30;
/// Windows nodes run a fixed number of pods.
pub const WINDOWS_MAX_PODS: i64 = 110;

/// Well-known extended resource names.
pub mod resource {
    pub const NVIDIA_GPU: &str = "nvidia.com/gpu";
    pub const AMD_GPU: &str = "amd.com/gpu";
    pub const HABANA_GAUDI: &str = "habana.ai/gaudi";
    pub const NEURON: &str = "aws.amazon.com/neuron";
    pub const NEURON_CORE: &str = "aws.amazon.com/neuroncore";
    pub const POD_ENI: &str = "vpc.amazonaws.com/pod-eni";
    pub const EFA: &str = "vpc.amazonaws.com/efa";
    pub const PRIVATE_IPV4: &str = "vpc.amazonaws.com/PrivateIPv4Address";
}

/// Node memory capacity in MiB: `M' - ceil(M' * 0.075)` with `M'` = size minus the arm64 CMA.
pub fn memory_mib(spec: &Ec2Spec) -> i64 {
    let mut mib = spec.memory_mib as i64;
    if spec.arm64_first() {
        mib -= ARM64_CMA_MIB;
    }
    // Same float expression, in the same order, as Karpenter (bytes * pct / 1024 / 1024).
    let bytes = (mib * MIB) as f64;
    let overhead = (bytes * VM_MEMORY_OVERHEAD_PERCENT / 1024.0 / 1024.0).ceil() as i64;
    mib - overhead
}

/// `usableENIs * (IPv4 per ENI - 1) + 2`, usable = default-card ENIs - reserved - the
/// `efa-only` interfaces on card 0 (0 ENIs: 0 pods).
/// Specs without ENI counts (Karpenter-reference fallback) return their recorded pod count;
/// `reserved_enis` and the interfaces cannot be applied to those.
pub fn eni_limited_pods(
    spec: &Ec2Spec,
    reserved_enis: u32,
    interfaces: &[NetworkInterface],
) -> i64 {
    match (spec.max_enis, spec.ipv4_per_eni) {
        (Some(enis), Some(ips)) => {
            let efa_only = network::efa_only_on_card(interfaces, 0);
            let usable = (i64::from(enis) - i64::from(reserved_enis) - i64::from(efa_only)).max(0);
            if usable == 0 {
                0
            } else {
                usable * (i64::from(ips) - 1) + 2
            }
        }
        _ => spec.eni_limited_pods.map_or(0, i64::from),
    }
}

/// Max pods: kubelet `maxPods`, else ENI-limited (Windows: 110), capped by `podsPerCore * vCPUs`.
pub fn pods(spec: &Ec2Spec, settings: &NodeClassSettings) -> i64 {
    let family = settings.ami_family;
    let mut count = match settings.max_pods {
        Some(n) => i64::from(n),
        None if family.eni_limited_pod_density() => {
            eni_limited_pods(spec, settings.reserved_enis, &settings.network_interfaces)
        }
        None => WINDOWS_MAX_PODS,
    };
    if let Some(ppc) = settings.pods_per_core.filter(|p| *p > 0)
        && family.pods_per_core_enabled()
    {
        count = count.min(i64::from(ppc) * i64::from(spec.vcpus));
    }
    count
}

/// `ephemeral-storage` capacity in bytes (see Karpenter's `ephemeralStorage`).
pub fn ephemeral_storage_bytes(
    spec: &Ec2Spec,
    settings: &NodeClassSettings,
) -> Result<i64, CatalogError> {
    if settings.instance_store_policy == Some(InstanceStorePolicy::RAID0)
        && let Some(store) = &spec.instance_storage
    {
        return Ok(store.total_gb as i64 * 1_000_000_000);
    }
    let bdms = &settings.block_device_mappings;
    if !bdms.is_empty() {
        if let Some(size) = bdms
            .iter()
            .find(|b| b.root_volume)
            .and_then(|b| b.volume_size.as_deref())
        {
            return bytes(size);
        }
        match settings.ami_family.ephemeral_device() {
            None => {
                // Custom: the last mapping, else the default EBS volume size.
                let last = bdms.last().and_then(|b| b.volume_size.as_deref());
                return last.map_or(Ok(20 * GIB), bytes);
            }
            Some((device, _)) => {
                let size = bdms
                    .iter()
                    .find(|b| b.device_name.as_deref() == Some(device))
                    .and_then(|b| b.volume_size.as_deref());
                if let Some(size) = size {
                    return bytes(size);
                }
            }
        }
    }
    Ok(settings
        .ami_family
        .ephemeral_device()
        .map_or(20 * GIB, |(_, size)| size))
}

fn bytes(q: &str) -> Result<i64, CatalogError> {
    Ok(quantity::parse(q)? / 1000)
}

/// Extended resources (GPUs, Neuron, EFA, pod ENIs, Windows IPv4), zero counts omitted. EFA
/// is the class's `efa-only` interfaces when it lists interfaces, else the type's maximum.
pub fn extended(spec: &Ec2Spec, settings: &NodeClassSettings) -> Vec<(&'static str, i64)> {
    let gpus = |maker: &str| -> i64 {
        spec.gpus
            .iter()
            .filter(|g| g.manufacturer.eq_ignore_ascii_case(maker))
            .map(|g| i64::from(g.count))
            .sum()
    };
    let neuron: i64 = spec.neuron_devices.iter().map(|d| i64::from(d.count)).sum();
    let neuron_cores = spec
        .neuron_devices
        .first()
        .map_or(0, |d| i64::from(d.count) * i64::from(d.cores_per_device));
    let mut out = vec![
        (resource::NVIDIA_GPU, gpus("NVIDIA")),
        (resource::AMD_GPU, gpus("AMD")),
        (resource::HABANA_GAUDI, gpus("Habana")),
        (resource::NEURON, neuron),
        (resource::NEURON_CORE, neuron_cores),
        (resource::POD_ENI, i64::from(spec.pod_eni)),
        (
            resource::EFA,
            i64::from(network::efa_capacity(spec, &settings.network_interfaces)),
        ),
    ];
    if settings.ami_family.is_windows() {
        let ips = spec.ipv4_per_eni.map_or(0, |n| i64::from(n) - 1);
        out.push((resource::PRIVATE_IPV4, ips));
    }
    out.retain(|(_, n)| *n > 0);
    out
}

/// The full capacity list, in milli-units.
pub fn capacity(spec: &Ec2Spec, settings: &NodeClassSettings) -> Result<Resources, CatalogError> {
    let mut r = Resources::new();
    r.set("cpu", i64::from(spec.vcpus) * 1000);
    r.set("memory", memory_mib(spec) * MIB * 1000);
    r.set(
        "ephemeral-storage",
        ephemeral_storage_bytes(spec, settings)? * 1000,
    );
    r.set("pods", pods(spec, settings) * 1000);
    for (name, n) in extended(spec, settings) {
        r.set(name, n * 1000);
    }
    Ok(r)
}
