//! What a scenario runs on: the simulated world with Kerf's handlers ([`World`], on the
//! in-process server or a real control plane), or a real control plane where the real
//! Karpenter decides ([`crate::karpenter::KarpenterCluster`]). The runner drives either
//! through this trait: apply and delete objects, scale, let time pass, look, and change the
//! cloud under it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{Event, Pod};
use kerf_api::v1::{NodeClaim, NodePool};
use kerf_catalog::CapacityType;

use super::{ObjectRef, Reserve, Select, SpotPrice};
use crate::karpenter::process::{Usage, proc_usage};
use crate::world::cloud::NoCapacity;
use crate::world::import::Imported;
use crate::world::kubelet::node_name;
use crate::world::{World, WorldError};

/// What the cluster and its cloud look like at one moment.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub at: Timestamp,
    pub claims: Arc<Vec<NodeClaim>>,
    pub pods: Arc<Vec<Pod>>,
    pub events: Arc<Vec<Event>>,
    /// Instances billed now, per `instance-type/capacity-type`.
    pub billed: BTreeMap<String, usize>,
    /// USD per hour of the instances billed now.
    pub billed_per_hour: f64,
    /// Interruption messages handled since the start.
    pub interruptions: usize,
    /// Pods (by UID) still bound, neither finished nor being deleted, to a Node whose instance
    /// is gone: what a reclaimed instance took down with it.
    pub stranded: Vec<String>,
    /// Instances the cloud has warned of and has yet to take back.
    pub reclaims_due: usize,
}

/// The UIDs of `pods` stranded on a Node that `dead` says has lost its instance (a
/// DaemonSet's pods go with their node by design and are not counted).
pub fn stranded(pods: &[Pod], dead: impl Fn(&str) -> bool) -> Vec<String> {
    let daemon = |p: &Pod| {
        p.metadata
            .owner_references
            .iter()
            .flatten()
            .any(|o| o.kind == "DaemonSet")
    };
    let finished = |p: &Pod| {
        matches!(
            p.status.as_ref().and_then(|s| s.phase.as_deref()),
            Some("Succeeded" | "Failed")
        )
    };
    pods.iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none() && !daemon(p) && !finished(p))
        .filter(|p| {
            p.spec
                .as_ref()
                .and_then(|s| s.node_name.as_deref())
                .is_some_and(&dead)
        })
        .filter_map(|p| p.metadata.uid.clone())
        .collect()
}

/// A change to the cloud under the cluster, as a scenario step asks for it.
#[derive(Debug, Clone, Copy)]
pub enum CloudChange<'a> {
    /// Spot interruption warnings for these `(nodeclaim, instance)` pairs.
    Interrupt(&'a [(String, String)]),
    Unavailable(&'a Select),
    Available(&'a Select),
    ReleaseAmi(&'a str),
    SpotPrice(&'a SpotPrice),
    /// The kubelets of these `(nodeclaim, instance)` pairs stop reporting (`Ready=False`).
    FailNode(&'a [(String, String)]),
    /// A capacity reservation EC2 holds from now on.
    Reserve(&'a Reserve),
    /// A capacity reservation is cancelled.
    CancelReservation(&'a str),
}

/// A cluster a scenario can drive. The futures run on the caller's thread (`block_on`), so
/// they need not be `Send`.
#[allow(async_fn_in_trait)]
pub trait Cluster {
    /// The cluster's time (simulated, or the wall clock on a real control plane).
    fn now(&self) -> Timestamp;
    /// How often the runner looks.
    fn tick(&self) -> SignedDuration;
    /// Whether time is the wall clock's (a real control plane), not a simulated one.
    fn wall_clock(&self) -> bool;
    /// What an instance of this offering costs per hour now.
    fn price(&self, capacity_type: CapacityType, instance_type: &str, zone: &str) -> Option<f64>;
    /// Applies a manifest or a cluster dump (see [`crate::world::import`]).
    async fn import(&self, manifest: &str) -> Result<Imported, WorldError>;
    async fn delete(&self, o: &ObjectRef) -> Result<(), WorldError>;
    async fn scale(&self, namespace: &str, name: &str, replicas: u32) -> Result<(), WorldError>;
    /// Lets time move one tick on (or, when `quiet`, to the next moment something is due,
    /// never past `end`); returns whether anything may have changed.
    async fn step_toward(&mut self, quiet: bool, end: Timestamp) -> Result<bool, WorldError>;
    async fn snapshot(&self) -> Result<Snapshot, WorldError>;
    /// The NodePools, with their status (to say why nothing happened).
    async fn node_pools(&self) -> Result<Vec<NodePool>, WorldError>;
    /// Applies `change`; returns a line for the timeline when this cluster's cloud has no
    /// equivalent of it or applies it differently.
    async fn change(&mut self, change: CloudChange<'_>) -> Result<Option<String>, WorldError>;
    /// Invariants that do not hold now ([`super::invariants`]).
    async fn audit(&self) -> Result<Vec<String>, WorldError>;
    /// What the deciding side has used so far, when it is measured.
    fn usage(&self) -> Option<Usage>;
}

impl NoCapacity {
    /// The offerings a scenario's selector names.
    pub fn of(sel: &Select) -> NoCapacity {
        NoCapacity {
            capacity_type: sel.capacity_type.as_deref().and_then(CapacityType::parse),
            instance_type: sel.instance_type.clone(),
            zone: sel.zone.clone(),
        }
    }
}

impl Cluster for World {
    fn now(&self) -> Timestamp {
        World::now(self)
    }

    fn tick(&self) -> SignedDuration {
        self.options.tick
    }

    fn wall_clock(&self) -> bool {
        self.is_real()
    }

    fn price(&self, capacity_type: CapacityType, instance_type: &str, zone: &str) -> Option<f64> {
        self.cloud.prices.price(capacity_type, instance_type, zone)
    }

    async fn import(&self, manifest: &str) -> Result<Imported, WorldError> {
        World::import(self, manifest).await
    }

    async fn delete(&self, o: &ObjectRef) -> Result<(), WorldError> {
        let (v, ns) = (o.api_version.as_deref(), o.namespace.as_deref());
        World::delete(self, v, &o.kind, ns, &o.name).await
    }

    async fn scale(&self, namespace: &str, name: &str, replicas: u32) -> Result<(), WorldError> {
        World::scale(self, namespace, name, replicas).await
    }

    async fn step_toward(&mut self, quiet: bool, end: Timestamp) -> Result<bool, WorldError> {
        World::step_toward(self, quiet, end).await
    }

    async fn snapshot(&self) -> Result<Snapshot, WorldError> {
        let (billed, billed_per_hour) = billing(self);
        let now = World::now(self);
        let instances = self.cloud.instances();
        let gone: BTreeSet<String> = instances
            .iter()
            .filter(|i| !matches!(i.info.state.as_str(), "pending" | "running"))
            .map(node_name)
            .collect();
        let reclaims_due = instances
            .iter()
            .filter(|i| i.info.state == "running" && i.reclaim_at.is_some_and(|t| t > now))
            .count();
        let pods = self.list::<Pod>().await?;
        Ok(Snapshot {
            at: now,
            claims: self.list::<NodeClaim>().await?,
            stranded: stranded(&pods, |n| gone.contains(n)),
            pods,
            events: self.list::<Event>().await?,
            billed,
            billed_per_hour,
            interruptions: self.interruptions_handled,
            reclaims_due,
        })
    }

    async fn node_pools(&self) -> Result<Vec<NodePool>, WorldError> {
        Ok(self.list::<NodePool>().await?.as_ref().clone())
    }

    async fn change(&mut self, change: CloudChange<'_>) -> Result<Option<String>, WorldError> {
        match change {
            CloudChange::Interrupt(picked) => {
                let ids: Vec<String> = picked.iter().map(|(_, id)| id.clone()).collect();
                self.interrupt(&ids).await;
            }
            CloudChange::Unavailable(sel) => self.cloud.remove_capacity(NoCapacity::of(sel)),
            CloudChange::Available(sel) => self.cloud.restore_matching(&NoCapacity::of(sel)),
            CloudChange::ReleaseAmi(id) => self.cloud.release_ami(id),
            CloudChange::SpotPrice(p) => {
                self.cloud
                    .set_spot_price(&p.instance_type, p.zone.as_deref(), p.price)
            }
            CloudChange::FailNode(picked) => {
                for (_, id) in picked {
                    let fault = crate::world::cloud::NodeFault {
                        condition: "Ready".into(),
                        status: "False".into(),
                    };
                    self.cloud.fail_node(id, Some(fault));
                }
            }
            CloudChange::Reserve(r) => {
                let spec = r.spec(World::now(self)).map_err(WorldError::Cloud)?;
                self.cloud.add_reservation(spec);
            }
            CloudChange::CancelReservation(id) => {
                if !self.cloud.cancel_reservation(id) {
                    return Err(WorldError::Cloud(format!(
                        "no capacity reservation {id} to cancel"
                    )));
                }
            }
        }
        Ok(None)
    }

    async fn audit(&self) -> Result<Vec<String>, WorldError> {
        super::invariants::check(self).await
    }

    /// On a real control plane: the CPU of the thread running the world (Kerf's handlers
    /// with the simulated EC2 and kubelets, run one thread per world) and the process's peak
    /// memory; an upper bound of what the handlers use.
    fn usage(&self) -> Option<Usage> {
        self.is_real()
            .then(|| proc_usage(std::path::Path::new("/proc/thread-self")))
    }
}

/// What EC2 bills now: every instance from its launch until it shuts down, whatever its
/// NodeClaim's state (a draining node costs until its instance is terminated).
fn billing(w: &World) -> (BTreeMap<String, usize>, f64) {
    let mut shapes = BTreeMap::new();
    let mut per_hour = 0.0;
    for i in w.cloud.instances() {
        if !matches!(i.info.state.as_str(), "pending" | "running" | "stopping") {
            continue;
        }
        let (it, ct) = (&i.info.instance_type, i.info.capacity_type);
        per_hour += w.cloud.prices.price(ct, it, &i.info.zone).unwrap_or(0.0);
        *shapes.entry(format!("{it}/{}", ct.as_str())).or_default() += 1;
    }
    (shapes, per_hour)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(uid: &str, node: &str, extra: serde_json::Value) -> Pod {
        let mut p = json!({"metadata": {"name": uid, "uid": uid}, "spec": {"nodeName": node,
            "containers": []}, "status": {"phase": "Running"}});
        if let (Some(p), Some(e)) = (p.as_object_mut(), extra.as_object()) {
            for (k, v) in e {
                p.insert(k.clone(), v.clone());
            }
        }
        serde_json::from_value(p).unwrap()
    }

    #[test]
    fn only_live_pods_of_dead_nodes_are_stranded() {
        let pods = [
            pod("on-dead", "dead", json!({})),
            pod("on-live", "live", json!({})),
            pod(
                "leaving",
                "dead",
                json!({"metadata": {"name": "leaving", "uid": "leaving",
                    "deletionTimestamp": "2026-01-01T00:00:00Z"}}),
            ),
            pod("done", "dead", json!({"status": {"phase": "Succeeded"}})),
            pod(
                "agent",
                "dead",
                json!({"metadata": {"name": "agent", "uid": "agent", "ownerReferences": [
                    {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "d", "uid": "d"}]}}),
            ),
        ];
        assert_eq!(stranded(&pods, |n| n == "dead"), ["on-dead"]);
    }
}
