//! What a pod's persistent volumes ask of a node: where its volumes can be reached (volume
//! topology), which CSI volumes it attaches (counted against a node's attach limit), and why
//! it must wait when its volumes are not ready for scheduling. Adapters resolve these from
//! PersistentVolumeClaims, PersistentVolumes and StorageClasses; the engine only reads them.

use std::fmt;

use crate::requirements::SelectorRequirement;

/// The EBS CSI driver, whose volumes a new NodeClaim's instance type bounds.
pub const EBS_CSI_DRIVER: &str = "ebs.csi.aws.com";

/// Where one claim's volume can be reached: a node must satisfy one of the alternatives
/// (terms are ORed, the requirements within a term ANDed).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct VolumeTopology {
    /// The claim, `namespace/name`.
    pub claim: String,
    pub alternatives: Vec<Vec<SelectorRequirement>>,
}

/// A CSI volume the pod attaches: distinct claims of one driver on a node count against its
/// attach limit for that driver.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AttachedVolume {
    pub driver: String,
    /// The claim, `namespace/name` (two pods sharing a claim attach it once).
    pub claim: String,
}

/// Why a claim keeps its pod from being scheduled yet.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum VolumeWaitKind {
    /// The PersistentVolumeClaim does not exist.
    MissingClaim,
    /// The claim is being deleted.
    ClaimDeleting,
    /// The claim is `Lost`: its volume is gone.
    ClaimLost,
    /// The claim is bound to a PersistentVolume that does not exist.
    MissingVolume { volume: String },
    /// The claim is unbound and names no StorageClass.
    NoStorageClass,
    /// The claim's StorageClass does not exist.
    MissingStorageClass { class: String },
    /// The claim is unbound and its StorageClass binds `Immediate`ly: the volume controller
    /// binds it first.
    ImmediateUnbound { class: String },
}

/// A claim the pod waits for, and why.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct VolumeWait {
    /// The claim, `namespace/name`.
    pub claim: String,
    pub kind: VolumeWaitKind,
}

impl fmt::Display for VolumeWait {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.claim;
        match &self.kind {
            VolumeWaitKind::MissingClaim => write!(f, "persistentvolumeclaim {c} not found"),
            VolumeWaitKind::ClaimDeleting => {
                write!(f, "persistentvolumeclaim {c} is being deleted")
            }
            VolumeWaitKind::ClaimLost => {
                write!(
                    f,
                    "persistentvolumeclaim {c} is Lost: its volume no longer exists"
                )
            }
            VolumeWaitKind::MissingVolume { volume } => write!(
                f,
                "persistentvolumeclaim {c} is bound to persistentvolume {volume}, which is not found"
            ),
            VolumeWaitKind::NoStorageClass => write!(
                f,
                "persistentvolumeclaim {c} is unbound and names no storageclass"
            ),
            VolumeWaitKind::MissingStorageClass { class } => write!(
                f,
                "persistentvolumeclaim {c} uses storageclass {class}, which is not found"
            ),
            VolumeWaitKind::ImmediateUnbound { class } => write!(
                f,
                "persistentvolumeclaim {c} is unbound and storageclass {class} binds Immediate: \
                 waiting for its volume to be bound"
            ),
        }
    }
}

/// A pod's volume facts (empty for a pod without persistent volumes).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct PodVolumes {
    /// One entry per claim with a topology; every entry must hold (AND across claims).
    pub topology: Vec<VolumeTopology>,
    /// The CSI volumes it attaches.
    pub attached: Vec<AttachedVolume>,
    /// Set when the pod cannot be scheduled until a claim is ready.
    pub wait: Option<VolumeWait>,
}

impl PodVolumes {
    /// True for a pod without persistent volumes.
    pub fn is_empty(&self) -> bool {
        self.topology.is_empty() && self.attached.is_empty() && self.wait.is_none()
    }
}
