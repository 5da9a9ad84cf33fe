//! A simulated kube-scheduler: every pending pod is bound where it fits among Ready nodes
//! (through the `pods/binding` subresource), and a pod that fits nowhere is marked
//! `PodScheduled=False/Unschedulable` with a `pods/status` update — the update that
//! triggers provisioning through the admission webhook, as in a real cluster.
//!
//! Placement is the engine's own simulation of kube-scheduler over existing nodes
//! (resources, selectors, affinity, taints, topology spread), with no NodePool to launch
//! from; every node counts as initialized, so every taint is honoured. Volumes are
//! honoured as kube-scheduler does ([`super::storage::placement`]): a pod waits for an
//! unbound immediate claim, goes only where its volumes' zones and its nodes' attach limits
//! allow, and its `WaitForFirstConsumer` claims are provisioned in the chosen node's zone
//! before it is bound.

use std::sync::Arc;

use k8s_openapi::api::core::v1::{Node, Pod};
use kerf_control::ports::Clock;
use kube::Client;
use kube::api::{Api, Patch, PatchParams, PostParams};

use super::storage::attach::attach_limit;
use super::storage::placement::{self, ClaimKey, PodVolumes};
use super::storage::{Volumes, provision};
use crate::cached::Cached;
use serde_json::json;

/// A pod's key, `namespace/name`.
fn key(p: &Pod) -> String {
    let ns = p.metadata.namespace.as_deref().unwrap_or_default();
    let name = p.metadata.name.as_deref().unwrap_or_default();
    format!("{ns}/{name}")
}

/// What a scheduling round did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ScheduleReport {
    pub bound: usize,
    pub marked_unschedulable: usize,
    pub pending: usize,
}

/// The scheduler.
#[derive(Clone)]
pub struct Scheduler {
    client: Client,
    reads: Cached,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scheduler").finish_non_exhaustive()
    }
}

fn node_ready(n: &Node) -> bool {
    n.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

fn unschedulable_marked(p: &Pod) -> bool {
    p.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c.type_ == "PodScheduled" && c.reason.as_deref() == Some("Unschedulable"))
        })
}

impl Scheduler {
    /// A scheduler writing through `client` and reading the store through `reads`.
    pub fn new(client: Client, reads: Cached, clock: Arc<dyn Clock>) -> Self {
        Scheduler {
            client,
            reads,
            clock,
        }
    }

    /// One scheduling round over every pending pod.
    pub async fn step(&self) -> Result<ScheduleReport, kube::Error> {
        let pods = self.reads.list::<Pod>("/pods")?;
        let waiting = |p: &Pod| {
            p.metadata.deletion_timestamp.is_none()
                && p.spec.as_ref().is_none_or(|s| s.node_name.is_none())
        };
        if !pods.iter().any(waiting) {
            return Ok(ScheduleReport::default());
        }
        let nodes = self.reads.list::<Node>("/nodes")?;
        let ds = self
            .reads
            .list::<k8s_openapi::api::apps::v1::DaemonSet>("apps/daemonsets")?;
        let mut snap = kerf_engine::Snapshot {
            now: self.clock.now().as_second(),
            ..Default::default()
        };
        let vols = Volumes::read(&self.reads)?;
        for n in nodes
            .iter()
            .filter(|n| node_ready(n) && n.metadata.deletion_timestamp.is_none())
        {
            if let Ok(mut x) = kerf_convert::cluster::node(n) {
                x.labels
                    .insert(kerf_labels::INITIALIZED.into(), "true".into());
                if let Some(max) = attach_limit(&vols, &x.name).and_then(|m| u32::try_from(m).ok())
                {
                    x.volume_limits
                        .insert(kerf_engine::model::EBS_CSI_DRIVER.into(), max);
                }
                snap.nodes.push(x);
            }
        }
        let mut counts = placement::node_claims(&vols, &pods);
        let mut needs: std::collections::HashMap<String, PodVolumes> = Default::default();
        let mut blocked: Vec<(String, String)> = Vec::new();
        snap.pods = pods
            .iter()
            .filter_map(|p| {
                let mut x = kerf_convert::pod::pod(p).ok()?;
                if crate::world::storage::pod_claims(p).is_empty() {
                    return Some(x);
                }
                match placement::pod_volumes(&vols, p) {
                    Err(why) if waiting(p) => {
                        blocked.push((key(p), why));
                        return None;
                    }
                    Err(_) => {}
                    Ok(v) => {
                        x.volumes = placement::engine_volumes(&v);
                        if waiting(p) {
                            needs.insert(key(p), v);
                        }
                    }
                }
                Some(x)
            })
            .collect();
        snap.daemon_sets = ds
            .iter()
            .filter_map(|d| kerf_convert::cluster::daemon_set(d).ok())
            .collect();
        let opts = kerf_engine::Options {
            optimize_cost: false,
            ..Default::default()
        };
        let plan = kerf_engine::provision(&snap, &opts);
        let mut out = ScheduleReport {
            pending: plan.summary.pending_pods,
            ..Default::default()
        };
        for nm in &plan.nominations {
            if let Some(v) = needs.get(&nm.pod) {
                if placement::exceeds_limit(&vols, &counts, &nm.node, v) {
                    continue;
                }
                Box::pin(self.provision_for(&vols, &nodes, &nm.node, &v.consumer)).await?;
                counts
                    .entry(nm.node.clone())
                    .or_default()
                    .extend(v.ebs.iter().cloned());
            }
            let (ns, name) = nm.pod.split_once('/').unwrap_or(("default", &nm.pod));
            let api: Api<Pod> = Api::namespaced(self.client.clone(), ns);
            let binding = json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
                "target": {"apiVersion": "v1", "kind": "Node", "name": nm.node}});
            let r: Result<kube::core::Status, _> = api
                .create_subresource("binding", name, &PostParams::default(), &binding)
                .await;
            if r.is_ok() {
                out.bound += 1;
            }
        }
        let now = crate::world::rfc3339(self.clock.now());
        let total = snap.nodes.len();
        let by_key: std::collections::HashMap<String, &Pod> = pods
            .iter()
            .map(|p| {
                let ns = p.metadata.namespace.as_deref().unwrap_or_default();
                let name = p.metadata.name.as_deref().unwrap_or_default();
                (format!("{ns}/{name}"), p)
            })
            .collect();
        let reasons = plan
            .unschedulable
            .iter()
            .map(|u| (u.pod.clone(), u.reason.clone()))
            .chain(blocked);
        for (pod, reason) in reasons {
            let Some(p) = by_key.get(&pod) else {
                continue;
            };
            if unschedulable_marked(p) || p.metadata.deletion_timestamp.is_some() {
                continue;
            }
            let (ns, name) = pod.split_once('/').unwrap_or(("default", &pod));
            let api: Api<Pod> = Api::namespaced(self.client.clone(), ns);
            let patch = json!({"status": {"conditions": [{"type": "PodScheduled", "status": "False",
                "reason": "Unschedulable", "lastTransitionTime": now,
                "message": format!("0/{total} nodes are available: {reason}")}]}});
            api.patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
                .await?;
            out.marked_unschedulable += 1;
        }
        Ok(out)
    }

    /// Provisions a pod's `WaitForFirstConsumer` claims in the zone of `node`, as the
    /// scheduler's volume binding and the external provisioner do before the pod is bound.
    async fn provision_for(
        &self,
        vols: &Volumes,
        nodes: &[Node],
        node: &str,
        claims: &[ClaimKey],
    ) -> Result<(), kube::Error> {
        let zone = nodes
            .iter()
            .find(|n| n.metadata.name.as_deref() == Some(node))
            .and_then(|n| n.metadata.labels.as_ref()?.get(kerf_labels::ZONE).cloned());
        let Some(zone) = zone else {
            return Ok(());
        };
        for k in claims {
            let Some(claim) = vols.claims.get(k) else {
                continue;
            };
            let class = crate::world::storage::claim_class(claim).and_then(|c| vols.classes.get(c));
            if let Some(class) = class {
                provision::provision(&self.client, claim, class, &zone, Some(node)).await?;
            }
        }
        Ok(())
    }
}
