//! The node side of EBS volumes: the CSI node plugin registers a CSINode for each Node
//! (driver `ebs.csi.aws.com`, `allocatable.count` the instance type's attach limit); the
//! attach/detach controller creates a VolumeAttachment for each volume a pod bound to a node
//! uses and deletes it once no pod on that node uses it; the external attacher marks it
//! `status.attached` [`ATTACH_DELAY`] after it was created and lets it go (removes its
//! finalizer) [`DETACH_DELAY`] after its deletion. A volume is attached to one node at a
//! time: a pod that moved waits until its volume has left the old node. The kubelet starts
//! a pod only once its volumes are attached ([`ready_to_start`]). Every moment is read from the objects'
//! timestamps.

use std::collections::{BTreeMap, BTreeSet};

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::api::storage::v1::{CSINode, VolumeAttachment};
use kube::Client;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;

use super::limits::sim_ebs_attach_limit_of;
use super::{EBS_DRIVER, Volumes, digest, pod_claims};

/// From a VolumeAttachment's creation to its volume attached.
pub const ATTACH_DELAY: SignedDuration = SignedDuration::from_secs(3);
/// From a VolumeAttachment's deletion to its volume detached (the object gone).
pub const DETACH_DELAY: SignedDuration = SignedDuration::from_secs(3);
/// The external attacher's finalizer on the attachments it handles.
pub const ATTACHER_FINALIZER: &str = "external-attacher/ebs-csi-aws-com";

/// What a round did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct AttachReport {
    pub csinodes: usize,
    pub attached: usize,
    pub detached: usize,
}

/// The name the attach/detach controller gives the attachment of `pv` to `node`.
pub fn attachment_name(pv: &str, node: &str) -> String {
    format!("csi-{}", digest(&format!("{pv}{EBS_DRIVER}{node}")))
}

/// The CSINode the EBS CSI node plugin registers on `node`.
pub fn csinode_for(node: &Node) -> CSINode {
    let name = node.metadata.name.clone().unwrap_or_default();
    let labels = node.metadata.labels.clone().unwrap_or_default();
    let limit = labels
        .get(kerf_labels::INSTANCE_TYPE)
        .and_then(|t| sim_ebs_attach_limit_of(t));
    let instance = node
        .spec
        .as_ref()
        .and_then(|s| s.provider_id.as_deref())
        .and_then(|p| p.rsplit('/').next())
        .unwrap_or_default();
    let mut driver = json!({"name": EBS_DRIVER, "nodeID": instance,
        "topologyKeys": ["kubernetes.io/os", "topology.ebs.csi.aws.com/zone", kerf_labels::ZONE]});
    if let Some(l) = limit {
        driver["allocatable"] = json!({"count": l});
    }
    let v = json!({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
        "metadata": {"name": name, "ownerReferences": [{"apiVersion": "v1", "kind": "Node",
            "name": name, "uid": node.metadata.uid}]},
        "spec": {"drivers": [driver]}});
    serde_json::from_value(v).unwrap_or_default()
}

/// The node's EBS attach limit from its CSINode.
pub fn attach_limit(vols: &Volumes, node: &str) -> Option<usize> {
    let c = vols.csinodes.get(node)?;
    let d = c.spec.drivers.iter().find(|d| d.name == EBS_DRIVER)?;
    let count = d.allocatable.as_ref()?.count?;
    usize::try_from(count).ok()
}

/// Every (node, volume) some pod bound to the node uses (terminating pods included: their
/// volumes stay until they are gone).
pub fn wanted(vols: &Volumes, pods: &[Pod]) -> BTreeSet<(String, String)> {
    pods.iter()
        .filter_map(|p| {
            let node = p.spec.as_ref()?.node_name.clone()?;
            Some((node, vols.pod_volumes(p)))
        })
        .flat_map(|(node, pvs)| pvs.into_iter().map(move |pv| (node.clone(), pv)))
        .filter(|(_, pv)| {
            let v = vols.volumes.get(pv);
            let csi = v.and_then(|v| v.spec.as_ref()?.csi.as_ref());
            csi.is_some_and(|c| c.driver == EBS_DRIVER)
        })
        .collect()
}

fn attached_to(vols: &Volumes, node: &str, pv: &str) -> bool {
    vols.attachments.iter().any(|a| {
        a.spec.node_name == node
            && a.spec.source.persistent_volume_name.as_deref() == Some(pv)
            && a.metadata.deletion_timestamp.is_none()
            && a.status.as_ref().is_some_and(|s| s.attached)
    })
}

/// Whether every claim of `p` is bound and, for EBS volumes, attached to `node`.
pub fn ready_to_start(vols: &Volumes, p: &Pod, node: &str) -> bool {
    let claims = pod_claims(p);
    let pvs = vols.pod_volumes(p);
    if pvs.len() < claims.len() {
        return false;
    }
    let want = wanted(vols, std::slice::from_ref(p));
    want.iter().all(|(_, pv)| attached_to(vols, node, pv))
}

/// The attachment object for `pv` on `node`.
fn attachment_for(pv: &str, node: &str) -> VolumeAttachment {
    let v = json!({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
        "metadata": {"name": attachment_name(pv, node), "finalizers": [ATTACHER_FINALIZER]},
        "spec": {"attacher": EBS_DRIVER, "nodeName": node,
            "source": {"persistentVolumeName": pv}}});
    serde_json::from_value(v).unwrap_or_default()
}

/// Registers the CSINode of each Node that has none.
async fn csinodes(client: &Client, vols: &Volumes, nodes: &[Node]) -> Result<usize, kube::Error> {
    let api: Api<CSINode> = Api::all(client.clone());
    let mut created = 0;
    for n in nodes
        .iter()
        .filter(|n| n.metadata.deletion_timestamp.is_none())
    {
        let name = n.metadata.name.clone().unwrap_or_default();
        if vols.csinodes.contains_key(&name) {
            continue;
        }
        match api.create(&PostParams::default(), &csinode_for(n)).await {
            Ok(_) => created += 1,
            Err(kube::Error::Api(e)) if e.code == 409 => {}
            Err(e) => return Err(e),
        }
    }
    // The garbage collector removes the CSINodes of Nodes that are gone.
    let live: BTreeSet<&str> = nodes
        .iter()
        .filter_map(|n| n.metadata.name.as_deref())
        .collect();
    for name in vols.csinodes.keys().filter(|c| !live.contains(c.as_str())) {
        ignore_missing(api.delete(name, &DeleteParams::default()).await.map(|_| ()))?;
    }
    Ok(created)
}

fn ignore_missing(r: Result<(), kube::Error>) -> Result<(), kube::Error> {
    match r {
        Err(kube::Error::Api(e)) if e.code == 404 || e.code == 409 => Ok(()),
        other => other,
    }
}

/// One round: CSINodes, then attachments attached and detached.
pub async fn step(
    client: &Client,
    vols: &Volumes,
    pods: &[Pod],
    nodes: &[Node],
    now: Timestamp,
) -> Result<AttachReport, kube::Error> {
    let mut out = AttachReport {
        csinodes: csinodes(client, vols, nodes).await?,
        ..AttachReport::default()
    };
    let api: Api<VolumeAttachment> = Api::all(client.clone());
    let want = wanted(vols, pods);
    let have: BTreeMap<(String, String), &VolumeAttachment> = vols
        .attachments
        .iter()
        .filter(|a| a.spec.attacher == EBS_DRIVER)
        .filter_map(|a| {
            let pv = a.spec.source.persistent_volume_name.clone()?;
            Some(((a.spec.node_name.clone(), pv), a))
        })
        .collect();
    for (node, pv) in want.iter().filter(|k| !have.contains_key(*k)) {
        // An EBS volume attaches to one instance at a time (a Multi-Attach error otherwise):
        // a pod that moved waits until the volume has left its old node.
        if have.keys().any(|(n, v)| v == pv && n != node) {
            continue;
        }
        ignore_missing(
            api.create(&PostParams::default(), &attachment_for(pv, node))
                .await
                .map(|_| ()),
        )?;
    }
    let pp = PatchParams::default();
    for (key, a) in &have {
        let name = a.metadata.name.clone().unwrap_or_default();
        let created = a.metadata.creation_timestamp.as_ref().map(|t| t.0);
        let attached = a.status.as_ref().is_some_and(|s| s.attached);
        match &a.metadata.deletion_timestamp {
            Some(t) if now >= t.0 + DETACH_DELAY => {
                let mut rest = a.metadata.finalizers.clone().unwrap_or_default();
                if !rest.iter().any(|f| f == ATTACHER_FINALIZER) {
                    continue;
                }
                rest.retain(|f| f != ATTACHER_FINALIZER);
                let patch = json!({"metadata": {"finalizers": rest}});
                ignore_missing(
                    api.patch(&name, &pp, &Patch::Merge(&patch))
                        .await
                        .map(|_| ()),
                )?;
                out.detached += 1;
            }
            Some(_) => {}
            None if !want.contains(key) => {
                ignore_missing(
                    api.delete(&name, &DeleteParams::default())
                        .await
                        .map(|_| ()),
                )?;
            }
            None if !attached && created.is_some_and(|c| now >= c + ATTACH_DELAY) => {
                let patch = json!({"status": {"attached": true}});
                api.patch_status(&name, &pp, &Patch::Merge(&patch)).await?;
                out.attached += 1;
            }
            None => {}
        }
    }
    Ok(out)
}

/// When the attacher next acts by itself (an attach or detach falling due).
pub fn next_due(vols: &Volumes, now: Timestamp) -> Option<Timestamp> {
    vols.attachments
        .iter()
        .filter_map(|a| match &a.metadata.deletion_timestamp {
            Some(t) => {
                let mut finalizers = a.metadata.finalizers.iter().flatten();
                finalizers
                    .any(|f| f == ATTACHER_FINALIZER)
                    .then_some(t.0 + DETACH_DELAY)
            }
            None if !a.status.as_ref().is_some_and(|s| s.attached) => a
                .metadata
                .creation_timestamp
                .as_ref()
                .map(|t| t.0 + ATTACH_DELAY),
            None => None,
        })
        .filter(|t| *t > now)
        .min()
}
