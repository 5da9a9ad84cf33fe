//! [`KubeCluster`]: the control layer's Cluster port on `kube::Client`. Each method is one of
//! the writers in this crate; errors are classified into the port's `ClusterError`. Requests
//! that are safe to repeat are tried again on a transient failure ([`crate::retry`]); the
//! NodeClaim create, evictions and Events are not.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Node, PersistentVolumeClaim, Pod, Taint};
use k8s_openapi::api::storage::v1::VolumeAttachment;
use kerf_api::v1::{
    Condition, EC2NodeClass, EC2NodeClassStatus, NodeClaim, NodeClaimStatus, NodePool,
    NodePoolStatus,
};
use kerf_catalog::unavailable::UnavailableOfferings;
use kerf_control::ports::{
    Cluster, ClusterError, Deleted, EventSpec, Evicted, LeaseOutcome, LeaseRequest, Snapshot,
    Target,
};
use kube::Client;
use kube::api::{Api, PostParams};

use crate::error::KubeResult;
use crate::offerings::ConfigMapOfferingStore;
use crate::retry::transient;
use crate::snapshot::{self, SnapshotOptions};
use crate::{claims, events, evict, lease, nodes, pods, write};

/// The Cluster port on a kube client. `namespace` holds Kerf's own objects (the
/// unavailable-offerings ConfigMap).
#[derive(Clone)]
pub struct KubeCluster {
    client: Client,
    offerings: ConfigMapOfferingStore,
    snapshot: SnapshotOptions,
}

impl std::fmt::Debug for KubeCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KubeCluster")
            .field("offerings", &self.offerings)
            .finish_non_exhaustive()
    }
}

impl KubeCluster {
    /// The port on `client`, keeping Kerf's objects in `namespace`.
    pub fn new(client: Client, namespace: &str) -> Self {
        KubeCluster {
            offerings: ConfigMapOfferingStore::new(client.clone(), namespace),
            client,
            snapshot: SnapshotOptions::default(),
        }
    }

    /// Replaces how snapshots are read.
    pub fn with_snapshot_options(mut self, opts: SnapshotOptions) -> Self {
        self.snapshot = opts;
        self
    }

    /// The underlying client.
    pub fn client(&self) -> &Client {
        &self.client
    }
}

/// A merge patch on a cluster-scoped object.
async fn merge<K>(api: Api<K>, name: &str, patch: &serde_json::Value) -> Result<K, ClusterError>
where
    K: kube::Resource<Scope = kube::core::ClusterResourceScope, DynamicType = ()>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug,
{
    let pp = kube::api::PatchParams::default();
    transient(|| async {
        api.patch(name, &pp, &kube::api::Patch::Merge(patch))
            .await
            .kube()
    })
    .await
}

impl Cluster for KubeCluster {
    async fn snapshot(&self) -> Result<Snapshot, ClusterError> {
        snapshot::read(&self.client, &self.snapshot).await
    }

    async fn node_claims(&self) -> Result<Vec<NodeClaim>, ClusterError> {
        let lp = kube::api::ListParams::default().limit(self.snapshot.page_size);
        let api = Api::<NodeClaim>::all(self.client.clone());
        snapshot::list_all(api, &lp).await.map(|(items, _)| items)
    }

    async fn node_claim(&self, name: &str) -> Result<Option<NodeClaim>, ClusterError> {
        let api = Api::<NodeClaim>::all(self.client.clone());
        transient(|| async { api.get_opt(name).await.kube() }).await
    }

    async fn node(&self, name: &str) -> Result<Option<Node>, ClusterError> {
        let api = Api::<Node>::all(self.client.clone());
        transient(|| async { api.get_opt(name).await.kube() }).await
    }

    async fn pods_on_node(&self, node: &str) -> Result<Vec<Pod>, ClusterError> {
        let lp = kube::api::ListParams::default()
            .fields(&format!("spec.nodeName={node}"))
            .limit(self.snapshot.page_size);
        snapshot::list_all(Api::<Pod>::all(self.client.clone()), &lp)
            .await
            .map(|(items, _)| items)
    }

    async fn volume_attachments(&self, node: &str) -> Result<Vec<VolumeAttachment>, ClusterError> {
        // The API server has no field selector on spec.nodeName for VolumeAttachments.
        let lp = kube::api::ListParams::default().limit(self.snapshot.page_size);
        let api = Api::<VolumeAttachment>::all(self.client.clone());
        let (all, _) = snapshot::list_all(api, &lp).await?;
        Ok(all
            .into_iter()
            .filter(|a| a.spec.node_name == node)
            .collect())
    }

    async fn persistent_volume_claim(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<PersistentVolumeClaim>, ClusterError> {
        let api = Api::<PersistentVolumeClaim>::namespaced(self.client.clone(), namespace);
        transient(|| async { api.get_opt(name).await.kube() }).await
    }

    async fn delete_pod(
        &self,
        namespace: &str,
        name: &str,
        uid: Option<&str>,
        grace_seconds: Option<i64>,
    ) -> Result<Deleted, ClusterError> {
        pods::delete(&self.client, namespace, name, uid, grace_seconds).await
    }

    async fn patch_node_class_status(
        &self,
        name: &str,
        status: &EC2NodeClassStatus,
    ) -> Result<EC2NodeClass, ClusterError> {
        let patch = class_status_patch(status);
        let api = Api::<EC2NodeClass>::all(self.client.clone());
        let pp = kube::api::PatchParams::default();
        transient(|| async {
            api.patch_status(name, &pp, &kube::api::Patch::Merge(&patch))
                .await
                .kube()
        })
        .await
    }

    async fn patch_node_pool_status(
        &self,
        name: &str,
        status: &NodePoolStatus,
    ) -> Result<(), ClusterError> {
        let value = serde_json::to_value(status).map_err(|e| ClusterError::Fatal(e.to_string()))?;
        let op = serde_json::json!([{"op": "add", "path": "/status", "value": value}]);
        let patch: json_patch::Patch =
            serde_json::from_value(op).map_err(|e| ClusterError::Fatal(e.to_string()))?;
        let api = Api::<NodePool>::all(self.client.clone());
        let pp = kube::api::PatchParams::default();
        transient(|| async {
            api.patch_status(name, &pp, &kube::api::Patch::Json::<()>(patch.clone()))
                .await
                .kube()
        })
        .await
        .map(|_| ())
    }

    async fn patch_node_overlay_status(
        &self,
        name: &str,
        status: &kerf_api::v1alpha1::NodeOverlayStatus,
    ) -> Result<(), ClusterError> {
        let value = serde_json::to_value(status).map_err(|e| ClusterError::Fatal(e.to_string()))?;
        let op = serde_json::json!([{"op": "add", "path": "/status", "value": value}]);
        let patch: json_patch::Patch =
            serde_json::from_value(op).map_err(|e| ClusterError::Fatal(e.to_string()))?;
        let api = Api::<kerf_api::v1alpha1::NodeOverlay>::all(self.client.clone());
        let pp = kube::api::PatchParams::default();
        transient(|| async {
            api.patch_status(name, &pp, &kube::api::Patch::Json::<()>(patch.clone()))
                .await
                .kube()
        })
        .await
        .map(|_| ())
    }

    async fn annotate_node_claim(
        &self,
        name: &str,
        annotations: &BTreeMap<String, String>,
    ) -> Result<NodeClaim, ClusterError> {
        let values: serde_json::Map<String, serde_json::Value> = annotations
            .iter()
            .map(|(k, v)| {
                let v = if v.is_empty() {
                    serde_json::Value::Null
                } else {
                    serde_json::json!(v)
                };
                (k.clone(), v)
            })
            .collect();
        let patch = serde_json::json!({"metadata": {"annotations": values}});
        merge(Api::<NodeClaim>::all(self.client.clone()), name, &patch).await
    }

    async fn label_node(
        &self,
        name: &str,
        labels: &BTreeMap<String, String>,
    ) -> Result<Node, ClusterError> {
        let patch = serde_json::json!({"metadata": {"labels": labels}});
        merge(Api::<Node>::all(self.client.clone()), name, &patch).await
    }

    async fn relabel_node(
        &self,
        name: &str,
        labels: &BTreeMap<String, Option<String>>,
    ) -> Result<Node, ClusterError> {
        let patch = serde_json::json!({"metadata": {"labels": labels}});
        merge(Api::<Node>::all(self.client.clone()), name, &patch).await
    }

    async fn create_node_claim(
        &self,
        pool: &NodePool,
        claim: NodeClaim,
    ) -> Result<NodeClaim, ClusterError> {
        claims::create(&self.client, pool, claim).await
    }

    async fn patch_node_claim_status(
        &self,
        name: &str,
        resource_version: Option<&str>,
        status: &NodeClaimStatus,
    ) -> Result<NodeClaim, ClusterError> {
        transient(|| claims::patch_status(&self.client, name, resource_version, status)).await
    }

    async fn set_node_claim_conditions(
        &self,
        name: &str,
        conditions: &[Condition],
        now: Timestamp,
    ) -> Result<NodeClaim, ClusterError> {
        transient(|| claims::set_conditions(&self.client, name, conditions, now)).await
    }

    async fn label_node_claim(
        &self,
        name: &str,
        labels: &BTreeMap<String, String>,
    ) -> Result<NodeClaim, ClusterError> {
        transient(|| claims::label(&self.client, name, labels)).await
    }

    async fn relabel_node_claim(
        &self,
        name: &str,
        labels: &BTreeMap<String, Option<String>>,
    ) -> Result<NodeClaim, ClusterError> {
        transient(|| claims::label(&self.client, name, labels)).await
    }

    async fn delete_node_claim(
        &self,
        name: &str,
        uid: Option<&str>,
    ) -> Result<Deleted, ClusterError> {
        let api = Api::<NodeClaim>::all(self.client.clone());
        transient(|| write::delete(&api, name, uid)).await
    }

    async fn taint_node(&self, node: &str, taint: &Taint) -> Result<Node, ClusterError> {
        transient(|| nodes::taint(&self.client, node, taint)).await
    }

    async fn untaint_node(&self, node: &str, key: &str) -> Result<Node, ClusterError> {
        transient(|| nodes::untaint(&self.client, node, key)).await
    }

    async fn cordon_node(&self, node: &str, unschedulable: bool) -> Result<Node, ClusterError> {
        transient(|| nodes::cordon(&self.client, node, unschedulable)).await
    }

    async fn update_node(&self, node: &Node) -> Result<Node, ClusterError> {
        let api: Api<Node> = Api::all(self.client.clone());
        let name = node.metadata.name.clone().unwrap_or_default();
        let r = api.replace(&name, &PostParams::default(), node).await;
        r.map_err(crate::error::classify)
    }

    async fn delete_node(&self, name: &str, uid: Option<&str>) -> Result<Deleted, ClusterError> {
        let api = Api::<Node>::all(self.client.clone());
        transient(|| write::delete(&api, name, uid)).await
    }

    async fn evict_pod(
        &self,
        namespace: &str,
        name: &str,
        uid: Option<&str>,
    ) -> Result<Evicted, ClusterError> {
        evict::evict(&self.client, namespace, name, uid).await
    }

    async fn add_finalizer(&self, target: &Target, finalizer: &str) -> Result<(), ClusterError> {
        transient(|| async {
            let c = self.client.clone();
            match target {
                Target::Node(n) => write::add_finalizer(&Api::<Node>::all(c), n, finalizer).await,
                Target::NodeClaim(n) => {
                    write::add_finalizer(&Api::<NodeClaim>::all(c), n, finalizer).await
                }
            }
        })
        .await
    }

    async fn remove_finalizer(
        &self,
        target: &Target,
        finalizer: &str,
        rv: Option<&str>,
    ) -> Result<(), ClusterError> {
        transient(|| async {
            let c = self.client.clone();
            match target {
                Target::Node(n) => {
                    write::remove_finalizer(&Api::<Node>::all(c), n, finalizer, rv).await
                }
                Target::NodeClaim(n) => {
                    write::remove_finalizer(&Api::<NodeClaim>::all(c), n, finalizer, rv).await
                }
            }
        })
        .await
    }

    async fn emit_event(&self, event: &EventSpec, now: Timestamp) -> Result<(), ClusterError> {
        events::emit(&self.client, event, now).await
    }

    async fn acquire_lease(&self, req: &LeaseRequest) -> Result<LeaseOutcome, ClusterError> {
        transient(|| lease::acquire(&self.client, req)).await
    }

    async fn release_lease(&self, req: &LeaseRequest) -> Result<(), ClusterError> {
        transient(|| lease::release(&self.client, req)).await
    }

    async fn unavailable_offerings(
        &self,
        now: Timestamp,
    ) -> Result<UnavailableOfferings, ClusterError> {
        transient(|| self.offerings.load(now)).await
    }

    async fn record_unavailable(
        &self,
        marks: &UnavailableOfferings,
        now: Timestamp,
    ) -> Result<(), ClusterError> {
        transient(|| self.offerings.record(marks, now))
            .await
            .map(|_| ())
    }
}

/// The merge patch that writes a node class status. A list the status leaves out when empty
/// (`capacityReservations`) is sent as `[]`, so that a list emptied since the last write is
/// cleared rather than left as it was.
fn class_status_patch(status: &EC2NodeClassStatus) -> serde_json::Value {
    let mut s = serde_json::to_value(status).unwrap_or_default();
    if let Some(o) = s.as_object_mut() {
        o.entry("capacityReservations")
            .or_insert_with(|| serde_json::json!([]));
    }
    serde_json::json!({ "status": s })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_emptied_reservation_list_is_cleared_by_the_patch() {
        let p = class_status_patch(&EC2NodeClassStatus::default());
        assert_eq!(p["status"]["capacityReservations"], serde_json::json!([]));
    }
}
