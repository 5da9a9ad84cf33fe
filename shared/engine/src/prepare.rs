//! Turns a snapshot into the scheduler's starting state: pending pods in Karpenter's queue
//! order, their topology groups, existing capacity with what is already bound to it.

use std::collections::{BTreeMap, BTreeSet};
use std::hash::{Hash, Hasher};

use rustc_hash::FxHasher;

use crate::labels;
use crate::model::{AffinityTerm, Pod, Snapshot, WhenUnsatisfiable};
use crate::pools::PoolCtx;
use crate::res::{CPU, MEMORY, Res, ResIndex};
use crate::slots::{Slot, SlotKind};
use crate::topology::{Kind, Topology};
use crate::view::{Cached, Namespaces, Overlay};

/// A pending pod with everything the scheduler precomputes for it.
#[derive(Clone, Debug)]
pub struct PodInfo<'a> {
    pub pod: &'a Pod,
    pub req: Res,
    /// Groups whose selector counts this pod.
    pub matching: Vec<usize>,
    /// Anti-affinity groups that select this pod (their owners repel it).
    pub inverse: Vec<usize>,
    /// Group of each `spec.spread` entry.
    pub spread: Vec<usize>,
    pub affinity: Vec<usize>,
    pub anti: Vec<usize>,
    /// Preferred terms' groups, heaviest first.
    pub pref_affinity: Vec<usize>,
    pub pref_anti: Vec<usize>,
    /// Hash of everything that decides where this pod fits (for first-fit hints).
    pub shape: u64,
    /// Hash of the same without the requests: pods of one class are refused alike by a slot
    /// for every reason but room.
    pub class: u64,
}

/// What does not depend on an overlay, computed once for many runs over one snapshot.
pub fn cached(snap: &Snapshot, ix: &ResIndex) -> Cached {
    Cached {
        nodes: crate::existing::node_slots(snap, ix, Overlay::default()),
        namespaces: known_namespaces(snap),
    }
}

/// The scheduler's starting state, cloned for each packing policy.
#[derive(Clone, Debug)]
pub struct Base<'a> {
    pub pods: Vec<PodInfo<'a>>,
    pub topo: Topology,
    pub slots: Vec<Slot>,
    pub pools: Vec<PoolCtx<'a>>,
    pub demand: Res,
}

/// Builds the starting state for `pending` pods (indices into `snap.pods`).
pub fn base<'a>(
    snap: &'a Snapshot,
    ix: &ResIndex,
    pools: Vec<PoolCtx<'a>>,
    pending: &[usize],
    overlay: Overlay<'_>,
) -> Base<'a> {
    let mut topo = Topology::default();
    let computed;
    let known = match overlay.cached {
        Some(c) => &c.namespaces,
        None => {
            computed = known_namespaces(snap);
            &computed
        }
    };
    let mut pods: Vec<PodInfo<'a>> = pending
        .iter()
        .map(|&i| register_pod(&mut topo, &snap.pods[i], ix, known))
        .collect();
    pods.sort_by(|a, b| queue_order(a, b));
    let mut slots = crate::existing::existing(snap, ix, &pools, overlay);
    count_bound(snap, &mut topo, &mut slots, known, overlay);
    for p in &mut pods {
        for (g, grp) in topo.groups.iter().enumerate() {
            if grp.selects(&p.pod.namespace, &p.pod.labels) {
                p.matching.push(g);
                if grp.kind == Kind::AntiAffinity {
                    p.inverse.push(g);
                }
            }
        }
        p.class = class(p);
        p.shape = shape(p.class, &p.req);
    }
    topo.seal();
    crate::domains::add_universe(&mut topo, &pools, snap, overlay);
    let mut demand = Res::zero(ix.len());
    for p in &pods {
        demand.add(&p.req);
    }
    Base {
        pods,
        topo,
        slots,
        pools,
        demand,
    }
}

/// Karpenter's queue: CPU descending, memory descending, oldest first, then UID and name.
fn queue_order(a: &PodInfo<'_>, b: &PodInfo<'_>) -> std::cmp::Ordering {
    b.req.0[CPU]
        .cmp(&a.req.0[CPU])
        .then(b.req.0[MEMORY].cmp(&a.req.0[MEMORY]))
        .then(a.pod.created.cmp(&b.pod.created))
        .then(a.pod.uid.cmp(&b.pod.uid))
        .then(a.pod.namespace.cmp(&b.pod.namespace))
        .then(a.pod.name.cmp(&b.pod.name))
}

fn known_namespaces(snap: &Snapshot) -> Namespaces {
    let mut out = snap.namespaces.clone();
    for p in &snap.pods {
        if !out.contains_key(&p.namespace) {
            out.insert(p.namespace.clone(), BTreeMap::new());
        }
    }
    for (name, labels) in &mut out {
        labels
            .entry(labels::NAMESPACE_NAME.to_string())
            .or_insert_with(|| name.clone());
    }
    out
}

/// The namespaces an affinity term selects pods in (`None` = every namespace): those it
/// lists and those its namespace selector matches, or the pod's own when it has neither.
fn namespaces(term: &AffinityTerm, own: &str, known: &Namespaces) -> Option<BTreeSet<String>> {
    if term.all_namespaces {
        return None;
    }
    let mut set: BTreeSet<String> = term.namespaces.iter().cloned().collect();
    match &term.namespace_selector {
        Some(sel) => set.extend(
            known
                .iter()
                .filter(|(_, l)| crate::selector::matches(sel, l))
                .map(|(n, _)| n.clone()),
        ),
        None if set.is_empty() => {
            set.insert(own.to_string());
        }
        None => {}
    }
    Some(set)
}

fn register_pod<'a>(
    topo: &mut Topology,
    pod: &'a Pod,
    ix: &ResIndex,
    known: &Namespaces,
) -> PodInfo<'a> {
    let s = &pod.spec;
    let ns = Some(BTreeSet::from([pod.namespace.clone()]));
    let spread = s
        .spread
        .iter()
        .map(|c| {
            let kind = Kind::Spread {
                max_skew: c.max_skew,
                min_domains: c.min_domains,
                honor_affinity: c.honor_node_affinity,
                honor_taints: c.honor_node_taints,
            };
            topo.register(
                kind,
                labels::normalize(&c.topology_key),
                &c.selector,
                ns.clone(),
            )
        })
        .collect();
    let mut term = |kind: Kind, t: &AffinityTerm| {
        topo.register(
            kind,
            labels::normalize(&t.topology_key),
            &t.selector,
            namespaces(t, &pod.namespace, known),
        )
    };
    let affinity = s.affinity.iter().map(|t| term(Kind::Affinity, t)).collect();
    let anti = s
        .anti_affinity
        .iter()
        .map(|t| term(Kind::AntiAffinity, t))
        .collect();
    let pref_affinity = weighted(&s.preferred_affinity)
        .into_iter()
        .map(|t| term(Kind::Affinity, t))
        .collect();
    let pref_anti = weighted(&s.preferred_anti_affinity)
        .into_iter()
        .map(|t| term(Kind::AntiAffinity, t))
        .collect();
    PodInfo {
        pod,
        req: ix.vec(&s.requests),
        matching: Vec::new(),
        inverse: Vec::new(),
        spread,
        affinity,
        anti,
        pref_affinity,
        pref_anti,
        shape: 0,
        class: 0,
    }
}

fn weighted<T>(items: &[crate::model::WeightedTerm<T>]) -> Vec<&T> {
    let mut v: Vec<(usize, &crate::model::WeightedTerm<T>)> = items.iter().enumerate().collect();
    v.sort_by(|(ia, a), (ib, b)| b.weight.cmp(&a.weight).then(ia.cmp(ib)));
    v.into_iter().map(|(_, w)| &w.term).collect()
}

/// Counts bound pods into topology groups and registers their required anti-affinity.
fn count_bound(
    snap: &Snapshot,
    topo: &mut Topology,
    slots: &mut [Slot],
    known: &Namespaces,
    overlay: Overlay<'_>,
) {
    let node_labels: BTreeMap<&str, &BTreeMap<String, String>> = snap
        .nodes
        .iter()
        .map(|n| (n.name.as_str(), &n.labels))
        .collect();
    // Owned keys: `slots` is borrowed mutably below.
    let slot_of: rustc_hash::FxHashMap<String, usize> = slots
        .iter()
        .enumerate()
        .filter_map(|(i, s)| match &s.kind {
            SlotKind::Node(n) => Some((n.clone(), i)),
            _ => None,
        })
        .collect();
    for (_, pod) in snap.pods.iter().enumerate().filter(|(i, p)| {
        p.node_name.is_some() && !p.is_terminal() && !p.terminating && !overlay.moved(*i)
    }) {
        // Nothing to count into and nothing to register.
        if topo.groups.is_empty() && pod.spec.anti_affinity.is_empty() {
            continue;
        }
        let node = pod.node_name.as_deref().unwrap_or_default();
        let Some(labels) = node_labels.get(node) else {
            continue;
        };
        let slot = slot_of.get(node).copied();
        for t in &pod.spec.anti_affinity {
            let g = topo.register(
                Kind::AntiAffinity,
                labels::normalize(&t.topology_key),
                &t.selector,
                namespaces(t, &pod.namespace, known),
            );
            owner_at(topo, slots, slot, labels, g);
        }
        for g in 0..topo.groups.len() {
            if topo.groups[g].selects(&pod.namespace, &pod.labels) {
                count_at(topo, slots, slot, labels, g);
            }
        }
    }
}

fn domain_of<'l>(
    topo: &Topology,
    labels: &'l BTreeMap<String, String>,
    g: usize,
) -> Option<&'l String> {
    labels.get(&topo.groups[g].key)
}

fn count_at(
    topo: &mut Topology,
    slots: &mut [Slot],
    slot: Option<usize>,
    labels: &BTreeMap<String, String>,
    g: usize,
) {
    if topo.groups[g].is_hostname() {
        topo.record(g, None);
        if let Some(s) = slot {
            slots[s].bump_host(g);
        }
    } else {
        let d = domain_of(topo, labels, g).cloned();
        topo.record(g, d.as_deref());
    }
}

fn owner_at(
    topo: &mut Topology,
    slots: &mut [Slot],
    slot: Option<usize>,
    labels: &BTreeMap<String, String>,
    g: usize,
) {
    if topo.groups[g].is_hostname() {
        if let Some(s) = slot {
            slots[s].bump_owner(g);
        }
    } else if let Some(d) = domain_of(topo, labels, g).cloned() {
        topo.record_owner(g, &d);
    }
}

/// Hash of what decides where a pod fits; equal shapes fail on the same slots.
fn shape(class: u64, req: &Res) -> u64 {
    let mut h = FxHasher::default();
    class.hash(&mut h);
    req.hash(&mut h);
    h.finish()
}

/// Hash of what decides where a pod fits, but its requests.
fn class(p: &PodInfo<'_>) -> u64 {
    let mut h = FxHasher::default();
    let s = &p.pod.spec;
    s.node_selector.hash(&mut h);
    s.required_terms.hash(&mut h);
    s.preferred_terms.hash(&mut h);
    s.tolerations.hash(&mut h);
    s.host_ports.hash(&mut h);
    p.pod.volumes.hash(&mut h);
    (
        &p.spread,
        &p.affinity,
        &p.anti,
        &p.pref_affinity,
        &p.pref_anti,
        &p.matching,
    )
        .hash(&mut h);
    s.spread
        .iter()
        .map(|c| c.when_unsatisfiable == WhenUnsatisfiable::DoNotSchedule)
        .collect::<Vec<_>>()
        .hash(&mut h);
    h.finish()
}
