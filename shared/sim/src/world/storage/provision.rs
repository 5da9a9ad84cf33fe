//! The EBS CSI driver's external provisioner: a claim of an `ebs.csi.aws.com` StorageClass
//! gets a PersistentVolume (`pvc-<claim uid>`, `spec.csi.driver: ebs.csi.aws.com`, node
//! affinity on `topology.kubernetes.io/zone`) and is bound to it, as the PV controller
//! binds them. `Immediate` claims are provisioned at once, in the first zone of the class's
//! `allowedTopologies` (or the region's first zone); `WaitForFirstConsumer` claims when the
//! scheduler picks a node for their pod ([`provision`] in that node's zone).

use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use k8s_openapi::api::storage::v1::StorageClass;
use kube::Client;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

use super::{
    BindingMode, EBS_DRIVER, Volumes, bound_volume, claim_class, class_zones, digest, ebs,
};

/// The annotation naming the node a `WaitForFirstConsumer` claim's pod was scheduled to.
pub const SELECTED_NODE: &str = "volume.kubernetes.io/selected-node";

/// The zone an `Immediate` claim of `class` is provisioned in.
pub fn immediate_zone(class: &StorageClass, zones: &[String]) -> Option<String> {
    class_zones(class)
        .and_then(|z| z.into_iter().next())
        .or_else(|| zones.first().cloned())
}

/// The volume the provisioner creates for `claim` in `zone`.
pub fn volume_for(
    claim: &PersistentVolumeClaim,
    class: &StorageClass,
    zone: &str,
) -> PersistentVolume {
    let uid = claim.metadata.uid.clone().unwrap_or_default();
    let ns = claim.metadata.namespace.clone().unwrap_or_default();
    let name = claim.metadata.name.clone().unwrap_or_default();
    let spec = claim.spec.clone().unwrap_or_default();
    let size = spec
        .resources
        .as_ref()
        .and_then(|r| r.requests.as_ref())
        .and_then(|r| r.get("storage").cloned());
    let fs = class
        .parameters
        .as_ref()
        .and_then(|p| p.get("csi.storage.k8s.io/fstype").cloned())
        .unwrap_or_else(|| "ext4".into());
    let v = json!({"apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": format!("pvc-{uid}"),
            "annotations": {"pv.kubernetes.io/provisioned-by": EBS_DRIVER,
                "volume.kubernetes.io/provisioner-deletion-secret-name": "",
                "volume.kubernetes.io/provisioner-deletion-secret-namespace": ""}},
        "spec": {"accessModes": spec.access_modes.clone().unwrap_or_default(),
            "capacity": {"storage": size},
            "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "namespace": ns, "name": name, "uid": uid},
            "csi": {"driver": EBS_DRIVER, "fsType": fs,
                "volumeHandle": format!("vol-{}", &digest(&uid)[..16]),
                "volumeAttributes": {"storage.kubernetes.io/csiProvisionerIdentity": "kerf-sim-ebs-csi"}},
            "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": kerf_labels::ZONE, "operator": "In", "values": [zone]}]}]}},
            "persistentVolumeReclaimPolicy": class.reclaim_policy.clone().unwrap_or_else(|| "Delete".into()),
            "storageClassName": class.metadata.name,
            "volumeMode": spec.volume_mode.clone().unwrap_or_else(|| "Filesystem".into())}});
    serde_json::from_value(v).unwrap_or_default()
}

/// Provisions `claim` in `zone` and binds it (a claim already bound is left alone); `node`
/// is the scheduler's choice for a `WaitForFirstConsumer` claim. Returns the volume's name.
pub async fn provision(
    client: &Client,
    claim: &PersistentVolumeClaim,
    class: &StorageClass,
    zone: &str,
    node: Option<&str>,
) -> Result<String, kube::Error> {
    if let Some(v) = bound_volume(claim) {
        return Ok(v.to_string());
    }
    let pv = volume_for(claim, class, zone);
    let pv_name = pv.metadata.name.clone().unwrap_or_default();
    let pvs: Api<PersistentVolume> = Api::all(client.clone());
    match pvs.create(&PostParams::default(), &pv).await {
        Ok(_) => {}
        Err(kube::Error::Api(e)) if e.code == 409 => {}
        Err(e) => return Err(e),
    }
    let ns = claim.metadata.namespace.clone().unwrap_or_default();
    let name = claim.metadata.name.clone().unwrap_or_default();
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), &ns);
    let mut annotations = json!({"pv.kubernetes.io/bind-completed": "yes",
        "pv.kubernetes.io/bound-by-controller": "yes",
        "volume.kubernetes.io/storage-provisioner": EBS_DRIVER,
        "volume.beta.kubernetes.io/storage-provisioner": EBS_DRIVER});
    if let Some(n) = node {
        annotations[SELECTED_NODE] = json!(n);
    }
    let patch = json!({"metadata": {"annotations": annotations}, "spec": {"volumeName": pv_name}});
    let pp = PatchParams::default();
    claims.patch(&name, &pp, &Patch::Merge(&patch)).await?;
    let capacity = pv.spec.as_ref().and_then(|s| s.capacity.clone());
    let status = json!({"status": {"phase": "Bound",
        "accessModes": pv.spec.as_ref().and_then(|s| s.access_modes.clone()),
        "capacity": capacity}});
    claims
        .patch_status(&name, &pp, &Patch::Merge(&status))
        .await?;
    let bound = json!({"status": {"phase": "Bound"}});
    pvs.patch_status(&pv_name, &pp, &Patch::Merge(&bound))
        .await?;
    Ok(pv_name)
}

/// One round of the provisioner over `Immediate` claims of EBS classes; returns how many
/// it bound. `zones` are the region's zones.
pub async fn step(client: &Client, vols: &Volumes, zones: &[String]) -> Result<usize, kube::Error> {
    let mut bound = 0;
    for claim in vols.claims.values() {
        if bound_volume(claim).is_some() || claim.metadata.deletion_timestamp.is_some() {
            continue;
        }
        let Some(class) = claim_class(claim).and_then(|c| vols.classes.get(c)) else {
            continue;
        };
        if !ebs(class) || BindingMode::of(class) != BindingMode::Immediate {
            continue;
        }
        let Some(zone) = immediate_zone(class, zones) else {
            continue;
        };
        provision(client, claim, class, &zone, None).await?;
        bound += 1;
    }
    Ok(bound)
}
