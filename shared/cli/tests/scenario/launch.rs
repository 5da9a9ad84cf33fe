//! Expectations on one launch: the one carrying a pod, its options, and what every launch
//! must show.

use std::collections::{BTreeMap, BTreeSet};

use kerf_engine::plan::Launch;
use serde::Deserialize;

use super::expect::pinned;

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PodExpect {
    pub instance_type: Option<String>,
    pub not_instance_type: Option<String>,
    /// The instance type starts with one of these.
    #[serde(default)]
    pub instance_type_prefix: Vec<String>,
    pub capacity_type: Option<String>,
    pub zone: Option<String>,
    pub zone_prefix: Option<String>,
    pub not_zone: Option<String>,
    pub node_pool: Option<String>,
    pub node_claim_prefix: Option<String>,
    pub price: Option<f64>,
    /// Requirements pinned to one value (`In [value]`).
    #[serde(default)]
    pub pinned: BTreeMap<String, String>,
    /// Exact values of a requirement.
    #[serde(default)]
    pub requirement_values: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    pub min_values: BTreeMap<String, u32>,
    /// `spec.resources.requests` entries.
    #[serde(default)]
    pub requests: BTreeMap<String, String>,
    pub options: Option<OptionsExpect>,
    /// The launch had a `minValues` lowered (`MIN_VALUES_POLICY=BestEffort`).
    pub min_values_relaxed: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OptionsExpect {
    pub exactly: Option<Vec<String>>,
    pub count: Option<usize>,
    #[serde(default)]
    pub include: Vec<String>,
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Every option starts with one of these.
    #[serde(default)]
    pub prefixes: Vec<String>,
    /// At least this many families (the part before the first `.`).
    pub min_families: Option<usize>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LaunchExpect {
    pub pods: Option<usize>,
    pub capacity_type: Option<String>,
    /// Every value of the requirement is one of these.
    #[serde(default)]
    pub requirement_values_within: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    pub instance_type_prefix: Vec<String>,
    /// Pods of this many cores each fit the launch's type (fake catalog allocatable).
    pub cores_per_pod: Option<f64>,
}

impl PodExpect {
    pub(super) fn check(&self, l: &Launch, at: &str) {
        let eq = |what: &str, want: &Option<String>, got: &str| {
            if let Some(w) = want {
                assert_eq!(got, w, "{at}: {what}");
            }
        };
        eq("instanceType", &self.instance_type, &l.instance_type);
        eq(
            "capacityType",
            &self.capacity_type,
            l.capacity_type.as_str(),
        );
        eq("zone", &self.zone, &l.zone);
        eq("nodePool", &self.node_pool, &l.node_pool);
        if let Some(t) = &self.not_instance_type {
            assert_ne!(&l.instance_type, t, "{at}: instanceType");
        }
        if let Some(z) = &self.zone_prefix {
            assert!(l.zone.starts_with(z.as_str()), "{at}: zone {}", l.zone);
        }
        if let Some(z) = &self.not_zone {
            assert_ne!(&l.zone, z, "{at}: zone");
        }
        if !self.instance_type_prefix.is_empty() {
            assert!(
                self.instance_type_prefix
                    .iter()
                    .any(|p| l.instance_type.starts_with(p.as_str())),
                "{at}: instanceType {}",
                l.instance_type
            );
        }
        if let Some(p) = &self.node_claim_prefix {
            assert!(
                l.node_claim.starts_with(p.as_str()) && l.node_claim.len() == p.len() + 5,
                "{at}: nodeClaim {}",
                l.node_claim
            );
        }
        if let Some(p) = self.price {
            assert!((l.price - p).abs() < 1e-9, "{at}: price {}", l.price);
        }
        for (k, v) in &self.pinned {
            assert_eq!(pinned(l, k).as_ref(), Some(v), "{at}: pinned {k}");
        }
        for (k, vs) in &self.requirement_values {
            let r = l.requirements.iter().find(|r| &r.key == k);
            assert_eq!(r.map(|r| &r.values), Some(vs), "{at}: requirement {k}");
        }
        for (k, m) in &self.min_values {
            let r = l.requirements.iter().find(|r| &r.key == k);
            assert_eq!(
                r.and_then(|r| r.min_values),
                Some(*m),
                "{at}: minValues {k}"
            );
        }
        for (k, v) in &self.requests {
            assert_eq!(l.requests.get(k), Some(v), "{at}: requests.{k}");
        }
        if let Some(r) = self.min_values_relaxed {
            assert_eq!(l.min_values_relaxed, r, "{at}: minValuesRelaxed");
        }
        if let Some(o) = &self.options {
            o.check(l, at);
        }
    }
}

impl OptionsExpect {
    pub(super) fn check(&self, l: &Launch, at: &str) {
        let opts = &l.instance_type_options;
        assert_eq!(
            opts.first(),
            Some(&l.instance_type),
            "{at}: the instance type is the cheapest option"
        );
        if let Some(x) = &self.exactly {
            assert_eq!(opts, x, "{at}: options");
        }
        if let Some(n) = self.count {
            assert_eq!(opts.len(), n, "{at}: option count");
        }
        for i in &self.include {
            assert!(opts.contains(i), "{at}: options lack {i}: {opts:?}");
        }
        for x in &self.exclude {
            assert!(!opts.contains(x), "{at}: options have {x}: {opts:?}");
        }
        if !self.prefixes.is_empty() {
            assert!(
                opts.iter()
                    .all(|o| self.prefixes.iter().any(|p| o.starts_with(p.as_str()))),
                "{at}: options {opts:?}"
            );
        }
        if let Some(n) = self.min_families {
            let fams: BTreeSet<&str> = opts.iter().filter_map(|o| o.split('.').next()).collect();
            assert!(fams.len() >= n, "{at}: families {fams:?}");
        }
        let it = l
            .requirements
            .iter()
            .find(|r| r.key == "node.kubernetes.io/instance-type");
        assert_eq!(
            it.map(|r| r.values.len()),
            Some(opts.len()),
            "{at}: requirement"
        );
    }
}

impl LaunchExpect {
    pub(super) fn check(&self, l: &Launch, at: &str, capacity: &dyn Fn(&str) -> i64) {
        if let Some(n) = self.pods {
            assert_eq!(l.pods.len(), n, "{at}: pods");
        }
        if let Some(c) = &self.capacity_type {
            assert_eq!(l.capacity_type.as_str(), c, "{at}: capacityType");
        }
        for (k, allowed) in &self.requirement_values_within {
            let r = l
                .requirements
                .iter()
                .find(|r| &r.key == k)
                .unwrap_or_else(|| panic!("{at}: no requirement {k}"));
            assert!(
                r.values.iter().all(|v| allowed.contains(v)),
                "{at}: {k} {:?}",
                r.values
            );
        }
        if !self.instance_type_prefix.is_empty() {
            assert!(
                self.instance_type_prefix
                    .iter()
                    .any(|p| l.instance_type.starts_with(p.as_str())),
                "{at}: instanceType {}",
                l.instance_type
            );
        }
        if let Some(per) = self.cores_per_pod {
            let alloc = capacity(&l.instance_type) as f64 / 1000.0 - 0.1;
            assert!(
                l.pods.len() as f64 * per <= alloc + 1e-9,
                "{at}: over-committed"
            );
        }
    }
}
