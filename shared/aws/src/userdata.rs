//! AL2023 user data: a MIME multipart document whose last part is the nodeadm `NodeConfig`
//! (cluster endpoint, CA, service CIDR, kubelet config with `registerWithTaints`, node labels),
//! after the EC2NodeClass `userData` parts, as Karpenter merges them.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

/// The MIME boundary Karpenter uses.
pub const BOUNDARY: &str = "//";

pub use kerf_labels::UNREGISTERED_TAINT;

/// The cluster facts a node needs to join (from EKS DescribeCluster).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterInfo {
    pub name: String,
    pub endpoint: String,
    /// Base64 PEM bundle, as DescribeCluster returns it.
    pub certificate_authority: String,
    pub service_cidr: Option<String>,
}

/// A node taint.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Taint {
    pub key: String,
    pub value: Option<String>,
    pub effect: String,
}

/// What the node itself gets: labels, taints and kubelet configuration.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeBootstrap {
    pub labels: BTreeMap<String, String>,
    pub taints: Vec<Taint>,
    pub max_pods: Option<u32>,
    /// Further KubeletConfiguration fields (`clusterDNS`, `kubeReserved`, `evictionHard`, …).
    pub kubelet: Map<String, Value>,
}

fn taint_json(t: &Taint) -> Value {
    let mut m = Map::new();
    m.insert("key".into(), json!(t.key));
    if let Some(v) = &t.value {
        m.insert("value".into(), json!(v));
    }
    m.insert("effect".into(), json!(t.effect));
    Value::Object(m)
}

/// The taints to register with: the node's, plus `karpenter.sh/unregistered:NoExecute`.
pub fn register_taints(node: &NodeBootstrap) -> Vec<Taint> {
    let mut taints = node.taints.clone();
    if !taints.iter().any(|t| t.key == UNREGISTERED_TAINT) {
        taints.push(Taint {
            key: UNREGISTERED_TAINT.into(),
            value: None,
            effect: "NoExecute".into(),
        });
    }
    taints
}

/// The `--node-labels` kubelet flag.
pub fn node_labels_flag(labels: &BTreeMap<String, String>) -> String {
    let pairs: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("--node-labels={}", pairs.join(","))
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
    let mut labels = node.labels.clone();
    labels.insert(kerf_labels::DO_NOT_SYNC_TAINTS.into(), "true".into());
    json!({
        "apiVersion": "node.eks.aws/v1alpha1",
        "kind": "NodeConfig",
        "spec": {
            "cluster": c,
            "kubelet": { "config": kubelet, "flags": [node_labels_flag(&labels)] }
        }
    })
}

/// Renders JSON as block YAML (strings double-quoted, so any value is safe).
pub fn to_yaml(v: &Value) -> String {
    let mut out = String::new();
    yaml_block(v, 0, &mut out);
    out
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::Object(m) if m.is_empty() => Some("{}".into()),
        Value::Array(a) if a.is_empty() => Some("[]".into()),
        Value::Object(_) | Value::Array(_) => None,
        other => Some(other.to_string()),
    }
}

fn yaml_block(v: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(m) => {
            for (k, val) in m {
                let key = serde_json::to_string(k).unwrap_or_default();
                match scalar(val) {
                    Some(s) => out.push_str(&format!("{pad}{key}: {s}\n")),
                    None => {
                        out.push_str(&format!("{pad}{key}:\n"));
                        yaml_block(val, indent + 2, out);
                    }
                }
            }
        }
        Value::Array(a) => {
            for item in a {
                match scalar(item) {
                    Some(s) => out.push_str(&format!("{pad}- {s}\n")),
                    None => {
                        let mut inner = String::new();
                        yaml_block(item, indent + 2, &mut inner);
                        out.push_str(&format!("{pad}- {}", &inner[indent + 2..]));
                    }
                }
            }
        }
        other => out.push_str(&format!("{pad}{}\n", scalar(other).unwrap_or_default())),
    }
}

/// One MIME part: its content type and body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    pub content_type: String,
    pub body: String,
}

/// Splits EC2NodeClass `userData` into parts: a MIME multipart document's parts, a bare
/// NodeConfig, or a shell script.
pub fn user_parts(user_data: &str) -> Vec<Part> {
    let trimmed = user_data.trim();
    if trimmed.is_empty() {
        return Vec::new();
    }
    if let Some(boundary) = mime_boundary(trimmed) {
        return split_mime(trimmed, &boundary);
    }
    let content_type = if trimmed.contains("node.eks.aws/") && trimmed.contains("NodeConfig") {
        "application/node.eks.aws"
    } else {
        "text/x-shellscript; charset=\"us-ascii\""
    };
    vec![Part {
        content_type: content_type.into(),
        body: trimmed.to_string(),
    }]
}

fn mime_boundary(doc: &str) -> Option<String> {
    let header_end = doc.find("\n\n").unwrap_or(doc.len());
    let headers = &doc[..header_end];
    let ct = headers.lines().find(|l| {
        l.to_ascii_lowercase()
            .starts_with("content-type: multipart/")
    })?;
    let b = ct.split("boundary=").nth(1)?;
    Some(b.trim().trim_matches('"').to_string())
}

fn split_mime(doc: &str, boundary: &str) -> Vec<Part> {
    let delim = format!("--{boundary}");
    doc.split(&delim)
        .skip(1)
        .filter(|chunk| !chunk.starts_with("--"))
        .filter_map(|chunk| {
            let chunk = chunk.trim_start_matches(['\r', '\n']);
            let (head, body) = chunk
                .split_once("\n\n")
                .or_else(|| chunk.split_once("\r\n\r\n"))?;
            let content_type = head
                .lines()
                .find_map(|l| {
                    l.split_once(':')
                        .filter(|(k, _)| k.eq_ignore_ascii_case("content-type"))
                })
                .map(|(_, v)| v.trim().to_string())
                .unwrap_or_else(|| "text/x-shellscript".into());
            Some(Part {
                content_type,
                body: body.trim_end().to_string(),
            })
        })
        .collect()
}

/// The final user data: the user's parts first, then Kerf's NodeConfig.
pub fn al2023(cluster: &ClusterInfo, node: &NodeBootstrap, user_data: Option<&str>) -> String {
    let mut parts = user_parts(user_data.unwrap_or_default());
    parts.push(Part {
        content_type: "application/node.eks.aws".into(),
        body: to_yaml(&node_config(cluster, node)).trim_end().to_string(),
    });
    let mut out =
        format!("MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"{BOUNDARY}\"\n\n");
    for p in parts {
        out.push_str(&format!(
            "--{BOUNDARY}\nContent-Type: {}\n\n{}\n\n",
            p.content_type, p.body
        ));
    }
    out.push_str(&format!("--{BOUNDARY}--\n"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster() -> ClusterInfo {
        ClusterInfo {
            name: "demo".into(),
            endpoint: "https://ABC.gr7.us-west-2.eks.amazonaws.com".into(),
            certificate_authority: "Q0E=".into(),
            service_cidr: Some("10.100.0.0/16".into()),
        }
    }

    fn node() -> NodeBootstrap {
        NodeBootstrap {
            labels: BTreeMap::from([("karpenter.sh/nodepool".into(), "default".into())]),
            taints: vec![Taint {
                key: "gpu".into(),
                value: Some("true".into()),
                effect: "NoSchedule".into(),
            }],
            max_pods: Some(29),
            kubelet: Map::from_iter([("clusterDNS".to_string(), json!(["10.100.0.10"]))]),
        }
    }

    #[test]
    fn node_config_has_cluster_taints_and_labels() {
        let ud = al2023(&cluster(), &node(), None);
        assert!(
            ud.starts_with("MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"//\"")
        );
        assert!(
            ud.contains("\"apiServerEndpoint\": \"https://ABC.gr7.us-west-2.eks.amazonaws.com\"")
        );
        assert!(ud.contains("\"cidr\": \"10.100.0.0/16\""));
        assert!(ud.contains("\"maxPods\": 29"));
        assert!(ud.contains("\"key\": \"karpenter.sh/unregistered\"\n"));
        assert!(ud.contains("\"registerWithTaints\":\n"));
        assert!(ud.contains("\"effect\": \"NoExecute\""));
        assert!(ud.contains("karpenter.sh/do-not-sync-taints=true,karpenter.sh/nodepool=default"));
        assert!(ud.ends_with("--//--\n"));
    }

    #[test]
    fn user_parts_come_first() {
        let script = "#!/bin/bash\necho hi";
        let ud = al2023(&cluster(), &node(), Some(script));
        let s = ud.find("echo hi").unwrap();
        let n = ud.find("kind").unwrap();
        assert!(s < n);
        assert!(ud.contains("Content-Type: text/x-shellscript"));
    }

    #[test]
    fn mime_user_data_is_split() {
        let mime = "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"BOUND\"\n\n--BOUND\nContent-Type: text/x-shellscript\n\necho one\n--BOUND\nContent-Type: application/node.eks.aws\n\napiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\n--BOUND--\n";
        let parts = user_parts(mime);
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0].body, "echo one");
        assert_eq!(parts[1].content_type, "application/node.eks.aws");
        let ud = al2023(&cluster(), &node(), Some(mime));
        assert_eq!(
            ud.matches("Content-Type: application/node.eks.aws").count(),
            2
        );
    }
}
