//! A PodDisruptionBudget's status as kube-controller-manager's disruption controller computes
//! it (`pkg/controller/disruption`): the expected pods (the scale of the workloads that own
//! the selected pods for `maxUnavailable` and percentage `minAvailable`, the selected pods
//! themselves for an integer `minAvailable`), the healthy pods (Ready, not being deleted, not
//! evicted in the last two minutes), the desired healthy count and the disruptions allowed.
//! A pod no known workload owns makes the budget fail safe: no disruption allowed.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde_json::{Value, json};

use crate::meta::{deleting, meta_str};
use crate::selector::LabelSelector;

/// The workloads whose scale a budget counts, as the server stores them (`group/plural`).
pub const WORKLOADS: [&str; 3] = ["apps/deployments", "apps/replicasets", "apps/statefulsets"];

/// How long an evicted pod counts as disrupted while it has not been deleted
/// (the controller's `DeletionTimeout`).
pub const DELETION_TIMEOUT_SECS: i64 = 120;

/// What a budget's status is computed from: the pods and the workloads (Deployments,
/// ReplicaSets, StatefulSets, ReplicationControllers) of its namespace, and the time.
#[derive(Debug, Clone, Copy)]
pub struct Inputs<'a> {
    pub pods: &'a [&'a Value],
    pub workloads: &'a [&'a Value],
    pub now: Timestamp,
}

/// Whether the pod's Ready condition is True.
pub(crate) fn is_ready(pod: &Value) -> bool {
    pod["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True")
}

/// `int` or `"N%"` of `total`, rounded up as the disruption controller does.
fn scaled(v: &Value, total: i64) -> Option<i64> {
    if let Some(i) = v.as_i64() {
        return Some(i);
    }
    let pct: i64 = v.as_str()?.strip_suffix('%')?.parse().ok()?;
    Some((pct * total + 99) / 100)
}

fn replicas(w: &Value) -> i64 {
    w["spec"]["replicas"].as_i64().unwrap_or(1)
}

fn controller_of(obj: &Value) -> Option<&Value> {
    obj["metadata"]["ownerReferences"]
        .as_array()?
        .iter()
        .find(|o| o["controller"] == true)
}

fn workload<'a>(workloads: &[&'a Value], kind: &str, name: &str) -> Option<&'a Value> {
    workloads
        .iter()
        .copied()
        .find(|w| w["kind"] == kind && meta_str(w, "name") == name)
}

/// The workload whose scale counts for `pod` (a ReplicaSet's Deployment when it has one),
/// as `(uid or kind/name, replicas)`; `None` when no known workload owns it.
fn scale_of(pod: &Value, workloads: &[&Value]) -> Option<(String, i64)> {
    let owner = controller_of(pod)?;
    let (kind, name) = (owner["kind"].as_str()?, owner["name"].as_str()?);
    let found = match kind {
        "ReplicaSet" => match workload(workloads, kind, name) {
            Some(rs) => match controller_of(rs) {
                Some(d) if d["kind"] == "Deployment" => {
                    workload(workloads, "Deployment", d["name"].as_str()?)
                }
                _ => Some(rs),
            },
            // The simulated Deployment controller names a ReplicaSet without storing it;
            // its pods carry the Deployment's uid.
            None => workloads
                .iter()
                .copied()
                .find(|w| w["kind"] == "Deployment" && w["metadata"]["uid"] == owner["uid"]),
        },
        "StatefulSet" | "ReplicationController" => workload(workloads, kind, name),
        _ => None,
    }?;
    let id = format!("{}/{}", found["kind"], meta_str(found, "name"));
    Some((id, replicas(found)))
}

/// The expected pod count from the owning workloads' scale, `None` when a pod has none.
fn expected_scale(pods: &[&Value], workloads: &[&Value]) -> Option<i64> {
    let mut seen = BTreeMap::new();
    for p in pods {
        let (id, n) = scale_of(p, workloads)?;
        seen.insert(id, n);
    }
    Some(seen.values().sum())
}

/// The evicted pods still counted as disrupted: still there, not being deleted, evicted less
/// than [`DELETION_TIMEOUT_SECS`] ago.
fn disrupted(pdb: &Value, pods: &[&Value], now: Timestamp) -> serde_json::Map<String, Value> {
    let map = pdb["status"]["disruptedPods"].as_object();
    let live = |name: &str| {
        pods.iter()
            .any(|p| meta_str(p, "name") == name && !deleting(p))
    };
    map.into_iter()
        .flatten()
        .filter(|(name, _)| live(name))
        .filter(|(_, at)| {
            let at = at.as_str().and_then(|s| s.parse::<Timestamp>().ok());
            at.is_some_and(|t| t.as_second() + DELETION_TIMEOUT_SECS > now.as_second())
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The budget's status now. The fields the controller does not own (`conditions`) are kept.
pub fn status(pdb: &Value, inputs: Inputs<'_>) -> Value {
    let sel = LabelSelector::from_object(&pdb["spec"]["selector"]);
    let pods: Vec<&Value> = inputs
        .pods
        .iter()
        .copied()
        .filter(|p| sel.as_ref().is_some_and(|s| s.matches(p)))
        .collect();
    let spec = &pdb["spec"];
    let counts = match (
        spec["minAvailable"].as_i64(),
        spec["maxUnavailable"].is_null(),
    ) {
        (Some(min), _) => Some((pods.len() as i64, min)),
        (None, false) => expected_scale(&pods, inputs.workloads).map(|expected| {
            let max = scaled(&spec["maxUnavailable"], expected).unwrap_or(0);
            (expected, (expected - max).max(0))
        }),
        (None, true) if spec["minAvailable"].is_string() => expected_scale(&pods, inputs.workloads)
            .map(|expected| {
                (
                    expected,
                    scaled(&spec["minAvailable"], expected).unwrap_or(0),
                )
            }),
        (None, true) => Some((0, 0)),
    };
    let mut status = pdb["status"].clone();
    status["observedGeneration"] = pdb["metadata"]["generation"].clone();
    let Some((expected, desired)) = counts else {
        // Fail safe, as the controller does when it cannot find a pod's scale.
        status["disruptionsAllowed"] = json!(0);
        return status;
    };
    let gone = disrupted(pdb, &pods, inputs.now);
    let healthy = pods
        .iter()
        .filter(|p| is_ready(p) && !deleting(p) && !gone.contains_key(meta_str(p, "name")))
        .count() as i64;
    let allowed = if expected <= 0 {
        0
    } else {
        (healthy - desired).max(0)
    };
    status["expectedPods"] = json!(expected);
    status["currentHealthy"] = json!(healthy);
    status["desiredHealthy"] = json!(desired);
    status["disruptionsAllowed"] = json!(allowed);
    if gone.is_empty() {
        if let Some(s) = status.as_object_mut() {
            s.remove("disruptedPods");
        }
    } else {
        status["disruptedPods"] = Value::Object(gone);
    }
    status
}

#[cfg(test)]
mod tests;
