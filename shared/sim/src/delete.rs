//! DELETE: uid/resourceVersion preconditions, finalizers and deletionTimestamp, graceful
//! pod deletion, and the apiserver's reply shapes (the object, or a Success Status).

use crate::error::{ApiError, success_status};
use crate::meta::{deleting, finalizers, meta_str};
use crate::registry::ResourceInfo;
use crate::store::{Key, Store};
use crate::write::obj_key;
use serde_json::{Value, json};

/// Options of a DELETE (the body of the request).
#[derive(Debug, Default, Clone)]
pub struct DeleteOptions {
    /// `preconditions.uid`.
    pub uid: Option<String>,
    /// `preconditions.resourceVersion`.
    pub resource_version: Option<String>,
    /// `gracePeriodSeconds`.
    pub grace: Option<i64>,
}

impl DeleteOptions {
    /// Parses a DeleteOptions body (absent or empty is fine).
    pub fn from_body(v: &Value) -> Self {
        let s = |x: &Value| x.as_str().map(str::to_string);
        Self {
            uid: s(&v["preconditions"]["uid"]),
            resource_version: s(&v["preconditions"]["resourceVersion"]),
            grace: v["gracePeriodSeconds"].as_i64(),
        }
    }
}

/// DELETE on an object. `graceful_pods` leaves bound pods Terminating.
pub fn delete(
    st: &mut Store,
    res: &ResourceInfo,
    ns: &str,
    name: &str,
    opts: &DeleteOptions,
    graceful_pods: bool,
) -> Result<Value, ApiError> {
    let k = obj_key(res, ns, name);
    let old = st
        .get(&k)
        .ok_or_else(|| ApiError::not_found(&res.res_name(), name))?;
    check_preconditions(res, &old, name, opts)?;
    let is_pod = res.group.is_empty() && res.plural == "pods";
    if !finalizers(&old).is_empty() || (is_pod && graceful_pods && pod_needs_grace(&old, opts)) {
        return Ok(mark_deleting(st, k, &old, is_pod, opts));
    }
    if is_pod {
        // As kube-apiserver: a pod deleted with no grace period is first marked deleting
        // (watchers see it), then removed; the reply is the marked pod.
        let marked = if deleting(&old) {
            (*old).clone()
        } else {
            let zero = DeleteOptions {
                grace: Some(0),
                ..opts.clone()
            };
            mark_deleting(st, k.clone(), &old, true, &zero)
        };
        st.remove(&k);
        return Ok(marked);
    }
    st.remove(&k);
    if returns_deleted(res) {
        return Ok((*old).clone());
    }
    let mut details = json!({"name": name, "kind": res.plural, "uid": meta_str(&old, "uid")});
    if !res.group.is_empty() {
        details["group"] = json!(res.group);
    }
    Ok(success_status(200, Some(details)))
}

/// The kinds whose kube-apiserver registry has `ReturnDeletedObject: true`: a delete answers
/// with the object instead of a Success Status (pods are answered above).
const RETURNS_DELETED: [(&str, &str); 7] = [
    ("", "serviceaccounts"),
    ("", "persistentvolumes"),
    ("", "persistentvolumeclaims"),
    ("storage.k8s.io", "storageclasses"),
    ("storage.k8s.io", "csinodes"),
    ("storage.k8s.io", "csidrivers"),
    ("storage.k8s.io", "volumeattachments"),
];

fn returns_deleted(res: &ResourceInfo) -> bool {
    RETURNS_DELETED.contains(&(res.group.as_str(), res.plural.as_str()))
}

fn check_preconditions(
    res: &ResourceInfo,
    old: &Value,
    name: &str,
    o: &DeleteOptions,
) -> Result<(), ApiError> {
    if let Some(uid) = &o.uid
        && uid != meta_str(old, "uid")
    {
        let what = format!(
            "UID in precondition: {uid}, UID in object meta: {}",
            meta_str(old, "uid")
        );
        return Err(ApiError::precondition(&res.res_name(), name, &what));
    }
    if let Some(rv) = &o.resource_version
        && rv != meta_str(old, "resourceVersion")
    {
        let what = format!(
            "ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {}",
            meta_str(old, "resourceVersion")
        );
        return Err(ApiError::precondition(&res.res_name(), name, &what));
    }
    Ok(())
}

/// Whether deleting `pod` leaves it Terminating, as kube-apiserver decides: its grace period
/// (the request's, else the pod's own, 30 s when unset) is zero for a pod that is not bound
/// or has finished, and a zero grace period removes the pod at once.
fn pod_needs_grace(pod: &Value, o: &DeleteOptions) -> bool {
    let bound = pod["spec"]["nodeName"]
        .as_str()
        .is_some_and(|n| !n.is_empty());
    let phase = pod["status"]["phase"].as_str().unwrap_or_default();
    let grace = o
        .grace
        .or(pod["spec"]["terminationGracePeriodSeconds"].as_i64())
        .unwrap_or(30);
    bound && !matches!(phase, "Succeeded" | "Failed") && grace != 0
}

fn mark_deleting(st: &mut Store, k: Key, old: &Value, is_pod: bool, o: &DeleteOptions) -> Value {
    if deleting(old) {
        return old.clone();
    }
    let mut new = old.clone();
    let grace = if is_pod {
        o.grace
            .or(old["spec"]["terminationGracePeriodSeconds"].as_i64())
            .unwrap_or(30)
    } else {
        0
    };
    new["metadata"]["deletionTimestamp"] = json!(st.now());
    new["metadata"]["deletionGracePeriodSeconds"] = json!(grace);
    (*st.put(k, new)).clone()
}
