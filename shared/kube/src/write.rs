//! Shared write helpers: conditional merge patches, deletes, finalizers.

use crate::error::{ClusterError, KubeResult};
use either::Either;
use kerf_control::ports::Deleted;
use kube::Resource;
use kube::api::{Api, DeleteParams, Patch, PatchParams, Preconditions};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::fmt::Debug;

use crate::retry::on_conflict;

/// A merge patch carrying `metadata.resourceVersion`, so the server rejects it (409) if the
/// object changed since it was read.
pub async fn patch_if_unchanged<K>(
    api: &Api<K>,
    name: &str,
    resource_version: &str,
    mut patch: Value,
    status: bool,
) -> Result<K, ClusterError>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    patch["metadata"]["resourceVersion"] = json!(resource_version);
    let pp = PatchParams::default();
    let r = if status {
        api.patch_status(name, &pp, &Patch::Merge(&patch)).await
    } else {
        api.patch(name, &pp, &Patch::Merge(&patch)).await
    };
    r.kube()
}

/// Deletes an object, optionally only if its uid matches; 404 is `AlreadyGone`.
pub async fn delete<K>(api: &Api<K>, name: &str, uid: Option<&str>) -> Result<Deleted, ClusterError>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    let mut dp = DeleteParams::default();
    if let Some(uid) = uid {
        dp.preconditions = Some(Preconditions {
            uid: Some(uid.to_string()),
            resource_version: None,
        });
    }
    match api.delete(name, &dp).await {
        Ok(Either::Left(obj)) if obj.meta().deletion_timestamp.is_some() => {
            Ok(Deleted::Terminating)
        }
        Ok(_) => Ok(Deleted::Gone),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(Deleted::AlreadyGone),
        Err(e) => Err(crate::error::classify(e)),
    }
}

/// Adds `finalizer` if missing (read, then a conditional patch; retried on conflict).
pub async fn add_finalizer<K>(api: &Api<K>, name: &str, finalizer: &str) -> Result<(), ClusterError>
where
    K: Resource + Clone + DeserializeOwned + Serialize + Debug,
{
    on_conflict(|| async {
        let obj = api.get(name).await.kube()?;
        let mut list = obj.meta().finalizers.clone().unwrap_or_default();
        if list.iter().any(|f| f == finalizer) {
            return Ok(());
        }
        list.push(finalizer.to_string());
        let rv = obj.meta().resource_version.clone().unwrap_or_default();
        let patch = json!({"metadata": {"finalizers": list}});
        patch_if_unchanged(api, name, &rv, patch, false)
            .await
            .map(|_| ())
    })
    .await
}

/// Removes `finalizer`. With `expected_rv`, fails with Conflict if the object changed since
/// the caller read it; a missing object or finalizer is success (idempotent).
pub async fn remove_finalizer<K>(
    api: &Api<K>,
    name: &str,
    finalizer: &str,
    expected_rv: Option<&str>,
) -> Result<(), ClusterError>
where
    K: Resource + Clone + DeserializeOwned + Serialize + Debug,
{
    let Some(obj) = api.get_opt(name).await.kube()? else {
        return Ok(());
    };
    let current_rv = obj.meta().resource_version.clone().unwrap_or_default();
    let list = obj.meta().finalizers.clone().unwrap_or_default();
    if !list.iter().any(|f| f == finalizer) {
        return Ok(());
    }
    if let Some(rv) = expected_rv
        && rv != current_rv
    {
        return Err(ClusterError::Conflict(format!(
            "{name}: resourceVersion {current_rv} is newer than the caller's {rv}"
        )));
    }
    let rest: Vec<&String> = list.iter().filter(|f| *f != finalizer).collect();
    let patch = json!({"metadata": {"finalizers": rest}});
    match patch_if_unchanged(api, name, &current_rv, patch, false).await {
        Err(ClusterError::NotFound(_)) => Ok(()),
        other => other.map(|_| ()),
    }
}
