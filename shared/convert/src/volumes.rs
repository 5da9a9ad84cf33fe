//! PersistentVolumeClaims, PersistentVolumes, StorageClasses and CSINodes to the engine's
//! volume facts: each pod's volume topology, the CSI volumes it attaches and why it waits,
//! and each node's attach limits. Follows Karpenter's volume topology: a bound claim takes
//! its volume's node affinity, an unbound `WaitForFirstConsumer` claim its class's allowed
//! topologies; an unbound `Immediate` claim waits for the volume controller.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::storage::v1 as storage;
use kerf_engine::model::{
    AttachedVolume, EBS_CSI_DRIVER, Node, Pod, PodVolumes, VolumeTopology, VolumeWait,
    VolumeWaitKind,
};
use kerf_engine::requirements::{Operator, SelectorRequirement};

use crate::FieldError;
use crate::pod::requirement;

/// The in-tree EBS provisioner, migrated to the EBS CSI driver.
const IN_TREE_EBS: &str = "kubernetes.io/aws-ebs";
/// The EBS CSI driver's own zone key, which Karpenter reads as the zone.
const EBS_ZONE_KEY: &str = "topology.ebs.csi.aws.com/zone";

/// Where a pod volume's claim comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClaimSource {
    /// `persistentVolumeClaim.claimName`.
    Persistent,
    /// Created for the pod (an ephemeral volume's or a StatefulSet's claim template) with
    /// this StorageClass, used while the claim does not exist yet.
    Template { class: Option<String> },
}

/// A claim one of a pod's volumes uses (in the pod's namespace).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClaimRef {
    pub name: String,
    pub source: ClaimSource,
}

/// The claims a pod spec's volumes use; ephemeral volumes' claims are `<pod>-<volume>`.
pub fn claim_refs(spec: &core::PodSpec, pod_name: &str) -> Vec<ClaimRef> {
    let mut out = Vec::new();
    for v in spec.volumes.iter().flatten() {
        if let Some(c) = &v.persistent_volume_claim {
            out.push(ClaimRef {
                name: c.claim_name.clone(),
                source: ClaimSource::Persistent,
            });
        } else if let Some(t) = v
            .ephemeral
            .as_ref()
            .and_then(|e| e.volume_claim_template.as_ref())
        {
            out.push(ClaimRef {
                name: format!("{pod_name}-{}", v.name),
                source: ClaimSource::Template {
                    class: t.spec.storage_class_name.clone(),
                },
            });
        }
    }
    out
}

/// A claim as volume topology reads it.
#[derive(Clone, Debug, Default)]
struct Claim {
    volume: Option<String>,
    class: Option<String>,
    deleting: bool,
    lost: bool,
}

/// A volume: where it can be reached and the driver attaching it.
#[derive(Clone, Debug, Default)]
struct Volume {
    alternatives: Vec<Vec<SelectorRequirement>>,
    driver: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Binding {
    Immediate,
    WaitForFirstConsumer,
}

#[derive(Clone, Debug)]
struct Class {
    provisioner: String,
    binding: Binding,
    alternatives: Vec<Vec<SelectorRequirement>>,
}

/// The storage objects of a cluster, indexed for resolving pods' claims.
#[derive(Clone, Debug, Default)]
pub struct Storage {
    claims: BTreeMap<(String, String), Claim>,
    volumes: BTreeMap<String, Volume>,
    classes: BTreeMap<String, Class>,
}

impl Storage {
    /// True when no storage object was added (pods' claims then all count as missing).
    pub fn is_empty(&self) -> bool {
        self.claims.is_empty() && self.volumes.is_empty() && self.classes.is_empty()
    }

    /// Adds a PersistentVolumeClaim.
    pub fn add_claim(&mut self, c: &core::PersistentVolumeClaim) -> Result<(), FieldError> {
        let m = &c.metadata;
        let name = m
            .name
            .clone()
            .ok_or_else(|| FieldError::new("metadata.name", "missing"))?;
        let ns = m.namespace.clone().unwrap_or_else(|| "default".into());
        let spec = c.spec.as_ref();
        let claim = Claim {
            volume: spec
                .and_then(|s| s.volume_name.clone())
                .filter(|v| !v.is_empty()),
            class: spec
                .and_then(|s| s.storage_class_name.clone())
                .filter(|v| !v.is_empty()),
            deleting: m.deletion_timestamp.is_some(),
            lost: c
                .status
                .as_ref()
                .and_then(|s| s.phase.as_deref())
                .is_some_and(|p| p == "Lost"),
        };
        self.claims.insert((ns, name), claim);
        Ok(())
    }

    /// Adds a PersistentVolume.
    pub fn add_volume(&mut self, v: &core::PersistentVolume) -> Result<(), FieldError> {
        let name = v
            .metadata
            .name
            .clone()
            .ok_or_else(|| FieldError::new("metadata.name", "missing"))?;
        let Some(spec) = &v.spec else {
            self.volumes.insert(name, Volume::default());
            return Ok(());
        };
        let terms = spec
            .node_affinity
            .as_ref()
            .and_then(|a| a.required.as_ref())
            .map(|r| r.node_selector_terms.as_slice())
            .unwrap_or_default();
        // A local or hostPath volume's hostname pin is dropped, as Karpenter does: a
        // rescheduled pod cannot be held to a node that is going away.
        let node_local = spec.local.is_some() || spec.host_path.is_some();
        let mut alternatives = Vec::with_capacity(terms.len());
        for (i, t) in terms.iter().enumerate() {
            let f = format!("spec.nodeAffinity.required.nodeSelectorTerms[{i}]");
            let mut term = Vec::new();
            for (j, r) in t.match_expressions.iter().flatten().enumerate() {
                let mut s = requirement(r, &format!("{f}.matchExpressions[{j}]"))?;
                if node_local && s.key == kerf_engine::labels::HOSTNAME {
                    continue;
                }
                s.key = zone_key(&s.key);
                term.push(s);
            }
            alternatives.push(term);
        }
        alternatives.retain(|t| !t.is_empty());
        let driver = match (&spec.csi, &spec.aws_elastic_block_store) {
            (Some(csi), _) => Some(csi.driver.clone()),
            (None, Some(_)) => Some(EBS_CSI_DRIVER.to_string()),
            (None, None) => None,
        };
        self.volumes.insert(
            name,
            Volume {
                alternatives,
                driver,
            },
        );
        Ok(())
    }

    /// Adds a StorageClass.
    pub fn add_class(&mut self, s: &storage::StorageClass) -> Result<(), FieldError> {
        let name = s
            .metadata
            .name
            .clone()
            .ok_or_else(|| FieldError::new("metadata.name", "missing"))?;
        let binding = match s.volume_binding_mode.as_deref() {
            None | Some("Immediate") => Binding::Immediate,
            Some("WaitForFirstConsumer") => Binding::WaitForFirstConsumer,
            Some(other) => {
                return Err(FieldError::new(
                    "volumeBindingMode",
                    format!("unknown mode {other:?} (Immediate or WaitForFirstConsumer)"),
                ));
            }
        };
        let alternatives = s
            .allowed_topologies
            .iter()
            .flatten()
            .map(|t| {
                t.match_label_expressions
                    .iter()
                    .flatten()
                    .map(|e| SelectorRequirement {
                        key: zone_key(&e.key),
                        operator: Operator::In,
                        values: e.values.clone(),
                        min_values: None,
                    })
                    .collect::<Vec<_>>()
            })
            .filter(|t| !t.is_empty())
            .collect();
        self.classes.insert(
            name,
            Class {
                provisioner: s.provisioner.clone(),
                binding,
                alternatives,
            },
        );
        Ok(())
    }

    /// Sets the volume facts of `pod` from the claims its volumes use.
    pub fn resolve(&self, pod: &mut Pod, refs: &[ClaimRef]) {
        let mut out = PodVolumes::default();
        let bound = pod.node_name.is_some();
        for r in refs {
            let key = format!("{}/{}", pod.namespace, r.name);
            match self.claim_facts(&pod.namespace, r, bound) {
                Ok(f) => {
                    if !f.alternatives.is_empty() {
                        out.topology.push(VolumeTopology {
                            claim: key.clone(),
                            alternatives: f.alternatives,
                        });
                    }
                    if let Some(driver) = f.driver {
                        out.attached.push(AttachedVolume { driver, claim: key });
                    }
                }
                Err(kind) => {
                    out.wait.get_or_insert(VolumeWait { claim: key, kind });
                }
            }
        }
        pod.volumes = out;
    }

    /// One claim's topology and driver, or why the pod waits for it.
    fn claim_facts(&self, ns: &str, r: &ClaimRef, bound: bool) -> Result<Facts, VolumeWaitKind> {
        let owned = (ns.to_string(), r.name.clone());
        let claim = match (self.claims.get(&owned), &r.source) {
            (Some(c), _) => c.clone(),
            (None, ClaimSource::Template { class }) => Claim {
                class: class.clone(),
                ..Claim::default()
            },
            (None, ClaimSource::Persistent) => return Err(VolumeWaitKind::MissingClaim),
        };
        if claim.deleting {
            return Err(VolumeWaitKind::ClaimDeleting);
        }
        if claim.lost {
            return Err(VolumeWaitKind::ClaimLost);
        }
        // A bound pod's template claim is recreated wherever the pod goes next, so its
        // volume's zone does not hold the pod (as Karpenter does).
        let pinned = !(bound && matches!(r.source, ClaimSource::Template { .. }));
        let class = claim.class.as_ref().and_then(|c| self.classes.get(c));
        if let Some(v) = &claim.volume {
            let vol = self
                .volumes
                .get(v)
                .ok_or_else(|| VolumeWaitKind::MissingVolume { volume: v.clone() })?;
            return Ok(Facts {
                alternatives: if pinned {
                    vol.alternatives.clone()
                } else {
                    Vec::new()
                },
                driver: vol.driver.clone().or_else(|| class.and_then(Class::driver)),
            });
        }
        let name = claim.class.ok_or(VolumeWaitKind::NoStorageClass)?;
        let class = class.ok_or(VolumeWaitKind::MissingStorageClass {
            class: name.clone(),
        })?;
        if class.binding == Binding::Immediate && !bound {
            return Err(VolumeWaitKind::ImmediateUnbound { class: name });
        }
        Ok(Facts {
            alternatives: if pinned {
                class.alternatives.clone()
            } else {
                Vec::new()
            },
            driver: class.driver(),
        })
    }
}

/// What one ready claim asks of a node.
struct Facts {
    alternatives: Vec<Vec<SelectorRequirement>>,
    driver: Option<String>,
}

impl Class {
    /// The driver that attaches the class's volumes (`None` for classes that provision
    /// nothing attachable, such as statically provisioned local volumes).
    fn driver(&self) -> Option<String> {
        match self.provisioner.as_str() {
            IN_TREE_EBS => Some(EBS_CSI_DRIVER.to_string()),
            "kubernetes.io/no-provisioner" | "" => None,
            p => Some(p.to_string()),
        }
    }
}

fn zone_key(key: &str) -> String {
    match key {
        EBS_ZONE_KEY => kerf_engine::labels::ZONE.to_string(),
        k => k.to_string(),
    }
}

/// A CSINode's attach limits: its node's name and `allocatable.count` by driver.
pub fn csi_limits(c: &storage::CSINode) -> Result<(String, BTreeMap<String, u32>), FieldError> {
    let node = c
        .metadata
        .name
        .clone()
        .ok_or_else(|| FieldError::new("metadata.name", "missing"))?;
    let mut limits = BTreeMap::new();
    for (i, d) in c.spec.drivers.iter().enumerate() {
        let Some(count) = d.allocatable.as_ref().and_then(|a| a.count) else {
            continue;
        };
        let count = u32::try_from(count).map_err(|_| {
            FieldError::new(
                format!("spec.drivers[{i}].allocatable.count"),
                format!("{count}: must be greater than or equal to 0"),
            )
        })?;
        limits.insert(d.name.clone(), count);
    }
    Ok((node, limits))
}

/// Gives each node the attach limits of its CSINode (matched by name).
pub fn apply_limits(nodes: &mut [Node], limits: &BTreeMap<String, BTreeMap<String, u32>>) {
    for n in nodes {
        if let Some(l) = limits.get(&n.name) {
            n.volume_limits = l.clone();
        }
    }
}

#[cfg(test)]
#[path = "volumes_tests.rs"]
mod tests;
