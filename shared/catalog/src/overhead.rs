//! Node overhead exactly as Karpenter computes it: kube-reserved (cpu ranges, `11*pods+255` Mi
//! memory, 1Gi storage), system-reserved, and hard-eviction thresholds (100Mi, 10% nodefs,
//! percentages), each overridable from the EC2NodeClass kubelet settings.

use std::collections::BTreeMap;

use crate::capacity::{self, MIB};
use crate::quantity::{self, Milli};
use crate::settings::NodeClassSettings;
use crate::spec::Ec2Spec;
use crate::{CatalogError, Overhead, Resources};

/// kube-reserved cpu: (range start, range end, fraction) in millicores.
const CPU_RANGES: [(i64, i64, f64); 4] = [
    (0, 1000, 0.06),
    (1000, 2000, 0.01),
    (2000, 4000, 0.005),
    (4000, 1 << 31, 0.0025),
];

/// Reserved-map keys that are node resources (`pid` is not schedulable and is ignored).
const RESERVABLE: [&str; 3] = ["cpu", "memory", "ephemeral-storage"];

/// Default kube-reserved cpu in millicores for `vcpus` cores; each range's share is truncated.
pub fn kube_reserved_cpu_millis(vcpus: u32) -> Milli {
    let cpu = i64::from(vcpus) * 1000;
    CPU_RANGES
        .iter()
        .filter(|(start, _, _)| cpu >= *start)
        .map(|(start, end, pct)| {
            let span = if cpu < *end { cpu - start } else { end - start };
            (span as f64 * pct) as i64
        })
        .sum()
}

/// Default kube-reserved memory in MiB: `11 * pods + 255`.
pub fn kube_reserved_memory_mib(pods: i64) -> i64 {
    11 * pods + 255
}

/// kube-reserved: defaults, then each key of `kubelet.kubeReserved` replaces its default.
/// `pods` is the node's max pods; AL2/AL2023/Custom size memory on ENI-limited pods instead.
pub fn kube_reserved(
    spec: &Ec2Spec,
    pods: i64,
    settings: &NodeClassSettings,
) -> Result<Resources, CatalogError> {
    let p = if settings.ami_family.uses_eni_limited_memory_overhead() {
        capacity::eni_limited_pods(spec, 0, &settings.network_interfaces)
    } else {
        pods
    };
    let mut r = Resources::new();
    r.set("cpu", kube_reserved_cpu_millis(spec.vcpus));
    r.set("memory", kube_reserved_memory_mib(p) * MIB * 1000);
    r.set("ephemeral-storage", capacity::GIB * 1000);
    apply_overrides(&mut r, &settings.kube_reserved)?;
    Ok(r)
}

/// system-reserved: only what `kubelet.systemReserved` sets.
pub fn system_reserved(settings: &NodeClassSettings) -> Result<Resources, CatalogError> {
    let mut r = Resources::new();
    apply_overrides(&mut r, &settings.system_reserved)?;
    Ok(r)
}

fn apply_overrides(r: &mut Resources, map: &BTreeMap<String, String>) -> Result<(), CatalogError> {
    for (k, v) in map.iter().filter(|(k, _)| RESERVABLE.contains(&k.as_str())) {
        let q = quantity::parse(v)?;
        if q < 0 {
            // Karpenter's API validation rejects negative reservations too.
            return Err(CatalogError::Quantity(v.clone()));
        }
        r.set(k, q);
    }
    Ok(())
}

/// Hard-eviction thresholds: 100Mi memory and ceil(10%) of ephemeral storage, replaced by
/// `evictionHard["memory.available"]` / `["nodefs.available"]` (a percentage applies to
/// the capacity; `100%` disables the threshold). `memory` and `storage` are capacities in
/// milli-units.
pub fn eviction_threshold(
    memory: Milli,
    storage: Milli,
    settings: &NodeClassSettings,
) -> Result<Resources, CatalogError> {
    let mut r = Resources::new();
    r.set("memory", 100 * MIB * 1000);
    r.set(
        "ephemeral-storage",
        ceil_percent_bytes(storage / 1000, 10.0) * 1000,
    );
    if let Some(v) = settings.eviction_hard.get("memory.available") {
        r.set("memory", signal(memory, v)?);
    }
    if let Some(v) = settings.eviction_hard.get("nodefs.available") {
        r.set("ephemeral-storage", signal(storage, v)?);
    }
    Ok(r)
}

/// One eviction signal against a capacity (milli-units): a quantity, or a percentage of it.
fn signal(capacity: Milli, value: &str) -> Result<Milli, CatalogError> {
    match value.trim().strip_suffix('%') {
        Some(p) => {
            let pct: f64 = p
                .trim()
                .parse()
                .map_err(|_| CatalogError::Quantity(value.to_string()))?;
            if !(0.0..=100.0).contains(&pct) {
                return Err(CatalogError::Quantity(value.to_string()));
            }
            let pct = if pct == 100.0 { 0.0 } else { pct };
            Ok(ceil_percent_bytes(capacity / 1000, pct) * 1000)
        }
        None => match quantity::parse(value)? {
            q if q < 0 => Err(CatalogError::Quantity(value.to_string())),
            q => Ok(q),
        },
    }
}

/// `ceil(bytes / 100 * pct)`, in Karpenter's float order.
fn ceil_percent_bytes(bytes: i64, pct: f64) -> i64 {
    (bytes as f64 / 100.0 * pct).ceil() as i64
}

/// The complete overhead for a spec whose capacity is already computed.
pub fn overhead(
    spec: &Ec2Spec,
    capacity: &Resources,
    settings: &NodeClassSettings,
) -> Result<Overhead, CatalogError> {
    let pods = capacity.get("pods") / 1000;
    Ok(Overhead {
        kube_reserved: kube_reserved(spec, pods, settings)?,
        system_reserved: system_reserved(settings)?,
        eviction_threshold: eviction_threshold(
            capacity.get("memory"),
            capacity.get("ephemeral-storage"),
            settings,
        )?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_ranges_match_the_reference() {
        let got: Vec<_> = [1, 2, 4, 8, 16, 64, 96]
            .map(kube_reserved_cpu_millis)
            .to_vec();
        assert_eq!(got, vec![60, 70, 80, 90, 110, 230, 310]);
    }

    #[test]
    fn memory_is_eleven_per_pod_plus_255() {
        assert_eq!(kube_reserved_memory_mib(29), 574);
        assert_eq!(kube_reserved_memory_mib(234), 2829);
    }

    #[test]
    fn eviction_defaults_and_percentages() {
        let s = NodeClassSettings::default();
        let mem = 7577 * MIB * 1000;
        let disk = 20 * capacity::GIB * 1000;
        let r = eviction_threshold(mem, disk, &s).unwrap();
        assert_eq!(r.get("memory"), 100 * MIB * 1000);
        assert_eq!(r.get("ephemeral-storage"), 2 * capacity::GIB * 1000);

        let mut s = NodeClassSettings::default();
        s.eviction_hard
            .insert("memory.available".into(), "5%".into());
        s.eviction_hard
            .insert("nodefs.available".into(), "100%".into());
        let r = eviction_threshold(mem, disk, &s).unwrap();
        assert_eq!(
            r.get("memory"),
            ((7577 * MIB) as f64 / 100.0 * 5.0).ceil() as i64 * 1000
        );
        assert_eq!(r.get("ephemeral-storage"), 0);

        s.eviction_hard
            .insert("memory.available".into(), "500Mi".into());
        let r = eviction_threshold(mem, disk, &s).unwrap();
        assert_eq!(r.get("memory"), 500 * MIB * 1000);
    }

    #[test]
    fn bad_percentages_are_errors() {
        let mut s = NodeClassSettings::default();
        s.eviction_hard
            .insert("memory.available".into(), "x%".into());
        assert!(eviction_threshold(1, 1, &s).is_err());
        s.eviction_hard
            .insert("memory.available".into(), "150%".into());
        assert!(eviction_threshold(1, 1, &s).is_err());
    }

    #[test]
    fn reserved_overrides_replace_single_keys_and_ignore_pid() {
        let mut s = NodeClassSettings::default();
        s.kube_reserved.insert("cpu".into(), "250m".into());
        s.kube_reserved.insert("pid".into(), "1000".into());
        s.system_reserved.insert("memory".into(), "1Gi".into());
        let spec = Ec2Spec {
            vcpus: 2,
            max_enis: Some(3),
            ipv4_per_eni: Some(10),
            ..Ec2Spec::default()
        };
        let kr = kube_reserved(&spec, 29, &s).unwrap();
        assert_eq!(kr.get("cpu"), 250);
        assert_eq!(kr.get("memory"), 574 * MIB * 1000);
        assert!(!kr.0.contains_key("pid"));
        assert_eq!(
            system_reserved(&s).unwrap().get("memory"),
            capacity::GIB * 1000
        );
    }
}
