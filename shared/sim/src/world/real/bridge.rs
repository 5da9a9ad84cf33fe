//! The kubelets of the simulated instances on a real control plane. Once a running instance's
//! kubelet would be Ready (the world's ready delay after boot), it registers its Node as the
//! node's own identity (`system:node:<name>` in `system:nodes`, so the Node authorizer and the
//! NodeRestriction admission plugin check it and Kerf's registration webhook sees the
//! CREATE), with the Node the in-process kubelet registers
//! (`super::super::kubelet::node_for`: providerID, labels, the launch's taints and
//! `karpenter.sh/unregistered`, capacity) and the label KWOK selects, so KWOK turns it Ready,
//! renews its Lease and runs its pods from then on. KWOK takes a Node on only when it is
//! created with the label, so the Node appears Ready rather than NotReady first. When the
//! instance stops running, the label is taken off: KWOK lets the Node go (its watch selects
//! by the label), the Lease is no longer renewed, and kube-controller-manager marks the Node
//! `Unknown` and unreachable, as it does when a real instance dies.

use std::collections::BTreeSet;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

use super::super::WorldError;
use super::super::cloud::SimCloud;
use super::super::kubelet::{KubeletReport, node_for, node_name};
use super::RealCluster;

/// The label KWOK's `--manage-nodes-with-label-selector` selects (`scripts/cluster.sh`),
/// with [`KWOK_VALUE`].
pub const KWOK_LABEL: &str = "kerf.dev/kubelet";

/// The value of [`KWOK_LABEL`].
pub const KWOK_VALUE: &str = "kwok";

/// The instances whose kubelets registered (each once: a Node Kerf deleted stays deleted) and
/// those whose kubelets stopped with them.
#[derive(Debug, Default)]
pub struct KubeletBridge {
    registered: BTreeSet<String>,
    stopped: BTreeSet<String>,
}

fn api_error(what: &str, e: kube::Error) -> WorldError {
    WorldError::Cluster(format!("{what}: {e}"))
}

impl RealCluster {
    /// One round of every simulated instance's kubelet at `now`.
    pub async fn kubelets(
        &mut self,
        cloud: &SimCloud,
        now: Timestamp,
        ready_delay: SignedDuration,
    ) -> Result<KubeletReport, WorldError> {
        let mut out = KubeletReport::default();
        for i in cloud.instances() {
            if i.info.state != "running"
                || now < i.running_at + ready_delay
                || self.bridge.registered.contains(&i.info.id)
            {
                continue;
            }
            let mut node = node_for(&i, now);
            if let Some(status) = &mut node.status {
                status.conditions = None;
            }
            node.metadata
                .labels
                .get_or_insert_default()
                .insert(KWOK_LABEL.into(), KWOK_VALUE.into());
            let name = node_name(&i);
            self.register(&node, &name).await?;
            self.bridge.registered.insert(i.info.id.clone());
            out.registered.push(name.clone());
            out.ready.push(name);
        }
        self.stop_dead(cloud).await?;
        Ok(out)
    }

    /// Takes KWOK's label off the Node of every registered instance that no longer runs, once.
    async fn stop_dead(&mut self, cloud: &SimCloud) -> Result<(), WorldError> {
        for i in cloud.instances() {
            let id = &i.info.id;
            if i.info.state == "running"
                || !self.bridge.registered.contains(id)
                || self.bridge.stopped.contains(id)
            {
                continue;
            }
            let name = node_name(&i);
            let patch = json!({"metadata": {"labels": {KWOK_LABEL: null}}});
            match Api::<Node>::all(self.admin.clone())
                .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
            {
                Ok(_) => {}
                Err(kube::Error::Api(s)) if s.code == 404 => {}
                Err(e) => return Err(api_error(&format!("stopping Node {name}'s kubelet"), e)),
            }
            self.bridge.stopped.insert(id.clone());
        }
        Ok(())
    }

    /// Creates the Node as its kubelet; an existing one (a retry) is taken as registered.
    async fn register(&self, node: &Node, name: &str) -> Result<(), WorldError> {
        let me = format!("system:node:{name}");
        let client = self.client_as(&me, &["system:nodes".to_string()])?;
        match Api::<Node>::all(client)
            .create(&PostParams::default(), node)
            .await
        {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(s)) if s.code == 409 => Ok(()),
            Err(e) => Err(api_error(
                &format!("the kubelet ({me}) registering Node {name}"),
                e,
            )),
        }
    }
}
