//! The disruption controller of kube-controller-manager, as far as Kerf needs it: every
//! PodDisruptionBudget's status (`expectedPods`, `currentHealthy`, `desiredHealthy`,
//! `disruptionsAllowed`, `observedGeneration`) kept current from the pods it selects, so a
//! budget that allows disruptions says so before any eviction asks. Budgets whose status a
//! test pins ([`crate::eviction::PIN_STATUS`]) are left alone.

use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::Client;
use kube::api::{Api, Patch, PatchParams};
use serde_json::{Value, json};

use crate::cached::Cached;
use crate::eviction::{PIN_STATUS, pdb_status};

const FIELDS: [&str; 5] = [
    "observedGeneration",
    "expectedPods",
    "currentHealthy",
    "desiredHealthy",
    "disruptionsAllowed",
];

/// Brings every budget's status up to date; returns how many changed.
pub async fn step(client: &Client, reads: &Cached) -> Result<usize, kube::Error> {
    let pdbs = reads.list::<Value>("policy/poddisruptionbudgets")?;
    let pods = reads.list::<Value>("/pods")?;
    let mut changed = 0;
    for pdb in pdbs.iter() {
        if pdb["metadata"]["annotations"][PIN_STATUS] == "true" {
            continue;
        }
        let ns = pdb["metadata"]["namespace"].as_str().unwrap_or("default");
        let in_ns = pods
            .iter()
            .filter(|p| p["metadata"]["namespace"].as_str().unwrap_or("default") == ns);
        let status = pdb_status(pdb, in_ns);
        if FIELDS.iter().all(|f| status[f] == pdb["status"][f]) {
            continue;
        }
        let patch: serde_json::Map<String, Value> = FIELDS
            .iter()
            .map(|f| (f.to_string(), status[f].clone()))
            .collect();
        let name = pdb["metadata"]["name"].as_str().unwrap_or_default();
        Api::<PodDisruptionBudget>::namespaced(client.clone(), ns)
            .patch_status(
                name,
                &PatchParams::default(),
                &Patch::Merge(&json!({"status": patch})),
            )
            .await?;
        changed += 1;
    }
    Ok(changed)
}
