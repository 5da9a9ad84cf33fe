//! The kubelet bridge: every simulated EC2 instance that is running gets its Node, created
//! the way its kubelet creates it — as the node's own identity (`system:node:<name>` in
//! `system:nodes`, so the Node authorizer and the NodeRestriction admission plugin check
//! it), with the sim kubelet's name, providerID, labels, taints (the launch's, and
//! `karpenter.sh/unregistered:NoExecute`), capacity and allocatable
//! (`shared/sim/src/world/kubelet.rs` `node_for`) — plus the annotation
//! `kwok.x-k8s.io/node: fake`, so KWOK plays the kubelet from then on (Ready, heartbeat
//! Lease, pods Running). Each instance registers once: a Node deleted later (termination)
//! is not registered again.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Node;
use kerf_sim::world::SimCloud;
use kerf_sim::world::cloud::SimInstance;
use kube::Api;
use kube::api::PostParams;
use serde_json::{Value, json};

use super::cluster::ControlPlane;

/// The taint every Kerf node registers with until Kerf registers it.
pub const UNREGISTERED_TAINT: &str = "karpenter.sh/unregistered";

/// The annotation KWOK's `--manage-nodes-with-annotation-selector` selects.
pub const KWOK_ANNOTATION: &str = "kwok.x-k8s.io/node";

/// The bridge; remembers which instances registered.
#[derive(Debug, Default)]
pub struct KubeletBridge {
    registered: BTreeSet<String>,
}

/// The name the sim's kubelet gives the node of an instance.
pub fn node_name(i: &SimInstance) -> String {
    let n =
        u64::from_str_radix(i.info.id.trim_start_matches("i-"), 16).unwrap_or_default() & 0xffff;
    format!(
        "ip-10-0-{}-{}.{}.compute.internal",
        n / 256,
        n % 256,
        region(i)
    )
}

fn region(i: &SimInstance) -> String {
    i.info
        .zone
        .trim_end_matches(|c: char| c.is_ascii_alphabetic())
        .to_string()
}

/// The Node the kubelet of `i` registers.
pub fn node_for(i: &SimInstance) -> Value {
    let name = node_name(i);
    let mut labels: BTreeMap<String, String> = i.type_labels.clone();
    labels.extend(i.labels.clone());
    for (k, v) in [
        ("kubernetes.io/hostname", name.clone()),
        ("topology.kubernetes.io/zone", i.info.zone.clone()),
        ("topology.kubernetes.io/region", region(i)),
        (
            "node.kubernetes.io/instance-type",
            i.info.instance_type.clone(),
        ),
        (
            "karpenter.sh/capacity-type",
            i.info.capacity_type.as_str().into(),
        ),
    ] {
        labels.insert(k.into(), v);
    }
    let mut taints: Vec<Value> = i
        .taints
        .iter()
        .map(|t| json!({"key": t.key, "value": t.value, "effect": t.effect}))
        .collect();
    taints.push(json!({"key": UNREGISTERED_TAINT, "effect": "NoExecute"}));
    let ip = name
        .trim_start_matches("ip-")
        .split('.')
        .next()
        .unwrap_or_default()
        .replace('-', ".");
    let arch = labels
        .get("kubernetes.io/arch")
        .cloned()
        .unwrap_or_default();
    json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": labels, "annotations": {KWOK_ANNOTATION: "fake"}},
        "spec": {"providerID": i.info.provider_id, "taints": taints},
        "status": {"capacity": i.capacity, "allocatable": i.allocatable,
            "addresses": [{"type": "InternalIP", "address": ip}, {"type": "Hostname", "address": name}],
            "nodeInfo": {"kubeletVersion": "v1.36.3", "osImage": "Amazon Linux 2023",
                "kernelVersion": "6.1.0", "containerRuntimeVersion": "containerd://1.7.27",
                "operatingSystem": "linux", "architecture": arch, "kubeProxyVersion": "",
                "machineID": i.info.id, "systemUUID": i.info.id, "bootID": i.info.id}}})
}

impl KubeletBridge {
    /// Registers the Node of every running instance not registered yet; returns the names
    /// of the Nodes created.
    pub async fn step(&mut self, cp: &ControlPlane, cloud: &SimCloud) -> Vec<String> {
        let mut created = Vec::new();
        for i in cloud.instances() {
            if i.info.state != "running" || self.registered.contains(&i.info.id) {
                continue;
            }
            let name = node_name(&i);
            let me = format!("system:node:{name}");
            let client = cp.user(&me, &["system:nodes"]).await;
            let node: Node = serde_json::from_value(node_for(&i)).unwrap();
            match Api::<Node>::all(client)
                .create(&PostParams::default(), &node)
                .await
            {
                Ok(_) => created.push(name),
                Err(kube::Error::Api(s)) if s.code == 409 => {}
                Err(e) => panic!(
                    "the kubelet of {} ({me}) cannot create its Node: {e}",
                    i.info.id
                ),
            }
            self.registered.insert(i.info.id.clone());
        }
        created
    }
}
