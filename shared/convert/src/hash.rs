//! Kerf's drift hashes, stamped on the NodeClaims Kerf launches and compared by the engine:
//! the NodePool's `spec.template` without requirements, and the EC2NodeClass's spec without
//! its selector terms, as Karpenter hashes them (zero values ignored, lists as sets,
//! durations by value). The hash is FNV-1a 64 over a canonical JSON text, printed in decimal,
//! so every build and platform computes the same value. The versions are Kerf's own
//! (`kerf_labels::KERF_NODEPOOL_HASH_VERSION`, `kerf_labels::aws::KERF_EC2NODECLASS_HASH_VERSION`):
//! claims stamped by Karpenter carry other versions and are never found drifted by hash.

use kerf_api::v1 as karpenter;
use kerf_engine::time::parse_duration;
use serde_json::{Map, Value, json};

/// The NodePool's template hash (`karpenter.sh/nodepool-hash` on its NodeClaims).
pub fn nodepool_hash(np: &karpenter::NodePool) -> String {
    let t = &np.spec.template;
    let v = json!({
        "labels": t.metadata.labels,
        "annotations": t.metadata.annotations,
        "taints": t.spec.taints,
        "startupTaints": t.spec.startup_taints,
        "nodeClassRef": t.spec.node_class_ref,
        "expireAfter": duration_value(&t.spec.expire_after),
        "terminationGracePeriod": t.spec.termination_grace_period.as_deref().map(duration_value),
    });
    digest(&v)
}

/// The EC2NodeClass's hash (`karpenter.k8s.aws/ec2nodeclass-hash` on its NodeClaims): its
/// spec without the selector terms (drift on them is checked against `status`), the IP
/// prefix count and the literal AMI family, plus the resolved family and the kubelet
/// configuration as one JSON string.
pub fn nodeclass_hash(nc: &karpenter::EC2NodeClass) -> String {
    let mut spec = serde_json::to_value(&nc.spec).unwrap_or(Value::Null);
    if let Some(m) = spec.as_object_mut() {
        for k in [
            "subnetSelectorTerms",
            "securityGroupSelectorTerms",
            "capacityReservationSelectorTerms",
            "amiSelectorTerms",
            "ipPrefixCount",
            "amiFamily",
            "kubelet",
        ] {
            m.remove(k);
        }
        m.insert("resolvedAmiFamily".into(), Value::String(family(nc)));
        if let Some(k) = &nc.spec.kubelet {
            let kubelet = serde_json::to_value(k).unwrap_or(Value::Null);
            m.insert("kubelet".into(), Value::String(canonical(&kubelet)));
        }
    }
    digest(&spec)
}

/// The AMI family the node class resolves to: an alias's family, else `amiFamily`.
fn family(nc: &karpenter::EC2NodeClass) -> String {
    if let Some(alias) = nc
        .spec
        .ami_selector_terms
        .iter()
        .find_map(|t| t.alias.as_ref())
    {
        return alias
            .split('@')
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
    }
    nc.spec
        .ami_family
        .and_then(|f| serde_json::to_value(f).ok())
        .and_then(|v| v.as_str().map(str::to_ascii_lowercase))
        .unwrap_or_default()
}

/// A duration hashes by its value (`60m` = `1h`); `Never` and unparsable text as written.
fn duration_value(s: &str) -> Value {
    match parse_duration(s) {
        Some(secs) => json!(secs),
        None => Value::String(s.to_string()),
    }
}

fn digest(v: &Value) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in canonical(v).bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h.to_string()
}

/// Compact JSON with object keys sorted, zero values dropped and arrays sorted (as sets).
fn canonical(v: &Value) -> String {
    match prune(v) {
        Some(v) => write(&v),
        None => String::new(),
    }
}

/// Drops null, false, 0, "", [] and {} (recursively), like hashstructure's IgnoreZeroValue.
fn prune(v: &Value) -> Option<Value> {
    match v {
        Value::Null | Value::Bool(false) => None,
        Value::Number(n) if n.as_f64() == Some(0.0) => None,
        Value::String(s) if s.is_empty() => None,
        Value::Array(a) => {
            let items: Vec<Value> = a.iter().filter_map(prune).collect();
            (!items.is_empty()).then_some(Value::Array(items))
        }
        Value::Object(m) => {
            let kept: Map<String, Value> = m
                .iter()
                .filter_map(|(k, v)| prune(v).map(|v| (k.clone(), v)))
                .collect();
            (!kept.is_empty()).then_some(Value::Object(kept))
        }
        other => Some(other.clone()),
    }
}

fn write(v: &Value) -> String {
    match v {
        Value::Array(a) => {
            let mut items: Vec<String> = a.iter().map(write).collect();
            items.sort();
            format!("[{}]", items.join(","))
        }
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::String(k.clone()), write(&m[k])))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
#[path = "hash_tests.rs"]
mod tests;
