//! Pod deletion with an explicit grace period and a UID precondition: the termination
//! grace period's last resort (it bypasses PodDisruptionBudgets, as Karpenter's forced
//! deletion does).

use k8s_openapi::api::core::v1::Pod;
use kube::Client;
use kube::api::{Api, DeleteParams, Preconditions};

use crate::error::ClusterError;
use kerf_control::ports::Deleted;

/// Deletes a pod; 404 is `AlreadyGone`, a UID mismatch (409) too.
pub async fn delete(
    client: &Client,
    namespace: &str,
    name: &str,
    uid: Option<&str>,
    grace_seconds: Option<i64>,
) -> Result<Deleted, ClusterError> {
    let api: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let mut dp = DeleteParams::default();
    if let Some(g) = grace_seconds {
        dp.grace_period_seconds = Some(g.max(0) as u32);
    }
    if let Some(uid) = uid {
        dp.preconditions = Some(Preconditions {
            uid: Some(uid.to_string()),
            resource_version: None,
        });
    }
    match api.delete(name, &dp).await {
        Ok(either::Either::Left(p)) if p.metadata.deletion_timestamp.is_some() => {
            Ok(Deleted::Terminating)
        }
        Ok(_) => Ok(Deleted::Gone),
        Err(kube::Error::Api(s)) if s.code == 404 || s.code == 409 => Ok(Deleted::AlreadyGone),
        Err(e) => Err(crate::error::classify(e)),
    }
}
