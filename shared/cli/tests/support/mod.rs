//! Test support for the input and contract tests: manifest builders (Kubernetes objects as
//! JSON values, fed through the YAML reader like a user's file), a fake catalog, and a runner
//! that goes through the same path as `kerf plan`.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use kerf_cli::input::{Inputs, parse_into};
use kerf_cli::snapshot::{CatalogSource, build};
use kerf_engine::{Options, Plan};
use serde_json::{Value, json};

/// One fake instance type: name, arch, cpu, memory GiB, pods, on-demand price, extra labels.
pub struct Fake {
    pub name: &'static str,
    pub arch: &'static str,
    pub os: &'static str,
    pub cpu: u32,
    pub mem_gi: u32,
    pub pods: u32,
    pub price: f64,
    pub gpu: u32,
}

const fn fake(name: &'static str, cpu: u32, mem_gi: u32, pods: u32, price: f64) -> Fake {
    Fake {
        name,
        arch: "amd64",
        os: "linux",
        cpu,
        mem_gi,
        pods,
        price,
        gpu: 0,
    }
}

/// A small catalog in the spirit of Karpenter's fake provider.
pub const FAKES: &[Fake] = &[
    fake("m.medium", 1, 4, 8, 0.05),
    fake("m.large", 2, 8, 29, 0.10),
    fake("m.xlarge", 4, 16, 58, 0.20),
    fake("m.2xlarge", 8, 32, 58, 0.40),
    fake("m.8xlarge", 32, 128, 234, 1.60),
    fake("c.large", 2, 4, 29, 0.085),
    fake("c.xlarge", 4, 8, 58, 0.17),
    fake("r.large", 2, 16, 29, 0.13),
    fake("r.xlarge", 4, 32, 58, 0.26),
    Fake {
        name: "a.large",
        arch: "arm64",
        os: "linux",
        cpu: 2,
        mem_gi: 8,
        pods: 29,
        price: 0.08,
        gpu: 0,
    },
    Fake {
        name: "a.xlarge",
        arch: "arm64",
        os: "linux",
        cpu: 4,
        mem_gi: 16,
        pods: 58,
        price: 0.16,
        gpu: 0,
    },
    Fake {
        name: "g.xlarge",
        arch: "amd64",
        os: "linux",
        cpu: 4,
        mem_gi: 16,
        pods: 29,
        price: 0.53,
        gpu: 1,
    },
    Fake {
        name: "w.xlarge",
        arch: "amd64",
        os: "windows",
        cpu: 4,
        mem_gi: 16,
        pods: 58,
        price: 0.38,
        gpu: 0,
    },
    fake("single.large", 4, 16, 1, 0.21),
];

pub const ZONES: [&str; 3] = ["test-zone-a", "test-zone-b", "test-zone-c"];

fn family(name: &str) -> &str {
    name.split('.').next().unwrap()
}

/// The catalog file for `FAKES`: spot (60% of on-demand, a little more in zone c) in all
/// zones, on-demand in all zones.
pub fn catalog_json(unavailable: &[(&str, &str, &str)]) -> String {
    let types: Vec<Value> = FAKES
        .iter()
        .map(|f| {
            let mut offerings = Vec::new();
            for (zi, z) in ZONES.iter().enumerate() {
                for (ct, price) in [("spot", f.price * (0.6 + 0.01 * zi as f64)), ("on-demand", f.price)] {
                    let available = !unavailable.contains(&(f.name, *z, ct));
                    offerings.push(json!({"zone": z, "capacityType": ct, "price": price, "available": available}));
                }
            }
            let mut alloc = json!({
                "cpu": format!("{}m", f.cpu * 1000 - 100),
                "memory": format!("{}Mi", f.mem_gi * 1024 - 300),
                "pods": f.pods.to_string(),
                "ephemeral-storage": "17Gi"
            });
            let mut labels = json!({
                "kubernetes.io/arch": f.arch,
                "kubernetes.io/os": f.os,
                "karpenter.k8s.aws/instance-family": family(f.name),
                "karpenter.k8s.aws/instance-category": &family(f.name)[..1],
                "karpenter.k8s.aws/instance-size": f.name.split('.').nth(1).unwrap(),
                "karpenter.k8s.aws/instance-cpu": f.cpu.to_string(),
                "karpenter.k8s.aws/instance-memory": (f.mem_gi * 1024).to_string(),
            });
            if f.gpu > 0 {
                alloc["nvidia.com/gpu"] = json!(f.gpu.to_string());
                labels["karpenter.k8s.aws/instance-gpu-count"] = json!(f.gpu.to_string());
                labels["karpenter.k8s.aws/instance-gpu-name"] = json!("t4");
            }
            let capacity = json!({"cpu": f.cpu.to_string(), "memory": format!("{}Gi", f.mem_gi), "pods": f.pods.to_string()});
            json!({"name": f.name, "labels": labels, "allocatable": alloc, "capacity": capacity, "offerings": offerings})
        })
        .collect();
    json!({"region": "test-region", "instanceTypes": types}).to_string()
}

/// Runs manifests through the `kerf plan` pipeline with the fake catalog.
pub fn plan(docs: &[Value]) -> Plan {
    plan_with(docs, &catalog_json(&[]))
}

/// Same, with a custom catalog file text.
pub fn plan_with(docs: &[Value], catalog: &str) -> Plan {
    let cat = kerf_catalog::file::from_json(catalog).unwrap();
    run(docs, CatalogSource::File(Arc::new(cat)))
}

/// Same, with the bundled catalog of a region.
pub fn plan_bundled(docs: &[Value], region: &str) -> Plan {
    run(
        docs,
        CatalogSource::Bundled {
            region: region.into(),
        },
    )
}

pub fn yaml(docs: &[Value]) -> String {
    docs.iter()
        .map(|d| yaml_serde::to_string(d).unwrap())
        .collect::<Vec<_>>()
        .join("---\n")
}

fn run(docs: &[Value], source: CatalogSource) -> Plan {
    let mut inputs = Inputs::default();
    parse_into(&mut inputs, "scenario.yaml", &yaml(docs)).unwrap();
    let seed = inputs.seed();
    let built = build(inputs.docs, &source, 0).unwrap();
    kerf_engine::provision(
        &built.snapshot,
        &Options {
            seed,
            ..Options::default()
        },
    )
}

/// Errors from the pipeline (bad input).
pub fn plan_err(docs_yaml: &str) -> String {
    let mut inputs = Inputs::default();
    if let Err(e) = parse_into(&mut inputs, "scenario.yaml", docs_yaml) {
        return e.to_string();
    }
    let cat = kerf_catalog::file::from_json(&catalog_json(&[])).unwrap();
    match build(inputs.docs, &CatalogSource::File(Arc::new(cat)), 0) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("expected an input error"),
    }
}

// ---------------------------------------------------------------- builders

/// A NodePool `default` allowing both capacity types.
pub fn pool(name: &str) -> Value {
    json!({
        "apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name},
        "spec": {"template": {"spec": {
            "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "on-demand"]}],
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}
        }}}
    })
}

pub fn req(key: &str, op: &str, values: &[&str]) -> Value {
    json!({"key": key, "operator": op, "values": values})
}

pub fn pool_req(mut p: Value, r: Value) -> Value {
    p["spec"]["template"]["spec"]["requirements"]
        .as_array_mut()
        .unwrap()
        .push(r);
    p
}

pub fn pool_label(mut p: Value, k: &str, v: &str) -> Value {
    p["spec"]["template"]["metadata"]["labels"][k] = json!(v);
    p
}

pub fn pool_taint(mut p: Value, field: &str, key: &str, effect: &str) -> Value {
    let spec = &mut p["spec"]["template"]["spec"];
    if spec.get(field).is_none() {
        spec[field] = json!([]);
    }
    spec[field]
        .as_array_mut()
        .unwrap()
        .push(json!({"key": key, "value": "true", "effect": effect}));
    p
}

pub fn pool_weight(mut p: Value, w: i32) -> Value {
    p["spec"]["weight"] = json!(w);
    p
}

pub fn pool_limit(mut p: Value, k: &str, v: &str) -> Value {
    p["spec"]["limits"][k] = json!(v);
    p
}

/// A pending pod in `default` requesting `cpu` and `mem`.
pub fn pod(name: &str, cpu: &str, mem: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}"), "labels": {}},
        "spec": {"containers": [{"name": "app", "image": "pause", "resources": {"requests": {"cpu": cpu, "memory": mem}}}]},
        "status": {"phase": "Pending"}
    })
}

pub fn labels(mut p: Value, pairs: &[(&str, &str)]) -> Value {
    for (k, v) in pairs {
        p["metadata"]["labels"][*k] = json!(v);
    }
    p
}

pub fn node_selector(mut p: Value, pairs: &[(&str, &str)]) -> Value {
    for (k, v) in pairs {
        p["spec"]["nodeSelector"][*k] = json!(v);
    }
    p
}

/// Required node affinity with one term per entry (terms are ORed).
pub fn required_terms(mut p: Value, terms: &[Vec<Value>]) -> Value {
    let ts: Vec<Value> = terms
        .iter()
        .map(|t| json!({"matchExpressions": t}))
        .collect();
    p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] =
        json!({"nodeSelectorTerms": ts});
    p
}

pub fn preferred_term(mut p: Value, weight: i32, exprs: Vec<Value>) -> Value {
    let na = &mut p["spec"]["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"];
    if na.is_null() {
        *na = json!([]);
    }
    na.as_array_mut()
        .unwrap()
        .push(json!({"weight": weight, "preference": {"matchExpressions": exprs}}));
    p
}

pub fn toleration(mut p: Value, key: &str, op: &str, effect: &str) -> Value {
    let t = &mut p["spec"]["tolerations"];
    if t.is_null() {
        *t = json!([]);
    }
    let mut tol = json!({"key": key, "operator": op, "effect": effect});
    if op == "Equal" {
        tol["value"] = json!("true");
    }
    t.as_array_mut().unwrap().push(tol);
    p
}

pub fn spread(mut p: Value, key: &str, skew: i32, when: &str, app: &str) -> Value {
    let t = &mut p["spec"]["topologySpreadConstraints"];
    if t.is_null() {
        *t = json!([]);
    }
    t.as_array_mut().unwrap().push(json!({
        "maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": when,
        "labelSelector": {"matchLabels": {"app": app}}
    }));
    p
}

pub fn with_spread_field(mut p: Value, field: &str, v: Value) -> Value {
    p["spec"]["topologySpreadConstraints"][0][field] = v;
    p
}

/// Required (or preferred, with a weight) pod affinity / anti-affinity to `app`.
pub fn affinity(mut p: Value, kind: &str, key: &str, app: &str, weight: Option<i32>) -> Value {
    let term = json!({"topologyKey": key, "labelSelector": {"matchLabels": {"app": app}}});
    let (field, item) = match weight {
        None => ("requiredDuringSchedulingIgnoredDuringExecution", term),
        Some(w) => (
            "preferredDuringSchedulingIgnoredDuringExecution",
            json!({"weight": w, "podAffinityTerm": term}),
        ),
    };
    let a = &mut p["spec"]["affinity"][kind][field];
    if a.is_null() {
        *a = json!([]);
    }
    a.as_array_mut().unwrap().push(item);
    p
}

pub fn host_port(mut p: Value, port: i32) -> Value {
    p["spec"]["containers"][0]["ports"] = json!([{"containerPort": port, "hostPort": port}]);
    p
}

pub fn bound(mut p: Value, node: &str) -> Value {
    p["spec"]["nodeName"] = json!(node);
    p["status"]["phase"] = json!("Running");
    p
}

/// An existing Node of fake type `it` in `zone`, owned by pool `default`.
pub fn node(name: &str, it: &str, zone: &str) -> Value {
    let f = FAKES.iter().find(|f| f.name == it).unwrap();
    json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {
            "kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone,
            "node.kubernetes.io/instance-type": it, "kubernetes.io/arch": f.arch, "kubernetes.io/os": f.os,
            "karpenter.sh/nodepool": "default", "karpenter.sh/capacity-type": "on-demand",
            "karpenter.sh/initialized": "true", "karpenter.sh/registered": "true"
        }},
        "spec": {"providerID": format!("aws:///{zone}/i-{name}")},
        "status": {
            "allocatable": {"cpu": format!("{}m", f.cpu * 1000 - 100), "memory": format!("{}Mi", f.mem_gi * 1024 - 300), "pods": f.pods.to_string()},
            "capacity": {"cpu": f.cpu.to_string(), "memory": format!("{}Gi", f.mem_gi), "pods": f.pods.to_string()}
        }
    })
}

pub fn daemonset(name: &str, cpu: &str, mem: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name, "namespace": "kube-system"},
        "spec": {"selector": {"matchLabels": {"app": name}}, "template": {"metadata": {"labels": {"app": name}}, "spec": {
            "containers": [{"name": "d", "image": "d", "resources": {"requests": {"cpu": cpu, "memory": mem}}}]
        }}}
    })
}

// ---------------------------------------------------------------- assertions

/// The launch carrying `pod` (`default/<name>`).
pub fn launch_of<'p>(plan: &'p Plan, pod: &str) -> &'p kerf_engine::plan::Launch {
    let key = format!("default/{pod}");
    plan.launches
        .iter()
        .find(|l| l.pods.contains(&key))
        .unwrap_or_else(|| panic!("{pod} not launched: {plan:#?}"))
}

pub fn reason_of(plan: &Plan, pod: &str) -> String {
    let key = format!("default/{pod}");
    plan.unschedulable
        .iter()
        .find(|u| u.pod == key)
        .map(|u| u.reason.clone())
        .unwrap_or_else(|| panic!("{pod} is not unschedulable: {plan:#?}"))
}

pub fn nominated(plan: &Plan, pod: &str) -> Option<String> {
    let key = format!("default/{pod}");
    plan.nominations
        .iter()
        .find(|n| n.pod == key)
        .map(|n| n.node.clone())
}

/// The value a launch's requirement pins `key` to (single `In` value), if any.
pub fn pinned(l: &kerf_engine::plan::Launch, key: &str) -> Option<String> {
    l.requirements
        .iter()
        .find(|r| r.key == key && r.values.len() == 1 && format!("{:?}", r.operator) == "In")
        .map(|r| r.values[0].clone())
}

/// Every pending pod appears exactly once across launches, nominations and unschedulable.
pub fn assert_accounted(plan: &Plan, pending: usize) {
    let mut all: Vec<&String> = plan.launches.iter().flat_map(|l| &l.pods).collect();
    all.extend(plan.nominations.iter().map(|n| &n.pod));
    all.extend(plan.unschedulable.iter().map(|u| &u.pod));
    let n = all.len();
    all.sort();
    all.dedup();
    assert_eq!(n, all.len(), "a pod appears twice");
    assert_eq!(n, pending, "every pending pod is accounted for");
}
