//! The snapshot reader: every collection listed concurrently, paginated with `limit`.

use crate::error::ClusterError;
use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::{Namespace, Node, PersistentVolume, PersistentVolumeClaim, Pod};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::storage::v1::{CSINode, StorageClass};
use kerf_api::v1::{EC2NodeClass, NodeClaim, NodePool};
use kerf_api::v1alpha1::NodeOverlay;
use kerf_control::ports::Snapshot;
use kube::api::{Api, ListParams};
use kube::{Client, Resource};
use serde::de::DeserializeOwned;
use std::fmt::Debug;

/// How to read a snapshot.
#[derive(Debug, Clone)]
pub struct SnapshotOptions {
    /// Items per page (the API server caps responses at this many objects).
    pub page_size: u32,
    /// Leave out Succeeded and Failed pods (`status.phase!=...` field selector).
    pub skip_terminal_pods: bool,
}

impl Default for SnapshotOptions {
    fn default() -> Self {
        Self {
            page_size: 500,
            skip_terminal_pods: true,
        }
    }
}

/// Lists every object of a collection, following continue tokens. A 410 on a continue
/// token (the list snapshot expired) restarts the list once from the beginning; a page that
/// fails transiently is tried again, as [`crate::retry`] tries any repeatable request.
pub async fn list_all<K>(api: Api<K>, lp: &ListParams) -> Result<(Vec<K>, String), ClusterError>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    let mut restarted = false;
    'restart: loop {
        let mut items = Vec::new();
        let mut params = lp.clone();
        let mut first_rv = None;
        loop {
            // `None`: the continue token expired (410), and the list starts over once.
            let page = crate::retry::transient(|| async {
                match api.list(&params).await {
                    Ok(p) => Ok(Some(p)),
                    Err(kube::Error::Api(s))
                        if s.code == 410 && !restarted && params.continue_token.is_some() =>
                    {
                        Ok(None)
                    }
                    Err(e) => Err(crate::error::classify(e)),
                }
            })
            .await?;
            let Some(page) = page else {
                restarted = true;
                continue 'restart;
            };
            first_rv.get_or_insert(page.metadata.resource_version.clone().unwrap_or_default());
            items.extend(page.items);
            match page.metadata.continue_.filter(|c| !c.is_empty()) {
                Some(token) => params.continue_token = Some(token),
                None => return Ok((items, first_rv.unwrap_or_default())),
            }
        }
    }
}

/// Lists a collection the server may not serve (storage, a CRD that may not be installed,
/// such as NodeOverlay): a 404 means none of its objects.
async fn list_storage<K>(api: Api<K>, lp: &ListParams) -> Result<(Vec<K>, String), ClusterError>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    match list_all(api, lp).await {
        Err(ClusterError::NotFound(_)) => Ok((Vec::new(), String::new())),
        other => other,
    }
}

/// Reads a snapshot with the given options; every collection is listed concurrently.
pub async fn read(client: &Client, opts: &SnapshotOptions) -> Result<Snapshot, ClusterError> {
    let lp = ListParams::default().limit(opts.page_size);
    let pod_lp = if opts.skip_terminal_pods {
        lp.clone()
            .fields("status.phase!=Succeeded,status.phase!=Failed")
    } else {
        lp.clone()
    };
    let c = client.clone();
    // Both groups at once; boxed, so the many list futures live on the heap, not on the
    // caller's stack.
    let workloads = Box::pin(async {
        futures::try_join!(
            list_all(Api::<Pod>::all(c.clone()), &pod_lp),
            list_all(Api::<Node>::all(c.clone()), &lp),
            list_all(Api::<NodeClaim>::all(c.clone()), &lp),
            list_all(Api::<NodePool>::all(c.clone()), &lp),
            list_all(Api::<EC2NodeClass>::all(c.clone()), &lp),
            list_all(Api::<DaemonSet>::all(c.clone()), &lp),
            list_all(Api::<PodDisruptionBudget>::all(c.clone()), &lp),
            list_all(Api::<Namespace>::all(c.clone()), &lp),
        )
    });
    let storage = Box::pin(async {
        futures::try_join!(
            list_storage(Api::<PersistentVolumeClaim>::all(c.clone()), &lp),
            list_storage(Api::<PersistentVolume>::all(c.clone()), &lp),
            list_storage(Api::<StorageClass>::all(c.clone()), &lp),
            list_storage(Api::<CSINode>::all(c.clone()), &lp),
            list_storage(Api::<NodeOverlay>::all(c.clone()), &lp),
        )
    });
    let ((pods, nodes, claims, pools, classes, ds, pdbs, nss), (pvcs, pvs, scs, csis, overlays)) =
        futures::try_join!(workloads, storage)?;
    let mut s = Snapshot::default();
    (s.pods, s.nodes, s.node_claims) = (pods.0, nodes.0, claims.0);
    (s.node_pools, s.node_classes, s.daemon_sets, s.pdbs) = (pools.0, classes.0, ds.0, pdbs.0);
    s.namespaces = nss.0;
    (s.persistent_volume_claims, s.persistent_volumes) = (pvcs.0, pvs.0);
    (s.storage_classes, s.csi_nodes) = (scs.0, csis.0);
    s.node_overlays = overlays.0;
    for (k, rv) in [
        ("pods", pods.1),
        ("nodes", nodes.1),
        ("nodeclaims", claims.1),
        ("nodepools", pools.1),
        ("ec2nodeclasses", classes.1),
        ("daemonsets", ds.1),
        ("poddisruptionbudgets", pdbs.1),
        ("namespaces", nss.1),
        ("persistentvolumeclaims", pvcs.1),
        ("persistentvolumes", pvs.1),
        ("storageclasses", scs.1),
        ("csinodes", csis.1),
        ("nodeoverlays", overlays.1),
    ] {
        // A collection the server does not serve (storage, the NodeOverlay CRD when it is
        // not installed) has no version.
        if !rv.is_empty() {
            s.resource_versions.insert(k, rv);
        }
    }
    Ok(s)
}
