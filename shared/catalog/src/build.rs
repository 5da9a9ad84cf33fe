//! Builds an [`InstanceType`] from an EC2 spec, its zones, a price source and the
//! EC2NodeClass settings: labels, capacity, overhead, allocatable and offerings.

use crate::capacity;
use crate::labels;
use crate::network;
use crate::overhead;
use crate::pricing::PriceSource;
use crate::settings::{AmiFamily, NodeClassSettings};
use crate::spec::Ec2Spec;
use crate::{CapacityType, CatalogError, InstanceType, Offering};

/// The builder the bundled catalog and the AWS adapter share.
///
/// `zones` are the zones that offer the type (for a nodeclass: ∩ its subnet zones). Each zone
/// gets one offering per capacity type the type supports (on-demand, spot); an offering is
/// unavailable when it has no price (price 0) or the type cannot run under the nodeclass.
pub fn instance_type(
    spec: &Ec2Spec,
    zones: &[String],
    prices: &dyn PriceSource,
    settings: &NodeClassSettings,
) -> Result<InstanceType, CatalogError> {
    let wrap = |e: CatalogError| CatalogError::InstanceType {
        name: spec.name.clone(),
        message: e.to_string(),
    };
    let capacity = capacity::capacity(spec, settings).map_err(wrap)?;
    let overhead = overhead::overhead(spec, &capacity, settings).map_err(wrap)?;
    let mut allocatable = capacity.clone();
    // Overhead values are never negative, so subtracting part by part equals subtracting
    // the total (and avoids building it).
    allocatable.sub_floor(&overhead.kube_reserved);
    allocatable.sub_floor(&overhead.system_reserved);
    allocatable.sub_floor(&overhead.eviction_threshold);
    Ok(InstanceType {
        name: spec.name.clone(),
        labels: labels::compute(spec, settings.ami_family),
        capacity,
        overhead,
        allocatable,
        offerings: offerings(spec, zones, prices, compatible_with_class(spec, settings)),
        ebs_volume_limit: crate::volumes::ebs_volume_limit(spec),
    })
}

/// Whether the type can run under the AMI family at all (Karpenter drops these offerings):
/// AL2023 does not support `a1.*`, Windows needs amd64, and the arch must be known.
pub fn compatible(spec: &Ec2Spec, family: AmiFamily) -> bool {
    let Some(arch) = spec.kube_arch() else {
        return false;
    };
    if family == AmiFamily::AL2023 && spec.name.starts_with("a1.") {
        return false;
    }
    !(family.is_windows() && arch != "amd64")
}

/// Whether the type can run under the node class (Karpenter's
/// `IsCompatibleWithNodeClass`): the AMI family's rule, the listed network interfaces and,
/// with connection tracking set, a Nitro hypervisor (see [`crate::network`]).
pub fn compatible_with_class(spec: &Ec2Spec, settings: &NodeClassSettings) -> bool {
    compatible(spec, settings.ami_family)
        && network::supports_interfaces(spec, &settings.network_interfaces)
        && (!settings.connection_tracking || network::supports_connection_tracking(spec))
}

/// The capacity types a spec can be bought as, in offering order.
pub fn capacity_types(spec: &Ec2Spec) -> Vec<CapacityType> {
    [CapacityType::OnDemand, CapacityType::Spot]
        .into_iter()
        .filter(|ct| spec.supports(ct.as_str()))
        .collect()
}

fn offerings(
    spec: &Ec2Spec,
    zones: &[String],
    prices: &dyn PriceSource,
    ok: bool,
) -> Vec<Offering> {
    let types = capacity_types(spec);
    let mut out = Vec::with_capacity(zones.len() * types.len());
    for zone in zones {
        for ct in &types {
            let price = match ct {
                CapacityType::Spot => prices.spot(&spec.name, zone),
                _ => prices.on_demand(&spec.name),
            };
            out.push(Offering {
                zone: zone.clone(),
                capacity_type: *ct,
                price: price.unwrap_or(0.0),
                available: ok && price.is_some(),
                partition: None,
                reservation: None,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::capacity::{GIB, MIB};
    use crate::pricing::StaticPrices;
    use crate::settings::{BlockDeviceMapping, InstanceStorePolicy};
    use crate::spec::InstanceStorage;

    fn spec(name: &str, vcpus: u32, mib: u64, arch: &str, enis: u32, ips: u32) -> Ec2Spec {
        Ec2Spec {
            name: name.into(),
            vcpus,
            memory_mib: mib,
            architectures: vec![arch.into()],
            max_enis: Some(enis),
            ipv4_per_eni: Some(ips),
            ..Ec2Spec::default()
        }
    }

    fn m5_large() -> Ec2Spec {
        spec("m5.large", 2, 8192, "x86_64", 3, 10)
    }

    fn build(s: &Ec2Spec, settings: &NodeClassSettings) -> InstanceType {
        instance_type(s, &[], &StaticPrices::default(), settings).unwrap()
    }

    /// (cpu milli, memory MiB, pods, ephemeral GiB) of allocatable.
    fn alloc(it: &InstanceType) -> (i64, i64, i64, i64) {
        let a = &it.allocatable;
        (
            a.get("cpu"),
            a.get("memory") / 1000 / MIB,
            a.get("pods") / 1000,
            a.get("ephemeral-storage") / 1000 / GIB,
        )
    }

    #[test]
    fn worked_example_m5_large() {
        let it = build(&m5_large(), &NodeClassSettings::default());
        assert_eq!(alloc(&it), (1930, 6903, 29, 17));
        assert_eq!(it.capacity.get("memory"), 7577 * MIB * 1000);
    }

    #[test]
    fn worked_example_m6g_large_has_cma() {
        let it = build(
            &spec("m6g.large", 2, 8192, "arm64", 3, 10),
            &NodeClassSettings::default(),
        );
        assert_eq!(alloc(&it), (1930, 6844, 29, 17));
    }

    #[test]
    fn worked_example_c5_4xlarge() {
        let it = build(
            &spec("c5.4xlarge", 16, 32768, "x86_64", 8, 30),
            &NodeClassSettings::default(),
        );
        assert_eq!(alloc(&it), (15890, 27381, 234, 17));
    }

    #[test]
    fn max_pods_changes_pods_but_not_al2023_memory() {
        let s = NodeClassSettings {
            max_pods: Some(110),
            ..NodeClassSettings::default()
        };
        let it = build(&m5_large(), &s);
        assert_eq!(alloc(&it), (1930, 6903, 110, 17));
    }

    #[test]
    fn pods_per_core_caps_pods() {
        let s = NodeClassSettings {
            pods_per_core: Some(4),
            ..NodeClassSettings::default()
        };
        assert_eq!(alloc(&build(&m5_large(), &s)).2, 8);
        let br = NodeClassSettings {
            pods_per_core: Some(4),
            ..NodeClassSettings::for_family(AmiFamily::Bottlerocket)
        };
        assert_eq!(
            alloc(&build(&m5_large(), &br)).2,
            29,
            "Bottlerocket ignores podsPerCore"
        );
    }

    #[test]
    fn bottlerocket_sizes_memory_on_max_pods() {
        let s = NodeClassSettings {
            max_pods: Some(110),
            ..NodeClassSettings::for_family(AmiFamily::Bottlerocket)
        };
        // 7577 - (11*110 + 255) - 100
        assert_eq!(alloc(&build(&m5_large(), &s)).1, 7577 - 1465 - 100);
        let d = build(
            &m5_large(),
            &NodeClassSettings::for_family(AmiFamily::Bottlerocket),
        );
        assert_eq!(alloc(&d), (1930, 6903, 29, 17));
    }

    #[test]
    fn windows_runs_110_pods_on_50gi() {
        let it = build(
            &m5_large(),
            &NodeClassSettings::for_family(AmiFamily::Windows2022),
        );
        // 7577 - (11*110 + 255) - 100; 50Gi - 1Gi - 5Gi
        assert_eq!(alloc(&it), (1930, 7577 - 1465 - 100, 110, 44));
        assert_eq!(
            it.allocatable.get("vpc.amazonaws.com/PrivateIPv4Address"),
            9000
        );
    }

    #[test]
    fn kube_and_system_reserved_and_eviction_overrides() {
        let s = NodeClassSettings {
            kube_reserved: BTreeMap::from([
                ("cpu".into(), "200m".into()),
                ("memory".into(), "1Gi".into()),
            ]),
            system_reserved: BTreeMap::from([("cpu".into(), "100m".into())]),
            eviction_hard: BTreeMap::from([
                ("memory.available".into(), "10%".into()),
                ("nodefs.available".into(), "15%".into()),
            ]),
            ..NodeClassSettings::default()
        };
        let it = build(&m5_large(), &s);
        let mem_cap = 7577 * MIB;
        let evict = (mem_cap as f64 / 100.0 * 10.0).ceil() as i64;
        assert_eq!(it.allocatable.get("cpu"), 2000 - 200 - 100);
        assert_eq!(it.allocatable.get("memory"), (mem_cap - GIB - evict) * 1000);
        let disk = 20 * GIB;
        let nodefs = (disk as f64 / 100.0 * 15.0).ceil() as i64;
        assert_eq!(
            it.allocatable.get("ephemeral-storage"),
            (disk - GIB - nodefs) * 1000
        );
    }

    #[test]
    fn block_devices_and_raid0_set_ephemeral_storage() {
        let mut s = NodeClassSettings {
            block_device_mappings: vec![BlockDeviceMapping {
                device_name: Some("/dev/xvda".into()),
                root_volume: false,
                volume_size: Some("100Gi".into()),
            }],
            ..NodeClassSettings::default()
        };
        assert_eq!(alloc(&build(&m5_large(), &s)).3, 89, "100Gi - 1Gi - 10Gi");
        let mut d = m5_large();
        d.instance_storage = Some(InstanceStorage {
            total_gb: 75,
            nvme: true,
            disks: Some(1),
        });
        s.instance_store_policy = Some(InstanceStorePolicy::RAID0);
        let it = build(&d, &s);
        assert_eq!(it.capacity.get("ephemeral-storage"), 75_000_000_000 * 1000);
    }

    #[test]
    fn reserved_enis_shrink_pods_only() {
        let s = NodeClassSettings {
            reserved_enis: 1,
            ..NodeClassSettings::default()
        };
        assert_eq!(alloc(&build(&m5_large(), &s)), (1930, 6903, 20, 17));
    }

    #[test]
    fn bad_quantities_name_the_type() {
        let mut s = NodeClassSettings::default();
        s.kube_reserved.insert("memory".into(), "lots".into());
        let e = instance_type(&m5_large(), &[], &StaticPrices::default(), &s).unwrap_err();
        assert!(
            e.to_string().contains("m5.large") && e.to_string().contains("lots"),
            "{e}"
        );
    }

    #[test]
    fn offerings_per_zone_and_capacity_type() {
        let prices = StaticPrices::new(BTreeMap::from([("m5.large".into(), 0.096)]));
        let zones = vec!["z-a".to_string(), "z-b".to_string()];
        let it =
            instance_type(&m5_large(), &zones, &prices, &NodeClassSettings::default()).unwrap();
        assert_eq!(it.offerings.len(), 4);
        assert!(it.offerings.iter().all(|o| o.available));
        let mut od_only = m5_large();
        od_only.name = "x1.large".into();
        od_only.usage_classes = vec!["on-demand".into()];
        let it = instance_type(&od_only, &zones, &prices, &NodeClassSettings::default()).unwrap();
        assert_eq!(it.offerings.len(), 2);
        assert!(
            it.offerings.iter().all(|o| !o.available && o.price == 0.0),
            "no price: unavailable"
        );
    }

    #[test]
    fn incompatible_types_have_no_available_offerings() {
        let prices = StaticPrices::new(BTreeMap::from([("a1.large".into(), 0.05)]));
        let a1 = spec("a1.large", 2, 4096, "arm64", 3, 10);
        let zones = vec!["z".to_string()];
        let al2023 = instance_type(&a1, &zones, &prices, &NodeClassSettings::default()).unwrap();
        assert!(al2023.offerings.iter().all(|o| !o.available));
        let al2 = NodeClassSettings::for_family(AmiFamily::AL2);
        assert!(
            instance_type(&a1, &zones, &prices, &al2)
                .unwrap()
                .offerings
                .iter()
                .all(|o| o.available)
        );
        assert!(!compatible(&a1, AmiFamily::Windows2022));
    }
}
