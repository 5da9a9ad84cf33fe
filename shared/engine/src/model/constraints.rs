//! What a pod asks of where it lands, beside its resources: taints and the tolerations that
//! accept them, topology spread, (anti-)affinity terms and their label selectors, host ports.

use std::collections::BTreeMap;

use crate::requirements::SelectorRequirement;

/// A taint effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Effect {
    NoSchedule,
    PreferNoSchedule,
    NoExecute,
}

impl Effect {
    pub fn parse(s: &str) -> Option<Effect> {
        match s {
            "NoSchedule" => Some(Effect::NoSchedule),
            "PreferNoSchedule" => Some(Effect::PreferNoSchedule),
            "NoExecute" => Some(Effect::NoExecute),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Taint {
    pub key: String,
    pub value: String,
    pub effect: Effect,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Toleration {
    pub key: String,
    /// `true` for `operator: Exists`.
    pub exists: bool,
    pub value: String,
    /// `None` tolerates every effect.
    pub effect: Option<Effect>,
}

/// A label selector (`matchLabels` + `matchExpressions`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct LabelSelector {
    pub match_labels: BTreeMap<String, String>,
    pub match_expressions: Vec<SelectorRequirement>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WhenUnsatisfiable {
    DoNotSchedule,
    ScheduleAnyway,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TopologySpread {
    pub max_skew: i32,
    pub topology_key: String,
    pub when_unsatisfiable: WhenUnsatisfiable,
    pub selector: LabelSelector,
    pub min_domains: Option<i32>,
    /// `nodeAffinityPolicy: Honor` (the default).
    pub honor_node_affinity: bool,
    /// `nodeTaintsPolicy: Honor` (default Ignore).
    pub honor_node_taints: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AffinityTerm {
    pub topology_key: String,
    pub selector: LabelSelector,
    /// Namespaces the selector applies to; with no `namespace_selector` either, empty means
    /// the pod's own namespace.
    pub namespaces: Vec<String>,
    /// `namespaceSelector: {}` selects all namespaces.
    pub all_namespaces: bool,
    /// A non-empty `namespaceSelector`: namespaces whose labels it matches are added to
    /// `namespaces`.
    pub namespace_selector: Option<LabelSelector>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct WeightedTerm<T> {
    pub weight: i32,
    pub term: T,
}

/// A host port a container binds (`0.0.0.0` / empty IP matches every IP).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HostPort {
    pub ip: String,
    pub port: i32,
    pub protocol: String,
}
