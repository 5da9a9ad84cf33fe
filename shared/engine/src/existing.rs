//! The slots of existing capacity: usable Nodes (with what is bound to them and the
//! DaemonSets they will run) and in-flight NodeClaims, as the overlay leaves them.

use std::collections::BTreeMap;

use crate::labels;
use crate::model::{Node, NodeClaim, Pod, Snapshot, Taint};
use crate::pools::PoolCtx;
use crate::requirements::Requirements;
use crate::res::{Res, ResIndex};
use crate::selector;
use crate::slots::{Slot, SlotKind};
use crate::taints::{first_untolerated, is_ephemeral};
use crate::view::Overlay;

/// Builds slots for existing nodes (initialized first, then by name) and in-flight claims.
pub fn existing(
    snap: &Snapshot,
    ix: &ResIndex,
    pools: &[PoolCtx<'_>],
    overlay: Overlay<'_>,
) -> Vec<Slot> {
    let mut slots = match overlay.cached {
        // Moved pods only leave gone nodes, so every other node's slot is the cached one.
        Some(c) => c
            .nodes
            .iter()
            .filter(|s| !overlay.gone(s.name()))
            .cloned()
            .collect(),
        None => node_slots(snap, ix, overlay),
    };
    slots.extend(
        claim_slots(snap, ix, pools)
            .into_iter()
            .filter(|s| !overlay.gone(s.name())),
    );
    slots
}

/// Slots for the usable nodes the overlay keeps, initialized first, then by name.
pub fn node_slots(snap: &Snapshot, ix: &ResIndex, overlay: Overlay<'_>) -> Vec<Slot> {
    let mut nodes: Vec<&Node> = snap
        .nodes
        .iter()
        .filter(|n| usable_node(n) && !unowned_unregistered(snap, n) && !overlay.gone(&n.name))
        .collect();
    nodes.sort_by(|a, b| {
        initialized(b)
            .cmp(&initialized(a))
            .then(a.name.cmp(&b.name))
    });
    let mut bound: rustc_hash::FxHashMap<&str, Vec<&Pod>> = rustc_hash::FxHashMap::default();
    for (_, p) in snap
        .pods
        .iter()
        .enumerate()
        .filter(|(i, p)| !p.is_terminal() && !p.terminating && !overlay.moved(*i))
    {
        if let Some(n) = p.node_name.as_deref() {
            bound.entry(n).or_default().push(p);
        }
    }
    nodes
        .into_iter()
        .map(|n| node_slot(snap, n, bound.get(n.name.as_str()).map_or(&[], |v| v), ix))
        .collect()
}

/// Slots for in-flight claims (no Node yet), by name.
fn claim_slots(snap: &Snapshot, ix: &ResIndex, pools: &[PoolCtx<'_>]) -> Vec<Slot> {
    let node_names: rustc_hash::FxHashSet<&str> =
        snap.nodes.iter().map(|n| n.name.as_str()).collect();
    let mut claims: Vec<&NodeClaim> = snap
        .node_claims
        .iter()
        .filter(|c| {
            !c.deleting
                && c.node_name
                    .as_deref()
                    .is_none_or(|n| !node_names.contains(n))
        })
        .collect();
    claims.sort_by(|a, b| a.name.cmp(&b.name));
    claims
        .into_iter()
        .map(|c| claim_slot(snap, c, ix, pools))
        .collect()
}

fn usable_node(n: &Node) -> bool {
    !n.deleting && !n.taints.iter().any(|t| t.key == labels::DISRUPTED_TAINT)
}

/// A Node still tainted `karpenter.sh/unregistered` that no live NodeClaim owns (by providerID
/// or node name) never takes pods: only registration lifts that taint, and registration needs
/// the claim. It is what an instance leaves behind when its claim timed out before the launch
/// was recorded; garbage collection removes it. Counting it as capacity would hold the pods
/// that need a new claim until then.
fn unowned_unregistered(snap: &Snapshot, n: &Node) -> bool {
    n.taints.iter().any(|t| t.key == labels::UNREGISTERED_TAINT)
        && !snap.node_claims.iter().any(|c| {
            !c.deleting
                && ((!n.provider_id.is_empty() && c.provider_id == n.provider_id)
                    || c.node_name.as_deref() == Some(n.name.as_str()))
        })
}

fn initialized(n: &Node) -> bool {
    !n.labels.contains_key(labels::NODEPOOL)
        || n.labels
            .get(labels::INITIALIZED)
            .is_some_and(|v| v == "true")
}

/// A slot for node `n`, with `bound` the live pods bound to it.
fn node_slot(snap: &Snapshot, n: &Node, bound: &[&Pod], ix: &ResIndex) -> Slot {
    let mut taints: Vec<Taint> = n.taints.clone();
    if !initialized(n) {
        let startup: Vec<&Taint> = snap
            .node_claims
            .iter()
            .filter(|c| c.node_name.as_deref() == Some(&n.name))
            .flat_map(|c| &c.startup_taints)
            .collect();
        taints.retain(|t| !is_ephemeral(t) && !startup.contains(&t));
    }
    if n.unschedulable {
        taints.push(Taint {
            key: labels::UNSCHEDULABLE_TAINT.into(),
            value: String::new(),
            effect: crate::model::Effect::NoSchedule,
        });
    }
    let mut labels = n.labels.clone();
    labels
        .entry(labels::HOSTNAME.to_string())
        .or_insert_with(|| n.name.clone());
    labels.insert(labels::NODE_NAME_FIELD.to_string(), n.name.clone());
    let mut free = ix.vec(&n.allocatable);
    let mut ports = Vec::new();
    let mut attached = Vec::new();
    for p in bound {
        free.sub(&ix.vec(&p.spec.requests));
        ports.extend(p.spec.host_ports.iter().cloned());
        crate::volumes::attach(&mut attached, &p.volumes.attached);
    }
    for ds in &snap.daemon_sets {
        let runs = bound
            .iter()
            .any(|p| p.daemonset.as_deref() == Some(&ds.name) && p.namespace == ds.namespace);
        if !runs && daemon_runs_on(ds, &labels, &taints) {
            free.sub(&ix.vec(&ds.pod.requests));
        }
    }
    Slot {
        kind: SlotKind::Node(n.name.clone()),
        labels: std::rc::Rc::new(labels),
        reqs: Requirements::new(),
        taints,
        free,
        host_ports: ports,
        host_counts: Vec::new(),
        host_owners: Vec::new(),
        pods: Vec::new(),
        collapsed: Vec::new(),
        attached,
        volume_limits: (!n.volume_limits.is_empty())
            .then(|| std::rc::Rc::new(n.volume_limits.clone())),
        reservation: None,
    }
}

fn daemon_runs_on(
    ds: &crate::model::DaemonSet,
    labels: &BTreeMap<String, String>,
    taints: &[Taint],
) -> bool {
    let hard: Vec<Taint> = taints
        .iter()
        .filter(|t| t.effect != crate::model::Effect::PreferNoSchedule)
        .cloned()
        .collect();
    if first_untolerated(&hard, &ds.pod.tolerations, false).is_some() {
        return false;
    }
    let label = |k: &str| labels.get(k).cloned();
    let sel_ok = ds
        .pod
        .node_selector
        .iter()
        .all(|(k, v)| labels.get(k) == Some(v));
    sel_ok
        && (ds.pod.required_terms.is_empty()
            || ds
                .pod
                .required_terms
                .iter()
                .any(|t| selector::term_matches(t, label)))
}

fn claim_slot(snap: &Snapshot, c: &NodeClaim, ix: &ResIndex, pools: &[PoolCtx<'_>]) -> Slot {
    let mut reqs = Requirements::from_selectors(&c.requirements).unwrap_or_default();
    reqs.add_all(&Requirements::from_labels(&c.labels));
    let mut free = if c.allocatable.0.is_empty() {
        estimate_allocatable(c, &reqs, ix, pools)
    } else {
        ix.vec(&c.allocatable)
    };
    let mut labels = c.labels.clone();
    for (k, r) in reqs.iter() {
        if r.len() == 1
            && let Some(v) = r.any()
        {
            labels.entry(k.clone()).or_insert(v);
        }
    }
    for ds in &snap.daemon_sets {
        if daemon_runs_on(ds, &labels, &c.taints) {
            free.sub(&ix.vec(&ds.pod.requests));
        }
    }
    let volume_limits = claim_ebs_limit(c, &reqs, pools);
    Slot {
        kind: SlotKind::Claim(c.name.clone()),
        labels: std::rc::Rc::new(labels),
        reqs,
        taints: c.taints.clone(),
        free,
        host_ports: Vec::new(),
        host_counts: Vec::new(),
        host_owners: Vec::new(),
        pods: Vec::new(),
        collapsed: Vec::new(),
        attached: Vec::new(),
        volume_limits,
        reservation: None,
    }
}

/// An in-flight claim's EBS attach limit before its CSINode exists: the smallest of its
/// instance-type options' (its one type once launched), as its allocatable is estimated.
fn claim_ebs_limit(
    c: &NodeClaim,
    reqs: &Requirements,
    pools: &[PoolCtx<'_>],
) -> Option<std::rc::Rc<BTreeMap<String, u32>>> {
    let pool = pools.iter().find(|p| p.np.name == c.node_pool)?;
    let min = pool
        .types
        .iter()
        .filter(|t| t.matches(reqs))
        .filter_map(|t| t.it.ebs_volume_limit)
        .min()?;
    Some(std::rc::Rc::new(
        [(crate::model::EBS_CSI_DRIVER.to_string(), min)].into(),
    ))
}

/// Before launch a claim has no allocatable: assume the smallest of its instance-type options.
fn estimate_allocatable(
    c: &NodeClaim,
    reqs: &Requirements,
    ix: &ResIndex,
    pools: &[PoolCtx<'_>],
) -> Res {
    let Some(pool) = pools.iter().find(|p| p.np.name == c.node_pool) else {
        return Res::zero(ix.len());
    };
    let mut est: Option<Res> = None;
    for t in pool.types.iter().filter(|t| t.matches(reqs)) {
        match &mut est {
            None => est = Some(t.alloc.clone()),
            Some(e) => {
                for (a, b) in e.0.iter_mut().zip(&t.alloc.0) {
                    *a = (*a).min(*b);
                }
            }
        }
    }
    est.unwrap_or_else(|| Res::zero(ix.len()))
}

#[cfg(test)]
#[path = "existing_tests.rs"]
mod tests;
