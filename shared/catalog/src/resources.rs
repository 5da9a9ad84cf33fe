//! Resource lists (`cpu`, `memory`, `pods`, extended resources) in milli-units.

use std::collections::BTreeMap;

use crate::CatalogError;
use crate::quantity::{self, Format, Milli};

/// A Kubernetes ResourceList with exact milli-unit values, ordered by name.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Resources(pub BTreeMap<String, Milli>);

impl Resources {
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses `{name: quantity}` pairs.
    pub fn parse<'a, I>(pairs: I) -> Result<Self, CatalogError>
    where
        I: IntoIterator<Item = (&'a str, &'a str)>,
    {
        let mut r = Resources::new();
        for (k, v) in pairs {
            r.0.insert(k.to_string(), quantity::parse(v)?);
        }
        Ok(r)
    }

    pub fn get(&self, name: &str) -> Milli {
        self.0.get(name).copied().unwrap_or(0)
    }

    pub fn set(&mut self, name: &str, v: Milli) {
        self.0.insert(name.to_string(), v);
    }

    pub fn add(&mut self, other: &Resources) {
        for (k, v) in &other.0 {
            *self.0.entry(k.clone()).or_insert(0) += v;
        }
    }

    /// Subtracts, flooring every value at zero.
    pub fn sub_floor(&mut self, other: &Resources) {
        for (k, v) in &other.0 {
            let e = self.0.entry(k.clone()).or_insert(0);
            *e = (*e - v).max(0);
        }
    }

    /// True when every requested value fits within `self`.
    pub fn fits(&self, request: &Resources) -> bool {
        request.0.iter().all(|(k, v)| *v <= self.get(k))
    }

    /// Renders as `{name: "quantity"}` the way kubectl prints it.
    pub fn to_strings(&self) -> BTreeMap<String, String> {
        self.0
            .iter()
            .map(|(k, v)| (k.clone(), quantity::format(*v, format_for(k))))
            .collect()
    }
}

/// Memory-like resources print with binary suffixes, the rest as plain or milli units.
pub fn format_for(name: &str) -> Format {
    match name {
        "memory" | "ephemeral-storage" => Format::Binary,
        n if n.starts_with("hugepages-") => Format::Binary,
        _ => Format::DecimalMilli,
    }
}
