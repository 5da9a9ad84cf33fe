//! The `pods/binding` subresource, as kube-scheduler binds a pod: `spec.nodeName` is set
//! once (a bound pod cannot be bound again: 409) and `PodScheduled=True` recorded.

use crate::error::{ApiError, success_status};
use crate::meta::meta_str;
use crate::registry::ResourceInfo;
use crate::store::{Store, key};
use serde_json::{Value, json};

/// Handles `POST .../pods/{name}/binding`; returns the 201 Status body.
pub fn bind(
    st: &mut Store,
    pods: &ResourceInfo,
    ns: &str,
    name: &str,
    body: &Value,
) -> Result<Value, ApiError> {
    let node = body["target"]["name"].as_str().unwrap_or_default();
    if node.is_empty() {
        return Err(ApiError::bad_request("Binding target.name is required"));
    }
    let k = key("/pods", ns, name);
    let pod = st
        .get(&k)
        .ok_or_else(|| ApiError::not_found(&pods.res_name(), name))?;
    let uid = meta_str(body, "uid");
    if !uid.is_empty() && uid != meta_str(&pod, "uid") {
        return Err(ApiError::conflict(&pods.res_name(), name));
    }
    let current = pod["spec"]["nodeName"].as_str().unwrap_or_default();
    if !current.is_empty() {
        return Err(ApiError::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on pods/binding \"{name}\": pod {name} is already assigned to node \"{current}\""
            ),
            None,
        ));
    }
    let mut new = (*pod).clone();
    new["spec"]["nodeName"] = json!(node);
    let now = st.now();
    let mut conds: Vec<Value> = new["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|c| c["type"] != "PodScheduled")
        .collect();
    conds.push(json!({"type": "PodScheduled", "status": "True", "lastTransitionTime": now}));
    new["status"]["conditions"] = json!(conds);
    st.put(k, new);
    Ok(success_status(201, None))
}
