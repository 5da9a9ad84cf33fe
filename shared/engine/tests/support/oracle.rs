//! Independent readings of a generated snapshot for the disruption property tests: what
//! Karpenter's rules say about its nodes, pods, budgets and prices, computed without the
//! engine.

use kerf_catalog::{InstanceType, Resources};
use kerf_engine::Snapshot;
use kerf_engine::model::{BudgetNodes, DisruptionReason, NodePool, Pdb, Pod};
use kerf_engine::plan::Launch;
use kerf_engine::requirements::Operator;
use kerf_labels as kl;

use crate::cluster::{CLOSED_WINDOW, NOW};

pub fn pool<'a>(snap: &'a Snapshot, name: &str) -> &'a NodePool {
    snap.node_pools.iter().find(|p| p.name == name).unwrap()
}

pub fn itype<'a>(np: &'a NodePool, name: &str) -> &'a InstanceType {
    np.catalog
        .instance_types
        .iter()
        .find(|t| t.name == name)
        .unwrap()
}

/// Live pods bound to `node`.
pub fn pods_on<'a>(snap: &'a Snapshot, node: &'a str) -> impl Iterator<Item = &'a Pod> + 'a {
    snap.pods
        .iter()
        .filter(move |p| p.node_name.as_deref() == Some(node) && !p.is_terminal() && !p.terminating)
}

pub fn reschedulable(p: &Pod) -> bool {
    p.daemonset.is_none() && !p.is_terminal() && !p.terminating
}

pub fn pod<'a>(snap: &'a Snapshot, key: &str) -> &'a Pod {
    snap.pods.iter().find(|p| p.key() == key).unwrap()
}

/// The catalog price of a node's offering (its type, zone and capacity-type labels).
pub fn node_price(snap: &Snapshot, node: &str) -> f64 {
    let n = snap.nodes.iter().find(|n| n.name == node).unwrap();
    let np = pool(snap, &n.labels[kl::NODEPOOL]);
    let it = itype(np, &n.labels[kl::INSTANCE_TYPE]);
    it.offerings
        .iter()
        .find(|o| {
            o.zone == n.labels[kl::ZONE] && o.capacity_type.as_str() == n.labels[kl::CAPACITY_TYPE]
        })
        .unwrap()
        .price
}

/// An active `karpenter.sh/do-not-disrupt` (`true`, or a window from the start time).
pub fn do_not_disrupt(p: &Pod) -> bool {
    match p.annotations.get(kl::DO_NOT_DISRUPT).map(String::as_str) {
        Some("true") => true,
        Some(v) => v
            .strip_suffix('m')
            .and_then(|m| m.parse::<i64>().ok())
            .is_some_and(|m| p.start_time.is_none_or(|s| NOW < s + 60 * m)),
        None => false,
    }
}

/// The PDBs selecting a pod (match labels only, as the generator writes them).
pub fn pdbs_of<'a>(snap: &'a Snapshot, p: &Pod) -> Vec<&'a Pdb> {
    let selects = |b: &Pdb| {
        b.selector.as_ref().is_some_and(|s| {
            s.match_labels
                .iter()
                .all(|(k, v)| p.labels.get(k) == Some(v))
        })
    };
    snap.pdbs
        .iter()
        .filter(|b| b.namespace == p.namespace && selects(b))
        .collect()
}

/// What a pool's budgets allow for `reason` at [`NOW`] with `nodes` nodes, none disrupting.
pub fn expected_allowed(np: &NodePool, nodes: u32, reason: DisruptionReason) -> u32 {
    np.disruption
        .budgets
        .iter()
        .filter(|b| b.reasons.is_empty() || b.reasons.contains(&reason))
        .filter(|b| b.schedule.as_deref() != Some(CLOSED_WINDOW))
        .map(|b| match b.nodes {
            BudgetNodes::Count(n) => n,
            BudgetNodes::Percent(p) => (p * nodes).div_ceil(100),
        })
        .min()
        .unwrap_or(u32::MAX)
        .min(nodes)
}

pub fn sum(snap: &Snapshot, pods: impl IntoIterator<Item = impl AsRef<str>>) -> Resources {
    let mut r = Resources::new();
    for k in pods {
        r.add(&pod(snap, k.as_ref()).spec.requests);
    }
    r
}

/// The values an `In` requirement of the launch allows on `key`.
pub fn launch_values(l: &Launch, key: &str) -> Option<Vec<String>> {
    let r = l.requirements.iter().find(|r| r.key == key)?;
    (r.operator == Operator::In).then(|| r.values.clone())
}

pub fn shuffle<T>(v: &mut [T], seed: u64) {
    let mut x = seed | 1;
    for i in (1..v.len()).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.swap(i, (x % (i as u64 + 1)) as usize);
    }
}
