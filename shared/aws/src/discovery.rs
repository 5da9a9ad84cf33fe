//! Instance-type discovery: `DescribeInstanceTypes` (hvm, x86_64/arm64) and
//! `DescribeInstanceTypeOfferings` (per zone) turned into a [`kerf_catalog::Catalog`] by the
//! catalog crate's pure builder. Results are cached; the bundled catalog is the fallback.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use aws_sdk_ec2::types::{Filter, LocationType};
use jiff::{SignedDuration, Timestamp};
use kerf_catalog::{Catalog, CatalogError, Ec2Spec, NodeClassSettings, PriceSource};

use crate::error::{AwsError, from_sdk};
use crate::spec_map::spec_from_sdk;

/// How long discovered types and offerings are reused (Karpenter refreshes every 12 h).
pub const DISCOVERY_TTL: SignedDuration = SignedDuration::from_hours(12);

/// What discovery found: specs and the zones offering each type.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Inventory {
    pub specs: Vec<Ec2Spec>,
    pub zones: BTreeMap<String, Vec<String>>,
}

/// Where a catalog came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CatalogOrigin {
    Live,
    Cached,
    /// AWS was unreachable: the bundled catalog (with bundled prices).
    Bundled,
}

fn filter(name: &str, values: &[&str]) -> Filter {
    Filter::builder()
        .name(name)
        .set_values(Some(values.iter().map(|v| v.to_string()).collect()))
        .build()
}

/// `DescribeInstanceTypes` (all pages); `names` restricts the query when non-empty.
pub async fn instance_types(
    ec2: &aws_sdk_ec2::Client,
    names: &[String],
) -> Result<Vec<Ec2Spec>, AwsError> {
    let mut specs = Vec::new();
    for chunk in chunks(names, 100) {
        let mut pages = ec2
            .describe_instance_types()
            .filters(filter("supported-virtualization-type", &["hvm"]))
            .filters(filter(
                "processor-info.supported-architecture",
                &["x86_64", "arm64"],
            ))
            .set_instance_types(chunk.map(|c| c.iter().map(|n| n.as_str().into()).collect()))
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| from_sdk("DescribeInstanceTypes", e))?;
            specs.extend(page.instance_types().iter().filter_map(spec_from_sdk));
        }
    }
    specs.sort_by(|a, b| a.name.cmp(&b.name));
    specs.dedup_by(|a, b| a.name == b.name);
    Ok(specs)
}

/// `None` once for "everything", else slices of at most `n` names.
fn chunks(names: &[String], n: usize) -> Vec<Option<&[String]>> {
    if names.is_empty() {
        vec![None]
    } else {
        names.chunks(n).map(Some).collect()
    }
}

/// `DescribeInstanceTypeOfferings` by availability zone: type → sorted zones.
pub async fn type_zones(
    ec2: &aws_sdk_ec2::Client,
    names: &[String],
) -> Result<BTreeMap<String, Vec<String>>, AwsError> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for chunk in chunks(names, 100) {
        let filters = chunk.map(|c| {
            let v: Vec<&str> = c.iter().map(String::as_str).collect();
            vec![filter("instance-type", &v)]
        });
        let mut pages = ec2
            .describe_instance_type_offerings()
            .location_type(LocationType::AvailabilityZone)
            .set_filters(filters)
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| from_sdk("DescribeInstanceTypeOfferings", e))?;
            for o in page.instance_type_offerings() {
                if let (Some(t), Some(z)) = (o.instance_type(), o.location()) {
                    out.entry(t.as_str().to_string())
                        .or_default()
                        .insert(z.to_string());
                }
            }
        }
    }
    Ok(out
        .into_iter()
        .map(|(k, v)| (k, v.into_iter().collect()))
        .collect())
}

/// Builds a catalog (pure): each type offered in at least one allowed zone, sorted by name.
/// `allowed_zones` (the nodeclass subnet zones) narrows the offering zones when given.
pub fn build_catalog(
    region: &str,
    inv: &Inventory,
    allowed_zones: Option<&BTreeSet<String>>,
    prices: &(dyn PriceSource + Sync),
    settings: &NodeClassSettings,
) -> Result<Catalog, CatalogError> {
    let mut instance_types = Vec::with_capacity(inv.specs.len());
    for spec in &inv.specs {
        let zones: Vec<String> = inv
            .zones
            .get(&spec.name)
            .into_iter()
            .flatten()
            .filter(|z| allowed_zones.is_none_or(|a| a.contains(*z)))
            .cloned()
            .collect();
        if zones.is_empty() {
            continue;
        }
        instance_types.push(kerf_catalog::instance_type(spec, &zones, prices, settings)?);
    }
    Ok(Catalog {
        region: region.to_string(),
        instance_types,
    })
}

/// Discovery with a cache that lives as long as the Lambda container.
#[derive(Debug)]
pub struct Discovery {
    region: String,
    /// Restrict discovery to these types (tests; empty = all).
    names: Vec<String>,
    cache: Mutex<Option<(Timestamp, Inventory)>>,
}

impl Discovery {
    /// The region discovered.
    pub fn region(&self) -> &str {
        &self.region
    }

    pub fn new(region: &str, names: Vec<String>) -> Self {
        Discovery {
            region: region.to_string(),
            names,
            cache: Mutex::new(None),
        }
    }

    /// The cached inventory, if still fresh at `now`.
    pub fn cached(&self, now: Timestamp) -> Option<Inventory> {
        let guard = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        guard
            .as_ref()
            .filter(|(at, _)| now < *at + DISCOVERY_TTL)
            .map(|(_, inv)| inv.clone())
    }

    /// The inventory: cached if fresh, else fetched (and cached).
    pub async fn inventory(
        &self,
        ec2: &aws_sdk_ec2::Client,
        now: Timestamp,
    ) -> Result<(Inventory, CatalogOrigin), AwsError> {
        if let Some(inv) = self.cached(now) {
            return Ok((inv, CatalogOrigin::Cached));
        }
        let (specs, zones) = tokio::try_join!(
            instance_types(ec2, &self.names),
            type_zones(ec2, &self.names)
        )?;
        let inv = Inventory { specs, zones };
        *self.cache.lock().unwrap_or_else(|p| p.into_inner()) = Some((now, inv.clone()));
        Ok((inv, CatalogOrigin::Live))
    }

    /// The catalog for a nodeclass; the bundled catalog when AWS cannot be reached.
    pub async fn catalog(
        &self,
        ec2: &aws_sdk_ec2::Client,
        now: Timestamp,
        allowed_zones: Option<&BTreeSet<String>>,
        prices: &(dyn PriceSource + Sync),
        settings: &NodeClassSettings,
    ) -> Result<(Catalog, CatalogOrigin), CatalogError> {
        match self.inventory(ec2, now).await {
            Ok((inv, origin)) => Ok((
                build_catalog(&self.region, &inv, allowed_zones, prices, settings)?,
                origin,
            )),
            Err(e) => {
                tracing::warn!(error = %e, "instance-type discovery failed; using the bundled catalog");
                let mut c = kerf_catalog::bundled(&self.region, settings)?;
                if !self.names.is_empty() {
                    c.instance_types.retain(|it| self.names.contains(&it.name));
                }
                if let Some(zones) = allowed_zones {
                    for it in &mut c.instance_types {
                        it.offerings.retain(|o| zones.contains(&o.zone));
                    }
                    c.instance_types.retain(|it| !it.offerings.is_empty());
                }
                Ok((c, CatalogOrigin::Bundled))
            }
        }
    }
}
