//! The unavailable-offerings ("ICE") cache as pure data: keys, expiry times, merge and prune
//! with an explicit `now`, and its effect on a [`Catalog`]'s offering availability.
//!
//! A capacity error marks `(capacity type, instance type, zone)` unavailable for
//! [`UNAVAILABLE_TTL`], scoped by the placement group when the launch went into one (so a
//! full group does not stop launches outside it, as Karpenter scopes its cache); a reserved
//! launch's error marks only the capacity reservation it tried (as Karpenter marks the
//! reservation, not the offering); an `InsufficientFreeAddressesInSubnet` error marks the
//! subnet (the zone is unavailable only when all of its subnets are). Lambdas keep no memory
//! between invocations, so the cache lives in the cluster as string data (a ConfigMap named
//! [`CONFIGMAP_NAME`]): `"<capacityType>_<type>_<zone>[_<placement group id>][_<cr-id>]" ->
//! RFC3339 expiry` and `"subnet_<subnet id>" -> RFC3339 expiry`. Adapters implement
//! [`UnavailableOfferingsStore`] (read; merge-and-write with optimistic concurrency); this
//! module does no I/O and reads no clock.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;

use jiff::{SignedDuration, Timestamp};

use crate::{CapacityType, Catalog};

/// How long a capacity error keeps an offering unavailable (Karpenter's UnavailableOfferingsTTL).
pub const UNAVAILABLE_TTL: SignedDuration = SignedDuration::from_secs(180);

/// The ConfigMap cluster-backed stores keep the cache in.
pub const CONFIGMAP_NAME: &str = "kerf-unavailable-offerings";

/// How many times a store re-reads and re-merges after a write conflict before giving up.
pub const MAX_WRITE_ATTEMPTS: usize = 5;

/// Data-key prefix of subnet entries.
const SUBNET_PREFIX: &str = "subnet_";

/// How every capacity reservation id starts (and no placement group id does).
const RESERVATION_PREFIX: &str = "cr-";

/// One offering: where and how an instance type is bought (inside a placement group, or
/// not).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OfferingKey {
    pub capacity_type: CapacityType,
    pub instance_type: String,
    pub zone: String,
    /// The placement group (`pg-...`) the offering was tried in; `None` outside one.
    pub placement_group: Option<String>,
    /// The capacity reservation (`cr-...`) a reserved offering was tried in: only that
    /// reservation's offering is marked. `None` marks every reserved offering of the type and
    /// zone (keys written before reservations were told apart).
    pub reservation: Option<String>,
}

impl OfferingKey {
    pub fn new(capacity_type: CapacityType, instance_type: &str, zone: &str) -> Self {
        OfferingKey {
            capacity_type,
            instance_type: instance_type.into(),
            zone: zone.into(),
            placement_group: None,
            reservation: None,
        }
    }

    /// The same offering inside placement group `id` (`None`: outside any).
    pub fn in_group(self, id: Option<&str>) -> Self {
        OfferingKey {
            placement_group: id.map(str::to_string),
            ..self
        }
    }

    /// The same offering in capacity reservation `id` (`None`: in none).
    pub fn in_reservation(self, id: Option<&str>) -> Self {
        OfferingKey {
            reservation: id.map(str::to_string),
            ..self
        }
    }

    /// The stored key, `<capacityType>_<type>_<zone>`, e.g. `spot_m5.large_us-west-2a`, then
    /// `_<placement group id>` and `_<reservation id>` when set (e.g.
    /// `reserved_p5.48xlarge_us-east-1a_cr-0abc`).
    ///
    /// ConfigMap data keys may only hold `[-._a-zA-Z0-9]`, so `/` cannot separate the parts;
    /// `_` never occurs in capacity types, instance types or zone names.
    pub fn data_key(&self) -> String {
        let base = format!(
            "{}_{}_{}",
            self.capacity_type.as_str(),
            self.instance_type,
            self.zone
        );
        let scopes = [&self.placement_group, &self.reservation];
        scopes
            .into_iter()
            .flatten()
            .fold(base, |k, s| format!("{k}_{s}"))
    }

    /// Parses a data key (`_`-separated; `/` is accepted too).
    pub fn parse(key: &str) -> Option<OfferingKey> {
        let sep = if key.contains('_') { '_' } else { '/' };
        let mut parts = key.split(sep);
        let ct = CapacityType::parse(parts.next()?)?;
        let it = parts.next().filter(|s| !s.is_empty())?;
        let zone = parts.next().filter(|s| !s.is_empty())?;
        let mut scopes: Vec<&str> = parts.collect();
        if scopes.iter().any(|s| s.is_empty()) {
            return None;
        }
        let reservation = match scopes.last() {
            Some(cr) if cr.starts_with(RESERVATION_PREFIX) => scopes.pop(),
            _ => None,
        };
        let pg = match scopes.as_slice() {
            [] => None,
            [pg] if !pg.starts_with(RESERVATION_PREFIX) => Some(*pg),
            _ => return None,
        };
        Some(
            OfferingKey::new(ct, it, zone)
                .in_group(pg)
                .in_reservation(reservation),
        )
    }
}

/// Whether `key` may be used as a ConfigMap data key.
pub fn is_valid_data_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 253
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-._".contains(c))
}

/// The cache contents: offering → expiry, subnet id → expiry.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UnavailableOfferings {
    entries: BTreeMap<OfferingKey, Timestamp>,
    subnets: BTreeMap<String, Timestamp>,
}

fn keep_later(map_entry: &mut Timestamp, until: Timestamp) {
    *map_entry = (*map_entry).max(until);
}

impl UnavailableOfferings {
    /// Reads stored data, skipping entries that do not parse.
    pub fn from_data(data: &BTreeMap<String, String>) -> Self {
        let mut out = UnavailableOfferings::default();
        for (k, v) in data {
            let Ok(until) = v.parse::<Timestamp>() else {
                continue;
            };
            if let Some(id) = k.strip_prefix(SUBNET_PREFIX).filter(|s| !s.is_empty()) {
                out.subnets.insert(id.to_string(), until);
            } else if let Some(key) = OfferingKey::parse(k) {
                out.entries.insert(key, until);
            }
        }
        out
    }

    /// The stored form (keys valid for a ConfigMap, values RFC3339).
    pub fn to_data(&self) -> BTreeMap<String, String> {
        let offerings = self
            .entries
            .iter()
            .map(|(k, t)| (k.data_key(), t.to_string()));
        let subnets = self
            .subnets
            .iter()
            .map(|(id, t)| (format!("{SUBNET_PREFIX}{id}"), t.to_string()));
        offerings.chain(subnets).collect()
    }

    /// Marks (or re-marks, extending) an offering unavailable until `now + TTL`.
    pub fn mark(&mut self, key: OfferingKey, now: Timestamp) {
        let until = now + UNAVAILABLE_TTL;
        keep_later(self.entries.entry(key).or_insert(until), until);
    }

    /// Marks (or re-marks) a subnet as out of free addresses until `now + TTL`.
    pub fn mark_subnet(&mut self, subnet_id: &str, now: Timestamp) {
        let until = now + UNAVAILABLE_TTL;
        let e = self.subnets.entry(subnet_id.to_string()).or_insert(until);
        keep_later(e, until);
    }

    /// Takes every entry of `other`, keeping the later expiry where both have one.
    pub fn merge(&mut self, other: &UnavailableOfferings) {
        for (k, until) in &other.entries {
            keep_later(self.entries.entry(k.clone()).or_insert(*until), *until);
        }
        for (id, until) in &other.subnets {
            keep_later(self.subnets.entry(id.clone()).or_insert(*until), *until);
        }
    }

    /// Drops expired entries.
    pub fn prune(&mut self, now: Timestamp) {
        self.entries.retain(|_, until| *until > now);
        self.subnets.retain(|_, until| *until > now);
    }

    /// The write step of a read-merge-write loop: the stored data, pruned at `now`, plus the
    /// new marks. Re-run on fresh data after a conflict.
    pub fn merged_for_write(
        stored: &BTreeMap<String, String>,
        marks: &UnavailableOfferings,
        now: Timestamp,
    ) -> UnavailableOfferings {
        let mut cache = UnavailableOfferings::from_data(stored);
        cache.merge(marks);
        cache.prune(now);
        cache
    }

    pub fn is_unavailable(&self, key: &OfferingKey, now: Timestamp) -> bool {
        self.entries.get(key).is_some_and(|until| *until > now)
    }

    pub fn is_subnet_unavailable(&self, subnet_id: &str, now: Timestamp) -> bool {
        self.subnets
            .get(subnet_id)
            .is_some_and(|until| *until > now)
    }

    /// The subnets still usable at `now` (order kept).
    pub fn usable_subnets<'a>(&self, subnet_ids: &[&'a str], now: Timestamp) -> Vec<&'a str> {
        subnet_ids
            .iter()
            .copied()
            .filter(|id| !self.is_subnet_unavailable(id, now))
            .collect()
    }

    /// The zones of `subnets` (`(subnet id, zone)` pairs) with no usable subnet left.
    pub fn exhausted_zones(&self, subnets: &[(&str, &str)], now: Timestamp) -> BTreeSet<String> {
        let all: BTreeSet<&str> = subnets.iter().map(|(_, z)| *z).collect();
        let usable: BTreeSet<&str> = subnets
            .iter()
            .filter(|(id, _)| !self.is_subnet_unavailable(id, now))
            .map(|(_, z)| *z)
            .collect();
        all.difference(&usable).map(|z| z.to_string()).collect()
    }

    /// The first moment after `now` at which an entry (offering or subnet) expires.
    pub fn next_expiry(&self, now: Timestamp) -> Option<Timestamp> {
        self.entries
            .values()
            .chain(self.subnets.values())
            .copied()
            .filter(|t| *t > now)
            .min()
    }

    /// Number of entries (offerings and subnets).
    pub fn len(&self) -> usize {
        self.entries.len() + self.subnets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty() && self.subnets.is_empty()
    }

    /// Marks every cached offering of the catalog unavailable at `now`: the offering's own
    /// entry, its entry in the placement group the type's catalog is for, or (a reserved
    /// offering) its reservation's entry, which is kept outside any group: the reservation is
    /// what ran out, wherever it was tried.
    pub fn apply(&self, catalog: &mut Catalog, now: Timestamp) {
        for it in &mut catalog.instance_types {
            let pg = it
                .labels
                .get(kerf_labels::aws::PLACEMENT_GROUP_ID)
                .map(String::as_str);
            for o in &mut it.offerings {
                let key = OfferingKey::new(o.capacity_type, &it.name, &o.zone);
                let scoped = pg.is_some().then(|| key.clone().in_group(pg));
                let reserved =
                    (o.reservation.as_ref()).map(|r| key.clone().in_reservation(Some(&r.id)));
                if [Some(key), scoped, reserved]
                    .iter()
                    .flatten()
                    .any(|k| self.is_unavailable(k, now))
                {
                    o.available = false;
                }
            }
        }
    }
}

/// Marks every offering in `zones` unavailable (e.g. the [`exhausted_zones`] of the subnets).
///
/// [`exhausted_zones`]: UnavailableOfferings::exhausted_zones
pub fn disable_zones(catalog: &mut Catalog, zones: &BTreeSet<String>) {
    for it in &mut catalog.instance_types {
        for o in it.offerings.iter_mut().filter(|o| zones.contains(&o.zone)) {
            o.available = false;
        }
    }
}

/// Where the cache is kept between invocations. Implemented by the adapters (kerf-kube: a
/// ConfigMap; kerf-aws: memory, for tests) so that a launcher in one adapter can record into
/// a store of another without the two depending on each other.
///
/// The methods return futures built from `std` alone: this crate declares the port, it never
/// runs it.
pub trait UnavailableOfferingsStore: Send + Sync {
    /// The adapter's typed error.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Reads the cache, dropping entries expired at `now`.
    fn load(
        &self,
        now: Timestamp,
    ) -> impl Future<Output = Result<UnavailableOfferings, Self::Error>> + Send;

    /// Merges `marks` into the stored cache (pruning entries expired at `now`) with
    /// optimistic concurrency, retrying conflicts up to [`MAX_WRITE_ATTEMPTS`] times.
    /// Returns what was written.
    fn record(
        &self,
        marks: &UnavailableOfferings,
        now: Timestamp,
    ) -> impl Future<Output = Result<UnavailableOfferings, Self::Error>> + Send;
}

/// The marks for offering keys at `now` (a helper for [`UnavailableOfferingsStore::record`]).
pub fn marks(keys: &[OfferingKey], now: Timestamp) -> UnavailableOfferings {
    let mut m = UnavailableOfferings::default();
    for k in keys {
        m.mark(k.clone(), now);
    }
    m
}

#[cfg(test)]
#[path = "unavailable_tests.rs"]
mod tests;
