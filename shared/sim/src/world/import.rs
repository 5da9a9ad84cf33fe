//! Manifests as a scenario gives them, which may be a real cluster's dump (`kubectl get … -o
//! yaml`, the input `kerf plan` takes): what the server filled in (resourceVersion, uid,
//! managedFields, status, a pod's node) is dropped so the objects apply to a new cluster,
//! and what the simulated cluster makes itself is skipped: Nodes and NodeClaims (Kerf
//! launches what the pods need), ReplicaSets, Events and Leases, CSINodes and
//! VolumeAttachments, and pods whose Deployment, DaemonSet or StatefulSet is in the same
//! manifest (their controller makes them again). Objects being
//! deleted and pods that have finished are gone from the cluster the dump describes, and
//! kinds the simulated cluster does not serve are skipped too; every skipped object is
//! reported.

use std::collections::BTreeSet;

use serde_json::Value;

use super::wiring::documents;
use super::{World, WorldError};

/// What an import applied and what it skipped, as `Kind/name` with the reason.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Imported {
    pub applied: Vec<String>,
    pub skipped: Vec<String>,
}

/// Kinds the simulated cluster makes itself.
const MADE_HERE: [&str; 7] = [
    "Node",
    "NodeClaim",
    "ReplicaSet",
    "Event",
    "Lease",
    "CSINode",
    "VolumeAttachment",
];

/// Kinds the simulated cluster serves, besides those it makes itself.
const SERVED: [&str; 13] = [
    "Pod",
    "Namespace",
    "ConfigMap",
    "Deployment",
    "DaemonSet",
    "StatefulSet",
    "PersistentVolumeClaim",
    "PersistentVolume",
    "StorageClass",
    "PodDisruptionBudget",
    "NodePool",
    "EC2NodeClass",
    "NodeOverlay",
];

const SERVER_FIELDS: [&str; 8] = [
    "managedFields",
    "resourceVersion",
    "uid",
    "creationTimestamp",
    "generation",
    "selfLink",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
];

fn key(doc: &Value, kind: &str) -> Option<(String, String)> {
    (doc["kind"] == kind).then(|| {
        let ns = doc["metadata"]["namespace"].as_str().unwrap_or("default");
        let name = doc["metadata"]["name"].as_str().unwrap_or_default();
        (ns.to_string(), name.to_string())
    })
}

/// Whether a pod's controller is in the manifest (it will make the pod again).
fn made_again(
    pod: &Value,
    deployments: &BTreeSet<(String, String)>,
    daemons: &BTreeSet<(String, String)>,
) -> bool {
    let ns = pod["metadata"]["namespace"].as_str().unwrap_or("default");
    let hash = pod["metadata"]["labels"]["pod-template-hash"].as_str();
    let owners = pod["metadata"]["ownerReferences"].as_array();
    owners.into_iter().flatten().any(|o| {
        let name = o["name"].as_str().unwrap_or_default();
        match (o["kind"].as_str(), hash) {
            (Some("ReplicaSet"), Some(h)) => name
                .strip_suffix(h)
                .and_then(|d| d.strip_suffix('-'))
                .is_some_and(|d| deployments.contains(&(ns.to_string(), d.to_string()))),
            (Some(kind @ ("DaemonSet" | "StatefulSet")), _) => {
                daemons.contains(&(ns.to_string(), format!("{kind}/{name}")))
            }
            _ => false,
        }
    })
}

/// Why an object of a served kind is not applied: it is on its way out of the cluster the
/// dump was taken from (being deleted, or a pod that has finished), or its controller makes
/// it again.
fn gone_or_made_again(
    doc: &Value,
    deployments: &BTreeSet<(String, String)>,
    daemons: &BTreeSet<(String, String)>,
) -> Option<&'static str> {
    let pod = doc["kind"] == "Pod";
    let phase = doc["status"]["phase"].as_str();
    if doc["metadata"].get("deletionTimestamp").is_some() {
        Some("being deleted")
    } else if pod && matches!(phase, Some("Succeeded" | "Failed")) {
        Some("finished")
    } else if pod && made_again(doc, deployments, daemons) {
        Some("its controller makes it again")
    } else {
        None
    }
}

/// The object as a new cluster takes it.
fn clean(mut doc: Value) -> Value {
    if let Some(meta) = doc["metadata"].as_object_mut() {
        for f in SERVER_FIELDS {
            meta.remove(f);
        }
        meta.remove("ownerReferences");
    }
    if let Some(o) = doc.as_object_mut() {
        o.remove("status");
    }
    if doc["kind"] == "Pod"
        && let Some(spec) = doc["spec"].as_object_mut()
    {
        spec.remove("nodeName");
    }
    doc
}

/// Splits a manifest into the documents to apply (cleaned) and the skipped ones.
pub fn select(manifest: &str) -> Result<(Vec<Value>, Vec<String>), WorldError> {
    let docs = documents(manifest)?;
    let deployments: BTreeSet<_> = docs.iter().filter_map(|d| key(d, "Deployment")).collect();
    // DaemonSets and StatefulSets, as (namespace, `Kind/name`).
    let daemons: BTreeSet<_> = ["DaemonSet", "StatefulSet"]
        .iter()
        .flat_map(|k| {
            docs.iter()
                .filter_map(move |d| key(d, k).map(|(ns, n)| (ns, format!("{k}/{n}"))))
        })
        .collect();
    let mut apply = Vec::new();
    let mut skipped = Vec::new();
    for doc in docs {
        let kind = doc["kind"].as_str().unwrap_or_default().to_string();
        let name = format!(
            "{kind}/{}",
            doc["metadata"]["name"].as_str().unwrap_or_default()
        );
        if MADE_HERE.contains(&kind.as_str()) {
            skipped.push(format!("{name} (the simulated cluster makes its own)"));
        } else if !SERVED.contains(&kind.as_str()) {
            skipped.push(format!("{name} (not run by the simulated cluster)"));
        } else if let Some(why) = gone_or_made_again(&doc, &deployments, &daemons) {
            skipped.push(format!("{name} ({why})"));
        } else {
            apply.push(clean(doc));
        }
    }
    Ok((apply, skipped))
}

impl World {
    /// Applies a manifest or a cluster dump as [`select`] describes.
    pub async fn import(&self, manifest: &str) -> Result<Imported, WorldError> {
        let (docs, skipped) = select(manifest)?;
        let mut applied = Vec::new();
        for doc in docs {
            applied.extend(self.apply(&doc.to_string()).await?);
        }
        Ok(Imported { applied, skipped })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dump_loses_what_the_server_filled_in_and_what_the_cluster_makes_again() {
        let dump = r#"
apiVersion: v1
kind: List
items:
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: web, namespace: default, uid: u1, resourceVersion: "9",
    managedFields: [{manager: kubectl}], creationTimestamp: "2026-01-01T00:00:00Z"}
  spec: {replicas: 2}
  status: {replicas: 2}
- apiVersion: v1
  kind: Pod
  metadata:
    name: web-5d8f7c9b6-abcde
    namespace: default
    labels: {pod-template-hash: 5d8f7c9b6}
    ownerReferences: [{kind: ReplicaSet, name: web-5d8f7c9b6}]
  spec: {nodeName: ip-10-0-0-1}
- apiVersion: v1
  kind: Pod
  metadata:
    name: job-x
    namespace: default
    ownerReferences: [{kind: Job, name: job}]
  spec: {nodeName: ip-10-0-0-1, containers: []}
  status: {phase: Running}
- apiVersion: v1
  kind: Pod
  metadata:
    name: old-web-7c5b9d8f4-fghij
    namespace: default
    deletionTimestamp: "2026-01-01T00:01:00Z"
    labels: {pod-template-hash: 7c5b9d8f4}
    ownerReferences: [{kind: ReplicaSet, name: old-web-7c5b9d8f4}]
  spec: {nodeName: ip-10-0-0-1, containers: []}
- apiVersion: v1
  kind: Pod
  metadata: {name: job-y, namespace: default}
  spec: {nodeName: ip-10-0-0-1, containers: []}
  status: {phase: Succeeded}
- {apiVersion: v1, kind: Node, metadata: {name: ip-10-0-0-1}}
- {apiVersion: v1, kind: Service, metadata: {name: web}}
"#;
        let (apply, skipped) = select(dump).unwrap();
        assert_eq!(apply.len(), 2);
        let dep = &apply[0];
        assert_eq!(
            dep["metadata"],
            serde_json::json!({"name": "web", "namespace": "default"})
        );
        assert!(dep.get("status").is_none());
        let job = &apply[1];
        assert_eq!(job["metadata"]["name"], "job-x");
        assert!(job["spec"].get("nodeName").is_none(), "placed again");
        assert!(job["metadata"].get("ownerReferences").is_none());
        assert_eq!(
            skipped,
            [
                "Pod/web-5d8f7c9b6-abcde (its controller makes it again)",
                "Pod/old-web-7c5b9d8f4-fghij (being deleted)",
                "Pod/job-y (finished)",
                "Node/ip-10-0-0-1 (the simulated cluster makes its own)",
                "Service/web (not run by the simulated cluster)",
            ]
        );
    }
}
