//! Whether a pod fits a slot (resources, taints, host ports, requirements, topology), and
//! recording the placement when it does.

use std::borrow::Cow;

use crate::model::Toleration;
use crate::pools::PoolCtx;
use crate::prepare::PodInfo;
use crate::requirements::{Requirement, Requirements};
use crate::slots::{Slot, SlotKind, ports_conflict};
use crate::taints::first_untolerated;
use crate::topology::Topology;

/// One placement attempt's view of a pod at its current relaxation level.
#[derive(Clone, Debug)]
pub struct Attempt<'p> {
    pub reqs: Requirements,
    pub strict: Requirements,
    pub tolerations: &'p [Toleration],
    pub tolerate_prefer: bool,
    /// Active constraint groups and whether the pod owns them as required anti-affinity.
    pub active: Vec<(usize, bool)>,
}

/// A successful fit: the slot's narrowed requirements, when they changed.
#[derive(Clone, Debug)]
pub struct Fit {
    pub merged: Option<Requirements>,
}

/// Checks pod `p` against `slot`; `None` when it does not fit (the reason is not needed:
/// existing capacity that cannot take a pod is not reported).
pub fn check(
    p: &PodInfo<'_>,
    a: &Attempt<'_>,
    slot: &Slot,
    topo: &Topology,
    pools: &[PoolCtx<'_>],
) -> Option<Fit> {
    if !slot.free.fits(&p.req) || repelled(p, a, slot, pools) {
        return None;
    }
    let mut merged = requirements(p, a, slot, pools)?;
    topology(p, a, slot, topo, pools, &mut merged)?;
    if let SlotKind::Bin { pool, target } = slot.kind {
        let pc = &pools[pool];
        if let Cow::Owned(m) = &merged
            && pc.types[target].cheapest(m).is_none()
        {
            return None;
        }
        if pc.min_values {
            let used = pc.types[target].usable.minus(&slot.free).plus(&p.req);
            crate::min_values::check_min_values(pc, &merged, &used).ok()?;
        }
    }
    Some(Fit {
        merged: match merged {
            Cow::Owned(m) => Some(m),
            Cow::Borrowed(_) => None,
        },
    })
}

/// True when `slot` refuses every pod of `p`'s class for the rest of the run, whatever its
/// requests. A slot only loses room, gains pods, host ports and volumes, and narrows its
/// requirements, so a refusal for taints, host ports, volume limits or requirements lasts; a
/// topology refusal counts only when `topology_lasts` (see [`Topology::refusal_lasts`]).
pub fn refused_for_good(
    p: &PodInfo<'_>,
    a: &Attempt<'_>,
    slot: &Slot,
    topo: &Topology,
    pools: &[PoolCtx<'_>],
    topology_lasts: bool,
) -> bool {
    if repelled(p, a, slot, pools) {
        return true;
    }
    let Some(mut merged) = requirements(p, a, slot, pools) else {
        return true;
    };
    if topology_lasts && topology(p, a, slot, topo, pools, &mut merged).is_none() {
        return true;
    }
    match (&slot.kind, &merged) {
        (SlotKind::Bin { pool, target }, Cow::Owned(m)) => {
            pools[*pool].types[*target].cheapest(m).is_none()
        }
        _ => false,
    }
}

/// True when the slot's taints, host ports or volume limits keep the pod off.
fn repelled(p: &PodInfo<'_>, a: &Attempt<'_>, slot: &Slot, pools: &[PoolCtx<'_>]) -> bool {
    first_untolerated(&slot.taints, a.tolerations, a.tolerate_prefer).is_some()
        || ports_conflict(&slot.host_ports, &p.pod.spec.host_ports)
        || !crate::volumes::attach_fits(&p.pod.volumes.attached, slot, pools)
}

fn requirements<'s>(
    p: &PodInfo<'_>,
    a: &Attempt<'_>,
    slot: &'s Slot,
    pools: &[PoolCtx<'_>],
) -> Option<Cow<'s, Requirements>> {
    match &slot.kind {
        SlotKind::Node(_) => a
            .reqs
            .matches_labels(|k| slot.labels.get(k).map(String::as_str))
            .then_some(Cow::Borrowed(&slot.reqs)),
        SlotKind::Claim(_) => {
            if !slot.reqs.is_compatible(&a.reqs) {
                return None;
            }
            Some(narrow(&slot.reqs, &a.reqs))
        }
        SlotKind::Bin { pool, target } => {
            if !slot.reqs.is_compatible(&a.reqs) {
                return None;
            }
            let m = narrow(&slot.reqs, &a.reqs);
            let t = &pools[*pool].types[*target];
            if matches!(m, Cow::Owned(_)) && !t.matches(&m) {
                return None;
            }
            if ports_conflict(&t.ds_ports, &p.pod.spec.host_ports) {
                return None;
            }
            Some(m)
        }
    }
}

fn narrow<'s>(base: &'s Requirements, with: &Requirements) -> Cow<'s, Requirements> {
    if with.is_empty() {
        return Cow::Borrowed(base);
    }
    match base.narrowed(with) {
        Some(m) => Cow::Owned(m),
        None => Cow::Borrowed(base),
    }
}

fn topology(
    p: &PodInfo<'_>,
    a: &Attempt<'_>,
    slot: &Slot,
    topo: &Topology,
    pools: &[PoolCtx<'_>],
    merged: &mut Cow<'_, Requirements>,
) -> Option<()> {
    let narrowable = !matches!(slot.kind, SlotKind::Node(_));
    for &(g, _) in &a.active {
        let selects_self = p.matching.contains(&g);
        let grp = &topo.groups[g];
        if grp.is_hostname() {
            topo.check_host(g, selects_self, slot.host_count(g)).ok()?;
            continue;
        }
        let cands = slot.domains(&grp.key, merged, pools);
        let d = topo
            .choose(g, selects_self, &cands, &a.strict, a.tolerations)
            .ok()?;
        if narrowable && cands.len() > 1 {
            merged.to_mut().add(&grp.key, Requirement::is_in([d]));
        }
    }
    for &g in &p.inverse {
        let grp = &topo.groups[g];
        if grp.is_hostname() {
            if slot.host_owner_count(g) > 0 {
                return None;
            }
            continue;
        }
        let cands = slot.domains(&grp.key, merged, pools);
        let ok: Vec<String> = cands
            .iter()
            .filter(|d| grp.owners(d) == 0)
            .cloned()
            .collect();
        if ok.is_empty() {
            return None;
        }
        if narrowable && ok.len() < cands.len() {
            merged.to_mut().add(&grp.key, Requirement::is_in(ok));
        }
    }
    Some(())
}

/// Records pod `i` on `slot` with the narrowed requirements of `fit`.
pub fn commit(
    i: usize,
    pods: &[PodInfo<'_>],
    a: &Attempt<'_>,
    fit: Fit,
    slot: &mut Slot,
    topo: &mut Topology,
    pools: &[PoolCtx<'_>],
) {
    let p = &pods[i];
    slot.free.sub(&p.req);
    slot.host_ports
        .extend(p.pod.spec.host_ports.iter().cloned());
    crate::volumes::attach(&mut slot.attached, &p.pod.volumes.attached);
    let changed = fit.merged.is_some();
    if let Some(m) = fit.merged {
        slot.reqs = m;
    }
    if changed {
        count_newly_collapsed(pods, slot, topo, pools);
    }
    slot.pods.push(i);
    for &g in &p.matching {
        if topo.groups[g].is_hostname() {
            slot.bump_host(g);
            topo.record(g, None);
        } else {
            let d = collapsed_domain(slot, &topo.groups[g].key, pools);
            topo.record(g, d.as_deref());
        }
    }
    if changed || slot.pods.len() == 1 {
        mark_collapsed(slot, topo, pools);
    }
    for &(g, owner) in &a.active {
        if !owner {
            continue;
        }
        if topo.groups[g].is_hostname() {
            slot.bump_owner(g);
        } else if let Some(d) = collapsed_domain(slot, &topo.groups[g].key, pools) {
            topo.record_owner(g, &d);
        }
    }
}

/// The single domain a slot has for `key`, if it has collapsed to one.
fn collapsed_domain(slot: &Slot, key: &str, pools: &[PoolCtx<'_>]) -> Option<String> {
    let d = slot.domains(key, &slot.reqs, pools);
    if d.len() == 1 {
        d.into_iter().next()
    } else {
        None
    }
}

/// When a bin's domain for a key collapses, count the pods already on it into that domain.
fn count_newly_collapsed(
    pods: &[PodInfo<'_>],
    slot: &mut Slot,
    topo: &mut Topology,
    pools: &[PoolCtx<'_>],
) {
    if !matches!(slot.kind, SlotKind::Bin { .. }) || slot.pods.is_empty() {
        return;
    }
    for key in topo.domain_keys().to_vec() {
        if slot.collapsed.contains(&key) {
            continue;
        }
        let Some(d) = collapsed_domain(slot, &key, pools) else {
            continue;
        };
        for &j in &slot.pods {
            for &g in &pods[j].matching {
                if topo.groups[g].key == key {
                    topo.count_in(g, &d);
                }
            }
        }
        slot.collapsed.push(key);
    }
}

/// Remembers which keys a bin has committed to, so its pods are not counted twice.
fn mark_collapsed(slot: &mut Slot, topo: &Topology, pools: &[PoolCtx<'_>]) {
    if !matches!(slot.kind, SlotKind::Bin { .. }) {
        return;
    }
    for key in topo.domain_keys() {
        if !slot.collapsed.iter().any(|k| k == key) && collapsed_domain(slot, key, pools).is_some()
        {
            slot.collapsed.push(key.clone());
        }
    }
}
