//! The node requirements algebra (`In`, `NotIn`, `Exists`, `DoesNotExist`, `Gt`, `Lt`, `Gte`,
//! `Lte`) with Karpenter's semantics: a requirement is a possibly-complemented value set with
//! optional integer bounds, and requirements intersect key by key.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::labels;

/// A node selector operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Operator {
    In,
    NotIn,
    Exists,
    DoesNotExist,
    Gt,
    Lt,
    Gte,
    Lte,
}

impl Operator {
    /// Parses the Kubernetes spelling of an operator.
    pub fn parse(s: &str) -> Option<Operator> {
        Some(match s {
            "In" => Operator::In,
            "NotIn" => Operator::NotIn,
            "Exists" => Operator::Exists,
            "DoesNotExist" => Operator::DoesNotExist,
            "Gt" => Operator::Gt,
            "Lt" => Operator::Lt,
            "Gte" => Operator::Gte,
            "Lte" => Operator::Lte,
            _ => return None,
        })
    }
}

/// A requirement as written in a manifest (`{key, operator, values, minValues}`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SelectorRequirement {
    pub key: String,
    pub operator: Operator,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_values: Option<u32>,
}

/// Why a requirement could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequirementError {
    #[error("key {key:?}: operator {op:?} needs {expected}")]
    Values {
        key: String,
        op: Operator,
        expected: &'static str,
    },
    #[error("key {key:?}: {value:?} is not an integer")]
    NotInteger { key: String, value: String },
}

/// Why two requirement sets cannot hold together.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Conflict {
    /// A custom key the incoming side requires that the other side never defines.
    #[error("label {key:?} does not have known values")]
    Undefined { key: String },
    /// A shared key whose allowed values do not overlap.
    #[error("key {key}, {key} {incoming} not in {key} {existing}")]
    Disjoint {
        key: String,
        incoming: Box<Requirement>,
        existing: Box<Requirement>,
    },
}

/// One key's set of allowed values.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Requirement {
    complement: bool,
    values: Vec<String>,
    gte: Option<i64>,
    lte: Option<i64>,
    pub min_values: Option<u32>,
}

impl Requirement {
    /// `In [values]`.
    pub fn is_in<I, S>(values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut v: Vec<String> = values.into_iter().map(Into::into).collect();
        v.sort();
        v.dedup();
        Requirement {
            complement: false,
            values: v,
            gte: None,
            lte: None,
            min_values: None,
        }
    }

    /// `Exists`: any value.
    pub fn exists() -> Self {
        Requirement {
            complement: true,
            values: Vec::new(),
            gte: None,
            lte: None,
            min_values: None,
        }
    }

    /// `DoesNotExist`: the label must be absent.
    pub fn does_not_exist() -> Self {
        Requirement::is_in(Vec::<String>::new())
    }

    /// `NotIn [values]`.
    pub fn not_in<I, S>(values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut r = Requirement::is_in(values);
        r.complement = true;
        r
    }

    /// Builds a requirement from its manifest form, validating values.
    pub fn from_selector(s: &SelectorRequirement) -> Result<Self, RequirementError> {
        let need = |expected| RequirementError::Values {
            key: s.key.clone(),
            op: s.operator,
            expected,
        };
        let int = |i: usize| -> Result<i64, RequirementError> {
            s.values[i]
                .parse::<i64>()
                .map_err(|_| RequirementError::NotInteger {
                    key: s.key.clone(),
                    value: s.values[i].clone(),
                })
        };
        let mut r = match s.operator {
            Operator::In if s.values.is_empty() => return Err(need("at least one value")),
            Operator::In => Requirement::is_in(s.values.iter().cloned()),
            Operator::NotIn => Requirement::not_in(s.values.iter().cloned()),
            Operator::Exists | Operator::DoesNotExist if !s.values.is_empty() => {
                return Err(need("no values"));
            }
            Operator::Exists => Requirement::exists(),
            Operator::DoesNotExist => Requirement::does_not_exist(),
            Operator::Gt | Operator::Lt | Operator::Gte | Operator::Lte if s.values.len() != 1 => {
                return Err(need("exactly one integer value"));
            }
            Operator::Gt => match int(0)?.checked_add(1) {
                Some(n) => Requirement::bounded(Some(n), None),
                None => Requirement::does_not_exist(),
            },
            Operator::Lt => Requirement::bounded(None, Some(int(0)?.saturating_sub(1))),
            Operator::Gte => Requirement::bounded(Some(int(0)?), None),
            Operator::Lte => Requirement::bounded(None, Some(int(0)?)),
        };
        r.min_values = s.min_values;
        Ok(r)
    }

    fn bounded(gte: Option<i64>, lte: Option<i64>) -> Self {
        Requirement {
            complement: true,
            values: Vec::new(),
            gte,
            lte,
            min_values: None,
        }
    }

    /// The operator this requirement prints as.
    pub fn operator(&self) -> Operator {
        match (self.complement, self.values.is_empty()) {
            (true, false) => Operator::NotIn,
            (true, true) => Operator::Exists,
            (false, false) => Operator::In,
            (false, true) => Operator::DoesNotExist,
        }
    }

    /// The concrete values of an `In` / `NotIn` requirement, sorted.
    pub fn values(&self) -> &[String] {
        &self.values
    }

    pub fn is_complement(&self) -> bool {
        self.complement
    }

    /// True when the requirement admits `value`.
    pub fn has(&self, value: &str) -> bool {
        let listed = self
            .values
            .binary_search_by(|v| v.as_str().cmp(value))
            .is_ok();
        (listed != self.complement) && self.within_bounds(value)
    }

    fn within_bounds(&self, value: &str) -> bool {
        if self.gte.is_none() && self.lte.is_none() {
            return true;
        }
        match value.parse::<i64>() {
            Ok(n) => self.gte.is_none_or(|g| n >= g) && self.lte.is_none_or(|l| n <= l),
            Err(_) => false,
        }
    }

    /// True when the label may be absent (`NotIn`, `DoesNotExist`).
    pub fn allows_absent(&self) -> bool {
        matches!(self.operator(), Operator::NotIn | Operator::DoesNotExist)
            && self.gte.is_none()
            && self.lte.is_none()
    }

    /// Number of admitted values; `usize::MAX` for complemented sets.
    pub fn len(&self) -> usize {
        if self.complement {
            usize::MAX - self.values.len()
        } else {
            self.values.len()
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Karpenter's intersection of two requirements on the same key.
    pub fn intersection(&self, other: &Requirement) -> Requirement {
        let complement = self.complement && other.complement;
        let gte = max_opt(self.gte, other.gte);
        let lte = min_opt(self.lte, other.lte);
        let min_values = max_opt(self.min_values, other.min_values);
        if let (Some(g), Some(l)) = (gte, lte)
            && g > l
        {
            return Requirement {
                min_values,
                ..Requirement::does_not_exist()
            };
        }
        let values = match (self.complement, other.complement) {
            (true, true) => union(&self.values, &other.values),
            (true, false) => difference(&other.values, &self.values),
            (false, true) => difference(&self.values, &other.values),
            (false, false) => intersect(&self.values, &other.values),
        };
        let mut r = Requirement {
            complement,
            values,
            gte,
            lte,
            min_values,
        };
        if !r.complement {
            let (g, l) = (r.gte, r.lte);
            r.values.retain(|v| within(v, g, l));
            r.gte = None;
            r.lte = None;
        }
        r
    }

    /// A concrete value for labelling a node: the smallest listed value, or the smallest
    /// admissible integer for complemented sets.
    pub fn any(&self) -> Option<String> {
        if !self.complement {
            return self.values.first().cloned();
        }
        let mut n = self
            .gte
            .unwrap_or(0)
            .max(if self.lte.is_some() { i64::MIN } else { 0 });
        if let Some(l) = self.lte {
            n = n.min(l);
        }
        for _ in 0..=self.values.len() {
            let s = n.to_string();
            if self.has(&s) {
                return Some(s);
            }
            n = n.checked_add(1)?;
        }
        None
    }

    /// The manifest form of this requirement.
    pub fn to_selector(&self, key: &str) -> Vec<SelectorRequirement> {
        let mk = |operator, values: Vec<String>| SelectorRequirement {
            key: key.to_string(),
            operator,
            values,
            min_values: self.min_values,
        };
        let mut out = Vec::new();
        let op = self.operator();
        if op != Operator::Exists || (self.gte.is_none() && self.lte.is_none()) {
            out.push(mk(op, self.values.clone()));
        }
        if let Some(g) = self.gte {
            out.push(mk(Operator::Gte, vec![g.to_string()]));
        }
        if let Some(l) = self.lte {
            out.push(mk(Operator::Lte, vec![l.to_string()]));
        }
        out
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.operator())?;
        if !self.values.is_empty() {
            write!(f, " [{}]", self.values.join(","))?;
        }
        if let Some(g) = self.gte {
            write!(f, " >={g}")?;
        }
        if let Some(l) = self.lte {
            write!(f, " <={l}")?;
        }
        Ok(())
    }
}

fn within(v: &str, gte: Option<i64>, lte: Option<i64>) -> bool {
    if gte.is_none() && lte.is_none() {
        return true;
    }
    v.parse::<i64>()
        .is_ok_and(|n| gte.is_none_or(|g| n >= g) && lte.is_none_or(|l| n <= l))
}

fn max_opt<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

fn min_opt<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

fn union(a: &[String], b: &[String]) -> Vec<String> {
    let mut v: Vec<String> = a.iter().chain(b).cloned().collect();
    v.sort();
    v.dedup();
    v
}

fn intersect(a: &[String], b: &[String]) -> Vec<String> {
    a.iter()
        .filter(|x| b.binary_search(x).is_ok())
        .cloned()
        .collect()
}

fn difference(a: &[String], b: &[String]) -> Vec<String> {
    a.iter()
        .filter(|x| b.binary_search(x).is_err())
        .cloned()
        .collect()
}

/// A set of requirements keyed by label key; a missing key means "anything".
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Requirements(BTreeMap<String, Requirement>);

impl Requirements {
    pub fn new() -> Self {
        Self::default()
    }

    /// Builds from manifest requirements, intersecting repeated keys.
    pub fn from_selectors(reqs: &[SelectorRequirement]) -> Result<Self, RequirementError> {
        let mut r = Requirements::new();
        for s in reqs {
            r.add(labels::normalize(&s.key), Requirement::from_selector(s)?);
        }
        Ok(r)
    }

    /// `key In [value]` for every label.
    pub fn from_labels<'a, I>(labels: I) -> Self
    where
        I: IntoIterator<Item = (&'a String, &'a String)>,
    {
        let mut r = Requirements::new();
        for (k, v) in labels {
            r.add(labels::normalize(k), Requirement::is_in([v.clone()]));
        }
        r
    }

    /// Intersects `req` into the requirement for `key`.
    pub fn add(&mut self, key: &str, req: Requirement) {
        match self.0.get_mut(key) {
            Some(existing) => *existing = existing.intersection(&req),
            None => {
                self.0.insert(key.to_string(), req);
            }
        }
    }

    /// Intersects every requirement of `other` into `self`.
    pub fn add_all(&mut self, other: &Requirements) {
        for (k, r) in &other.0 {
            self.add(k, r.clone());
        }
    }

    pub fn get(&self, key: &str) -> Option<&Requirement> {
        self.0.get(key)
    }

    pub fn has_key(&self, key: &str) -> bool {
        self.0.contains_key(key)
    }

    pub fn remove(&mut self, key: &str) -> Option<Requirement> {
        self.0.remove(key)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&String, &Requirement)> {
        self.0.iter()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Karpenter's `Intersects`: every shared key has a common value, unless both sides
    /// only exclude values.
    pub fn intersects(&self, incoming: &Requirements) -> Result<(), Conflict> {
        for (key, inc) in &incoming.0 {
            if let Some(ex) = self.0.get(key)
                && ex.intersection(inc).is_empty()
                && !(inc.allows_absent() && ex.allows_absent())
            {
                return Err(Conflict::Disjoint {
                    key: key.clone(),
                    incoming: Box::new(inc.clone()),
                    existing: Box::new(ex.clone()),
                });
            }
        }
        Ok(())
    }

    /// Karpenter's `Compatible` with undefined well-known labels allowed: custom keys a pod
    /// requires must be defined by `self`, then the two must intersect.
    pub fn compatible(&self, incoming: &Requirements) -> Result<(), Conflict> {
        for (key, inc) in &incoming.0 {
            if !self.0.contains_key(key) && !labels::is_well_known(key) && !inc.allows_absent() {
                return Err(Conflict::Undefined { key: key.clone() });
            }
        }
        self.intersects(incoming)
    }

    /// True when concrete `labels` (e.g. an instance type's) satisfy every requirement.
    /// Keys the labels lack are satisfied only by requirements that allow absence, except
    /// keys the labels never describe (`undefined_ok`).
    pub fn matches_labels<'l, F>(&self, label: F) -> bool
    where
        F: Fn(&str) -> Option<&'l str>,
    {
        self.0.iter().all(|(k, r)| match label(k) {
            Some(v) => r.has(v),
            None => r.allows_absent(),
        })
    }

    /// Allocation-free [`Requirements::compatible`] for hot paths.
    pub fn is_compatible(&self, incoming: &Requirements) -> bool {
        incoming.0.iter().all(|(key, inc)| match self.0.get(key) {
            None => labels::is_well_known(key) || inc.allows_absent(),
            Some(ex) => {
                !ex.intersection(inc).is_empty() || (inc.allows_absent() && ex.allows_absent())
            }
        })
    }

    /// `self ∩ other` when it differs from `self`; `None` when `other` adds nothing.
    pub fn narrowed(&self, other: &Requirements) -> Option<Requirements> {
        let changes = other.0.iter().any(|(k, r)| match self.0.get(k) {
            None => true,
            Some(ex) => &ex.intersection(r) != ex,
        });
        changes.then(|| {
            let mut m = self.clone();
            m.add_all(other);
            m
        })
    }

    /// Manifest form, sorted by key.
    pub fn to_selectors(&self) -> Vec<SelectorRequirement> {
        self.0.iter().flat_map(|(k, r)| r.to_selector(k)).collect()
    }
}

#[cfg(test)]
#[path = "requirements_tests.rs"]
mod tests;
