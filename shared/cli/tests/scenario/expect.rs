//! What a scenario's plan must show. Every field is optional and asserts only what it names,
//! so a scenario states exactly what matters (names of new NodeClaims are never compared).

use std::collections::{BTreeMap, BTreeSet};

use kerf_engine::Plan;
use kerf_engine::plan::Launch;
use serde::Deserialize;
use serde_json::Value;

pub use super::disrupt::{BudgetExpect, DisruptionExpect};
pub use super::launch::{LaunchExpect, PodExpect};

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Expect {
    /// Exactly this many launches.
    pub launches: Option<usize>,
    /// At least this many launches.
    pub min_launches: Option<usize>,
    /// A subset of `summary` (JSON field names).
    #[serde(default)]
    pub summary: BTreeMap<String, Value>,
    /// The launch carrying each pod (`name` in `default`, or `namespace/name`).
    #[serde(default)]
    pub pods: BTreeMap<String, PodExpect>,
    /// Pods nominated to an existing node or claim (`null`: not nominated).
    #[serde(default)]
    pub nominated: BTreeMap<String, Option<String>>,
    /// Unschedulable pods and substrings their reason must contain.
    #[serde(default)]
    pub unschedulable: BTreeMap<String, Vec<String>>,
    /// The kind of each listed unschedulable pod's reason (`daemonSetPod`, ...).
    #[serde(default)]
    pub kinds: BTreeMap<String, String>,
    /// Substrings no unschedulable reason of these pods may contain.
    #[serde(default)]
    pub reasons_exclude: BTreeMap<String, Vec<String>>,
    /// Each list of pods shares one launch.
    #[serde(default)]
    pub together: Vec<Vec<String>>,
    /// The pods of each list are on pairwise different launches.
    #[serde(default)]
    pub apart: Vec<Vec<String>>,
    /// How the listed pods spread over zones: pod counts per zone, sorted.
    pub zones: Option<ZoneCounts>,
    /// What every launch must show.
    pub every_launch: Option<LaunchExpect>,
    /// The sorted values a field takes over the launches of the listed pods.
    #[serde(default)]
    pub sorted_values: Vec<SortedValues>,
    /// Launches span exactly this many zones.
    pub distinct_zones: Option<usize>,
    /// Every option of every launch fits what a cpu limit leaves, each launch charged with
    /// its largest option (fake catalog capacities).
    pub limit: Option<Limit>,
    /// Entries of `costLimits` by NodePool (only the fields given are compared; `null`: the
    /// pool has no entry).
    #[serde(default)]
    pub cost_limits: BTreeMap<String, Option<BTreeMap<String, Value>>>,
    /// Exactly these disruptions, in order (disrupt and all modes; see `disrupt.rs`).
    pub disruptions: Option<Vec<DisruptionExpect>>,
    /// `true`: no disruption at all.
    pub no_disruptions: Option<bool>,
    /// What every disruption must show.
    pub every_disruption: Option<DisruptionExpect>,
    /// Exactly these NodeClaims are disrupted, by whichever commands (sorted).
    pub disrupted: Option<Vec<String>>,
    /// The kind of the `skipped` entry of each NodeClaim (`budget`, `pdb`, ...).
    #[serde(default)]
    pub skipped: BTreeMap<String, String>,
    /// Substrings the `skipped` reason of each NodeClaim must contain (`[]`: only skipped).
    #[serde(default)]
    pub skipped_reasons: BTreeMap<String, Vec<String>>,
    /// The drift reason of each NodeClaim (`null`: not drifted).
    #[serde(default)]
    pub drifted: BTreeMap<String, Option<String>>,
    /// Entries `budgets` must have (only the fields given are compared).
    #[serde(default)]
    pub budgets: Vec<BudgetExpect>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ZoneCounts {
    pub pods: Vec<String>,
    pub counts: Vec<usize>,
}

/// `of`: `zone`, `capacityType`, `instanceType`, or a requirement key pinned to one value.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SortedValues {
    pub of: String,
    pub pods: Vec<String>,
    pub values: Vec<String>,
}

/// A cpu limit in cores.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Limit {
    pub cpu: i64,
}

pub(super) fn key(pod: &str) -> String {
    if pod.contains('/') {
        pod.to_string()
    } else {
        format!("default/{pod}")
    }
}

fn launch_of<'p>(plan: &'p Plan, pod: &str) -> &'p Launch {
    let k = key(pod);
    plan.launches
        .iter()
        .find(|l| l.pods.contains(&k))
        .unwrap_or_else(|| panic!("{pod} is not launched: {plan:#?}"))
}

pub fn pinned(l: &Launch, k: &str) -> Option<String> {
    l.requirements
        .iter()
        .find(|r| r.key == k && r.values.len() == 1 && format!("{:?}", r.operator) == "In")
        .map(|r| r.values[0].clone())
}

impl Expect {
    /// Asserts everything this expectation names; `at` prefixes failures.
    pub fn check(&self, plan: &Plan, pending: usize, at: &str, capacity: &dyn Fn(&str) -> i64) {
        accounted(plan, pending, at);
        within_cost_limits(plan, at);
        for (pool, fields) in &self.cost_limits {
            let got = plan.cost_limits.iter().find(|c| &c.node_pool == pool);
            let Some(fields) = fields else {
                assert!(got.is_none(), "{at}: costLimits has {pool}: {got:?}");
                continue;
            };
            let got = serde_json::to_value(got.unwrap_or_else(|| {
                panic!(
                    "{at}: no costLimits entry for {pool}: {:?}",
                    plan.cost_limits
                )
            }))
            .unwrap();
            for (k, v) in fields {
                assert_eq!(&got[k], v, "{at}: costLimits.{pool}.{k} in {got}");
            }
        }
        if let Some(n) = self.launches {
            assert_eq!(plan.launches.len(), n, "{at}: launches {plan:#?}");
        }
        if let Some(n) = self.min_launches {
            assert!(plan.launches.len() >= n, "{at}: fewer than {n} launches");
        }
        let summary = serde_json::to_value(&plan.summary).unwrap();
        for (k, v) in &self.summary {
            assert_eq!(&summary[k], v, "{at}: summary.{k} in {summary}");
        }
        for (pod, e) in &self.pods {
            e.check(launch_of(plan, pod), &format!("{at}: {pod}"));
        }
        for (pod, node) in &self.nominated {
            let k = key(pod);
            let got = plan
                .nominations
                .iter()
                .find(|n| n.pod == k)
                .map(|n| &n.node);
            assert_eq!(got, node.as_ref(), "{at}: nomination of {pod}");
        }
        for (pod, parts) in &self.unschedulable {
            let r = reason(plan, pod, at);
            for p in parts {
                assert!(
                    r.contains(p.as_str()),
                    "{at}: reason of {pod} lacks {p:?}: {r}"
                );
            }
        }
        for (pod, kind) in &self.kinds {
            let k = key(pod);
            let u = plan.unschedulable.iter().find(|u| u.pod == k);
            let got = u.map(|u| serde_json::to_value(u.kind).unwrap());
            assert_eq!(
                got,
                Some(Value::String(kind.clone())),
                "{at}: kind of {pod}"
            );
        }
        for (pod, parts) in &self.reasons_exclude {
            let r = reason(plan, pod, at);
            for p in parts {
                assert!(
                    !r.contains(p.as_str()),
                    "{at}: reason of {pod} has {p:?}: {r}"
                );
            }
        }
        for group in &self.together {
            let claims: BTreeSet<&str> = group
                .iter()
                .map(|p| launch_of(plan, p).node_claim.as_str())
                .collect();
            assert_eq!(claims.len(), 1, "{at}: {group:?} not together");
        }
        for group in &self.apart {
            let claims: BTreeSet<&str> = group
                .iter()
                .map(|p| launch_of(plan, p).node_claim.as_str())
                .collect();
            assert_eq!(claims.len(), group.len(), "{at}: {group:?} not apart");
        }
        if let Some(z) = &self.zones {
            let mut m: BTreeMap<&str, usize> = BTreeMap::new();
            for p in &z.pods {
                *m.entry(launch_of(plan, p).zone.as_str()).or_default() += 1;
            }
            let mut counts: Vec<usize> = m.values().copied().collect();
            counts.sort_unstable();
            assert_eq!(counts, z.counts, "{at}: zones {m:?}");
        }
        for v in &self.sorted_values {
            let mut got: Vec<String> = v
                .pods
                .iter()
                .map(|p| {
                    let l = launch_of(plan, p);
                    match v.of.as_str() {
                        "zone" => l.zone.clone(),
                        "capacityType" => l.capacity_type.to_string(),
                        "instanceType" => l.instance_type.clone(),
                        k => pinned(l, k).unwrap_or_default(),
                    }
                })
                .collect();
            got.sort();
            assert_eq!(got, v.values, "{at}: {} of {:?}", v.of, v.pods);
        }
        if let Some(n) = self.distinct_zones {
            let zones: BTreeSet<&str> = plan.launches.iter().map(|l| l.zone.as_str()).collect();
            assert_eq!(zones.len(), n, "{at}: zones {zones:?}");
        }
        if let Some(e) = &self.every_launch {
            for l in &plan.launches {
                e.check(l, &format!("{at}: {}", l.node_claim), capacity);
            }
        }
        if let Some(lim) = &self.limit {
            let mut left = lim.cpu * 1000;
            for l in &plan.launches {
                assert!(!l.instance_type_options.is_empty(), "{at}: no options");
                for o in &l.instance_type_options {
                    assert!(
                        capacity(o) <= left,
                        "{at}: option {o} exceeds the {left}m left"
                    );
                }
                left -= l
                    .instance_type_options
                    .iter()
                    .map(|o| capacity(o))
                    .max()
                    .unwrap_or(0);
            }
        }
    }
}

fn reason(plan: &Plan, pod: &str, at: &str) -> String {
    let k = key(pod);
    plan.unschedulable
        .iter()
        .find(|u| u.pod == k)
        .map(|u| u.reason.clone())
        .unwrap_or_else(|| panic!("{at}: {pod} is not unschedulable: {plan:#?}"))
}

/// What a dollar-limited pool's launches are charged never exceeds what its limit left.
fn within_cost_limits(plan: &Plan, at: &str) {
    for c in &plan.cost_limits {
        let left = (c.max_cost_per_hour - c.current_cost_per_hour).max(0.0);
        assert!(
            c.planned_cost_per_hour <= left + 1e-9,
            "{at}: {} charged {} with {left} left",
            c.node_pool,
            c.planned_cost_per_hour
        );
    }
}

/// Every pending pod appears exactly once across launches, nominations and unschedulable.
fn accounted(plan: &Plan, pending: usize, at: &str) {
    let mut all: Vec<&String> = plan.launches.iter().flat_map(|l| &l.pods).collect();
    all.extend(plan.nominations.iter().map(|n| &n.pod));
    all.extend(plan.unschedulable.iter().map(|u| &u.pod));
    let n = all.len();
    all.sort();
    all.dedup();
    assert_eq!(n, all.len(), "{at}: a pod appears twice");
    assert_eq!(n, pending, "{at}: every pending pod is accounted for");
}
