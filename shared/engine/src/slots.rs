//! Places a pod can go: existing Nodes, in-flight NodeClaims, and the new NodeClaims ("bins")
//! this plan opens. Each tracks free resources, host ports and per-node topology counts.

use std::collections::BTreeMap;

use crate::labels;
use crate::model::{AttachedVolume, HostPort, Taint};
use crate::pools::{OfferingFilter, PoolCtx};
use crate::requirements::Requirements;
use crate::res::Res;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SlotKind {
    Node(String),
    Claim(String),
    /// A new NodeClaim of pool `pool`, sized for its target instance type `target`.
    Bin {
        pool: usize,
        target: usize,
    },
}

#[derive(Clone, Debug)]
pub struct Slot {
    pub kind: SlotKind,
    /// Node labels (existing nodes and claims).
    /// Shared by the clones of a slot (never changed once built).
    pub labels: std::rc::Rc<BTreeMap<String, String>>,
    /// Claim and bin requirements.
    pub reqs: Requirements,
    pub taints: Vec<Taint>,
    pub free: Res,
    pub host_ports: Vec<HostPort>,
    /// Hostname-group counts on this node: (group, matching pods), sorted by group.
    pub host_counts: Vec<(usize, i32)>,
    /// Hostname anti-affinity owners on this node: (group, owners), sorted by group.
    pub host_owners: Vec<(usize, i32)>,
    pub pods: Vec<usize>,
    /// Topology keys whose domain this slot has committed to (and counted).
    pub collapsed: Vec<String>,
    /// CSI volumes attached to it (bound pods' and this plan's), sorted and distinct.
    pub attached: Vec<AttachedVolume>,
    /// An existing node's attach limits by driver (shared by the clones of a slot).
    pub volume_limits: Option<std::rc::Rc<BTreeMap<String, u32>>>,
    /// The capacity reservation a new claim holds one instance of ([`crate::reserve`]).
    pub reservation: Option<String>,
}

impl Slot {
    pub fn host_count(&self, g: usize) -> i32 {
        get(&self.host_counts, g)
    }

    pub fn host_owner_count(&self, g: usize) -> i32 {
        get(&self.host_owners, g)
    }

    pub fn bump_host(&mut self, g: usize) {
        bump(&mut self.host_counts, g);
    }

    pub fn bump_owner(&mut self, g: usize) {
        bump(&mut self.host_owners, g);
    }

    pub fn name(&self) -> &str {
        match &self.kind {
            SlotKind::Node(n) | SlotKind::Claim(n) => n,
            SlotKind::Bin { .. } => "",
        }
    }

    /// The domains this slot may take for `key` under `reqs` (its own for bins).
    pub fn domains(&self, key: &str, reqs: &Requirements, pools: &[PoolCtx<'_>]) -> Vec<String> {
        match &self.kind {
            SlotKind::Node(_) => self.labels.get(key).cloned().into_iter().collect(),
            SlotKind::Claim(_) => match reqs.get(key) {
                Some(r) if !r.is_complement() => r.values().to_vec(),
                _ => self.labels.get(key).cloned().into_iter().collect(),
            },
            SlotKind::Bin { pool, target } => bin_domains(&pools[*pool], *target, key, reqs),
        }
    }
}

/// The count of group `g` in `v`, kept sorted by group (a node holds pods of many groups, and
/// every fit check asks).
fn get(v: &[(usize, i32)], g: usize) -> i32 {
    v.binary_search_by_key(&g, |(k, _)| *k)
        .map_or(0, |at| v[at].1)
}

fn bump(v: &mut Vec<(usize, i32)>, g: usize) {
    match v.binary_search_by_key(&g, |(k, _)| *k) {
        Ok(at) => v[at].1 += 1,
        Err(at) => v.insert(at, (g, 1)),
    }
}

/// Domains a new NodeClaim of `pool` sized for `target` could land in for `key`.
pub fn bin_domains(
    pool: &PoolCtx<'_>,
    target: usize,
    key: &str,
    reqs: &Requirements,
) -> Vec<String> {
    let t = &pool.types[target];
    let allowed = OfferingFilter::of(reqs);
    let mut out: Vec<String> = match key {
        labels::ZONE => t
            .offerings
            .iter()
            .filter(|o| allowed.admits(o))
            .map(|o| o.zone.clone())
            .collect(),
        labels::CAPACITY_TYPE => t
            .offerings
            .iter()
            .filter(|o| allowed.admits(o))
            .map(|o| o.capacity_type.as_str().to_string())
            .collect(),
        labels::PLACEMENT_GROUP_PARTITION => t
            .offerings
            .iter()
            .filter(|o| allowed.admits(o))
            .filter_map(|o| o.partition.map(|p| p.to_string()))
            .collect(),
        _ => match reqs.get(key) {
            Some(r) if !r.is_complement() => r.values().to_vec(),
            _ => t.label(key).map(str::to_string).into_iter().collect(),
        },
    };
    out.sort();
    out.dedup();
    out
}

/// Host ports conflict when protocol and port match and either IP is a wildcard or equal.
pub fn ports_conflict(a: &[HostPort], b: &[HostPort]) -> bool {
    let wild = |ip: &str| ip.is_empty() || ip == "0.0.0.0" || ip == "::";
    a.iter().any(|x| {
        b.iter().any(|y| {
            x.port == y.port
                && x.protocol.eq_ignore_ascii_case(&y.protocol)
                && (wild(&x.ip) || wild(&y.ip) || x.ip == y.ip)
        })
    })
}
