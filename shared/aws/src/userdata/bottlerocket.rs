//! Bottlerocket user data: the EC2NodeClass `userData` TOML with Kerf's settings merged over
//! it, as Karpenter does: cluster name, API server and CA, node labels (merged, Kerf's win),
//! node taints (replaced), max pods, the class's kubelet fields, `autoscaling.should-wait`
//! turned off (no Auto Scaling group waits for the node), and the RAID0 bootstrap command.

use toml::{Table, Value};

use super::kubelet::text;
use super::{ClusterInfo, NodeBootstrap, UserDataError, register_labels, register_taints};

/// The bootstrap command that puts the instance store into one RAID0 array.
const RAID0_COMMAND: &str = "000-mount-instance-storage";

/// The table at `key` of `t`, made when absent; an error when `key` holds something else.
fn table<'a>(t: &'a mut Table, key: &str) -> Result<&'a mut Table, UserDataError> {
    t.entry(key)
        .or_insert_with(|| Value::Table(Table::new()))
        .as_table_mut()
        .ok_or(UserDataError::BottlerocketSettings)
}

fn strings(m: &serde_json::Map<String, serde_json::Value>) -> Value {
    Value::Table(
        m.iter()
            .map(|(k, v)| (k.clone(), Value::String(text(v))))
            .collect(),
    )
}

/// The class's kubelet fields under their Bottlerocket names.
fn kubelet(node: &NodeBootstrap, k: &mut Table) {
    let kubelet = &node.kubelet;
    if let Some(ip) = node.cluster_dns() {
        k.insert("cluster-dns-ip".into(), Value::String(ip.into()));
    }
    let maps = [
        ("systemReserved", "system-reserved"),
        ("kubeReserved", "kube-reserved"),
        ("evictionHard", "eviction-hard"),
        ("evictionSoft", "eviction-soft"),
        ("evictionSoftGracePeriod", "eviction-soft-grace-period"),
    ];
    for (field, name) in maps {
        if let Some(m) = kubelet.get(field).and_then(|v| v.as_object()) {
            k.insert(name.into(), strings(m));
        }
    }
    if let Some(n) = kubelet
        .get("evictionMaxPodGracePeriod")
        .and_then(|v| v.as_i64())
    {
        k.insert("eviction-max-pod-grace-period".into(), Value::Integer(n));
    }
    for (field, name) in [
        (
            "imageGCHighThresholdPercent",
            "image-gc-high-threshold-percent",
        ),
        (
            "imageGCLowThresholdPercent",
            "image-gc-low-threshold-percent",
        ),
    ] {
        if let Some(v) = kubelet.get(field) {
            k.insert(name.into(), Value::String(text(v)));
        }
    }
    if let Some(b) = kubelet.get("cpuCFSQuota").and_then(|v| v.as_bool()) {
        k.insert("cpu-cfs-quota-enforced".into(), Value::Boolean(b));
    }
}

fn kubernetes(
    cluster: &ClusterInfo,
    node: &NodeBootstrap,
    k: &mut Table,
) -> Result<(), UserDataError> {
    k.insert("cluster-name".into(), Value::String(cluster.name.clone()));
    k.insert("api-server".into(), Value::String(cluster.endpoint.clone()));
    k.insert(
        "cluster-certificate".into(),
        Value::String(cluster.certificate_authority.clone()),
    );
    let labels = table(k, "node-labels")?;
    for (key, v) in register_labels(node) {
        labels.insert(key, Value::String(v));
    }
    let mut taints = Table::new();
    for t in register_taints(node) {
        let entry = taints
            .entry(t.key.clone())
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(a) = entry {
            let value = t.value.clone().unwrap_or_default();
            a.push(Value::String(format!("{value}:{}", t.effect)));
        }
    }
    k.insert("node-taints".into(), Value::Table(taints));
    if let Some(mp) = node.max_pods {
        k.insert("max-pods".into(), Value::Integer(i64::from(mp)));
    }
    kubelet(node, k);
    Ok(())
}

fn raid0(settings: &mut Table) -> Result<(), UserDataError> {
    let command =
        |words: &[&str]| Value::Array(words.iter().map(|w| Value::String((*w).into())).collect());
    let mut c = Table::new();
    c.insert(
        "commands".into(),
        Value::Array(vec![
            command(&["apiclient", "ephemeral-storage", "init"]),
            command(&[
                "apiclient",
                "ephemeral-storage",
                "bind",
                "--dirs",
                "/var/lib/containerd",
                "/var/lib/kubelet",
                "/var/log/pods",
            ]),
        ]),
    );
    c.insert("essential".into(), Value::Boolean(true));
    c.insert("mode".into(), Value::String("always".into()));
    table(settings, "bootstrap-commands")?.insert(RAID0_COMMAND.into(), Value::Table(c));
    Ok(())
}

/// The final user data.
pub fn user_data(
    cluster: &ClusterInfo,
    node: &NodeBootstrap,
    user_data: Option<&str>,
) -> Result<String, UserDataError> {
    let mut doc = match user_data.map(str::trim).filter(|u| !u.is_empty()) {
        Some(u) => u
            .parse::<Table>()
            .map_err(|e| UserDataError::BottlerocketToml(e.message().to_string()))?,
        None => Table::new(),
    };
    let settings = table(&mut doc, "settings")?;
    if let Some(a) = settings
        .get_mut("autoscaling")
        .and_then(Value::as_table_mut)
        && a.contains_key("should-wait")
    {
        a.insert("should-wait".into(), Value::Boolean(false));
    }
    kubernetes(cluster, node, table(settings, "kubernetes")?)?;
    if node.raid0 {
        raid0(settings)?;
    }
    Ok(doc.to_string())
}
