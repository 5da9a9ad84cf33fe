//! The EC2NodeClass `spec.kubelet` fields as kubelet command-line flags (AL2's
//! `--kubelet-extra-args`, Windows' `-KubeletExtraArgs`), in Karpenter's order.

use serde_json::{Map, Value};

use super::{
    NodeBootstrap, node_labels_arg, register_labels, register_taints, register_taints_arg,
};

/// A map field as `name="k<sep>v,…"` (sorted by key), or nothing when absent or empty.
fn joined(kubelet: &Map<String, Value>, field: &str, flag: &str, sep: &str) -> Option<String> {
    let m = kubelet.get(field)?.as_object()?;
    let pairs: Vec<String> = m
        .iter()
        .map(|(k, v)| format!("{k}{sep}{}", text(v)))
        .collect();
    (!pairs.is_empty()).then(|| format!("{flag}={}", super::quoted(&pairs.join(","))))
}

/// A scalar field as `name=value`.
fn scalar(kubelet: &Map<String, Value>, field: &str, flag: &str) -> Option<String> {
    kubelet.get(field).map(|v| format!("{flag}={}", text(v)))
}

/// A JSON scalar as its bare text (strings unquoted).
pub fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The kubelet flags of a node: labels, taints, max pods, then the class's kubelet fields.
pub fn extra_args(node: &NodeBootstrap) -> Vec<String> {
    let k = &node.kubelet;
    let mut args = vec![
        node_labels_arg(&register_labels(node)),
        register_taints_arg(&register_taints(node)),
    ];
    if let Some(mp) = node.max_pods {
        args.push(format!("--max-pods={mp}"));
    }
    let rest = [
        scalar(k, "podsPerCore", "--pods-per-core"),
        joined(k, "systemReserved", "--system-reserved", "="),
        joined(k, "kubeReserved", "--kube-reserved", "="),
        joined(k, "evictionHard", "--eviction-hard", "<"),
        joined(k, "evictionSoft", "--eviction-soft", "<"),
        joined(
            k,
            "evictionSoftGracePeriod",
            "--eviction-soft-grace-period",
            "=",
        ),
        scalar(
            k,
            "evictionMaxPodGracePeriod",
            "--eviction-max-pod-grace-period",
        ),
        scalar(
            k,
            "imageGCHighThresholdPercent",
            "--image-gc-high-threshold",
        ),
        scalar(k, "imageGCLowThresholdPercent", "--image-gc-low-threshold"),
        scalar(k, "cpuCFSQuota", "--cpu-cfs-quota"),
    ];
    args.extend(rest.into_iter().flatten());
    args
}
