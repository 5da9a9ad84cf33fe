//! The unavailable-offerings cache in a ConfigMap, so it survives between Lambda invocations.
//!
//! The data model is [`kerf_catalog::unavailable`]; this module is its cluster-backed
//! [`UnavailableOfferingsStore`]: read the ConfigMap [`CONFIGMAP_NAME`] (absent = empty),
//! and write with optimistic concurrency — create it if absent, else replace it with the
//! resourceVersion that was read; on 409 re-read, merge again and retry, at most
//! [`MAX_WRITE_ATTEMPTS`] times. Expired entries are pruned on every write.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kerf_catalog::unavailable::{
    CONFIGMAP_NAME, MAX_WRITE_ATTEMPTS, UnavailableOfferings, UnavailableOfferingsStore,
};
use kube::Client;
use kube::api::{Api, PostParams};

use crate::error::{ClusterError, KubeResult};

/// The `app.kubernetes.io/managed-by` label put on the ConfigMap.
const MANAGED_BY: &str = "kerf";

/// The ConfigMap-backed unavailable-offerings store of one namespace.
#[derive(Clone)]
pub struct ConfigMapOfferingStore {
    api: Api<ConfigMap>,
    name: String,
}

impl std::fmt::Debug for ConfigMapOfferingStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConfigMapOfferingStore")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// What was read: the data, and the object with its resourceVersion (`None`: absent).
struct Read {
    data: BTreeMap<String, String>,
    object: Option<ConfigMap>,
}

impl ConfigMapOfferingStore {
    /// The store in `namespace` (e.g. the namespace Kerf runs in), named [`CONFIGMAP_NAME`].
    pub fn new(client: Client, namespace: &str) -> Self {
        Self::named(client, namespace, CONFIGMAP_NAME)
    }

    /// The store under another ConfigMap name (tests, several Kerf installations).
    pub fn named(client: Client, namespace: &str, name: &str) -> Self {
        ConfigMapOfferingStore {
            api: Api::namespaced(client, namespace),
            name: name.to_string(),
        }
    }

    async fn read(&self) -> Result<Read, ClusterError> {
        let object = self.api.get_opt(&self.name).await.kube()?;
        let data = object
            .as_ref()
            .and_then(|cm| cm.data.clone())
            .unwrap_or_default();
        Ok(Read { data, object })
    }

    /// One conditional write of `data`: create when nothing was read, else replace at the
    /// read resourceVersion. A 409 (stale version, or created meanwhile) is `Conflict`.
    async fn write(
        &self,
        read: Option<ConfigMap>,
        data: BTreeMap<String, String>,
    ) -> Result<(), ClusterError> {
        let pp = PostParams::default();
        match read {
            None => {
                self.api.create(&pp, &self.fresh(data)).await.kube()?;
            }
            Some(mut cm) => {
                cm.data = Some(data);
                self.api.replace(&self.name, &pp, &cm).await.kube()?;
            }
        }
        Ok(())
    }

    fn fresh(&self, data: BTreeMap<String, String>) -> ConfigMap {
        let labels = BTreeMap::from([(
            "app.kubernetes.io/managed-by".to_string(),
            MANAGED_BY.to_string(),
        )]);
        ConfigMap {
            metadata: ObjectMeta {
                name: Some(self.name.clone()),
                labels: Some(labels),
                ..ObjectMeta::default()
            },
            data: Some(data),
            ..ConfigMap::default()
        }
    }

    /// Reads the cache, dropping entries expired at `now`.
    pub async fn load(&self, now: Timestamp) -> Result<UnavailableOfferings, ClusterError> {
        let mut cache = UnavailableOfferings::from_data(&self.read().await?.data);
        cache.prune(now);
        Ok(cache)
    }

    /// Merges `marks` into the ConfigMap; see the module documentation for the protocol.
    /// After [`MAX_WRITE_ATTEMPTS`] conflicts the last `Conflict` is returned (retryable).
    pub async fn record(
        &self,
        marks: &UnavailableOfferings,
        now: Timestamp,
    ) -> Result<UnavailableOfferings, ClusterError> {
        let mut attempt = 1;
        loop {
            let read = self.read().await?;
            let cache = UnavailableOfferings::merged_for_write(&read.data, marks, now);
            match self.write(read.object, cache.to_data()).await {
                Ok(()) => return Ok(cache),
                Err(ClusterError::Conflict(m)) if attempt < MAX_WRITE_ATTEMPTS => {
                    tracing::debug!(attempt, conflict = %m, "unavailable offerings: re-merging");
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }
}

impl UnavailableOfferingsStore for ConfigMapOfferingStore {
    type Error = ClusterError;

    async fn load(&self, now: Timestamp) -> Result<UnavailableOfferings, ClusterError> {
        ConfigMapOfferingStore::load(self, now).await
    }

    async fn record(
        &self,
        marks: &UnavailableOfferings,
        now: Timestamp,
    ) -> Result<UnavailableOfferings, ClusterError> {
        ConfigMapOfferingStore::record(self, marks, now).await
    }
}
