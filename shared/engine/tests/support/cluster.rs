//! Random clusters for the disruption property tests: 1–3 NodePools (policy,
//! `consolidateAfter`, budgets by count or percentage, some scheduled, some per reason, spot
//! allowed or not), a small catalog, 2–12 managed nodes with initialized NodeClaims (some
//! drifted, some expired, some with a termination grace period or do-not-disrupt), the pods
//! bound to them without over-committing them (some do-not-disrupt, some under
//! PodDisruptionBudgets, DaemonSet pods) and a few pending pods.
//!
//! The generators produce plain numbers ([`ClusterGen`]) so proptest shrinks failures to
//! small clusters; [`ClusterGen::snapshot`] turns them into a snapshot.

use kerf_catalog::Resources;
use proptest::prelude::*;

#[path = "cluster_snapshot.rs"]
mod snapshot;

/// 2027-01-15T08:10:00Z: inside the `0 8 * * *` window of one hour, outside `0 20 * * *`.
pub const NOW: i64 = 1_800_000_600;
pub const ZONES: [&str; 2] = ["z1", "z2"];
pub const EXPIRE_AFTER: i64 = 30 * 86_400;
pub const POOL_HASH: &str = "template-2";
/// (vCPUs, GiB per vCPU, base price per vCPU-hour) of the catalog's instance types.
const TYPES: [(i64, i64, f64); 6] = [
    (1, 4, 0.05),
    (2, 4, 0.05),
    (4, 4, 0.05),
    (8, 4, 0.05),
    (2, 2, 0.042),
    (4, 8, 0.065),
];
/// (cpu millis, MiB) of a pod.
const POD_SIZES: [(i64, i64); 6] = [
    (100, 128),
    (250, 256),
    (500, 512),
    (1000, 1024),
    (2000, 2048),
    (250, 4096),
];
/// A budget window open at [`NOW`] and one closed then.
pub const OPEN_WINDOW: &str = "0 8 * * *";
pub const CLOSED_WINDOW: &str = "0 20 * * *";
pub const PERCENTS: [u32; 5] = [0, 10, 25, 50, 100];

pub fn res(cpu_m: i64, mem_mi: i64, pods: i64) -> Resources {
    let mut r = Resources::new();
    r.set("cpu", cpu_m);
    r.set("memory", mem_mi * 1024 * 1024 * 1000);
    r.set("pods", pods * 1000);
    r
}

/// What the `logs` DaemonSet's pod requests on every node.
pub fn daemon_requests() -> Resources {
    res(100, 128, 1)
}

#[derive(Clone, Debug, Default)]
pub struct BudgetGen {
    pub percent: bool,
    pub value: u8,
    /// 0: every reason; 1, 2, 3: Empty, Drifted, Underutilized only.
    pub reason: u8,
    /// 0: always; 1: a window open now; 2: a window closed now.
    pub schedule: u8,
}

#[derive(Clone, Debug, Default)]
pub struct PoolGen {
    pub when_empty: bool,
    /// `consolidateAfter: 300s` instead of `0s`.
    pub after: bool,
    pub budgets: Vec<BudgetGen>,
    /// Spot allowed beside on-demand.
    pub spot: bool,
}

#[derive(Clone, Debug, Default)]
pub struct PodGen {
    pub size: u8,
    pub app: u8,
    /// 1: do-not-disrupt "true"; 2: "30m" still running; 3: "30m" ran out; else none.
    pub dnd: u8,
    /// Labelled `tier=web` (selected by a second PDB when `ClusterGen::web_pdb`).
    pub web: bool,
}

#[derive(Clone, Debug, Default)]
pub struct NodeGen {
    pub pool: u8,
    pub ty: u8,
    pub zone: u8,
    pub spot: bool,
    pub age_h: u16,
    pub drifted: bool,
    pub expired: bool,
    pub tgp: bool,
    pub dnd: bool,
    pub daemon: bool,
    /// Seconds since its last pod event.
    pub quiet_s: u16,
    pub pods: Vec<PodGen>,
}

#[derive(Clone, Debug, Default)]
pub struct ClusterGen {
    /// Price factor of each instance type (its length is the catalog's size).
    pub types: Vec<u8>,
    pub pools: Vec<PoolGen>,
    pub nodes: Vec<NodeGen>,
    pub pending: Vec<PodGen>,
    /// Disruptions allowed by the PDB of app `a{i}`.
    pub pdbs: Vec<i32>,
    pub web_pdb: bool,
}

fn pod_gen() -> impl Strategy<Value = PodGen> {
    (0u8..6, 0u8..5, 0u8..20, prop::bool::weighted(0.15)).prop_map(|(size, app, dnd, web)| PodGen {
        size,
        app,
        dnd,
        web,
    })
}

fn pool_gen() -> impl Strategy<Value = PoolGen> {
    let budget = (any::<bool>(), 0u8..5, 0u8..4, 0u8..6).prop_map(|(p, v, r, s)| BudgetGen {
        percent: p,
        value: v,
        reason: r,
        schedule: if s < 3 { s } else { 0 },
    });
    (
        prop::bool::weighted(0.3),
        any::<bool>(),
        prop::collection::vec(budget, 1..=2),
        any::<bool>(),
    )
        .prop_map(|(when_empty, after, budgets, spot)| PoolGen {
            when_empty,
            after,
            budgets,
            spot,
        })
}

fn node_gen() -> impl Strategy<Value = NodeGen> {
    let w = prop::bool::weighted;
    (
        (0u8..3, 0u8..6, 0u8..2, any::<bool>(), 0u16..500),
        (w(0.12), w(0.06), w(0.3), w(0.08), w(0.5), 0u16..900),
        // Mostly busy nodes: emptiness runs first and ends the pass when it finds any.
        prop_oneof![1 => Just(vec![]), 12 => prop::collection::vec(pod_gen(), 1..6)],
    )
        .prop_map(
            |(
                (pool, ty, zone, spot, age_h),
                (drifted, expired, tgp, dnd, daemon, quiet_s),
                pods,
            )| {
                NodeGen {
                    pool,
                    ty,
                    zone,
                    spot,
                    age_h,
                    drifted,
                    expired,
                    tgp,
                    dnd,
                    daemon,
                    quiet_s,
                    pods,
                }
            },
        )
}

pub fn cluster_gen() -> impl Strategy<Value = ClusterGen> {
    (
        prop::collection::vec(0u8..5, 2..=6),
        prop::collection::vec(pool_gen(), 1..=3),
        prop::collection::vec(node_gen(), 2..=12),
        prop::collection::vec(pod_gen(), 0..=3),
        prop::collection::vec(0i32..3, 0..=5),
        any::<bool>(),
    )
        .prop_map(|(types, pools, nodes, pending, pdbs, web_pdb)| ClusterGen {
            types,
            pools,
            nodes,
            pending,
            pdbs,
            web_pdb,
        })
}
