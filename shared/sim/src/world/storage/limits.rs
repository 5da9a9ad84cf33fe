//! The EBS attach limit the simulated driver reports in a Node's CSINode
//! (`allocatable.count`): the catalog's rule, so the simulated kubelet and the engine agree on
//! what a new node can attach.

use kerf_catalog::spec::Ec2Spec;

/// The EBS volumes pods may attach on an instance of `spec` (`None`: a fact is missing).
pub fn sim_ebs_attach_limit(spec: &Ec2Spec) -> Option<u32> {
    kerf_catalog::volumes::ebs_volume_limit(spec)
}

/// The limit of the instance type `name` from the bundled specs (`None`: unknown type).
pub fn sim_ebs_attach_limit_of(name: &str) -> Option<u32> {
    let specs = kerf_catalog::bundled::bundled_specs().ok()?;
    specs
        .iter()
        .find(|s| s.name == name)
        .and_then(sim_ebs_attach_limit)
}
