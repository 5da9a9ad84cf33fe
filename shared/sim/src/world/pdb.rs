//! The disruption controller of kube-controller-manager, as far as Kerf needs it: every
//! PodDisruptionBudget's status (`expectedPods`, `currentHealthy`, `desiredHealthy`,
//! `disruptionsAllowed`, `observedGeneration`, `disruptedPods`) kept current from the pods it
//! selects and the workloads that own them ([`crate::budget`]), so a budget that allows
//! disruptions says so before any eviction asks, and the server's evictions go by it as
//! kube-apiserver's do. Budgets whose status a test pins ([`crate::eviction::PIN_STATUS`])
//! are left alone.

use jiff::Timestamp;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::Client;
use kube::api::{Api, Patch, PatchParams};
use serde_json::{Map, Value, json};

use crate::budget::{self, Inputs};
use crate::cached::Cached;
use crate::eviction::PIN_STATUS;

const FIELDS: [&str; 5] = [
    "observedGeneration",
    "expectedPods",
    "currentHealthy",
    "desiredHealthy",
    "disruptionsAllowed",
];

fn ns_of(v: &Value) -> &str {
    v["metadata"]["namespace"].as_str().unwrap_or("default")
}

/// The merge patch that turns `old` status into `new`: the controller's fields, and the
/// disrupted pods (an entry no longer there is removed with `null`); `None` when equal.
fn status_patch(old: &Value, new: &Value) -> Option<Value> {
    let mut patch: Map<String, Value> = FIELDS
        .iter()
        .filter(|f| old[**f] != new[**f])
        .map(|f| (f.to_string(), new[*f].clone()))
        .collect();
    // An absent map and an empty one are the same (kube-apiserver omits an empty one).
    let map = |v: &Value| v["disruptedPods"].as_object().cloned().unwrap_or_default();
    let (was, now) = (map(old), map(new));
    if was != now {
        let mut pods = now;
        for k in was.keys() {
            pods.entry(k.clone()).or_insert(Value::Null);
        }
        patch.insert("disruptedPods".into(), Value::Object(pods));
    }
    (!patch.is_empty()).then(|| json!({ "status": patch }))
}

/// Brings every budget's status up to date at `now`; returns how many changed.
pub async fn step(client: &Client, reads: &Cached, now: Timestamp) -> Result<usize, kube::Error> {
    let pdbs = reads.list::<Value>("policy/poddisruptionbudgets")?;
    let pods = reads.list::<Value>("/pods")?;
    let mut workloads = Vec::new();
    for res in budget::WORKLOADS {
        workloads.push(reads.list::<Value>(res)?);
    }
    let mut changed = 0;
    for pdb in pdbs.iter() {
        if pdb["metadata"]["annotations"][PIN_STATUS] == "true" {
            continue;
        }
        let ns = ns_of(pdb);
        let pods: Vec<&Value> = pods.iter().filter(|p| ns_of(p) == ns).collect();
        let workloads: Vec<&Value> = workloads
            .iter()
            .flat_map(|l| l.iter())
            .filter(|w| ns_of(w) == ns)
            .collect();
        let inputs = Inputs {
            pods: &pods,
            workloads: &workloads,
            now,
        };
        let Some(patch) = status_patch(&pdb["status"], &budget::status(pdb, inputs)) else {
            continue;
        };
        let name = pdb["metadata"]["name"].as_str().unwrap_or_default();
        Api::<PodDisruptionBudget>::namespaced(client.clone(), ns)
            .patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await?;
        changed += 1;
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_map_of_disrupted_pods_is_no_change() {
        let old = json!({"disruptionsAllowed": 1, "disruptedPods": {}});
        assert_eq!(status_patch(&old, &json!({"disruptionsAllowed": 1})), None);
    }

    #[test]
    fn a_pod_no_longer_disrupted_is_removed_with_null() {
        let old = json!({"disruptionsAllowed": 0, "disruptedPods": {"a": "t1", "b": "t2"}});
        let new = json!({"disruptionsAllowed": 1, "disruptedPods": {"b": "t2"}});
        assert_eq!(
            status_patch(&old, &new),
            Some(json!({"status": {"disruptionsAllowed": 1,
                "disruptedPods": {"a": null, "b": "t2"}}}))
        );
    }
}
