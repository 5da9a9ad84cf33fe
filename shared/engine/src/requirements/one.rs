//! One key's requirement: a possibly-complemented value set with optional integer bounds,
//! and how two intersect.

use std::fmt;

use super::selector::{Operator, RequirementError, SelectorRequirement};

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
