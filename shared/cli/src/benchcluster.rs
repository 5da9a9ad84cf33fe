//! A large running cluster as a `kubectl get … -o yaml` dump would show it, for measuring
//! disruption planning (`kerf plan --mode disrupt`): five NodePools (consolidating,
//! `Balanced`, `WhenEmpty`, spot, and one whose budget blocks drift in business hours), and
//! nodes that are empty, underutilized, full, drifted, expired or blocked (a do-not-disrupt
//! pod, a PodDisruptionBudget allowing nothing), with their NodeClaims, pods bound to them,
//! budgets on a fifth of the apps and the bundled us-west-2 catalog's allocatable. With
//! [`Fields::Dump`] every object carries what a `kubectl get -o yaml` dump shows.

use serde_json::{Value, json};

use crate::benchdata::Rng;
use crate::benchdress::{self, Fields};

/// The snapshot time the dump is planned at (`kerf plan --now`).
pub const NOW: &str = "2026-06-01T12:00:00Z";
const CREATED: &str = "2026-05-20T12:00:00Z";
const EXPIRED: &str = "2026-04-01T12:00:00Z";
const POOLS: [&str; 5] = ["general", "web", "batch", "spot", "critical"];
/// Apps (of the 50) whose pods a `maxUnavailable: 10%` budget guards.
const BUDGETED_APPS: usize = 10;
const TYPES: [&str; 4] = ["m6a.2xlarge", "c6a.2xlarge", "r6a.xlarge", "m6a.4xlarge"];
const ZONES: [&str; 3] = ["us-west-2a", "us-west-2b", "us-west-2c"];

/// What a node is, by design of the generator.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    Empty,
    Light,
    Full,
    Drifted,
    Expired,
    Blocked,
}

/// Which nodes a generated cluster has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mix {
    /// Empty, underutilized, full, drifted, expired and blocked nodes.
    Mixed,
    /// No empty or drifted node: a pass goes past emptiness and drift (each ends the pass
    /// when it plans a command) to consolidation.
    Consolidation,
    /// Every node full.
    Full,
    /// As `Consolidation`, but every pod is pinned to its node (`nodeSelector` on its
    /// hostname): consolidation simulates every candidate and finds no move.
    Pinned,
}

fn shape(i: usize, mix: Mix) -> Shape {
    match i % 20 {
        _ if mix == Mix::Full => Shape::Full,
        0 | 2 if matches!(mix, Mix::Consolidation | Mix::Pinned) => Shape::Light,
        0 => Shape::Empty,
        1 => Shape::Expired,
        2 => Shape::Drifted,
        3 | 4 => Shape::Blocked,
        5..=10 => Shape::Light,
        _ => Shape::Full,
    }
}

/// `nodes` nodes carrying about `pods` pods in all, as one `v1 List`, each object carrying
/// `fields`.
pub fn cluster(
    nodes: usize,
    pods: usize,
    seed: u64,
    mix: Mix,
    fields: Fields,
) -> Result<Value, kerf_catalog::CatalogError> {
    let catalog = kerf_catalog::bundled(
        "us-west-2",
        &kerf_catalog::settings::NodeClassSettings::default(),
    )?;
    let mut rng = Rng::new(seed);
    let mut items: Vec<Value> = POOLS.iter().map(|p| node_pool(p)).collect();
    items.push(node_class());
    items.push(pdb());
    items.extend((0..BUDGETED_APPS).map(|app| app_pdb(app, pods)));
    let full = (0..nodes)
        .filter(|&i| shape(i, mix) == Shape::Full)
        .count()
        .max(1);
    let light = nodes - full;
    let per_full = pods.saturating_sub(light * 3) / full;
    let mut pod_no = 0;
    for i in 0..nodes {
        let ty = TYPES[i % TYPES.len()];
        let it = catalog.instance_types.iter().find(|t| t.name == ty);
        let alloc = it.map(|t| t.allocatable.to_strings()).unwrap_or_default();
        let alloc_cpu = it.map_or(4000, |t| t.allocatable.get("cpu"));
        let type_labels = it.map(|t| t.labels.clone()).unwrap_or_default();
        let s = shape(i, mix);
        let pool = POOLS[(i / 20) % POOLS.len()];
        let mut c = claim(i, pool, ty, s, &alloc, &type_labels);
        let mut n = node(i, pool, ty, &alloc, &type_labels);
        if fields == Fields::Dump {
            benchdress::claim(&mut c, i);
            benchdress::node(&mut n, i);
        }
        items.push(c);
        items.push(n);
        let count = match s {
            Shape::Empty => 0,
            Shape::Full => per_full,
            _ => 3,
        };
        for k in 0..count {
            // Full nodes use 90% of their cpu.
            let cpu = if s == Shape::Full {
                format!("{}m", alloc_cpu * 9 / 10 / count.max(1) as i64)
            } else {
                rng.pick(&["250m", "500m"]).to_string()
            };
            let guarded = s == Shape::Blocked && k == 0;
            let mut p = pod(
                pod_no,
                i,
                &cpu,
                guarded && i % 2 == 0,
                guarded && i % 2 == 1,
            );
            if mix == Mix::Pinned {
                p["spec"]["nodeSelector"] =
                    json!({"kubernetes.io/hostname": format!("node-{i:05}")});
            }
            if fields == Fields::Dump {
                benchdress::pod(&mut p, pod_no);
            }
            items.push(p);
            pod_no += 1;
        }
    }
    Ok(json!({"apiVersion": "v1", "kind": "List", "items": items}))
}

fn node_pool(name: &str) -> Value {
    let (policy, after, ct) = match name {
        "web" => ("Balanced", "5m", "on-demand"),
        "batch" => ("WhenEmpty", "30s", "on-demand"),
        "critical" => ("WhenEmptyOrUnderutilized", "10m", "on-demand"),
        "spot" => ("WhenEmptyOrUnderutilized", "1m", "spot"),
        _ => ("WhenEmptyOrUnderutilized", "1m", "on-demand"),
    };
    json!({
        "apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name},
        "spec": {
            "template": {"spec": {
                "requirements": [
                    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": [ct]},
                    {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
                    {"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["c", "m", "r"]},
                    {"key": "karpenter.k8s.aws/instance-generation", "operator": "Gt", "values": ["5"]}],
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "expireAfter": "720h"
            }},
            "disruption": {"consolidationPolicy": policy, "consolidateAfter": after,
                           "budgets": budgets(name)}
        }
    })
}

/// 20% of a pool's nodes at a time; the `critical` pool also holds drift during weekday
/// business hours (UTC), as a platform team protects its daytime traffic.
fn budgets(pool: &str) -> Value {
    let mut b = vec![json!({"nodes": "20%"})];
    if pool == "critical" {
        b.push(json!({"nodes": "0", "reasons": ["Drifted"], "schedule": "0 9 * * mon-fri", "duration": "8h"}));
    }
    json!(b)
}

/// A `maxUnavailable: 10%` budget over one app's pods (the generator spreads `pods` over 50
/// apps), with the status the disruption controller keeps.
fn app_pdb(app: usize, pods: usize) -> Value {
    let expected = pods / 50;
    let allowed = expected / 10;
    json!({
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": format!("app-{app}"), "namespace": "default", "generation": 1},
        "spec": {"maxUnavailable": "10%", "selector": {"matchLabels": {"app": format!("app-{app}")}}},
        "status": {"disruptionsAllowed": allowed, "currentHealthy": expected, "desiredHealthy": expected - allowed,
                   "expectedPods": expected, "observedGeneration": 1}
    })
}

fn node_class() -> Value {
    json!({
        "apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "default"},
        "spec": {"role": "KarpenterNodeRole-bench", "amiSelectorTerms": [{"alias": "al2023@latest"}],
                 "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "bench"}}],
                 "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "bench"}}]}
    })
}

fn pdb() -> Value {
    json!({
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "guarded", "namespace": "default"},
        "spec": {"maxUnavailable": 0, "selector": {"matchLabels": {"guard": "pdb"}}},
        "status": {"disruptionsAllowed": 0, "currentHealthy": 50, "desiredHealthy": 50, "expectedPods": 50}
    })
}

/// The node's labels: its instance type's, then Karpenter's.
fn labels(i: usize, pool: &str, ty: &str, type_labels: &Labels) -> Value {
    let mut l = json!(type_labels);
    let own = json!({
        "karpenter.sh/nodepool": pool,
        "node.kubernetes.io/instance-type": ty,
        "topology.kubernetes.io/zone": ZONES[i % ZONES.len()],
        "topology.kubernetes.io/region": "us-west-2",
        "karpenter.sh/capacity-type": if pool == "spot" { "spot" } else { "on-demand" },
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/os": "linux",
    });
    for (k, v) in own.as_object().into_iter().flatten() {
        l[k] = v.clone();
    }
    l
}

type Labels = std::collections::BTreeMap<String, String>;

fn claim(
    i: usize,
    pool: &str,
    ty: &str,
    s: Shape,
    alloc: &impl serde::Serialize,
    type_labels: &Labels,
) -> Value {
    let created = if s == Shape::Expired {
        EXPIRED
    } else {
        CREATED
    };
    let mut annotations = json!({});
    if s == Shape::Drifted {
        annotations = json!({"karpenter.sh/nodepool-hash": "stale",
                             "karpenter.sh/nodepool-hash-version": kerf_labels::KERF_NODEPOOL_HASH_VERSION});
    }
    let cond = |t: &str| json!({"type": t, "status": "True", "reason": t, "message": "", "lastTransitionTime": created});
    json!({
        "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": {"name": format!("{pool}-{i:05}"), "labels": labels(i, pool, ty, type_labels),
                     "annotations": annotations, "creationTimestamp": created},
        "spec": {"requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": [ty]}],
                 "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                 "expireAfter": "720h"},
        "status": {"nodeName": format!("node-{i:05}"), "providerID": format!("aws:///us-west-2a/i-{i:017x}"),
                   "capacity": alloc, "allocatable": alloc,
                   "conditions": [cond("Launched"), cond("Registered"), cond("Initialized")],
                   "lastPodEventTime": "2026-06-01T10:00:00Z"}
    })
}

fn node(
    i: usize,
    pool: &str,
    ty: &str,
    alloc: &impl serde::Serialize,
    type_labels: &Labels,
) -> Value {
    let mut l = labels(i, pool, ty, type_labels);
    l["kubernetes.io/hostname"] = json!(format!("node-{i:05}"));
    l["karpenter.sh/registered"] = json!("true");
    l["karpenter.sh/initialized"] = json!("true");
    json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": format!("node-{i:05}"), "labels": l, "creationTimestamp": CREATED},
        "spec": {"providerID": format!("aws:///us-west-2a/i-{i:017x}")},
        "status": {"allocatable": alloc, "capacity": alloc, "conditions": [{"type": "Ready", "status": "True"}]}
    })
}

fn pod(n: usize, node: usize, cpu: &str, do_not_disrupt: bool, guarded: bool) -> Value {
    // A guarded pod belongs to no app, so one budget at most selects it (Kubernetes refuses
    // to evict a pod two budgets select).
    let labels = if guarded {
        json!({"app": "guarded", "guard": "pdb"})
    } else {
        json!({"app": format!("app-{}", n % 50)})
    };
    let annotations = if do_not_disrupt {
        json!({"karpenter.sh/do-not-disrupt": "true"})
    } else {
        json!({})
    };
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": format!("pod-{n:06}"), "namespace": "default", "uid": format!("uid-{n:06}"),
                     "labels": labels, "annotations": annotations, "creationTimestamp": CREATED,
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                          "name": format!("app-{}-5d8f", n % 50), "uid": "rs", "controller": true}]},
        "spec": {"nodeName": format!("node-{node:05}"),
                 "containers": [{"name": "app", "image": "pause",
                                 "resources": {"requests": {"cpu": cpu, "memory": "256Mi"}}}]},
        "status": {"phase": "Running", "startTime": CREATED, "conditions": [{"type": "Ready", "status": "True"}]}
    })
}
