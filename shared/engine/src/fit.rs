//! Whether a pod fits a slot (resources, taints, host ports, requirements, topology), and
//! recording the placement when it does.

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

/// A successful fit: the slot's narrowed requirements.
#[derive(Clone, Debug)]
pub struct Fit {
    pub merged: Requirements,
}

/// Checks pod `p` against `slot`. Errors carry a human-readable reason.
pub fn check(
    p: &PodInfo<'_>,
    a: &Attempt<'_>,
    slot: &Slot,
    topo: &Topology,
    pools: &[PoolCtx<'_>],
) -> Result<Fit, String> {
    if !slot.free.fits(&p.req) {
        return Err("not enough resources".into());
    }
    if let Some(t) = first_untolerated(&slot.taints, a.tolerations, a.tolerate_prefer) {
        return Err(format!(
            "did not tolerate taint {}={}:{:?}",
            t.key, t.value, t.effect
        ));
    }
    if ports_conflict(&slot.host_ports, &p.pod.spec.host_ports) {
        return Err("host port conflict".into());
    }
    let mut merged = requirements(p, a, slot, pools)?;
    topology(p, a, slot, topo, pools, &mut merged)?;
    if let SlotKind::Bin { pool, target } = slot.kind {
        let pc = &pools[pool];
        if pc.types[target].cheapest(&merged).is_none() {
            return Err("no offering left for the node's requirements".into());
        }
        if pc.min_values {
            let used = pc.types[target].usable.minus(&slot.free).plus(&p.req);
            crate::open::check_min_values(pc, &merged, &used)?;
        }
    }
    Ok(Fit { merged })
}

fn requirements(
    p: &PodInfo<'_>,
    a: &Attempt<'_>,
    slot: &Slot,
    pools: &[PoolCtx<'_>],
) -> Result<Requirements, String> {
    match &slot.kind {
        SlotKind::Node(_) => {
            if a.reqs.matches_labels(|k| slot.labels.get(k).cloned()) {
                Ok(Requirements::new())
            } else {
                Err("node labels do not satisfy the pod's requirements".into())
            }
        }
        SlotKind::Claim(_) => {
            slot.reqs.compatible(&a.reqs)?;
            let mut m = slot.reqs.clone();
            m.add_all(&a.reqs);
            Ok(m)
        }
        SlotKind::Bin { pool, target } => {
            slot.reqs.compatible(&a.reqs)?;
            let mut m = slot.reqs.clone();
            m.add_all(&a.reqs);
            let t = &pools[*pool].types[*target];
            if !t.matches(&m) {
                return Err(
                    "the node's instance type does not satisfy the pod's requirements".into(),
                );
            }
            if ports_conflict(&t.ds_ports, &p.pod.spec.host_ports) {
                return Err("host port conflict with a daemonset".into());
            }
            Ok(m)
        }
    }
}

fn topology(
    p: &PodInfo<'_>,
    a: &Attempt<'_>,
    slot: &Slot,
    topo: &Topology,
    pools: &[PoolCtx<'_>],
    merged: &mut Requirements,
) -> Result<(), String> {
    let narrowable = !matches!(slot.kind, SlotKind::Node(_));
    for &(g, _) in &a.active {
        let selects_self = p.matching.contains(&g);
        let grp = &topo.groups[g];
        if grp.is_hostname() {
            topo.check_host(g, selects_self, slot.host_count(g))?;
            continue;
        }
        let cands = slot.domains(&grp.key, merged, pools);
        let d = topo.choose(g, selects_self, &cands, &a.strict, a.tolerations)?;
        if narrowable {
            merged.add(&grp.key, Requirement::is_in([d]));
        }
    }
    for &g in &p.inverse {
        let grp = &topo.groups[g];
        if grp.is_hostname() {
            if slot.host_owner_count(g) > 0 {
                return Err(format!(
                    "anti-affinity of a pod on the node (on {}) excludes this pod",
                    grp.key
                ));
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
            return Err(format!(
                "anti-affinity of existing pods on {} excludes every domain",
                grp.key
            ));
        }
        if narrowable && ok.len() < cands.len() {
            merged.add(&grp.key, Requirement::is_in(ok));
        }
    }
    Ok(())
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
    if !matches!(slot.kind, SlotKind::Node(_)) {
        slot.reqs = fit.merged;
    }
    count_newly_collapsed(pods, slot, topo, pools);
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
    mark_collapsed(slot, topo, pools);
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
    let keys: Vec<String> = topo
        .keys()
        .into_iter()
        .filter(|k| *k != crate::labels::HOSTNAME)
        .map(str::to_string)
        .collect();
    for key in keys {
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
    for key in topo.keys() {
        if key != crate::labels::HOSTNAME
            && !slot.collapsed.iter().any(|k| k == key)
            && collapsed_domain(slot, key, pools).is_some()
        {
            slot.collapsed.push(key.to_string());
        }
    }
}
