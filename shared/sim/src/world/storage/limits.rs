//! The EBS attach limit of an instance type, as the EBS CSI driver reports it in the Node's
//! CSINode (`allocatable.count`): Nitro instances share 28 attachment slots between ENIs,
//! NVMe instance stores and EBS volumes, Xen instances have 39; one slot goes to the root
//! volume. This is the sim's own estimate from the catalog's spec (hypervisor, ENIs); the
//! catalog's function replaces it once the catalog carries one.

use kerf_catalog::spec::Ec2Spec;

/// Attachment slots of a Nitro instance.
const NITRO_SLOTS: u32 = 28;
/// Attachment slots of any other instance (Xen).
const XEN_SLOTS: u32 = 39;
/// The root volume's slot.
const ROOT_VOLUME: u32 = 1;

/// The EBS volumes a pod may attach on an instance of `spec` (at least 1).
pub fn sim_ebs_attach_limit(spec: &Ec2Spec) -> u32 {
    let slots = match spec.hypervisor.as_deref() {
        Some("nitro") => NITRO_SLOTS.saturating_sub(spec.max_enis.unwrap_or(0)),
        _ => XEN_SLOTS,
    };
    slots.saturating_sub(ROOT_VOLUME).max(1)
}

/// The limit of the instance type `name` from the bundled specs (`None`: unknown type).
pub fn sim_ebs_attach_limit_of(name: &str) -> Option<u32> {
    let specs = kerf_catalog::bundled::bundled_specs().ok()?;
    specs
        .iter()
        .find(|s| s.name == name)
        .map(sim_ebs_attach_limit)
}
