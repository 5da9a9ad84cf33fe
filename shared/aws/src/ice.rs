//! The unavailable-offerings ("ICE") cache, stored as data in the cluster.
//!
//! A capacity error marks `(capacity type, instance type, zone)` unavailable for three
//! minutes. Lambdas keep no memory between invocations, so the cache is a map
//! `"<capacityType>_<type>_<zone>" -> RFC3339 expiry` (the data of the ConfigMap
//! [`CONFIGMAP_NAME`]) read and written through [`OfferingCacheStore`] with optimistic
//! concurrency. Applying it to a catalog is a pure function of `now`.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Mutex;

use jiff::{SignedDuration, Timestamp};
use kerf_catalog::{CapacityType, Catalog};

/// How long a capacity error keeps an offering unavailable (Karpenter's UnavailableOfferingsTTL).
pub const UNAVAILABLE_TTL: SignedDuration = SignedDuration::from_secs(180);

/// The ConfigMap the kube-backed store keeps the cache in.
pub const CONFIGMAP_NAME: &str = "kerf-unavailable-offerings";

/// How often a conflicting write is retried before giving up.
const MAX_WRITE_ATTEMPTS: usize = 5;

/// One offering: where and how an instance type is bought.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OfferingKey {
    pub capacity_type: CapacityType,
    pub instance_type: String,
    pub zone: String,
}

impl OfferingKey {
    pub fn new(capacity_type: CapacityType, instance_type: &str, zone: &str) -> Self {
        OfferingKey {
            capacity_type,
            instance_type: instance_type.into(),
            zone: zone.into(),
        }
    }

    /// The stored key, `<capacityType>_<type>_<zone>`, e.g. `spot_m5.large_us-west-2a`.
    ///
    /// ConfigMap data keys may only hold `[-._a-zA-Z0-9]`, so `/` cannot separate the parts;
    /// `_` never occurs in capacity types, instance types or zone names.
    pub fn data_key(&self) -> String {
        format!(
            "{}_{}_{}",
            self.capacity_type.as_str(),
            self.instance_type,
            self.zone
        )
    }

    /// Parses a data key (`_`-separated; `/` is accepted too).
    pub fn parse(key: &str) -> Option<OfferingKey> {
        let sep = if key.contains('_') { '_' } else { '/' };
        let mut parts = key.splitn(3, sep);
        let ct = CapacityType::parse(parts.next()?)?;
        let it = parts.next().filter(|s| !s.is_empty())?;
        let zone = parts.next().filter(|s| !s.is_empty() && !s.contains(sep))?;
        Some(OfferingKey::new(ct, it, zone))
    }
}

/// The cache contents: offering → expiry.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UnavailableOfferings {
    entries: BTreeMap<OfferingKey, Timestamp>,
}

impl UnavailableOfferings {
    /// Reads stored data, skipping entries that do not parse.
    pub fn from_data(data: &BTreeMap<String, String>) -> Self {
        let entries = data
            .iter()
            .filter_map(|(k, v)| Some((OfferingKey::parse(k)?, v.parse::<Timestamp>().ok()?)))
            .collect();
        UnavailableOfferings { entries }
    }

    pub fn to_data(&self) -> BTreeMap<String, String> {
        self.entries
            .iter()
            .map(|(k, t)| (k.data_key(), t.to_string()))
            .collect()
    }

    /// Marks (or re-marks, extending) an offering unavailable until `now + TTL`.
    pub fn mark(&mut self, key: OfferingKey, now: Timestamp) {
        let until = now + UNAVAILABLE_TTL;
        let e = self.entries.entry(key).or_insert(until);
        *e = (*e).max(until);
    }

    /// Drops expired entries.
    pub fn prune(&mut self, now: Timestamp) {
        self.entries.retain(|_, until| *until > now);
    }

    pub fn is_unavailable(&self, key: &OfferingKey, now: Timestamp) -> bool {
        self.entries.get(key).is_some_and(|until| *until > now)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Marks every cached offering of the catalog unavailable (pure).
    pub fn apply(&self, catalog: &mut Catalog, now: Timestamp) {
        for it in &mut catalog.instance_types {
            for o in &mut it.offerings {
                let key = OfferingKey::new(o.capacity_type, &it.name, &o.zone);
                if self.is_unavailable(&key, now) {
                    o.available = false;
                }
            }
        }
    }
}

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
    for _ in 0..MAX_WRITE_ATTEMPTS {
        let current = store.get().await?;
        let mut cache = UnavailableOfferings::from_data(&current.data);
        cache.prune(now);
        for k in keys {
            cache.mark(k.clone(), now);
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use kerf_catalog::{InstanceType, Offering};

    fn t(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn key() -> OfferingKey {
        OfferingKey::new(CapacityType::Spot, "m5.large", "us-west-2a")
    }

    #[test]
    fn keys_round_trip() {
        assert_eq!(key().data_key(), "spot_m5.large_us-west-2a");
        assert_eq!(OfferingKey::parse("spot_m5.large_us-west-2a"), Some(key()));
        assert_eq!(OfferingKey::parse("spot/m5.large/us-west-2a"), Some(key()));
        let od = OfferingKey::new(CapacityType::OnDemand, "u-6tb1.metal", "us-east-1a");
        assert_eq!(OfferingKey::parse(&od.data_key()), Some(od.clone()));
        let valid = |c: char| c.is_ascii_alphanumeric() || "-._".contains(c);
        assert!(od.data_key().chars().all(valid), "a valid ConfigMap key");
        assert_eq!(OfferingKey::parse("bogus_m5.large_z"), None);
        assert_eq!(OfferingKey::parse("spot_m5.large"), None);
    }

    #[test]
    fn entries_expire_after_three_minutes() {
        let now = t("2025-01-01T00:00:00Z");
        let mut c = UnavailableOfferings::default();
        c.mark(key(), now);
        assert!(c.is_unavailable(&key(), t("2025-01-01T00:02:59Z")));
        assert!(!c.is_unavailable(&key(), t("2025-01-01T00:03:00Z")));
        let again = UnavailableOfferings::from_data(&c.to_data());
        assert_eq!(again, c);
        c.prune(t("2025-01-01T00:03:00Z"));
        assert!(c.is_empty());
    }

    #[test]
    fn apply_marks_catalog_offerings() {
        let offering = |zone: &str, ct| Offering {
            zone: zone.into(),
            capacity_type: ct,
            price: 0.1,
            available: true,
        };
        let mut cat = Catalog {
            region: "us-west-2".into(),
            instance_types: vec![InstanceType {
                name: "m5.large".into(),
                labels: Default::default(),
                capacity: Default::default(),
                overhead: Default::default(),
                allocatable: Default::default(),
                offerings: vec![
                    offering("us-west-2a", CapacityType::Spot),
                    offering("us-west-2a", CapacityType::OnDemand),
                    offering("us-west-2b", CapacityType::Spot),
                ],
            }],
        };
        let now = t("2025-01-01T00:00:00Z");
        let mut c = UnavailableOfferings::default();
        c.mark(key(), now);
        c.apply(&mut cat, now);
        let avail: Vec<bool> = cat.instance_types[0]
            .offerings
            .iter()
            .map(|o| o.available)
            .collect();
        assert_eq!(avail, vec![false, true, true]);
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
        assert!(
            load(&store, later)
                .await
                .unwrap()
                .is_unavailable(&other, later)
        );
    }
}
