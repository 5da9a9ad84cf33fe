//! The `pods/eviction` subresource with PodDisruptionBudget enforcement, following
//! `pkg/registry/core/pod/storage/eviction.go`. With a disruption controller keeping budgets'
//! status (the simulated world runs one), an eviction goes by the stored status as
//! kube-apiserver's does; without one, the status is computed at each eviction
//! ([`crate::budget`]) unless the PDB carries the annotation [`PIN_STATUS`] (then its stored
//! status is used as-is).

use crate::budget::{self, is_ready};
use crate::delete::{self, DeleteOptions};
use crate::error::{ApiError, success_status};
use crate::meta::{deleting, meta_str};
use crate::registry::ResourceInfo;
use crate::selector::LabelSelector;
use crate::store::{Store, key};
use serde_json::{Value, json};
use std::sync::Arc;

/// Annotation on a PDB that makes the sim trust its stored `.status`.
pub const PIN_STATUS: &str = "sim.kerf.dev/pin-status";

const PDB_RES: &str = "policy/poddisruptionbudgets";
const BLOCKED: &str = "Cannot evict pod as it would violate the pod's disruption budget.";

/// How the server carries out evictions.
#[derive(Debug, Clone, Copy, Default)]
pub struct Evictions {
    /// Leave bound, running pods Terminating ([`crate::state::SimOptions`]).
    pub graceful: bool,
    /// Go by the budgets' stored status (a disruption controller keeps it current).
    pub stored_status: bool,
}

/// Handles `POST .../pods/{name}/eviction`; returns the 201 Status body.
pub fn evict(
    st: &mut Store,
    pods: &ResourceInfo,
    ns: &str,
    name: &str,
    body: &Value,
    how: Evictions,
) -> Result<Value, ApiError> {
    let graceful = how.graceful;
    let body_name = meta_str(body, "name");
    if !body_name.is_empty() && body_name != name {
        return Err(ApiError::bad_request(format!(
            "name in URL does not match name in Eviction object: {name} != {body_name}"
        )));
    }
    let opts_body = body
        .get("deleteOptions")
        .or_else(|| body.get("delete_options"));
    let opts = DeleteOptions::from_body(opts_body.unwrap_or(&Value::Null));
    let pod = st
        .get(&key("/pods", ns, name))
        .ok_or_else(|| ApiError::not_found(&pods.res_name(), name))?;
    let phase = pod["status"]["phase"].as_str().unwrap_or_default();
    if matches!(phase, "Pending" | "Succeeded" | "Failed") || deleting(&pod) {
        delete::delete(st, pods, ns, name, &opts, graceful)?;
        return Ok(success_status(201, None));
    }
    let pdbs = matching_pdbs(st, ns, &pod);
    if pdbs.len() > 1 {
        return Err(ApiError::internal_plain(
            "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
        ));
    }
    if let Some(pdb) = pdbs.into_iter().next() {
        check_budget(st, ns, &pod, &pdb, how.stored_status)?;
    }
    delete::delete(st, pods, ns, name, &opts, graceful)?;
    Ok(success_status(201, None))
}

fn matching_pdbs(st: &Store, ns: &str, pod: &Value) -> Vec<Arc<Value>> {
    st.range(PDB_RES, Some(ns), None)
        .filter(|(_, pdb)| {
            LabelSelector::from_object(&pdb["spec"]["selector"]).is_some_and(|s| s.matches(pod))
        })
        .map(|(_, v)| v.clone())
        .collect()
}

/// The status the disruption controller would compute now.
fn computed_status(st: &Store, ns: &str, pdb: &Value) -> Value {
    let in_ns = |res| st.range(res, Some(ns), None).map(|(_, v)| v.clone());
    let pods: Vec<Arc<Value>> = in_ns("/pods").collect();
    let workloads: Vec<Arc<Value>> = budget::WORKLOADS.into_iter().flat_map(in_ns).collect();
    let pods: Vec<&Value> = pods.iter().map(|p| p.as_ref()).collect();
    let workloads: Vec<&Value> = workloads.iter().map(|w| w.as_ref()).collect();
    let now = st.now().parse().unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    budget::status(
        pdb,
        budget::Inputs {
            pods: &pods,
            workloads: &workloads,
            now,
        },
    )
}

fn blocked(message: String, retry_after: Option<u64>) -> ApiError {
    let mut details = json!({"causes": [{"reason": "DisruptionBudget", "message": message}]});
    if let Some(s) = retry_after {
        details["retryAfterSeconds"] = json!(s);
    }
    let mut e = ApiError::new(429, "TooManyRequests", BLOCKED.into(), Some(details));
    e.retry_after = retry_after;
    e
}

fn check_budget(
    st: &mut Store,
    ns: &str,
    pod: &Value,
    pdb: &Value,
    stored: bool,
) -> Result<(), ApiError> {
    let pdb_name = meta_str(pdb, "name").to_string();
    let pinned = pdb["metadata"]["annotations"][PIN_STATUS] == "true";
    let status = if pinned || stored {
        pdb["status"].clone()
    } else {
        computed_status(st, ns, pdb)
    };
    let generation = pdb["metadata"]["generation"].as_i64().unwrap_or(0);
    if status["observedGeneration"].as_i64().unwrap_or(0) < generation {
        let msg =
            format!("The disruption budget {pdb_name} is still being processed by the server.");
        return Err(blocked(msg, Some(10)));
    }
    let healthy = status["currentHealthy"].as_i64().unwrap_or(0);
    let desired = status["desiredHealthy"].as_i64().unwrap_or(0);
    if !is_ready(pod) {
        let always = pdb["spec"]["unhealthyPodEvictionPolicy"] == "AlwaysAllow";
        if always || (healthy >= desired && desired > 0) {
            return Ok(());
        }
    }
    let allowed = status["disruptionsAllowed"].as_i64().unwrap_or(0);
    if allowed <= 0 {
        let msg = format!(
            "The disruption budget {pdb_name} needs {desired} healthy pods and has {healthy} currently"
        );
        return Err(blocked(msg, None));
    }
    let mut new = pdb.clone();
    new["status"] = status;
    new["status"]["disruptionsAllowed"] = json!(allowed - 1);
    new["status"]["disruptedPods"][meta_str(pod, "name")] = json!(st.now());
    st.put(key(PDB_RES, ns, &pdb_name), new);
    Ok(())
}
