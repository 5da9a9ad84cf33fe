//! Pod eviction through the policy/v1 Eviction API, with a UID precondition like Karpenter.
//! A PodDisruptionBudget block comes back at once as `Blocked` (client retries are off).

use crate::error::ClusterError;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::Eviction;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{DeleteOptions, ObjectMeta, Preconditions};
use kerf_control::ports::Evicted;
use kube::Client;
use kube::api::{Api, PostParams};

const MULTIPLE_PDBS: &str = "more than one PodDisruptionBudget";

/// The Eviction body (proper camelCase `deleteOptions`, unlike `Api::evict`).
pub fn eviction(namespace: &str, name: &str, uid: Option<&str>) -> Eviction {
    Eviction {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            namespace: Some(namespace.to_string()),
            ..ObjectMeta::default()
        },
        delete_options: uid.map(|uid| DeleteOptions {
            preconditions: Some(Preconditions {
                uid: Some(uid.to_string()),
                resource_version: None,
            }),
            ..DeleteOptions::default()
        }),
    }
}

/// POSTs `pods/{name}/eviction`.
pub async fn evict(
    client: &Client,
    namespace: &str,
    name: &str,
    uid: Option<&str>,
) -> Result<Evicted, ClusterError> {
    let api: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let body = eviction(namespace, name, uid);
    let r = api
        .create_subresource::<_, kube::core::Status>(
            "eviction",
            name,
            &PostParams::default(),
            &body,
        )
        .await;
    match r {
        Ok(_) => Ok(Evicted::Evicted),
        Err(kube::Error::Api(s)) if s.code == 404 || s.code == 409 => Ok(Evicted::AlreadyGone),
        Err(kube::Error::Api(s)) if s.code == 500 && s.message.contains(MULTIPLE_PDBS) => {
            Err(ClusterError::Blocked {
                retry_after: None,
                message: s.message,
            })
        }
        Err(e) => Err(crate::error::classify(e)),
    }
}
