//! The single-valued labels Karpenter's `computeRequirements`
//! gives an instance type (`node.kubernetes.io/instance-type`, arch, os, `karpenter.k8s.aws/*`).

use std::collections::BTreeMap;

use crate::settings::AmiFamily;
use crate::spec::Ec2Spec;

pub use kerf_labels::aws::DOMAIN;
pub use kerf_labels::{ARCH, CAPACITY_TYPE, INSTANCE_TYPE, OS, REGION, WINDOWS_BUILD, ZONE};

/// `category`, `generation` per Karpenter's regex `(^[a-z]+)(\-[0-9]+tb)?([0-9]+).*\.`
/// (`m5d.large` → `m`, `5`; `u-6tb1.metal` → `u`, `1`).
pub fn category_and_generation(name: &str) -> Option<(&str, &str)> {
    let dot = name.rfind('.')?;
    let head = &name[..dot];
    let cat_len = head.bytes().take_while(u8::is_ascii_lowercase).count();
    if cat_len == 0 {
        return None;
    }
    let (category, mut rest) = head.split_at(cat_len);
    if let Some(tb) = strip_tb(rest) {
        rest = tb;
    }
    let gen_len = rest.bytes().take_while(u8::is_ascii_digit).count();
    (gen_len > 0).then(|| (category, &rest[..gen_len]))
}

/// Strips a `-<digits>tb` prefix (the memory size of `u-*tb*` types), if present and
/// followed by the generation digit.
fn strip_tb(s: &str) -> Option<&str> {
    let after = s.strip_prefix('-')?;
    let digits = after.bytes().take_while(u8::is_ascii_digit).count();
    let tail = after[digits..].strip_prefix("tb")?;
    (digits > 0 && tail.starts_with(|c: char| c.is_ascii_digit())).then_some(tail)
}

/// Lower-case, spaces to dashes (`Radeon Pro V520` → `radeon-pro-v520`).
pub fn kebab(s: &str) -> String {
    s.to_lowercase().replace(' ', "-")
}

/// All single-valued labels of an instance type under an AMI family.
pub fn compute(spec: &Ec2Spec, family: AmiFamily) -> BTreeMap<String, String> {
    let mut l = Labels(BTreeMap::new());
    l.put(INSTANCE_TYPE, spec.name.clone());
    if let Some(arch) = spec.kube_arch() {
        l.put(ARCH, arch.to_string());
    }
    l.put(
        OS,
        if family.is_windows() {
            "windows"
        } else {
            "linux"
        }
        .to_string(),
    );
    if let Some(build) = family.windows_build() {
        l.put(WINDOWS_BUILD, build.to_string());
    }
    name_labels(&mut l, &spec.name);
    hardware_labels(&mut l, spec);
    gpu_labels(&mut l, spec);
    accelerator_labels(&mut l, spec);
    l.0
}

struct Labels(BTreeMap<String, String>);

impl Labels {
    fn put(&mut self, key: &str, value: String) {
        self.0.insert(key.to_string(), value);
    }

    fn k(&mut self, key: &str, value: impl ToString) {
        let mut full = String::with_capacity(DOMAIN.len() + 1 + key.len());
        full.push_str(DOMAIN);
        full.push('/');
        full.push_str(key);
        self.0.insert(full, value.to_string());
    }
}

fn name_labels(l: &mut Labels, name: &str) {
    if let Some((category, generation)) = category_and_generation(name) {
        l.k("instance-category", category);
        l.k("instance-generation", generation);
    }
    if let Some((family, size)) = name.split_once('.') {
        l.k("instance-family", family);
        l.k("instance-size", size);
        l.k("instance-capability-flex", family.contains("-flex"));
    }
}

fn hardware_labels(l: &mut Labels, spec: &Ec2Spec) {
    l.k("instance-cpu", spec.vcpus);
    if let Some(m) = &spec.cpu_manufacturer {
        l.k("instance-cpu-manufacturer", kebab(m));
    }
    // Karpenter reads a missing clock speed as 0.
    let ghz = spec.clock_ghz.unwrap_or(0.0);
    l.k(
        "instance-cpu-sustained-clock-speed-mhz",
        (ghz * 1000.0).round() as i64,
    );
    l.k("instance-memory", spec.memory_mib);
    if let Some(bw) = spec
        .ebs_bandwidth_mbps
        .filter(|_| spec.ebs_optimized == "default")
    {
        l.k("instance-ebs-bandwidth", bw);
    }
    if let Some(bw) = spec.network_bandwidth_mbps {
        l.k("instance-network-bandwidth", bw);
    }
    if let Some(store) = spec.instance_storage.as_ref().filter(|s| s.nvme) {
        l.k("instance-local-nvme", store.total_gb);
    }
    l.k(
        "instance-hypervisor",
        spec.hypervisor.as_deref().unwrap_or(""),
    );
    l.k(
        "instance-encryption-in-transit-supported",
        spec.encryption_in_transit,
    );
}

fn gpu_labels(l: &mut Labels, spec: &Ec2Spec) {
    if let [gpu] = spec.gpus.as_slice() {
        l.k("instance-gpu-name", kebab(&gpu.name));
        l.k("instance-gpu-manufacturer", kebab(&gpu.manufacturer));
        l.k("instance-gpu-count", gpu.count);
        l.k("instance-gpu-memory", gpu.memory_mib);
    }
}

/// Neuron devices win over the (legacy) inference-accelerator entry they duplicate.
fn accelerator_labels(l: &mut Labels, spec: &Ec2Spec) {
    let (name, manufacturer, count) =
        match (&spec.neuron_devices[..], &spec.inference_accelerators[..]) {
            ([d], _) => (kebab(&d.name), "aws".to_string(), d.count),
            ([], [a]) => (kebab(&a.name), kebab(&a.manufacturer), a.count),
            _ => return,
        };
    l.k("instance-accelerator-name", name);
    l.k("instance-accelerator-manufacturer", manufacturer);
    l.k("instance-accelerator-count", count);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn category_and_generation_follow_the_regex() {
        let cg = category_and_generation;
        assert_eq!(cg("m5d.large"), Some(("m", "5")));
        assert_eq!(cg("u-6tb1.metal"), Some(("u", "1")));
        assert_eq!(cg("u7i-12tb.224xlarge"), Some(("u", "7")));
        assert_eq!(cg("c7i-flex.large"), Some(("c", "7")));
        assert_eq!(cg("p6-b200.48xlarge"), Some(("p", "6")));
        assert_eq!(cg("mac2-m2pro.metal"), Some(("mac", "2")));
        assert_eq!(cg("weird"), None);
        assert_eq!(cg("x.large"), None);
    }

    #[test]
    fn windows_families_label_os_and_build() {
        let spec = Ec2Spec {
            name: "m5.large".into(),
            architectures: vec!["x86_64".into()],
            ..Ec2Spec::default()
        };
        let l = compute(&spec, AmiFamily::Windows2022);
        assert_eq!(l[OS], "windows");
        assert_eq!(l[WINDOWS_BUILD], "10.0.20348");
        let l = compute(&spec, AmiFamily::AL2023);
        assert_eq!(l[OS], "linux");
        assert!(!l.contains_key(WINDOWS_BUILD));
        assert_eq!(l["karpenter.k8s.aws/instance-capability-flex"], "false");
    }
}
