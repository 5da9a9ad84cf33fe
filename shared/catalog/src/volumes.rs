//! How many EBS volumes pods may attach to a node of an instance type, by the AWS EBS CSI
//! driver's rule: a Nitro instance shares 28 attachment slots between EBS volumes, network
//! interfaces and NVMe instance-store disks; other instances attach up to 39 volumes. One slot
//! is the root volume's. The count is never below 1.
//!
//! Kerf reserves the type's *maximum* network interfaces (the driver counts those attached
//! when it starts, which the VPC CNI raises as pods arrive), so the figure is the one that
//! still holds on a node that has grown all its interfaces.

use crate::spec::Ec2Spec;

/// Attachment slots of a Nitro instance.
pub const NITRO_ATTACHMENTS: u32 = 28;
/// EBS volumes a non-Nitro (Xen) instance can attach.
pub const XEN_ATTACHMENTS: u32 = 39;
/// The root volume's slot.
const ROOT_VOLUME: u32 = 1;

/// The EBS volume limit of a type, `None` when the spec lacks a fact the rule needs (its
/// network interfaces on Nitro, or the number of its NVMe instance-store disks).
pub fn ebs_volume_limit(spec: &Ec2Spec) -> Option<u32> {
    if !is_nitro(spec) {
        return Some(XEN_ATTACHMENTS - ROOT_VOLUME);
    }
    let enis = spec.max_enis?;
    let nvme_disks = match &spec.instance_storage {
        Some(s) if s.nvme => s.disks?,
        _ => 0,
    };
    let used = enis.saturating_add(nvme_disks).saturating_add(ROOT_VOLUME);
    Some(NITRO_ATTACHMENTS.saturating_sub(used).max(1))
}

/// Nitro hypervisor, or bare metal (every bare-metal type runs on the Nitro system and
/// shares its attachment slots).
fn is_nitro(spec: &Ec2Spec) -> bool {
    spec.hypervisor.as_deref() == Some("nitro") || spec.bare_metal
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::InstanceStorage;

    fn spec(hypervisor: Option<&str>, enis: Option<u32>) -> Ec2Spec {
        Ec2Spec {
            name: "t".into(),
            hypervisor: hypervisor.map(str::to_string),
            max_enis: enis,
            ..Ec2Spec::default()
        }
    }

    #[test]
    fn nitro_shares_slots_with_interfaces_and_the_root_volume() {
        assert_eq!(ebs_volume_limit(&spec(Some("nitro"), Some(3))), Some(24));
    }

    #[test]
    fn nvme_instance_store_disks_take_slots() {
        let mut s = spec(Some("nitro"), Some(15));
        s.instance_storage = Some(InstanceStorage {
            total_gb: 3600,
            nvme: true,
            disks: Some(4),
        });
        assert_eq!(ebs_volume_limit(&s), Some(8));
    }

    #[test]
    fn never_below_one() {
        let mut s = spec(Some("nitro"), Some(24));
        s.instance_storage = Some(InstanceStorage {
            total_gb: 1,
            nvme: true,
            disks: Some(8),
        });
        assert_eq!(ebs_volume_limit(&s), Some(1));
    }

    #[test]
    fn xen_attaches_thirty_eight_besides_the_root() {
        assert_eq!(ebs_volume_limit(&spec(Some("xen"), Some(15))), Some(38));
    }

    #[test]
    fn bare_metal_counts_as_nitro() {
        let mut s = spec(None, Some(15));
        s.bare_metal = true;
        assert_eq!(ebs_volume_limit(&s), Some(12));
    }

    #[test]
    fn unknown_facts_give_no_limit() {
        assert_eq!(ebs_volume_limit(&spec(Some("nitro"), None)), None);
        let mut s = spec(Some("nitro"), Some(3));
        s.instance_storage = Some(InstanceStorage {
            total_gb: 75,
            nvme: true,
            disks: None,
        });
        assert_eq!(ebs_volume_limit(&s), None);
    }

    #[test]
    fn bundled_types_follow_the_rule() {
        let specs = crate::bundled::bundled_specs().unwrap();
        let find = |n: &str| specs.iter().find(|s| s.name == n).unwrap();
        assert_eq!(ebs_volume_limit(find("m5.large")), Some(24));
        assert_eq!(ebs_volume_limit(find("m5d.large")), Some(23));
        assert_eq!(ebs_volume_limit(find("i3.16xlarge")), Some(38));
    }
}
