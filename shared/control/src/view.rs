//! One consistent view of the cluster for a decision: the snapshot, the unavailable-offerings
//! cache, and each EC2NodeClass's instance catalog with that cache applied; and its
//! conversion into the engine's model.
//!
//! Only provisionable pods are pending for the engine (as Karpenter: marked
//! `PodScheduled=False/Unschedulable` by kube-scheduler, unbound, not nominated for
//! preemption, not mirror pods, not terminating); other unbound pods are left to
//! kube-scheduler.

use std::collections::BTreeMap;
use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;
use kerf_api::v1::EC2NodeClass;
use kerf_catalog::Catalog;
use kerf_catalog::unavailable::UnavailableOfferings;
use kerf_convert::{cluster, pod};
use kerf_engine::plan::Unschedulable;
use serde_json::json;

use crate::ctx::Ctx;
use crate::error::ControlError;
use crate::log::controllers::PROVISIONER;
use crate::ports::{Cloud, Cluster, Publisher, Snapshot};

/// A snapshot with what the engine needs beside it.
#[derive(Debug, Clone)]
pub struct View {
    pub snap: Snapshot,
    pub marks: UnavailableOfferings,
    /// EC2NodeClasses by name.
    pub classes: BTreeMap<String, Arc<EC2NodeClass>>,
    /// Each node class's catalog, unavailable offerings marked, by class name.
    pub catalogs: BTreeMap<String, Arc<Catalog>>,
    /// Why a needed class has no catalog (it does not exist, or listing failed), by name: its
    /// NodePools are not ready and say so to the pods they cannot take.
    pub unloaded: BTreeMap<String, String>,
    pub now: Timestamp,
}

/// The engine's input, and the pending pods that could not be converted (with why).
#[derive(Debug, Clone)]
pub struct Converted {
    pub snapshot: kerf_engine::Snapshot,
    pub invalid: Vec<Unschedulable>,
}

impl View {
    /// Marks offerings unavailable in this view, as the cache now records them, without
    /// reading the cluster again.
    pub fn mark_unavailable(&mut self, keys: &[kerf_catalog::unavailable::OfferingKey]) {
        for k in keys {
            self.marks.mark(k.clone(), self.now);
        }
        for c in self.catalogs.values_mut() {
            self.marks.apply(Arc::make_mut(c), self.now);
        }
    }

    /// Reads the cluster, the cache and, when something needs planning, the catalogs of the
    /// node classes pools use.
    pub async fn read<C: Cluster, K: Cloud, P: Publisher>(
        ctx: &Ctx<C, K, P>,
    ) -> Result<View, ControlError> {
        View::read_with(ctx, false).await
    }

    /// [`View::read`]; `all_catalogs` reads the catalogs even when nothing is pending (the
    /// disruption planner prices every node).
    pub async fn read_with<C: Cluster, K: Cloud, P: Publisher>(
        ctx: &Ctx<C, K, P>,
        all_catalogs: bool,
    ) -> Result<View, ControlError> {
        let now = ctx.now();
        let (snap, marks) = futures::try_join!(
            ctx.cluster.snapshot(),
            ctx.cluster.unavailable_offerings(now)
        )?;
        let classes: BTreeMap<String, Arc<EC2NodeClass>> = snap
            .node_classes
            .iter()
            .map(|c| {
                (
                    c.metadata.name.clone().unwrap_or_default(),
                    Arc::new(c.clone()),
                )
            })
            .collect();
        let mut catalogs = BTreeMap::new();
        let mut unloaded = BTreeMap::new();
        let statics = ctx.settings.static_capacity && static_short(&snap);
        let classes_needed = if all_catalogs || statics || needs_planning(&snap) {
            used_classes(&snap)
        } else {
            Vec::new()
        };
        for name in classes_needed {
            let Some(class) = classes.get(&name) else {
                unloaded.insert(name.clone(), format!("EC2NodeClass {name:?} not found"));
                continue;
            };
            match ctx.cloud.catalog(class).await {
                Ok(c) => {
                    let mut c = Arc::unwrap_or_clone(c);
                    marks.apply(&mut c, now);
                    catalogs.insert(name, Arc::new(c));
                }
                Err(e) => {
                    ctx.log.error(
                        PROVISIONER,
                        "could not list instance types",
                        json!({"EC2NodeClass": {"name": name}, "error": e.to_string()}),
                    );
                    let why = format!("instance types of EC2NodeClass {name:?} not listed: {e}");
                    unloaded.insert(name, why);
                }
            }
        }
        Ok(View {
            snap,
            marks,
            classes,
            catalogs,
            unloaded,
            now,
        })
    }

    /// The engine snapshot. Objects that do not convert are logged and left out; pending
    /// pods among them are reported unschedulable with the reason.
    pub fn convert<C, K, P>(&self, ctx: &Ctx<C, K, P>) -> Converted {
        let warn = |kind: &str, name: &str, e: &dyn std::fmt::Display| {
            ctx.log.warn(
                PROVISIONER,
                "ignoring invalid object",
                json!({"kind": kind, "name": name, "error": e.to_string()}),
            )
        };
        let mut s = kerf_engine::Snapshot {
            now: self.now.as_second(),
            ..Default::default()
        };
        let mut invalid = Vec::new();
        let storage = crate::volumes::storage(&self.snap, &warn);
        for p in &self.snap.pods {
            let bound = p
                .spec
                .as_ref()
                .and_then(|s| s.node_name.as_deref())
                .is_some_and(|n| !n.is_empty());
            if !bound && !is_provisionable(p) {
                continue;
            }
            match pod::pod(p) {
                Ok(mut ep) => {
                    crate::volumes::resolve(&storage, p, &mut ep);
                    s.pods.push(ep);
                }
                Err(e) if !bound => invalid.push(Unschedulable {
                    pod: key(p),
                    reason: format!("invalid pod: {e}"),
                    kind: kerf_engine::plan::ReasonKind::InvalidPod,
                }),
                Err(e) => warn("Pod", &key(p), &e),
            }
        }
        for n in &self.snap.nodes {
            match cluster::node(n) {
                Ok(x) => s.nodes.push(x),
                Err(e) => warn("Node", n.metadata.name.as_deref().unwrap_or_default(), &e),
            }
        }
        kerf_convert::volumes::apply_limits(
            &mut s.nodes,
            &crate::volumes::limits(&self.snap, &warn),
        );
        for c in &self.snap.node_claims {
            match cluster::node_claim(c) {
                Ok(x) => s.node_claims.push(x),
                Err(e) => warn(
                    "NodeClaim",
                    c.metadata.name.as_deref().unwrap_or_default(),
                    &e,
                ),
            }
        }
        for ds in &self.snap.daemon_sets {
            match cluster::daemon_set(ds) {
                Ok(x) => s.daemon_sets.push(x),
                Err(e) => warn(
                    "DaemonSet",
                    ds.metadata.name.as_deref().unwrap_or_default(),
                    &e,
                ),
            }
        }
        let overlays = if ctx.settings.node_overlay {
            crate::overlays::converted(&self.snap.node_overlays, &ctx.log)
        } else {
            Vec::new()
        };
        for np in &self.snap.node_pools {
            let class = &np.spec.template.spec.node_class_ref.name;
            let (catalog, unready) = match (self.catalogs.get(class), self.unloaded.get(class)) {
                (Some(c), _) => (c.clone(), None),
                (None, Some(why)) => (Arc::default(), Some(why.clone())),
                (None, None) => continue,
            };
            match cluster::node_pool(np, catalog) {
                Ok(x) if !x.deleting => s.node_pools.push(crate::overlays::apply(
                    kerf_engine::model::NodePool { unready, ..x },
                    &overlays,
                    &ctx.log,
                )),
                Ok(_) => {}
                Err(e) => warn(
                    "NodePool",
                    np.metadata.name.as_deref().unwrap_or_default(),
                    &e,
                ),
            }
        }
        for b in &self.snap.pdbs {
            match kerf_convert::disruption::pdb(b) {
                Ok(x) => s.pdbs.push(x),
                Err(e) => warn(
                    "PodDisruptionBudget",
                    b.metadata.name.as_deref().unwrap_or_default(),
                    &e,
                ),
            }
        }
        for c in &self.snap.node_classes {
            match kerf_convert::disruption::node_class(c) {
                Ok(x) => s
                    .node_classes
                    .push(crate::nodeclass::with_placement_group(x, &self.catalogs)),
                Err(e) => warn(
                    "EC2NodeClass",
                    c.metadata.name.as_deref().unwrap_or_default(),
                    &e,
                ),
            }
        }
        for ns in &self.snap.namespaces {
            s.namespaces.insert(
                ns.metadata.name.clone().unwrap_or_default(),
                ns.metadata.labels.clone().unwrap_or_default(),
            );
        }
        Converted {
            snapshot: s,
            invalid,
        }
    }

    /// The NodeClaims not being deleted.
    pub fn live_claims(&self) -> impl Iterator<Item = &kerf_api::v1::NodeClaim> {
        self.snap
            .node_claims
            .iter()
            .filter(|c| c.metadata.deletion_timestamp.is_none())
    }

    /// The NodePool named `name`.
    pub fn pool(&self, name: &str) -> Option<&kerf_api::v1::NodePool> {
        self.snap
            .node_pools
            .iter()
            .find(|p| p.metadata.name.as_deref() == Some(name))
    }

    /// The pod with key `namespace/name`.
    pub fn pod(&self, key_: &str) -> Option<&Pod> {
        self.snap.pods.iter().find(|p| key(p) == key_)
    }
}

/// Whether anything needs the catalogs: a provisionable pod, or a NodeClaim not launched yet
/// (its capacity is estimated from its instance-type options). Otherwise the instance types
/// are not read at all.
fn needs_planning(snap: &Snapshot) -> bool {
    snap.pods.iter().any(is_provisionable)
        || snap.node_claims.iter().any(|c| {
            c.metadata.deletion_timestamp.is_none() && crate::claim::provider_id(c).is_none()
        })
}

/// Whether a static NodePool (`replicas`) has fewer NodeClaims than its replicas.
fn static_short(snap: &Snapshot) -> bool {
    snap.node_pools.iter().any(|p| {
        let name = p.metadata.name.as_deref();
        let have = snap
            .node_claims
            .iter()
            .filter(|c| crate::claim::pool_name(c) == name)
            .count() as i64;
        p.spec.replicas.is_some_and(|r| have < r)
    })
}

/// Node classes referenced by NodePools, in name order.
fn used_classes(snap: &Snapshot) -> Vec<String> {
    let mut v: Vec<String> = snap
        .node_pools
        .iter()
        .map(|p| p.spec.template.spec.node_class_ref.name.clone())
        .collect();
    v.sort();
    v.dedup();
    v
}

/// `namespace/name` of a pod.
pub fn key(p: &Pod) -> String {
    format!(
        "{}/{}",
        p.metadata.namespace.as_deref().unwrap_or("default"),
        p.metadata.name.as_deref().unwrap_or_default()
    )
}

/// Karpenter's `IsProvisionable`: kube-scheduler marked the pod unschedulable, it is not
/// bound, not nominated for preemption, not a mirror pod, and not going away.
pub fn is_provisionable(p: &Pod) -> bool {
    let unbound = p
        .spec
        .as_ref()
        .is_none_or(|s| s.node_name.as_deref().is_none_or(str::is_empty));
    let status = p.status.as_ref();
    let unschedulable = status
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| {
            cs.iter().any(|c| {
                c.type_ == "PodScheduled"
                    && c.status == "False"
                    && c.reason.as_deref() == Some("Unschedulable")
            })
        });
    let nominated = status
        .and_then(|s| s.nominated_node_name.as_deref())
        .is_some_and(|n| !n.is_empty());
    let mirror = p
        .metadata
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(kerf_labels::MIRROR_POD));
    let phase = status.and_then(|s| s.phase.as_deref()).unwrap_or("Pending");
    let alive = p.metadata.deletion_timestamp.is_none() && (phase == "Pending" || phase.is_empty());
    unbound && unschedulable && !nominated && !mirror && alive
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(extra: serde_json::Value) -> Pod {
        let mut v = json!({"metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "i"}]},
            "status": {"phase": "Pending", "conditions": [
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]}});
        json_patch_merge(&mut v, extra);
        serde_json::from_value(v).unwrap()
    }

    fn json_patch_merge(a: &mut serde_json::Value, b: serde_json::Value) {
        match (a, b) {
            (serde_json::Value::Object(a), serde_json::Value::Object(b)) => {
                for (k, v) in b {
                    json_patch_merge(a.entry(k).or_insert(serde_json::Value::Null), v);
                }
            }
            (a, b) => *a = b,
        }
    }

    #[test]
    fn only_pods_marked_unschedulable_are_provisionable() {
        assert!(is_provisionable(&pod(json!({}))));
        assert!(!is_provisionable(&pod(
            json!({"status": {"conditions": []}})
        )));
        assert!(!is_provisionable(&pod(json!({"spec": {"nodeName": "n1"}}))));
        assert!(!is_provisionable(&pod(
            json!({"status": {"nominatedNodeName": "n1"}})
        )));
        assert!(!is_provisionable(&pod(
            json!({"metadata": {"annotations": {"kubernetes.io/config.mirror": "x"}}})
        )));
        assert!(!is_provisionable(&pod(
            json!({"metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z"}})
        )));
        assert!(!is_provisionable(&pod(
            json!({"status": {"phase": "Succeeded"}})
        )));
        assert!(!is_provisionable(&pod(json!({"status": {"conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]}}))));
    }
}
