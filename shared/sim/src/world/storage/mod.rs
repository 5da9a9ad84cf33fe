//! Simulated storage: the Amazon EBS CSI driver (`ebs.csi.aws.com`) and the parts of
//! Kubernetes around it, all through the API server with the real kinds:
//!
//! - [`provision`]: the external provisioner. A claim of an EBS StorageClass gets a
//!   PersistentVolume in one zone (`spec.nodeAffinity` on `topology.kubernetes.io/zone`):
//!   at once for `Immediate` classes, in the zone of the node the scheduler picked for
//!   `WaitForFirstConsumer` ones.
//! - [`placement`]: the volume rules of kube-scheduler (volume zone, unbound immediate
//!   claims, the node's attach limit from its CSINode).
//! - [`attach`]: the CSI node plugin's CSINode, the attach/detach controller and the external
//!   attacher (VolumeAttachments attached a few seconds after a pod needs them, detached a
//!   few seconds after the last pod using them on the node is gone).
//! - [`limits`]: the EBS attach limit of an instance type.

pub mod attach;
pub mod limits;
pub mod placement;
pub mod provision;

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim, Pod};
use k8s_openapi::api::storage::v1::{CSINode, StorageClass, VolumeAttachment};

use crate::cached::Cached;

/// The EBS CSI driver's name (provisioner, attacher, CSINode driver).
pub const EBS_DRIVER: &str = "ebs.csi.aws.com";

/// A StorageClass's `volumeBindingMode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BindingMode {
    /// Provisioned and bound when the claim is created.
    Immediate,
    /// Provisioned when a pod using the claim is scheduled, in its node's zone.
    WaitForFirstConsumer,
}

impl BindingMode {
    /// The class's mode (Kubernetes' default is `Immediate`).
    pub fn of(class: &StorageClass) -> Self {
        match class.volume_binding_mode.as_deref() {
            Some("WaitForFirstConsumer") => BindingMode::WaitForFirstConsumer,
            _ => BindingMode::Immediate,
        }
    }
}

/// What a pod's claim is, for scheduling.
#[derive(Debug, Clone, PartialEq)]
pub enum ClaimState<'a> {
    /// The claim does not exist (yet).
    Missing,
    /// Bound to this volume.
    Bound(&'a PersistentVolume),
    /// Unbound, waiting for its first consumer to be scheduled (EBS classes only).
    WaitForConsumer(&'a PersistentVolumeClaim, &'a StorageClass),
    /// Unbound and not provisioned by scheduling: an Immediate claim not bound yet, or a
    /// class nothing here provisions.
    Unbound,
}

/// The storage objects of the cluster, read together.
#[derive(Debug, Clone, Default)]
pub struct Volumes {
    pub classes: BTreeMap<String, StorageClass>,
    pub claims: BTreeMap<(String, String), PersistentVolumeClaim>,
    pub volumes: BTreeMap<String, PersistentVolume>,
    pub attachments: Vec<VolumeAttachment>,
    pub csinodes: BTreeMap<String, CSINode>,
}

fn name_of(m: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> String {
    m.name.clone().unwrap_or_default()
}

impl Volumes {
    /// Reads every storage object from the store.
    pub fn read(reads: &Cached) -> Result<Self, kube::Error> {
        let classes = reads.list::<StorageClass>("storage.k8s.io/storageclasses")?;
        let claims = reads.list::<PersistentVolumeClaim>("/persistentvolumeclaims")?;
        let volumes = reads.list::<PersistentVolume>("/persistentvolumes")?;
        let attachments = reads.list::<VolumeAttachment>("storage.k8s.io/volumeattachments")?;
        let csinodes = reads.list::<CSINode>("storage.k8s.io/csinodes")?;
        Ok(Volumes {
            classes: classes
                .iter()
                .map(|c| (name_of(&c.metadata), c.clone()))
                .collect(),
            claims: claims
                .iter()
                .map(|c| {
                    let ns = c.metadata.namespace.clone().unwrap_or_default();
                    ((ns, name_of(&c.metadata)), c.clone())
                })
                .collect(),
            volumes: volumes
                .iter()
                .map(|v| (name_of(&v.metadata), v.clone()))
                .collect(),
            attachments: attachments.to_vec(),
            csinodes: csinodes
                .iter()
                .map(|c| (name_of(&c.metadata), c.clone()))
                .collect(),
        })
    }

    /// The state of claim `name` in `ns`.
    pub fn claim_state(&self, ns: &str, name: &str) -> ClaimState<'_> {
        let Some(claim) = self.claims.get(&(ns.to_string(), name.to_string())) else {
            return ClaimState::Missing;
        };
        if let Some(pv) = bound_volume(claim).and_then(|v| self.volumes.get(v)) {
            return ClaimState::Bound(pv);
        }
        let class = claim_class(claim).and_then(|c| self.classes.get(c));
        match class {
            Some(c) if ebs(c) && BindingMode::of(c) == BindingMode::WaitForFirstConsumer => {
                ClaimState::WaitForConsumer(claim, c)
            }
            _ => ClaimState::Unbound,
        }
    }

    /// The PersistentVolume names of a pod's claims that are bound.
    pub fn pod_volumes(&self, p: &Pod) -> Vec<String> {
        let ns = p.metadata.namespace.as_deref().unwrap_or_default();
        pod_claims(p)
            .iter()
            .filter_map(|c| self.claims.get(&(ns.to_string(), c.clone())))
            .filter_map(|c| bound_volume(c).map(str::to_string))
            .collect()
    }
}

/// The claim names a pod mounts.
pub fn pod_claims(p: &Pod) -> Vec<String> {
    let volumes = p.spec.as_ref().and_then(|s| s.volumes.as_ref());
    volumes
        .into_iter()
        .flatten()
        .filter_map(|v| v.persistent_volume_claim.as_ref())
        .map(|c| c.claim_name.clone())
        .collect()
}

/// The volume a claim is bound to.
pub fn bound_volume(c: &PersistentVolumeClaim) -> Option<&str> {
    c.spec
        .as_ref()?
        .volume_name
        .as_deref()
        .filter(|v| !v.is_empty())
}

/// A claim's StorageClass name.
pub fn claim_class(c: &PersistentVolumeClaim) -> Option<&str> {
    c.spec.as_ref()?.storage_class_name.as_deref()
}

/// Whether the EBS CSI driver provisions for this class.
pub fn ebs(c: &StorageClass) -> bool {
    c.provisioner == EBS_DRIVER
}

/// The zones a PersistentVolume's node affinity allows (`None`: any).
pub fn volume_zones(pv: &PersistentVolume) -> Option<Vec<String>> {
    let terms = &pv
        .spec
        .as_ref()?
        .node_affinity
        .as_ref()?
        .required
        .as_ref()?
        .node_selector_terms;
    let zones: Vec<String> = terms
        .iter()
        .flat_map(|t| t.match_expressions.iter().flatten())
        .filter(|e| e.key == kerf_labels::ZONE && e.operator == "In")
        .flat_map(|e| e.values.clone().unwrap_or_default())
        .collect();
    (!zones.is_empty()).then_some(zones)
}

/// The zones a StorageClass's `allowedTopologies` allow (`None`: any).
pub fn class_zones(c: &StorageClass) -> Option<Vec<String>> {
    let zones: Vec<String> = c
        .allowed_topologies
        .iter()
        .flatten()
        .flat_map(|t| t.match_label_expressions.iter().flatten())
        .filter(|e| e.key == kerf_labels::ZONE || e.key == "topology.ebs.csi.aws.com/zone")
        .flat_map(|e| e.values.clone())
        .collect();
    (!zones.is_empty()).then_some(zones)
}

/// One round of the storage controllers that run beside the API server (the external
/// provisioner's `Immediate` claims); `region` gives the zones. Returns the claims bound.
pub async fn step(
    client: &kube::Client,
    reads: &Cached,
    region: &str,
) -> Result<usize, kube::Error> {
    let vols = Volumes::read(reads)?;
    let zones = kerf_catalog::bundled::bundled_zones(region)
        .map(<[String]>::to_vec)
        .unwrap_or_default();
    provision::step(client, &vols, &zones).await
}

/// A short stable hex digest (FNV-1a) for generated names.
pub(crate) fn digest(s: &str) -> String {
    let h = s.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{h:016x}")
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod world_tests;
