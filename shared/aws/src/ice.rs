//! The unavailable-offerings ("ICE") cache: the data model lives in
//! [`kerf_catalog::unavailable`] (pure, re-exported here); this module adds a low-level
//! conditional store ([`OfferingCacheStore`]: get, put-if-version) with an in-memory
//! implementation for tests and the simulator, the conflict-retrying [`mark_unavailable`],
//! and the catalog's [`UnavailableOfferingsStore`] port on top of it.
//!
//! In production the store is kerf-kube's ConfigMap store, which implements the same port.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Mutex;

use jiff::Timestamp;

pub use kerf_catalog::unavailable::{
    CONFIGMAP_NAME, MAX_WRITE_ATTEMPTS, OfferingKey, UNAVAILABLE_TTL, UnavailableOfferings,
    UnavailableOfferingsStore,
};

/// Data plus the version it was read at (`None`: the object does not exist yet).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Versioned {
    pub data: BTreeMap<String, String>,
    pub version: Option<String>,
}

/// The result of a conditional write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PutOutcome {
    Written {
        version: String,
    },
    /// Someone wrote in between; read again.
    Conflict,
}

/// A failure of the store itself (not a conflict).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("offering cache store: {message}")]
pub struct StoreError {
    pub message: String,
    pub retryable: bool,
}

/// Where the cache lives (a ConfigMap in production, memory in tests).
pub trait OfferingCacheStore: Send + Sync {
    fn get(&self) -> impl Future<Output = Result<Versioned, StoreError>> + Send;
    /// Writes `data` only if the stored version still equals `version`.
    fn put_if_version(
        &self,
        data: BTreeMap<String, String>,
        version: Option<String>,
    ) -> impl Future<Output = Result<PutOutcome, StoreError>> + Send;
}

/// Reads the cache, dropping expired entries.
pub async fn load(
    store: &impl OfferingCacheStore,
    now: Timestamp,
) -> Result<UnavailableOfferings, StoreError> {
    let mut c = UnavailableOfferings::from_data(&store.get().await?.data);
    c.prune(now);
    Ok(c)
}

/// Marks offerings unavailable, retrying on write conflicts; prunes expired entries.
pub async fn mark_unavailable(
    store: &impl OfferingCacheStore,
    keys: &[OfferingKey],
    now: Timestamp,
) -> Result<UnavailableOfferings, StoreError> {
    record_marks(store, &kerf_catalog::unavailable::marks(keys, now), now).await
}

/// Merges `marks` into the stored cache: read, merge, write if unchanged, else again.
pub async fn record_marks(
    store: &impl OfferingCacheStore,
    marks: &UnavailableOfferings,
    now: Timestamp,
) -> Result<UnavailableOfferings, StoreError> {
    for _ in 0..MAX_WRITE_ATTEMPTS {
        let current = store.get().await?;
        let cache = UnavailableOfferings::merged_for_write(&current.data, marks, now);
        match store
            .put_if_version(cache.to_data(), current.version)
            .await?
        {
            PutOutcome::Written { .. } => return Ok(cache),
            PutOutcome::Conflict => continue,
        }
    }
    Err(StoreError {
        message: "too many write conflicts".into(),
        retryable: true,
    })
}

/// An in-memory store with resourceVersion semantics, for tests and the simulator.
#[derive(Debug, Default)]
pub struct InMemoryOfferingCacheStore {
    inner: Mutex<Option<(BTreeMap<String, String>, u64)>>,
}

impl InMemoryOfferingCacheStore {
    pub fn new() -> Self {
        Self::default()
    }

    fn with<R>(&self, f: impl FnOnce(&mut Option<(BTreeMap<String, String>, u64)>) -> R) -> R {
        let mut guard = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut guard)
    }
}

impl OfferingCacheStore for InMemoryOfferingCacheStore {
    async fn get(&self) -> Result<Versioned, StoreError> {
        Ok(self.with(|s| match s {
            Some((data, v)) => Versioned {
                data: data.clone(),
                version: Some(v.to_string()),
            },
            None => Versioned::default(),
        }))
    }

    async fn put_if_version(
        &self,
        data: BTreeMap<String, String>,
        version: Option<String>,
    ) -> Result<PutOutcome, StoreError> {
        Ok(self.with(|s| {
            let current = s.as_ref().map(|(_, v)| v.to_string());
            if current != version {
                return PutOutcome::Conflict;
            }
            let next = s.as_ref().map_or(1, |(_, v)| v + 1);
            *s = Some((data, next));
            PutOutcome::Written {
                version: next.to_string(),
            }
        }))
    }
}

impl UnavailableOfferingsStore for InMemoryOfferingCacheStore {
    type Error = StoreError;

    async fn load(&self, now: Timestamp) -> Result<UnavailableOfferings, StoreError> {
        load(self, now).await
    }

    async fn record(
        &self,
        marks: &UnavailableOfferings,
        now: Timestamp,
    ) -> Result<UnavailableOfferings, StoreError> {
        record_marks(self, marks, now).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kerf_catalog::CapacityType;

    fn t(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn key() -> OfferingKey {
        OfferingKey::new(CapacityType::Spot, "m5.large", "us-west-2a")
    }

    #[tokio::test]
    async fn conditional_writes_detect_conflicts() {
        let store = InMemoryOfferingCacheStore::new();
        let now = t("2025-01-01T00:00:00Z");
        mark_unavailable(&store, &[key()], now).await.unwrap();
        let v = store.get().await.unwrap();
        assert_eq!(v.version.as_deref(), Some("1"));
        let stale = store.put_if_version(BTreeMap::new(), None).await.unwrap();
        assert_eq!(stale, PutOutcome::Conflict);
        let later = t("2025-01-01T00:05:00Z");
        let other = OfferingKey::new(CapacityType::OnDemand, "c5.large", "us-west-2b");
        let c = mark_unavailable(&store, std::slice::from_ref(&other), later)
            .await
            .unwrap();
        assert_eq!(c.len(), 1, "expired entry pruned on write");
        let via_port = UnavailableOfferingsStore::load(&store, later)
            .await
            .unwrap();
        assert!(via_port.is_unavailable(&other, later));
    }
}
