//! Topology groups: pod topology spread, pod affinity and anti-affinity, counted per domain
//! (zone, capacity type, custom keys) or per node (`kubernetes.io/hostname`), and the domain
//! choice Karpenter makes when it adds a pod to a node.

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashMap;

use crate::labels::HOSTNAME;
use crate::model::{LabelSelector, Taint};
use crate::requirements::Requirements;
use crate::selector;
use crate::taints::first_untolerated;

/// What a group enforces.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Spread {
        max_skew: i32,
        min_domains: Option<i32>,
        honor_affinity: bool,
        honor_taints: bool,
    },
    Affinity,
    AntiAffinity,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct GroupKey {
    kind: Kind,
    key: String,
    selector: LabelSelector,
    namespaces: Option<BTreeSet<String>>,
}

/// One topology group: the pods its selector matches, counted per domain.
#[derive(Clone, Debug)]
pub struct Group {
    pub kind: Kind,
    pub key: String,
    selector: LabelSelector,
    /// `None` selects pods in every namespace.
    namespaces: Option<BTreeSet<String>>,
    counts: FxHashMap<String, i32>,
    /// Anti-affinity owners per domain (pods that carry this anti-affinity term).
    owners: FxHashMap<String, i32>,
    /// Matching pods anywhere, including per-node (hostname) counts.
    pub total: i32,
}

impl Group {
    pub fn is_hostname(&self) -> bool {
        self.key == HOSTNAME
    }

    /// True when a pod in `namespace` with `labels` is counted by this group.
    pub fn selects(&self, namespace: &str, labels: &BTreeMap<String, String>) -> bool {
        self.namespaces
            .as_ref()
            .is_none_or(|ns| ns.contains(namespace))
            && selector::matches(&self.selector, labels)
    }

    pub fn count(&self, domain: &str) -> i32 {
        self.counts.get(domain).copied().unwrap_or(0)
    }

    /// Matching pods are counted but none in a known domain yet (they sit on claims whose
    /// domain is still open), so a bootstrap would ignore them.
    fn pending_host_only(&self) -> bool {
        self.total > 0 && self.counts.values().all(|c| *c == 0)
    }

    pub fn owners(&self, domain: &str) -> i32 {
        self.owners.get(domain).copied().unwrap_or(0)
    }
}

/// Where the values of a topology key come from, with the taints of each source.
#[derive(Clone, Debug, Default)]
struct Universe {
    domains: BTreeMap<String, Vec<Vec<Taint>>>,
}

/// All topology groups of one scheduling run.
#[derive(Clone, Debug, Default)]
pub struct Topology {
    pub groups: Vec<Group>,
    index: FxHashMap<GroupKey, usize>,
    universe: FxHashMap<String, Universe>,
    domain_keys: Vec<String>,
}

impl Topology {
    /// Registers (or finds) a group.
    pub fn register(
        &mut self,
        kind: Kind,
        key: &str,
        sel: &LabelSelector,
        namespaces: Option<BTreeSet<String>>,
    ) -> usize {
        let gk = GroupKey {
            kind: kind.clone(),
            key: key.to_string(),
            selector: sel.clone(),
            namespaces: namespaces.clone(),
        };
        if let Some(&i) = self.index.get(&gk) {
            return i;
        }
        self.groups.push(Group {
            kind,
            key: key.to_string(),
            selector: sel.clone(),
            namespaces,
            counts: FxHashMap::default(),
            owners: FxHashMap::default(),
            total: 0,
        });
        self.index.insert(gk, self.groups.len() - 1);
        self.groups.len() - 1
    }

    /// Declares that `domain` of `key` exists, offered by a source with `taints`.
    pub fn add_domain(&mut self, key: &str, domain: &str, taints: &[Taint]) {
        let u = self.universe.entry(key.to_string()).or_default();
        let sources = u.domains.entry(domain.to_string()).or_default();
        if !sources.iter().any(|t| t == taints) {
            sources.push(taints.to_vec());
        }
    }

    /// Keys any group uses.
    pub fn keys(&self) -> BTreeSet<&str> {
        self.groups.iter().map(|g| g.key.as_str()).collect()
    }

    /// Non-hostname keys any group uses (fixed once groups are registered).
    pub fn domain_keys(&self) -> &[String] {
        &self.domain_keys
    }

    /// Freezes the key list after registration.
    pub fn seal(&mut self) {
        self.domain_keys = self
            .keys()
            .into_iter()
            .filter(|k| *k != HOSTNAME)
            .map(str::to_string)
            .collect();
    }

    /// Records a matching pod in `domain` (non-hostname groups) or just the total (hostname).
    pub fn record(&mut self, g: usize, domain: Option<&str>) {
        let grp = &mut self.groups[g];
        grp.total += 1;
        if let Some(d) = domain {
            *grp.counts.entry(d.to_string()).or_insert(0) += 1;
        }
    }

    /// Counts a pod already in the total into `domain` (its node's domain became known).
    pub fn count_in(&mut self, g: usize, domain: &str) {
        *self.groups[g].counts.entry(domain.to_string()).or_insert(0) += 1;
    }

    /// Records an anti-affinity owner in `domain`.
    pub fn record_owner(&mut self, g: usize, domain: &str) {
        *self.groups[g].owners.entry(domain.to_string()).or_insert(0) += 1;
    }

    /// Domains a pod may count toward the spread minimum.
    fn eligible(
        &self,
        g: &Group,
        strict: &Requirements,
        tolerations: &[crate::model::Toleration],
    ) -> Vec<&String> {
        let Kind::Spread {
            honor_affinity,
            honor_taints,
            ..
        } = g.kind
        else {
            return Vec::new();
        };
        let Some(u) = self.universe.get(&g.key) else {
            return Vec::new();
        };
        u.domains
            .iter()
            .filter(|(d, _)| !honor_affinity || strict.get(&g.key).is_none_or(|r| r.has(d)))
            .filter(|(_, srcs)| {
                !honor_taints
                    || srcs.iter().any(|t| {
                        let hard: Vec<Taint> = t
                            .iter()
                            .filter(|x| x.effect != crate::model::Effect::PreferNoSchedule)
                            .cloned()
                            .collect();
                        first_untolerated(&hard, tolerations, false).is_none()
                    })
            })
            .map(|(d, _)| d)
            .collect()
    }

    /// Checks a non-hostname group for a candidate that may land in `candidates`; returns the
    /// domain the candidate must take, or why none works.
    pub fn choose(
        &self,
        g: usize,
        selects_self: bool,
        candidates: &[String],
        strict: &Requirements,
        tolerations: &[crate::model::Toleration],
    ) -> Result<String, Reject> {
        let grp = &self.groups[g];
        let me = i32::from(selects_self);
        let pick = |valid: Vec<&String>| -> Result<String, Reject> {
            valid
                .into_iter()
                .min_by(|a, b| grp.count(a).cmp(&grp.count(b)).then(a.cmp(b)))
                .cloned()
                .ok_or(Reject(g))
        };
        match &grp.kind {
            Kind::Spread {
                max_skew,
                min_domains,
                ..
            } => {
                let eligible = self.eligible(grp, strict, tolerations);
                let mut min = eligible.iter().map(|d| grp.count(d)).min().unwrap_or(0);
                if min_domains.is_some_and(|m| (eligible.len() as i32) < m) {
                    min = 0;
                }
                let valid = candidates
                    .iter()
                    .filter(|d| eligible.contains(d))
                    .filter(|d| grp.count(d) + me - min <= *max_skew)
                    .collect();
                pick(valid)
            }
            Kind::Affinity => {
                let present: Vec<&String> =
                    candidates.iter().filter(|d| grp.count(d) > 0).collect();
                if !present.is_empty() {
                    return pick(present);
                }
                // Karpenter bootstraps a self-selecting pod when no matching pod is in a
                // domain the pod itself admits (none at all, or only in domains its own
                // requirements exclude): any candidate domain the pod admits will do.
                let admits = |d: &str| strict.get(&grp.key).is_none_or(|r| r.has(d));
                let elsewhere = grp.counts.iter().any(|(d, c)| *c > 0 && admits(d));
                if selects_self && !elsewhere && !grp.pending_host_only() {
                    return pick(candidates.iter().filter(|d| admits(d)).collect());
                }
                pick(Vec::new())
            }
            Kind::AntiAffinity => pick(candidates.iter().filter(|d| grp.count(d) == 0).collect()),
        }
    }

    /// True when a slot this group refuses stays refused for the rest of a run: counts only
    /// grow, so a hostname spread or any anti-affinity never readmits a slot; a spread over
    /// zones (its minimum moves) or an affinity (its first pod decides) may.
    pub fn refusal_lasts(&self, g: usize) -> bool {
        let grp = &self.groups[g];
        match grp.kind {
            Kind::AntiAffinity => true,
            Kind::Spread { .. } => grp.is_hostname(),
            Kind::Affinity => false,
        }
    }

    /// Checks a hostname group against one node holding `count` matching pods.
    pub fn check_host(&self, g: usize, selects_self: bool, count: i32) -> Result<(), Reject> {
        let grp = &self.groups[g];
        let ok = match grp.kind {
            Kind::Spread { max_skew, .. } => count + i32::from(selects_self) <= max_skew,
            Kind::Affinity => count > 0 || (grp.total == 0 && selects_self),
            Kind::AntiAffinity => count == 0,
        };
        if ok { Ok(()) } else { Err(Reject(g)) }
    }
}

/// A topology group that rejected a placement; [`Topology::describe`] explains it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reject(pub usize);

impl Topology {
    /// Why group `r` rejected a placement, for people.
    pub fn describe(&self, r: Reject) -> String {
        let g = &self.groups[r.0];
        let why = describe_failure(g);
        match (&g.kind, self.universe.get(&g.key)) {
            (Kind::Spread { .. }, Some(u)) if !g.is_hostname() => {
                format!("{why} (matching pods per domain: {})", counts(g, u))
            }
            _ => why,
        }
    }
}

/// At most this many domains are listed in a spread failure.
const DOMAINS_LISTED: usize = 8;

/// `domain=count` for the group's domains, the first [`DOMAINS_LISTED`] by name.
fn counts(g: &Group, u: &Universe) -> String {
    let mut out: Vec<String> = u
        .domains
        .keys()
        .take(DOMAINS_LISTED)
        .map(|d| format!("{d}={}", g.count(d)))
        .collect();
    if u.domains.len() > DOMAINS_LISTED {
        out.push(format!("and {} more", u.domains.len() - DOMAINS_LISTED));
    }
    out.join(", ")
}

fn describe_failure(g: &Group) -> String {
    match g.kind {
        Kind::Spread { max_skew, .. } => {
            format!(
                "topology spread constraint on {} (maxSkew {max_skew}) cannot be satisfied",
                g.key
            )
        }
        Kind::Affinity => format!("pod affinity on {} has no domain with matching pods", g.key),
        Kind::AntiAffinity => format!(
            "pod anti-affinity on {} excludes every available domain",
            g.key
        ),
    }
}

#[cfg(test)]
#[path = "topology_tests.rs"]
mod tests;
