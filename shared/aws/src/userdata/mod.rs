//! A node's user data, per AMI family, as Karpenter's AWS provider generates it: the node
//! joins the cluster with its NodeClaim's labels and taints (and `karpenter.sh/unregistered`)
//! from its first second, whatever Kerf's webhook does.
//!
//! - AL2023: a MIME archive, the EC2NodeClass `userData` parts first, then nodeadm's
//!   `NodeConfig` ([`al2023`]).
//! - AL2: a MIME archive, the `userData` parts first, then a `bootstrap.sh` script whose
//!   `--kubelet-extra-args` carry `--node-labels` and `--register-with-taints` ([`al2`]).
//! - Bottlerocket: the `userData` TOML with Kerf's `settings.kubernetes` merged over it
//!   ([`bottlerocket`]).
//! - Windows: one PowerShell block, the `userData` first, then `Start-EKSBootstrap.ps1`
//!   ([`windows`]).
//! - Custom: the `userData` as written; the AMI bootstraps itself.

pub mod al2;
pub mod al2023;
pub mod bottlerocket;
pub mod kubelet;
pub mod mime;
pub mod windows;
pub mod yaml;

use std::collections::BTreeMap;

use kerf_catalog::AmiFamily;
use serde_json::{Map, Value};

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

impl ClusterInfo {
    /// An IPv6 cluster: its service CIDR is an IPv6 one.
    pub fn is_ipv6(&self) -> bool {
        self.service_cidr
            .as_deref()
            .is_some_and(|c| c.contains(':'))
    }
}

/// A node taint.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Taint {
    pub key: String,
    pub value: Option<String>,
    pub effect: String,
}

impl Taint {
    /// `key=value:effect`, or `key:effect` without a value (Kubernetes' own spelling).
    pub fn spelled(&self) -> String {
        match self.value.as_deref().filter(|v| !v.is_empty()) {
            Some(v) => format!("{}={v}:{}", self.key, self.effect),
            None => format!("{}:{}", self.key, self.effect),
        }
    }
}

/// What the node itself gets: labels, taints and kubelet configuration.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeBootstrap {
    pub labels: BTreeMap<String, String>,
    pub taints: Vec<Taint>,
    pub max_pods: Option<u32>,
    /// Further KubeletConfiguration fields (`clusterDNS`, `kubeReserved`, `evictionHard`, …).
    pub kubelet: Map<String, Value>,
    /// `instanceStorePolicy: RAID0`: the instance store volumes become one RAID0 array for
    /// the kubelet, containerd and pod logs.
    pub raid0: bool,
}

impl NodeBootstrap {
    /// The first `clusterDNS` entry (the only one every family but AL2023 can pass on).
    pub fn cluster_dns(&self) -> Option<&str> {
        self.kubelet
            .get("clusterDNS")
            .and_then(Value::as_array)
            .and_then(|a| a.first())
            .and_then(Value::as_str)
    }
}

/// User data that cannot be merged with Kerf's bootstrap.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UserDataError {
    #[error("spec.userData is not valid TOML for the Bottlerocket family: {0}")]
    BottlerocketToml(String),
    #[error("spec.userData: Bottlerocket's `settings` must be a table")]
    BottlerocketSettings,
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

/// The labels to register with: the node's, plus `karpenter.sh/do-not-sync-taints=true`
/// (the node already has its taints; registration must not add them a second time).
pub fn register_labels(node: &NodeBootstrap) -> BTreeMap<String, String> {
    let mut labels = node.labels.clone();
    labels.insert(kerf_labels::DO_NOT_SYNC_TAINTS.into(), "true".into());
    labels
}

/// The `--node-labels` kubelet flag, its value quoted as Karpenter writes it.
pub fn node_labels_arg(labels: &BTreeMap<String, String>) -> String {
    let pairs: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("--node-labels={}", quoted(&pairs.join(",")))
}

/// The `--register-with-taints` kubelet flag.
pub fn register_taints_arg(taints: &[Taint]) -> String {
    let spelled: Vec<String> = taints.iter().map(Taint::spelled).collect();
    format!("--register-with-taints={}", quoted(&spelled.join(",")))
}

/// A double-quoted string with `\` and `"` escaped.
pub fn quoted(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The user data of a node of `family`, merged with the EC2NodeClass `userData`.
pub fn render(
    family: AmiFamily,
    cluster: &ClusterInfo,
    node: &NodeBootstrap,
    user_data: Option<&str>,
) -> Result<String, UserDataError> {
    Ok(match family {
        AmiFamily::AL2023 => al2023::user_data(cluster, node, user_data),
        AmiFamily::AL2 => al2::user_data(cluster, node, user_data),
        AmiFamily::Bottlerocket => bottlerocket::user_data(cluster, node, user_data)?,
        AmiFamily::Windows2019 | AmiFamily::Windows2022 | AmiFamily::Windows2025 => {
            windows::user_data(cluster, node, user_data)
        }
        AmiFamily::Custom => user_data.unwrap_or_default().to_string(),
    })
}

#[cfg(test)]
mod tests;
