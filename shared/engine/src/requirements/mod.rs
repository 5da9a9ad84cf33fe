//! The node requirements algebra (`In`, `NotIn`, `Exists`, `DoesNotExist`, `Gt`, `Lt`, `Gte`,
//! `Lte`) with Karpenter's semantics: a requirement is a possibly-complemented value set with
//! optional integer bounds, and requirements intersect key by key.

use std::collections::BTreeMap;

use crate::labels;

mod one;
mod selector;

pub use one::Requirement;
pub use selector::{Operator, RequirementError, SelectorRequirement};

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

    /// Whether any key starts with `prefix` (one ordered lookup).
    pub fn has_prefix(&self, prefix: &str) -> bool {
        use std::ops::Bound;
        self.0
            .range::<str, _>((Bound::Included(prefix), Bound::Unbounded))
            .next()
            .is_some_and(|(k, _)| k.starts_with(prefix))
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
mod tests;
