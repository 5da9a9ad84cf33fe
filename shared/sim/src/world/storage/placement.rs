//! kube-scheduler's volume rules, for the simulated scheduler: a pod whose claim is missing
//! or is an unbound `Immediate` claim stays pending; a bound volume's node affinity (its
//! zone) and an unbound `WaitForFirstConsumer` claim's `allowedTopologies` restrict the
//! nodes it may go to; a node whose CSINode attach limit the pod's unique EBS claims would
//! exceed is ruled out (NodeVolumeLimits). The restrictions reach the placement as the
//! engine's volume facts, which filter nodes without bending topology-spread domains.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Pod;

use super::attach::attach_limit;
use super::{ClaimState, EBS_DRIVER, Volumes, class_zones, pod_claims, volume_zones};

/// A claim, by namespace and name.
pub type ClaimKey = (String, String);

/// What a pod's volumes require of its node.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PodVolumes {
    /// The zones it may run in (`None`: any).
    pub zones: Option<BTreeSet<String>>,
    /// Its EBS claims (what the attach limit counts).
    pub ebs: BTreeSet<ClaimKey>,
    /// Its `WaitForFirstConsumer` claims, to provision in the chosen node's zone.
    pub consumer: Vec<ClaimKey>,
}

impl PodVolumes {
    fn restrict(&mut self, zones: Option<Vec<String>>) {
        let Some(z) = zones else {
            return;
        };
        let z: BTreeSet<String> = z.into_iter().collect();
        self.zones = Some(match self.zones.take() {
            Some(have) => have.intersection(&z).cloned().collect(),
            None => z,
        });
    }
}

/// What a pod's volumes require, or why it cannot be scheduled yet (kube-scheduler's
/// message).
pub fn pod_volumes(vols: &Volumes, p: &Pod) -> Result<PodVolumes, String> {
    let ns = p.metadata.namespace.clone().unwrap_or_default();
    let mut out = PodVolumes::default();
    for c in pod_claims(p) {
        let key = (ns.clone(), c.clone());
        match vols.claim_state(&ns, &c) {
            ClaimState::Missing => return Err(format!("persistentvolumeclaim \"{c}\" not found")),
            ClaimState::Unbound => {
                return Err("pod has unbound immediate PersistentVolumeClaims".into());
            }
            ClaimState::Bound(pv) => {
                out.restrict(volume_zones(pv));
                let csi = pv.spec.as_ref().and_then(|s| s.csi.as_ref());
                if csi.is_some_and(|d| d.driver == EBS_DRIVER) {
                    out.ebs.insert(key);
                }
            }
            ClaimState::WaitForConsumer(_, class) => {
                out.restrict(class_zones(class));
                out.ebs.insert(key.clone());
                out.consumer.push(key);
            }
        }
    }
    Ok(out)
}

/// The unique EBS claims of the pods bound to each node.
pub fn node_claims(vols: &Volumes, pods: &[Pod]) -> BTreeMap<String, BTreeSet<ClaimKey>> {
    let mut out: BTreeMap<String, BTreeSet<ClaimKey>> = BTreeMap::new();
    for p in pods {
        let Some(node) = p.spec.as_ref().and_then(|s| s.node_name.clone()) else {
            continue;
        };
        if let Ok(v) = pod_volumes(vols, p) {
            out.entry(node).or_default().extend(v.ebs);
        }
    }
    out
}

/// Whether `v`'s claims would take `node` past its attach limit.
pub fn exceeds_limit(
    vols: &Volumes,
    counts: &BTreeMap<String, BTreeSet<ClaimKey>>,
    node: &str,
    v: &PodVolumes,
) -> bool {
    let Some(limit) = attach_limit(vols, node) else {
        return false;
    };
    let empty = BTreeSet::new();
    let have = counts.get(node).unwrap_or(&empty);
    have.union(&v.ebs).count() > limit
}

/// `v` as the engine's volume facts: its zones a volume term that narrows the node (never the
/// domains topology spread counts, as kube-scheduler's VolumeBinding and VolumeZone filters
/// are apart from PodTopologySpread), its EBS claims counted against attach limits.
pub fn engine_volumes(v: &PodVolumes) -> kerf_engine::model::PodVolumes {
    use kerf_engine::model::{AttachedVolume, EBS_CSI_DRIVER, VolumeTopology};
    use kerf_engine::requirements::{Operator, SelectorRequirement};
    let topology = v.zones.as_ref().map(|z| VolumeTopology {
        claim: "volumes".into(),
        alternatives: vec![vec![SelectorRequirement {
            key: kerf_labels::ZONE.into(),
            operator: Operator::In,
            values: z.iter().cloned().collect(),
            min_values: None,
        }]],
    });
    kerf_engine::model::PodVolumes {
        topology: topology.into_iter().collect(),
        attached: v
            .ebs
            .iter()
            .map(|(ns, name)| AttachedVolume {
                driver: EBS_CSI_DRIVER.into(),
                claim: format!("{ns}/{name}"),
            })
            .collect(),
        wait: None,
    }
}
