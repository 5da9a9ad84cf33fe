//! kube-apiserver's columns for the built-in kinds `kubectl get` shows most: pods, nodes,
//! Deployments, ReplicaSets, DaemonSets, PodDisruptionBudgets, Events, namespaces, Leases
//! and ConfigMaps. Columns of priority 1 appear with `-o wide`.

use jiff::Timestamp;
use serde_json::{Value, json};

use super::{age_since, lookup};

/// One column: name, type, priority and how to compute its cell.
pub struct Column {
    pub name: &'static str,
    pub kind: &'static str,
    pub priority: i64,
    pub cell: fn(&Value, Timestamp) -> Value,
}

const fn col(name: &'static str, cell: fn(&Value, Timestamp) -> Value) -> Column {
    Column {
        name,
        kind: "string",
        priority: 0,
        cell,
    }
}

const fn wide(name: &'static str, cell: fn(&Value, Timestamp) -> Value) -> Column {
    Column {
        name,
        kind: "string",
        priority: 1,
        cell,
    }
}

fn text(o: &Value, path: &str) -> Value {
    match lookup(o, path) {
        Some(Value::String(s)) if !s.is_empty() => json!(s),
        Some(v @ (Value::Number(_) | Value::Bool(_))) => v.clone(),
        _ => json!("<none>"),
    }
}

fn int(o: &Value, path: &str) -> i64 {
    lookup(o, path).and_then(Value::as_i64).unwrap_or(0)
}

fn name(o: &Value, _: Timestamp) -> Value {
    o["metadata"]["name"].clone()
}

fn created(o: &Value, now: Timestamp) -> Value {
    json!(age_since(
        o["metadata"]["creationTimestamp"]
            .as_str()
            .unwrap_or_default(),
        now
    ))
}

fn containers(o: &Value, field: &str) -> Value {
    let list = o["spec"]["template"]["spec"]["containers"].as_array();
    let names: Vec<&str> = list
        .into_iter()
        .flatten()
        .filter_map(|c| c[field].as_str())
        .collect();
    json!(names.join(","))
}

/// `k=v,k2=v2` of a string map, `<none>` when empty or absent.
fn pairs(map: &Value) -> Value {
    let pairs: Vec<String> = map
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
        .collect();
    json!(if pairs.is_empty() {
        "<none>".into()
    } else {
        pairs.join(",")
    })
}

fn pod_ready(o: &Value) -> (usize, usize) {
    let statuses = o["status"]["containerStatuses"].as_array();
    let total = o["spec"]["containers"].as_array().map_or(0, Vec::len);
    let ready = statuses
        .into_iter()
        .flatten()
        .filter(|c| c["ready"] == true)
        .count();
    (ready, total)
}

fn pod_status(o: &Value) -> Value {
    if o["metadata"]["deletionTimestamp"].is_string() {
        return json!("Terminating");
    }
    let waiting = o["status"]["containerStatuses"]
        .as_array()
        .into_iter()
        .flatten()
        .find_map(|c| c["state"]["waiting"]["reason"].as_str());
    let phase = o["status"]["phase"].as_str().unwrap_or("Pending");
    json!(waiting.unwrap_or(phase))
}

fn restarts(o: &Value) -> i64 {
    let statuses = o["status"]["containerStatuses"].as_array();
    statuses
        .into_iter()
        .flatten()
        .map(|c| c["restartCount"].as_i64().unwrap_or(0))
        .sum()
}

fn node_status(o: &Value) -> Value {
    let ready = match lookup(o, r#".status.conditions[?(@.type=="Ready")].status"#) {
        Some(Value::String(s)) if s == "True" => "Ready",
        _ => "NotReady",
    };
    let cordoned = o["spec"]["unschedulable"] == true;
    json!(if cordoned {
        format!("{ready},SchedulingDisabled")
    } else {
        ready.to_string()
    })
}

fn roles(o: &Value) -> Value {
    let labels = o["metadata"]["labels"].as_object();
    let roles: Vec<&str> = labels
        .into_iter()
        .flatten()
        .filter_map(|(k, _)| k.strip_prefix("node-role.kubernetes.io/"))
        .collect();
    json!(if roles.is_empty() {
        "<none>".into()
    } else {
        roles.join(",")
    })
}

fn address(o: &Value, kind: &str) -> Value {
    let list = o["status"]["addresses"].as_array();
    let found = list
        .into_iter()
        .flatten()
        .find(|a| a["type"] == kind)
        .and_then(|a| a["address"].as_str());
    json!(found.unwrap_or("<none>"))
}

fn involved(o: &Value) -> Value {
    let i = &o["involvedObject"];
    json!(format!(
        "{}/{}",
        i["kind"].as_str().unwrap_or_default().to_lowercase(),
        i["name"].as_str().unwrap_or_default()
    ))
}

fn last_seen(o: &Value, now: Timestamp) -> Value {
    let at = ["lastTimestamp", "eventTime", "firstTimestamp"]
        .iter()
        .find_map(|k| o[*k].as_str())
        .or_else(|| o["metadata"]["creationTimestamp"].as_str())
        .unwrap_or_default();
    json!(age_since(at, now))
}

static PODS: &[Column] = &[
    col("Name", name),
    col("Ready", |o, _| {
        let (r, t) = pod_ready(o);
        json!(format!("{r}/{t}"))
    }),
    col("Status", |o, _| pod_status(o)),
    col("Restarts", |o, _| json!(restarts(o))),
    col("Age", created),
    wide("IP", |o, _| text(o, ".status.podIP")),
    wide("Node", |o, _| text(o, ".spec.nodeName")),
    wide("Nominated Node", |o, _| {
        text(o, ".status.nominatedNodeName")
    }),
    wide("Readiness Gates", |_, _| json!("<none>")),
];

static NODES: &[Column] = &[
    col("Name", name),
    col("Status", |o, _| node_status(o)),
    col("Roles", |o, _| roles(o)),
    col("Age", created),
    col("Version", |o, _| text(o, ".status.nodeInfo.kubeletVersion")),
    wide("Internal-IP", |o, _| address(o, "InternalIP")),
    wide("External-IP", |o, _| address(o, "ExternalIP")),
    wide("OS-Image", |o, _| text(o, ".status.nodeInfo.osImage")),
    wide("Kernel-Version", |o, _| {
        text(o, ".status.nodeInfo.kernelVersion")
    }),
    wide("Container-Runtime", |o, _| {
        text(o, ".status.nodeInfo.containerRuntimeVersion")
    }),
];

static DEPLOYMENTS: &[Column] = &[
    col("Name", name),
    col("Ready", |o, _| {
        json!(format!(
            "{}/{}",
            int(o, ".status.readyReplicas"),
            int(o, ".spec.replicas")
        ))
    }),
    col("Up-to-date", |o, _| {
        json!(int(o, ".status.updatedReplicas"))
    }),
    col("Available", |o, _| {
        json!(int(o, ".status.availableReplicas"))
    }),
    col("Age", created),
    wide("Containers", |o, _| containers(o, "name")),
    wide("Images", |o, _| containers(o, "image")),
    wide("Selector", |o, _| {
        pairs(&o["spec"]["selector"]["matchLabels"])
    }),
];

static REPLICASETS: &[Column] = &[
    col("Name", name),
    col("Desired", |o, _| json!(int(o, ".spec.replicas"))),
    col("Current", |o, _| json!(int(o, ".status.replicas"))),
    col("Ready", |o, _| json!(int(o, ".status.readyReplicas"))),
    col("Age", created),
    wide("Containers", |o, _| containers(o, "name")),
    wide("Images", |o, _| containers(o, "image")),
    wide("Selector", |o, _| {
        pairs(&o["spec"]["selector"]["matchLabels"])
    }),
];

static DAEMONSETS: &[Column] = &[
    col("Name", name),
    col("Desired", |o, _| {
        json!(int(o, ".status.desiredNumberScheduled"))
    }),
    col("Current", |o, _| {
        json!(int(o, ".status.currentNumberScheduled"))
    }),
    col("Ready", |o, _| json!(int(o, ".status.numberReady"))),
    col("Up-to-date", |o, _| {
        json!(int(o, ".status.updatedNumberScheduled"))
    }),
    col("Available", |o, _| json!(int(o, ".status.numberAvailable"))),
    col("Node Selector", |o, _| {
        pairs(&o["spec"]["template"]["spec"]["nodeSelector"])
    }),
    col("Age", created),
];

static PDBS: &[Column] = &[
    col("Name", name),
    col("Min Available", |o, _| text(o, ".spec.minAvailable")),
    col("Max Unavailable", |o, _| text(o, ".spec.maxUnavailable")),
    col("Allowed Disruptions", |o, _| {
        json!(int(o, ".status.disruptionsAllowed"))
    }),
    col("Age", created),
];

static EVENTS: &[Column] = &[
    col("Last Seen", last_seen),
    col("Type", |o, _| text(o, ".type")),
    col("Reason", |o, _| text(o, ".reason")),
    col("Object", |o, _| involved(o)),
    col("Message", |o, _| text(o, ".message")),
    wide("Source", |o, _| text(o, ".source.component")),
    wide("Count", |o, _| json!(int(o, ".count").max(1))),
    wide("Name", name),
];

static NAMESPACES: &[Column] = &[
    col("Name", name),
    col("Status", |o, _| match text(o, ".status.phase") {
        Value::String(s) if s != "<none>" => json!(s),
        _ => json!("Active"),
    }),
    col("Age", created),
];

static LEASES: &[Column] = &[
    col("Name", name),
    col("Holder", |o, _| text(o, ".spec.holderIdentity")),
    col("Age", created),
];

static CONFIGMAPS: &[Column] = &[
    col("Name", name),
    col("Data", |o, _| {
        json!(o["data"].as_object().map_or(0, |m| m.len()))
    }),
    col("Age", created),
];

/// The columns of a built-in kind, `None` for the others (NAME, printer columns, AGE).
pub fn columns(group: &str, plural: &str) -> Option<&'static [Column]> {
    Some(match (group, plural) {
        ("", "pods") => PODS,
        ("", "nodes") => NODES,
        ("apps", "deployments") => DEPLOYMENTS,
        ("apps", "replicasets") => REPLICASETS,
        ("apps", "daemonsets") => DAEMONSETS,
        ("policy", "poddisruptionbudgets") => PDBS,
        ("", "events") => EVENTS,
        ("", "namespaces") => NAMESPACES,
        ("coordination.k8s.io", "leases") => LEASES,
        ("", "configmaps") => CONFIGMAPS,
        _ => return None,
    })
}
