//! AL2023 user data: a MIME archive whose last part is nodeadm's `NodeConfig` (cluster
//! endpoint, CA, service CIDR, kubelet config with `registerWithTaints`, node labels, RAID0
//! local storage), after the EC2NodeClass `userData` parts, as Karpenter merges them.

use serde_json::{Map, Value, json};

use super::mime::{self, NODE_CONFIG, Part, SHELL};
use super::yaml::to_yaml;
use super::{ClusterInfo, NodeBootstrap, Taint, node_labels_arg, register_labels, register_taints};

fn taint_json(t: &Taint) -> Value {
    let mut m = Map::new();
    m.insert("key".into(), json!(t.key));
    if let Some(v) = &t.value {
        m.insert("value".into(), json!(v));
    }
    m.insert("effect".into(), json!(t.effect));
    Value::Object(m)
}

/// The nodeadm NodeConfig as a JSON value.
pub fn node_config(cluster: &ClusterInfo, node: &NodeBootstrap) -> Value {
    let mut c = Map::new();
    c.insert("name".into(), json!(cluster.name));
    c.insert("apiServerEndpoint".into(), json!(cluster.endpoint));
    c.insert(
        "certificateAuthority".into(),
        json!(cluster.certificate_authority),
    );
    if let Some(cidr) = &cluster.service_cidr {
        c.insert("cidr".into(), json!(cidr));
    }
    let mut kubelet = node.kubelet.clone();
    if let Some(mp) = node.max_pods {
        kubelet.insert("maxPods".into(), json!(mp));
    }
    let taints: Vec<Value> = register_taints(node).iter().map(taint_json).collect();
    kubelet.insert("registerWithTaints".into(), Value::Array(taints));
    let mut spec = Map::new();
    spec.insert("cluster".into(), Value::Object(c));
    if node.raid0 {
        spec.insert(
            "instance".into(),
            json!({"localStorage": {"strategy": "RAID0"}}),
        );
    }
    spec.insert(
        "kubelet".into(),
        json!({ "config": kubelet, "flags": [node_labels_arg(&register_labels(node))] }),
    );
    json!({
        "apiVersion": "node.eks.aws/v1alpha1",
        "kind": "NodeConfig",
        "spec": spec,
    })
}

/// A bare (non-MIME) `userData`: a NodeConfig document or a shell script.
fn plain(text: &str) -> &'static str {
    if text.contains("node.eks.aws/") && text.contains("NodeConfig") {
        NODE_CONFIG
    } else {
        SHELL
    }
}

/// The final user data: the user's parts first, then Kerf's NodeConfig.
pub fn user_data(cluster: &ClusterInfo, node: &NodeBootstrap, user_data: Option<&str>) -> String {
    let mut parts = mime::user_parts(user_data.unwrap_or_default(), plain);
    parts.push(Part {
        content_type: NODE_CONFIG.into(),
        body: format!(
            "# Kerf generated NodeConfig\n{}",
            to_yaml(&node_config(cluster, node)).trim_end()
        ),
    });
    mime::archive(&parts)
}
