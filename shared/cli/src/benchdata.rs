//! Karpenter's scheduling benchmark shape as Kubernetes documents: 400 instance types (type i
//! has i+1 vCPU, 2(i+1) GiB, 10(i+1) pods; spot in 2 zones, on-demand in 3) and pods split
//! evenly into generic, zonal spread, hostname spread, zonal self-affinity and hostname
//! anti-affinity, with CPU and memory drawn by a seeded generator from Karpenter's sets
//! ([`Requests::Sets`]) or from whole ranges, 100m–1500m CPU and 100Mi–4Gi memory
//! ([`Requests::Ranges`]: far more distinct pod shapes, as real workloads have).

use serde_json::{Value, json};

use crate::benchdress::{self, Fields};

const CPUS: [&str; 5] = ["100m", "250m", "500m", "1", "1500m"];
const MEMS: [&str; 6] = ["100Mi", "256Mi", "512Mi", "1Gi", "2Gi", "4Gi"];
const LABEL_VALUES: [&str; 7] = ["a", "b", "c", "d", "e", "f", "g"];

/// How pods' requests are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requests {
    /// Karpenter's benchmark sets: 5 CPU and 6 memory values.
    Sets,
    /// Any millicore in 100m–1500m and any Mi in 100Mi–4096Mi.
    Ranges,
}

impl Requests {
    fn draw(self, rng: &mut Rng) -> (String, String) {
        match self {
            Requests::Sets => (rng.pick(&CPUS).to_string(), rng.pick(&MEMS).to_string()),
            Requests::Ranges => (
                format!("{}m", 100 + rng.next_u64() % 1401),
                format!("{}Mi", 100 + rng.next_u64() % 3997),
            ),
        }
    }
}

/// A small deterministic generator (SplitMix64).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[(self.next_u64() % xs.len() as u64) as usize]
    }
}

/// The benchmark's catalog in `--catalog` format.
pub fn catalog(n: usize) -> Value {
    let types: Vec<Value> = (0..n)
        .map(|i| {
            let cpu = (i + 1) as f64;
            let mem_gi = 2.0 * cpu;
            let price = 0.1 * cpu + 0.1 * mem_gi * 1.073_741_824;
            let off = |zone: &str, ct: &str| json!({"zone": zone, "capacityType": ct, "price": price, "available": true});
            json!({
                "name": format!("fake-it-{i}"),
                "labels": {"kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux", "karpenter.k8s.aws/instance-cpu": (i + 1).to_string()},
                "allocatable": {"cpu": format!("{}m", (i + 1) * 1000 - 100), "memory": format!("{}Mi", (i + 1) * 2048 - 10), "pods": ((i + 1) * 10).to_string()},
                "capacity": {"cpu": (i + 1).to_string(), "memory": format!("{}Gi", 2 * (i + 1)), "pods": ((i + 1) * 10).to_string()},
                "offerings": [
                    off("test-zone-1", "spot"), off("test-zone-2", "spot"),
                    off("test-zone-1", "on-demand"), off("test-zone-2", "on-demand"), off("test-zone-3", "on-demand")
                ]
            })
        })
        .collect();
    json!({"region": "test-region", "instanceTypes": types})
}

/// One NodePool with huge limits, as in the benchmark.
pub fn node_pool() -> Value {
    json!({
        "apiVersion": "karpenter.sh/v1", "kind": "NodePool",
        "metadata": {"name": "default"},
        "spec": {
            "template": {"spec": {
                "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "Exists"}],
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}
            }},
            "limits": {"cpu": "10000000", "memory": "10000000Gi"}
        }
    })
}

fn pod(i: usize, kind: usize, requests: Requests, rng: &mut Rng) -> Value {
    let (cpu, mem) = requests.draw(rng);
    let label = *rng.pick(&LABEL_VALUES);
    let mut spec = json!({"containers": [{"name": "app", "image": "pause", "resources": {"requests": {"cpu": cpu, "memory": mem}}}]});
    let mut labels = json!({"my-label": label});
    let sel = json!({"matchLabels": {"my-label": label}});
    match kind {
        1 | 2 => {
            let key = if kind == 1 {
                "topology.kubernetes.io/zone"
            } else {
                "kubernetes.io/hostname"
            };
            spec["topologySpreadConstraints"] = json!([{"maxSkew": 1, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule", "labelSelector": sel}]);
        }
        3 => {
            labels = json!({"my-affinity": label});
            spec["affinity"] = json!({"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"topologyKey": "topology.kubernetes.io/zone", "labelSelector": {"matchLabels": {"my-affinity": label}}}]}});
        }
        4 => {
            labels = json!({"app": "nginx"});
            spec["affinity"] = json!({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "nginx"}}}]}});
        }
        _ => {}
    }
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": format!("pod-{i}"), "namespace": "default", "uid": format!("uid-{i:06}"), "labels": labels,
                     "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": spec,
        "status": {"phase": "Pending"}
    })
}

/// `count` pods split evenly across the five kinds (remainder generic), plus the NodePool.
pub fn manifests(count: usize, seed: u64) -> Value {
    manifests_with(count, seed, Requests::Sets, Fields::Bare)
}

/// [`manifests`] with requests drawn as `requests` says and the pods carrying `fields`.
pub fn manifests_with(count: usize, seed: u64, requests: Requests, fields: Fields) -> Value {
    json!({"apiVersion": "v1", "kind": "List", "items": objects(count, seed, requests, fields)})
}

/// The same objects as a multi-document YAML stream, as a cluster dump is written.
pub fn manifests_yaml(count: usize, seed: u64) -> Result<String, yaml_serde::Error> {
    manifests_yaml_with(count, seed, Requests::Sets, Fields::Bare)
}

/// [`manifests_yaml`] with requests drawn as `requests` says and the pods carrying `fields`.
pub fn manifests_yaml_with(
    count: usize,
    seed: u64,
    requests: Requests,
    fields: Fields,
) -> Result<String, yaml_serde::Error> {
    let mut out = String::new();
    for o in objects(count, seed, requests, fields) {
        out.push_str("---\n");
        out.push_str(&yaml_serde::to_string(&o)?);
    }
    Ok(out)
}

fn objects(count: usize, seed: u64, requests: Requests, fields: Fields) -> Vec<Value> {
    let mut rng = Rng::new(seed);
    let per = count / 5;
    let mut items = vec![node_pool()];
    for i in 0..count {
        let kind = if i < per * 5 { i / per.max(1) } else { 0 };
        let mut p = pod(i, kind, requests, &mut rng);
        if fields == Fields::Dump {
            benchdress::pod(&mut p, i);
        }
        items.push(p);
    }
    items
}
