//! Direct seeding of objects, bypassing HTTP (for harnesses and large benchmarks).

use crate::error::ApiError;
use crate::meta::{self, meta_str};
use crate::state::State;
use crate::store::key;
use crate::write::res_key;
use serde_json::{Value, json};

/// Stores `obj` as-is (with uid, creationTimestamp, generation filled), keeping `.status`.
pub fn seed(state: &State, mut obj: Value) -> Result<Value, ApiError> {
    let api_version = obj["apiVersion"].as_str().unwrap_or_default().to_string();
    let kind = obj["kind"].as_str().unwrap_or_default().to_string();
    let (group, version) = api_version
        .rsplit_once('/')
        .unwrap_or(("", api_version.as_str()));
    let res = state
        .registry
        .all()
        .iter()
        .find(|r| r.group == group && r.version == version && r.kind == kind)
        .ok_or_else(ApiError::no_route)?;
    let name = meta_str(&obj, "name").to_string();
    if name.is_empty() {
        return Err(ApiError::bad_request("seeded objects need metadata.name"));
    }
    let ns = if res.namespaced {
        let ns = meta_str(&obj, "namespace");
        if ns.is_empty() {
            "default".to_string()
        } else {
            ns.to_string()
        }
    } else {
        String::new()
    };
    if res.namespaced {
        obj["metadata"]["namespace"] = json!(ns);
    }
    if meta_str(&obj, "uid").is_empty() {
        obj["metadata"]["uid"] = json!(meta::uid());
    }
    if meta_str(&obj, "creationTimestamp").is_empty() {
        obj["metadata"]["creationTimestamp"] = json!(state.store().now());
    }
    if res.generation && obj["metadata"]["generation"].is_null() {
        obj["metadata"]["generation"] = json!(1);
    }
    let mut st = state.store();
    Ok((*st.put(key(&res_key(res), &ns, &name), obj)).clone())
}
