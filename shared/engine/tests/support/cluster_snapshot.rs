//! Turning generated numbers ([`ClusterGen`]) into a snapshot: the catalog of the chosen
//! instance types, the NodePools with their budgets, the nodes with their NodeClaims, the pods
//! bound to them, their PodDisruptionBudgets and the pending pods.

use std::collections::BTreeMap;
use std::sync::Arc;

use kerf_catalog::{CapacityType, Catalog, InstanceType, Offering, Overhead};
use kerf_engine::Snapshot;
use kerf_engine::model::{
    Budget, BudgetNodes, Condition, ConditionStatus, ConsolidationPolicy, DaemonSet,
    DisruptionReason, LabelSelector, Node, NodeClaim, NodePool, OwnerKind, Pdb, Pod, PodSpec,
    PoolDisruption,
};
use kerf_engine::requirements::{Operator, SelectorRequirement};
use kerf_labels as kl;

use super::{
    BudgetGen, CLOSED_WINDOW, ClusterGen, EXPIRE_AFTER, NOW, OPEN_WINDOW, PERCENTS, POD_SIZES,
    POOL_HASH, PodGen, PoolGen, TYPES, ZONES, daemon_requests, res,
};

fn catalog(factors: &[u8]) -> Arc<Catalog> {
    let types = factors
        .iter()
        .zip(TYPES)
        .map(|(&f, (cpu, gib, base))| {
            let name = format!("t{cpu}x{gib}");
            let price = base * cpu as f64 * (0.8 + 0.1 * f64::from(f));
            let offerings = ZONES
                .iter()
                .enumerate()
                .flat_map(|(zi, z)| {
                    let spot = price * (0.4 + 0.05 * zi as f64);
                    [(CapacityType::OnDemand, price), (CapacityType::Spot, spot)].map(
                        |(capacity_type, price)| Offering {
                            zone: z.to_string(),
                            capacity_type,
                            price,
                            available: true,
                            partition: None,
                            reservation: None,
                        },
                    )
                })
                .collect();
            InstanceType {
                labels: [(kl::INSTANCE_TYPE, name.as_str()), (kl::ARCH, "amd64")]
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                name,
                capacity: res(cpu * 1000, cpu * gib * 1024, 8 * cpu + 8),
                overhead: Overhead::default(),
                allocatable: res(cpu * 1000 - 100, cpu * gib * 1024 - 300, 8 * cpu + 8),
                ebs_volume_limit: None,
                offerings,
            }
        })
        .collect();
    Arc::new(Catalog {
        region: "r".into(),
        instance_types: types,
    })
}

fn budget(b: &BudgetGen) -> Budget {
    let (schedule, duration) = match b.schedule {
        1 => (Some(OPEN_WINDOW.to_string()), Some(3600)),
        2 => (Some(CLOSED_WINDOW.to_string()), Some(3600)),
        _ => (None, None),
    };
    Budget {
        nodes: if b.percent {
            BudgetNodes::Percent(PERCENTS[usize::from(b.value) % 5])
        } else {
            BudgetNodes::Count(u32::from(b.value))
        },
        schedule,
        duration,
        reasons: match b.reason {
            1 => vec![DisruptionReason::Empty],
            2 => vec![DisruptionReason::Drifted],
            3 => vec![DisruptionReason::Underutilized],
            _ => vec![],
        },
    }
}

fn pool(i: usize, g: &PoolGen, catalog: &Arc<Catalog>) -> NodePool {
    let mut cts = vec![kl::CAPACITY_TYPE_ON_DEMAND.to_string()];
    if g.spot {
        cts.push(kl::CAPACITY_TYPE_SPOT.to_string());
    }
    NodePool {
        name: format!("np{i}"),
        requirements: vec![SelectorRequirement {
            key: kl::CAPACITY_TYPE.into(),
            operator: Operator::In,
            values: cts,
            min_values: None,
        }],
        node_class: "default".into(),
        catalog: catalog.clone(),
        disruption: PoolDisruption {
            policy: if g.when_empty {
                ConsolidationPolicy::WhenEmpty
            } else {
                ConsolidationPolicy::WhenEmptyOrUnderutilized
            },
            consolidate_after: Some(if g.after { 300 } else { 0 }),
            budgets: g.budgets.iter().map(budget).collect(),
        },
        expire_after: Some(EXPIRE_AFTER),
        hash: POOL_HASH.into(),
        hash_version: kl::KERF_NODEPOOL_HASH_VERSION.into(),
        ..Default::default()
    }
}

fn pod(name: String, g: &PodGen, node: Option<String>) -> Pod {
    let (cpu, mem) = POD_SIZES[usize::from(g.size) % POD_SIZES.len()];
    let mut labels: BTreeMap<String, String> = [("app".to_string(), format!("a{}", g.app))].into();
    if g.web {
        labels.insert("tier".into(), "web".into());
    }
    let mut annotations = BTreeMap::new();
    let mut start = NOW - 3600;
    match g.dnd {
        1 => {
            annotations.insert(kl::DO_NOT_DISRUPT.to_string(), "true".to_string());
        }
        2 | 3 => {
            annotations.insert(kl::DO_NOT_DISRUPT.to_string(), "30m".to_string());
            start = if g.dnd == 2 { NOW - 600 } else { NOW - 3600 };
        }
        _ => {}
    }
    let pending = node.is_none();
    Pod {
        namespace: "default".into(),
        uid: format!("uid-{name}"),
        name,
        labels,
        node_name: node,
        created: start - 10,
        phase: if pending { "Pending" } else { "Running" }.into(),
        spec: PodSpec {
            requests: res(cpu, mem, 1),
            ..Default::default()
        },
        annotations,
        start_time: (!pending).then_some(start),
        owner: OwnerKind::ReplicaSet,
        ..Default::default()
    }
}

fn selector(key: &str, value: &str) -> Option<LabelSelector> {
    Some(LabelSelector {
        match_labels: [(key.to_string(), value.to_string())].into(),
        ..Default::default()
    })
}

impl ClusterGen {
    pub fn snapshot(&self) -> Snapshot {
        let cat = catalog(&self.types);
        let pools: Vec<NodePool> = (self.pools.iter().enumerate())
            .map(|(i, g)| pool(i, g, &cat))
            .collect();
        let mut snap = Snapshot {
            now: NOW,
            daemon_sets: vec![DaemonSet {
                namespace: "kube-system".into(),
                name: "logs".into(),
                pod: PodSpec {
                    requests: daemon_requests(),
                    ..Default::default()
                },
            }],
            ..Default::default()
        };
        for (i, g) in self.nodes.iter().enumerate() {
            let pi = usize::from(g.pool) % pools.len();
            let np = &pools[pi];
            let it = &cat.instance_types[usize::from(g.ty) % cat.instance_types.len()];
            let spot = g.spot && self.pools[pi].spot;
            let ct = if spot { "spot" } else { "on-demand" };
            let (claim_name, node_name) = (format!("nc{i:02}"), format!("node{i:02}"));
            let labels: BTreeMap<String, String> = [
                (kl::NODEPOOL, np.name.as_str()),
                (kl::INSTANCE_TYPE, it.name.as_str()),
                (kl::ZONE, ZONES[usize::from(g.zone) % 2]),
                (kl::CAPACITY_TYPE, ct),
                (kl::ARCH, "amd64"),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
            let created = if g.expired {
                NOW - EXPIRE_AFTER - 3600 * i64::from(g.age_h) - 1
            } else {
                NOW - 3600 * i64::from(g.age_h) - 120
            };
            let cond = |kind: &str| Condition {
                kind: kind.into(),
                status: ConditionStatus::True,
                reason: kind.into(),
                since: created + 60,
            };
            let hash = if g.drifted { "template-1" } else { POOL_HASH };
            snap.node_claims.push(NodeClaim {
                name: claim_name.clone(),
                node_pool: np.name.clone(),
                labels: labels.clone(),
                allocatable: it.allocatable.clone(),
                capacity: it.capacity.clone(),
                node_name: Some(node_name.clone()),
                provider_id: format!("aws:///z/i-{i:04}"),
                created,
                annotations: [
                    (kl::NODEPOOL_HASH, hash),
                    (kl::NODEPOOL_HASH_VERSION, kl::KERF_NODEPOOL_HASH_VERSION),
                ]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
                conditions: [
                    kl::conditions::LAUNCHED,
                    kl::conditions::REGISTERED,
                    kl::conditions::INITIALIZED,
                ]
                .map(cond)
                .into(),
                last_pod_event: Some(NOW - i64::from(g.quiet_s)),
                expire_after: Some(EXPIRE_AFTER),
                termination_grace_period: g.tgp.then_some(3600),
                node_class: "default".into(),
                ..Default::default()
            });
            let mut node_labels = labels;
            node_labels.insert(kl::INITIALIZED.into(), "true".into());
            node_labels.insert(kl::HOSTNAME.into(), node_name.clone());
            snap.nodes.push(Node {
                name: node_name.clone(),
                labels: node_labels,
                allocatable: it.allocatable.clone(),
                capacity: it.capacity.clone(),
                provider_id: format!("aws:///z/i-{i:04}"),
                annotations: if g.dnd {
                    [(kl::DO_NOT_DISRUPT.to_string(), "true".to_string())].into()
                } else {
                    BTreeMap::new()
                },
                ..Default::default()
            });
            // The DaemonSet's share is held back whether or not its pod runs yet, as the
            // scheduler does.
            let mut free = it.allocatable.clone();
            free.sub_floor(&daemon_requests());
            if g.daemon {
                snap.pods.push(Pod {
                    namespace: "kube-system".into(),
                    name: format!("logs-{node_name}"),
                    uid: format!("uid-logs-{i}"),
                    labels: [("app".to_string(), "logs".to_string())].into(),
                    node_name: Some(node_name.clone()),
                    phase: "Running".into(),
                    daemonset: Some("logs".into()),
                    owner: OwnerKind::DaemonSet,
                    spec: PodSpec {
                        requests: daemon_requests(),
                        ..Default::default()
                    },
                    start_time: Some(NOW - 3600),
                    ..Default::default()
                });
            }
            // A pod that does not fit shrinks to the smallest size, or is left out.
            for (j, pg) in g.pods.iter().enumerate() {
                let small = PodGen {
                    size: 0,
                    ..pg.clone()
                };
                let fit = [pg, &small].into_iter().find_map(|pg| {
                    let p = pod(format!("p{i:02}-{j}"), pg, Some(node_name.clone()));
                    free.fits(&p.spec.requests).then_some(p)
                });
                if let Some(p) = fit {
                    free.sub_floor(&p.spec.requests);
                    snap.pods.push(p);
                }
            }
        }
        for (j, pg) in self.pending.iter().enumerate() {
            snap.pods.push(pod(format!("pending-{j}"), pg, None));
        }
        for (i, &allowed) in self.pdbs.iter().enumerate() {
            snap.pdbs.push(Pdb {
                namespace: "default".into(),
                name: format!("pdb-a{i}"),
                selector: selector("app", &format!("a{i}")),
                disruptions_allowed: allowed,
                unhealthy_always_allow: false,
                blocks_all: false,
            });
        }
        if self.web_pdb {
            snap.pdbs.push(Pdb {
                namespace: "default".into(),
                name: "pdb-web".into(),
                selector: selector("tier", "web"),
                disruptions_allowed: 5,
                unhealthy_always_allow: false,
                blocks_all: false,
            });
        }
        snap.node_pools = pools;
        snap
    }
}
