//! Opening a new NodeClaim for a pod: the first NodePool (by weight) that can host it, the
//! topology domains it commits to, and the instance type it is sized for.

use crate::fit::Attempt;
use crate::labels;
use crate::min_values::check_min_values_for;
use crate::pools::PoolCtx;
use crate::prepare::PodInfo;
use crate::refusal::{PoolRefusal, Refusal, Unplaceable};
use crate::requirements::{Requirement, Requirements};
use crate::res::{CPU, MEMORY, PODS, Res};
use crate::reserve::Budget;
use crate::slots::{Slot, SlotKind, ports_conflict};
use crate::taints::first_untolerated;
use crate::topology::Topology;

/// How a new NodeClaim is sized before the final choice of instance type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Karpenter's behaviour: a claim keeps accepting pods while its largest option has room.
    Largest,
    /// Size claims for the `n`-th most cost-efficient type for the pending demand.
    Efficient(usize),
}

/// A new bin for pod `p` in the first pool that accepts it, or the reason per pool.
#[allow(clippy::too_many_arguments)]
pub fn open(
    p: &PodInfo<'_>,
    a: &Attempt<'_>,
    pools: &[PoolCtx<'_>],
    topo: &Topology,
    policy: Policy,
    demand: &Res,
    budget: &Budget,
) -> Result<Slot, Unplaceable> {
    if pools.is_empty() {
        return Err(Unplaceable::NoNodePools);
    }
    let mut reasons = Vec::new();
    for (pi, pool) in pools.iter().enumerate() {
        match open_in(p, a, pi, pool, topo, policy, demand, budget) {
            Ok(slot) => return Ok(slot),
            Err(why) => reasons.push(PoolRefusal {
                pool: pool.name().to_string(),
                why,
            }),
        }
    }
    Err(Unplaceable::Refused(reasons))
}

#[allow(clippy::too_many_arguments)]
fn open_in(
    p: &PodInfo<'_>,
    a: &Attempt<'_>,
    pi: usize,
    pool: &PoolCtx<'_>,
    topo: &Topology,
    policy: Policy,
    demand: &Res,
    budget: &Budget,
) -> Result<Slot, Refusal> {
    if let Some(u) = &pool.unusable {
        return Err(Refusal::Unusable(u.clone()));
    }
    if pool.np.replicas.is_some() {
        return Err(Refusal::Static);
    }
    if a.reqs.has_key(labels::NODE_NAME_FIELD) {
        return Err(Refusal::MatchFields);
    }
    if let Some(t) = first_untolerated(&pool.np.taints, a.tolerations, a.tolerate_prefer) {
        return Err(Refusal::Untolerated(t.clone()));
    }
    pool.reqs
        .compatible(&a.reqs)
        .map_err(Refusal::Incompatible)?;
    let mut merged = pool.reqs.clone();
    merged.add_all(&a.reqs);
    let mut cands = candidates(p, pool, &merged, &a.reqs)?;
    narrow_topology(p, a, pool, topo, &mut merged, &mut cands)?;
    budget.reprice(pool, &merged, &mut cands);
    if cands.is_empty() {
        return Err(Refusal::ReservationsHeld);
    }
    if pool.min_values {
        cands.retain(|&(t, _)| check_min_values_for(pool, t, &merged, &p.req));
        if cands.is_empty() {
            return Err(Refusal::MinValues);
        }
    }
    let ebs = !p.pod.volumes.attached.is_empty();
    let target = pick(policy, pool, &cands, demand, ebs);
    let t = &pool.types[target];
    let reservation = budget.held(t, &merged);
    Ok(Slot {
        kind: SlotKind::Bin { pool: pi, target },
        labels: Default::default(),
        reqs: pool.reqs.clone(),
        taints: pool.np.taints.clone(),
        free: t.usable.clone(),
        host_ports: Vec::new(),
        host_counts: Vec::new(),
        host_owners: Vec::new(),
        pods: Vec::new(),
        collapsed: Vec::new(),
        attached: Vec::new(),
        volume_limits: None,
        reservation,
    })
}

/// Types of the pool that can host the pod alone, within limits (`merged`: the pool's
/// requirements and the pod's, `pod`).
fn candidates(
    p: &PodInfo<'_>,
    pool: &PoolCtx<'_>,
    merged: &Requirements,
    pod: &Requirements,
) -> Result<Vec<(usize, f64)>, Refusal> {
    let compatible = pool.compatible(merged);
    if compatible.is_empty() {
        return Err(Refusal::NoCompatibleType(crate::conflict::explain(
            pool, pod,
        )));
    }
    let fitting: Vec<(usize, f64)> = compatible
        .iter()
        .copied()
        .filter(|&(t, _)| {
            pool.types[t].usable.fits(&p.req)
                && !ports_conflict(&pool.types[t].ds_ports, &p.pod.spec.host_ports)
                && crate::volumes::pod_holds(pool.types[t].it, &p.pod.volumes.attached)
        })
        .collect();
    if fitting.is_empty() {
        return Err(Refusal::TooSmall {
            requests: describe(pool, &compatible, &p.req),
        });
    }
    let within: Vec<(usize, f64)> = fitting
        .iter()
        .copied()
        .filter(|&(t, _)| pool.within_limits(&pool.types[t].capacity))
        .collect();
    if within.is_empty() {
        // The dollar limit names itself when it is what every fitting type breaks.
        let cost_left = crate::cost::left(pool).filter(|_| {
            fitting
                .iter()
                .all(|&(t, _)| !crate::cost::affordable(pool, t))
        });
        return Err(Refusal::OverLimits { cost_left });
    }
    Ok(within)
}

/// The requests no compatible type can hold on its own, or every request when each fits
/// some type but no type holds them all.
fn describe(pool: &PoolCtx<'_>, compatible: &[(usize, f64)], req: &Res) -> String {
    let requested: Vec<usize> = (0..req.0.len()).filter(|&d| req.0[d] > 0).collect();
    let short: Vec<usize> = requested
        .iter()
        .copied()
        .filter(|&d| {
            compatible
                .iter()
                .all(|&(t, _)| pool.types[t].usable.0[d] < req.0[d])
        })
        .collect();
    let dims = if short.is_empty() { requested } else { short };
    dims.iter()
        .map(|&d| {
            let name = &pool.resource_names[d];
            format!(
                "{name}={}",
                kerf_catalog::quantity::format(req.0[d], kerf_catalog::resources::format_for(name))
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Commits the new claim to topology domains the pod's constraints require.
fn narrow_topology(
    p: &PodInfo<'_>,
    a: &Attempt<'_>,
    pool: &PoolCtx<'_>,
    topo: &Topology,
    merged: &mut Requirements,
    cands: &mut Vec<(usize, f64)>,
) -> Result<(), Refusal> {
    for &(g, _) in &a.active {
        let grp = &topo.groups[g];
        let selects_self = p.matching.contains(&g);
        if grp.is_hostname() {
            topo.check_host(g, selects_self, 0)
                .map_err(|r| Refusal::Topology(topo.describe(r)))?;
            continue;
        }
        let doms = union_domains(pool, cands, &grp.key, merged);
        let d = topo
            .choose(g, selects_self, &doms, &a.strict, a.tolerations)
            .map_err(|r| Refusal::Topology(topo.describe(r)))?;
        {
            merged.add(&grp.key, Requirement::is_in([d]));
            retain_offered(pool, cands, merged)?;
        }
    }
    for &g in &p.inverse {
        let grp = &topo.groups[g];
        if grp.is_hostname() {
            continue;
        }
        let doms = union_domains(pool, cands, &grp.key, merged);
        let ok: Vec<String> = doms
            .iter()
            .filter(|d| grp.owners(d) == 0)
            .cloned()
            .collect();
        if ok.is_empty() {
            return Err(Refusal::AntiAffinity {
                key: grp.key.clone(),
            });
        }
        if ok.len() < doms.len() {
            merged.add(&grp.key, Requirement::is_in(ok));
            retain_offered(pool, cands, merged)?;
        }
    }
    Ok(())
}

fn union_domains(
    pool: &PoolCtx<'_>,
    cands: &[(usize, f64)],
    key: &str,
    reqs: &Requirements,
) -> Vec<String> {
    use crate::labels::{CAPACITY_TYPE, ZONE};
    let mut set: std::collections::BTreeSet<&str> = std::collections::BTreeSet::new();
    let allowed = crate::pools::OfferingFilter::of(reqs);
    let offered = |t: usize| {
        pool.types[t]
            .offerings
            .iter()
            .filter(move |o| allowed.admits(o))
    };
    match key {
        ZONE => cands
            .iter()
            .for_each(|&(t, _)| set.extend(offered(t).map(|o| o.zone.as_str()))),
        CAPACITY_TYPE => cands
            .iter()
            .for_each(|&(t, _)| set.extend(offered(t).map(|o| o.capacity_type.as_str()))),
        _ => {
            let mut all: Vec<String> = cands
                .iter()
                .flat_map(|&(t, _)| crate::slots::bin_domains(pool, t, key, reqs))
                .collect();
            all.sort();
            all.dedup();
            return all;
        }
    }
    set.into_iter().map(str::to_string).collect()
}

fn retain_offered(
    pool: &PoolCtx<'_>,
    cands: &mut Vec<(usize, f64)>,
    merged: &Requirements,
) -> Result<(), Refusal> {
    let compat = pool.compatible(merged);
    let mut price = vec![f64::NAN; pool.types.len()];
    for &(t, p) in compat.iter() {
        price[t] = p;
    }
    cands.retain_mut(|c| {
        c.1 = price[c.0];
        !c.1.is_nan()
    });
    if cands.is_empty() {
        Err(Refusal::NotOffered)
    } else {
        Ok(())
    }
}

/// Chooses the instance type a new claim is sized for. For a pod attaching volumes, the
/// largest type is also the one attaching the most (between equal CPU and memory).
fn pick(
    policy: Policy,
    pool: &PoolCtx<'_>,
    cands: &[(usize, f64)],
    demand: &Res,
    volumes: bool,
) -> usize {
    match policy {
        Policy::Largest => {
            let key = |&(t, price): &(usize, f64)| {
                let u = &pool.types[t].usable.0;
                let attach = match volumes {
                    true => pool.types[t].it.ebs_volume_limit.unwrap_or(u32::MAX),
                    false => 0,
                };
                (u[CPU], u[MEMORY], attach, -price)
            };
            cands
                .iter()
                .max_by(|a, b| {
                    let (ka, kb) = (key(a), key(b));
                    ka.0.cmp(&kb.0)
                        .then(ka.1.cmp(&kb.1))
                        .then(ka.2.cmp(&kb.2))
                        .then(ka.3.total_cmp(&kb.3))
                        .then(b.0.cmp(&a.0))
                })
                .map(|c| c.0)
                .unwrap_or(cands[0].0)
        }
        Policy::Efficient(rank) => {
            let mut scored: Vec<(f64, usize)> = cands
                .iter()
                .map(|&(t, price)| (price / coverage(&pool.types[t].usable, demand), t))
                .collect();
            // Indices follow names, so (score, index) is the order by score then name.
            let n = rank.min(scored.len() - 1);
            scored
                .select_nth_unstable_by(n, |a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)))
                .1
                .1
        }
    }
}

/// The fraction of `demand` one node with `usable` resources covers (its tightest dimension).
pub fn coverage(usable: &Res, demand: &Res) -> f64 {
    [CPU, MEMORY, PODS]
        .iter()
        .filter(|&&r| demand.0[r] > 0)
        .map(|&r| usable.0[r].max(0) as f64 / demand.0[r] as f64)
        .fold(f64::INFINITY, f64::min)
        .max(1e-12)
}
