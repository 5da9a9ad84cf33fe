//! Expectations on the disruption half of a plan (`kerf plan --mode disrupt|all`): the
//! commands in order, which NodeClaims they take, why every other node stays, drift reasons
//! and what the budgets allow. Every field asserts only when given.

use std::collections::{BTreeMap, BTreeSet};

use kerf_engine::plan::{Disruption, Launch};
use kerf_engine::{Plan, Snapshot};
use serde::Deserialize;
use serde_json::Value;

use super::expect::{Expect, key};

const ZONE: &str = "topology.kubernetes.io/zone";
const CAPACITY_TYPE: &str = "karpenter.sh/capacity-type";

/// One disruption command.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DisruptionExpect {
    /// `empty`, `underutilized`, `drifted` or `expired`.
    pub reason: Option<String>,
    /// `delete` or `replace`.
    pub action: Option<String>,
    /// `expiration`, `emptiness`, `drift`, `multiNodeConsolidation`, `singleNodeConsolidation`.
    pub method: Option<String>,
    /// Exactly these NodeClaims (compared as sorted lists).
    pub node_claims: Option<Vec<String>>,
    /// The first replacement's instance type, capacity type and NodePool.
    pub replacement_type: Option<String>,
    pub replacement_capacity_type: Option<String>,
    pub replacement_node_pool: Option<String>,
    /// The first replacement's zone, which its requirements pin.
    pub replacement_zone: Option<String>,
    /// The exact values the first replacement's `karpenter.sh/capacity-type` requirement
    /// allows (`[spot]`: forced to spot).
    pub replacement_capacity_types: Option<Vec<String>>,
    /// Exactly this many replacements.
    pub replacements: Option<usize>,
    /// Instance types the first replacement's options must include / must not include.
    #[serde(default)]
    pub options_include: Vec<String>,
    #[serde(default)]
    pub options_exclude: Vec<String>,
    /// `true`: every option of the first replacement costs less than the candidates, at its
    /// dearest offering the replacement's zone and capacity-type requirements allow
    /// (Karpenter's worst launch price).
    pub options_cheaper: Option<bool>,
    /// `savingsPerHour` is at least this.
    pub min_savings: Option<f64>,
    /// Exactly these moved pods (`name` in `default`, or `namespace/name`).
    pub pods: Option<Vec<String>>,
    /// Moved pods that land on an existing node: pod → Node name.
    #[serde(default)]
    pub nominated: BTreeMap<String, String>,
}

/// An entry of `budgets`, found by pool and reason (`Empty`, `Drifted`, `Underutilized`).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BudgetExpect {
    pub node_pool: String,
    pub reason: String,
    pub allowed: Option<u32>,
    pub nodes: Option<u32>,
    pub disrupting: Option<u32>,
}

impl Expect {
    /// Whether this expectation says anything about disruption (which needs `mode: disrupt`
    /// or `mode: all`).
    pub fn names_disruption(&self) -> bool {
        self.disruptions.is_some()
            || self.no_disruptions.is_some()
            || self.every_disruption.is_some()
            || self.disrupted.is_some()
            || !self.skipped.is_empty()
            || !self.skipped_reasons.is_empty()
            || !self.drifted.is_empty()
            || !self.budgets.is_empty()
    }

    /// Asserts the disruption expectations; `snap` is what the plan was made from.
    pub fn check_disruption(&self, plan: &Plan, snap: &Snapshot, at: &str) {
        let ds = &plan.disruptions;
        if let Some(want) = &self.disruptions {
            assert_eq!(ds.len(), want.len(), "{at}: disruptions {}", brief(plan));
            for (i, (d, e)) in ds.iter().zip(want).enumerate() {
                e.check(d, snap, &format!("{at}: disruptions[{i}]"), plan);
            }
        }
        if self.no_disruptions == Some(true) {
            assert!(ds.is_empty(), "{at}: disruptions {}", brief(plan));
        }
        if let Some(e) = &self.every_disruption {
            for (i, d) in ds.iter().enumerate() {
                e.check(d, snap, &format!("{at}: disruptions[{i}]"), plan);
            }
        }
        if let Some(want) = &self.disrupted {
            let got: BTreeSet<&str> = ds
                .iter()
                .flat_map(|d| d.node_claims.iter().map(String::as_str))
                .collect();
            let want: BTreeSet<&str> = want.iter().map(String::as_str).collect();
            assert_eq!(got, want, "{at}: disrupted NodeClaims {}", brief(plan));
        }
        for (claim, kind) in &self.skipped {
            let s = skipped(plan, claim, at);
            let got = serde_json::to_value(s.kind).unwrap();
            assert_eq!(
                got,
                Value::String(kind.clone()),
                "{at}: skipped kind of {claim} ({})",
                s.reason
            );
        }
        for (claim, parts) in &self.skipped_reasons {
            let s = skipped(plan, claim, at);
            for p in parts {
                assert!(
                    s.reason.contains(p.as_str()),
                    "{at}: skipped reason of {claim} lacks {p:?}: {}",
                    s.reason
                );
            }
        }
        for (claim, reason) in &self.drifted {
            let got = plan
                .drifted
                .iter()
                .find(|d| &d.node_claim == claim)
                .map(|d| d.reason.as_str().to_string());
            assert_eq!(&got, reason, "{at}: drift of {claim}: {:?}", plan.drifted);
        }
        for b in &self.budgets {
            b.check(plan, at);
        }
    }
}

impl DisruptionExpect {
    fn check(&self, d: &Disruption, snap: &Snapshot, at: &str, plan: &Plan) {
        let at = format!("{at} ({})", d.node_claims.join(","));
        let eq = |what: &str, want: &Option<String>, got: &str| {
            if let Some(w) = want {
                assert_eq!(got, w, "{at}: {what} {}", brief(plan));
            }
        };
        eq("reason", &self.reason, d.reason.as_str());
        eq("action", &self.action, d.action.as_str());
        let method = serde_json::to_value(d.method).unwrap();
        eq("method", &self.method, method.as_str().unwrap_or_default());
        if let Some(want) = &self.node_claims {
            let mut want = want.clone();
            want.sort();
            let mut got = d.node_claims.clone();
            got.sort();
            assert_eq!(got, want, "{at}: nodeClaims");
        }
        if let Some(n) = self.replacements {
            assert_eq!(d.replacements.len(), n, "{at}: replacements {d:#?}");
        }
        let first = d.replacements.first();
        let named = self.replacement_type.is_some()
            || self.replacement_capacity_type.is_some()
            || self.replacement_node_pool.is_some()
            || self.replacement_zone.is_some()
            || self.replacement_capacity_types.is_some()
            || !self.options_include.is_empty()
            || !self.options_exclude.is_empty()
            || self.options_cheaper.is_some();
        if named {
            let l = first.unwrap_or_else(|| panic!("{at}: no replacement {d:#?}"));
            assert_eq!(
                d.replacement.as_ref(),
                Some(l),
                "{at}: replacement is the first of replacements"
            );
            eq("replacementType", &self.replacement_type, &l.instance_type);
            eq(
                "replacementCapacityType",
                &self.replacement_capacity_type,
                l.capacity_type.as_str(),
            );
            eq(
                "replacementNodePool",
                &self.replacement_node_pool,
                &l.node_pool,
            );
            let opts = &l.instance_type_options;
            for i in &self.options_include {
                assert!(opts.contains(i), "{at}: options lack {i}: {opts:?}");
            }
            for x in &self.options_exclude {
                assert!(!opts.contains(x), "{at}: options have {x}: {opts:?}");
            }
            if self.options_cheaper == Some(true) {
                options_cheaper(d, l, snap, &at);
            }
        }
        if let Some(min) = self.min_savings {
            assert!(
                d.savings_per_hour >= min - 1e-9,
                "{at}: savingsPerHour {} < {min}",
                d.savings_per_hour
            );
        }
        if let Some(want) = &self.pods {
            let mut want: Vec<String> = want.iter().map(|p| key(p)).collect();
            want.sort();
            assert_eq!(d.pods, want, "{at}: moved pods");
        }
        for (pod, node) in &self.nominated {
            let k = key(pod);
            let got = d.nominations.iter().find(|n| n.pod == k).map(|n| &n.node);
            assert_eq!(got, Some(node), "{at}: {pod} lands on {:?}", d.nominations);
        }
    }
}

/// Every option of `l` costs less than the candidates of `d` at its dearest allowed offering.
fn options_cheaper(d: &Disruption, l: &Launch, snap: &Snapshot, at: &str) {
    let total: f64 = d.prices.iter().sum();
    assert!(
        d.prices.iter().all(|p| *p > 0.0),
        "{at}: unknown candidate price"
    );
    let pool = snap
        .node_pools
        .iter()
        .find(|p| p.name == l.node_pool)
        .unwrap_or_else(|| panic!("{at}: no NodePool {}", l.node_pool));
    let (zones, cts) = (in_values(l, ZONE), in_values(l, CAPACITY_TYPE));
    assert!(!l.instance_type_options.is_empty(), "{at}: no options");
    for o in &l.instance_type_options {
        let t = pool
            .catalog
            .instance_types
            .iter()
            .find(|t| &t.name == o)
            .unwrap_or_else(|| panic!("{at}: option {o} is not in the catalog"));
        let worst = t
            .offerings
            .iter()
            .filter(|of| of.available)
            .filter(|of| zones.as_ref().is_none_or(|z| z.contains(&of.zone)))
            .filter(|of| {
                cts.as_ref()
                    .is_none_or(|c| c.iter().any(|c| c == of.capacity_type.as_str()))
            })
            .map(|of| of.price)
            .fold(f64::NAN, f64::max);
        assert!(
            worst < total - 1e-9,
            "{at}: option {o} costs up to {worst}, not below the candidates' {total}"
        );
    }
}

/// The values an `In` requirement of the launch on `key` allows.
fn in_values(l: &Launch, key: &str) -> Option<Vec<String>> {
    l.requirements
        .iter()
        .find(|r| r.key == key && format!("{:?}", r.operator) == "In")
        .map(|r| r.values.clone())
}

impl BudgetExpect {
    fn check(&self, plan: &Plan, at: &str) {
        let b = plan
            .budgets
            .iter()
            .find(|b| b.node_pool == self.node_pool && b.reason.as_str() == self.reason)
            .unwrap_or_else(|| {
                panic!(
                    "{at}: no budget for {} {}: {:?}",
                    self.node_pool, self.reason, plan.budgets
                )
            });
        let at = format!("{at}: budget {} {}", self.node_pool, self.reason);
        for (what, want, got) in [
            ("allowed", self.allowed, b.allowed),
            ("nodes", self.nodes, b.nodes),
            ("disrupting", self.disrupting, b.disrupting),
        ] {
            if let Some(w) = want {
                assert_eq!(got, w, "{at}: {what} {b:?}");
            }
        }
    }
}

fn skipped<'p>(plan: &'p Plan, claim: &str, at: &str) -> &'p kerf_engine::plan::Skipped {
    assert!(
        !plan
            .disruptions
            .iter()
            .any(|d| d.node_claims.iter().any(|c| c == claim)),
        "{at}: {claim} is disrupted, not skipped: {}",
        brief(plan)
    );
    plan.skipped
        .iter()
        .find(|s| s.node_claim == claim)
        .unwrap_or_else(|| panic!("{at}: {claim} is not skipped: {}", brief(plan)))
}

/// The disruption half of a plan as compact JSON, for failure messages.
fn brief(plan: &Plan) -> String {
    let ds: Vec<Value> = plan
        .disruptions
        .iter()
        .map(|d| {
            serde_json::json!({
                "reason": d.reason, "action": d.action, "method": d.method,
                "nodeClaims": d.node_claims, "savingsPerHour": d.savings_per_hour,
                "pods": d.pods, "nominations": d.nominations,
                "replacements": d.replacements.iter().map(|l| serde_json::json!({
                    "instanceType": l.instance_type, "capacityType": l.capacity_type,
                    "nodePool": l.node_pool, "price": l.price,
                    "options": l.instance_type_options, "pods": l.pods,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let skipped: Vec<Value> = plan
        .skipped
        .iter()
        .map(|s| serde_json::json!({"nodeClaim": s.node_claim, "kind": s.kind, "reason": s.reason}))
        .collect();
    serde_json::json!({"disruptions": ds, "skipped": skipped, "drifted": plan.drifted}).to_string()
}
