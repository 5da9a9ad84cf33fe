//! CEL runtime values over a JSON document: scalars are converted, lists and objects of the
//! document are borrowed ([`Val::Doc`]) so that `self` costs nothing to bind. A `null` member
//! of an object counts as absent (the apiserver prunes nulls of non-nullable fields).

use super::CelError;
use serde_json::Value;
use std::borrow::Cow;
use std::cmp::Ordering;

/// A CEL value.
#[derive(Debug, Clone)]
pub enum Val<'a> {
    /// `null`
    Null,
    /// `bool`
    Bool(bool),
    /// `int`
    Int(i64),
    /// `uint`
    Uint(u64),
    /// `double`
    Double(f64),
    /// `string`
    Str(Cow<'a, str>),
    /// A list built by the expression.
    List(Vec<Val<'a>>),
    /// A map built by the expression.
    Map(Vec<(Val<'a>, Val<'a>)>),
    /// A JSON array (a CEL list) or object (a CEL map) of the document.
    Doc(&'a Value),
}

impl<'a> Val<'a> {
    /// The CEL value of a JSON value.
    pub fn from_json(v: &'a Value) -> Self {
        match v {
            Value::Null => Val::Null,
            Value::Bool(b) => Val::Bool(*b),
            Value::Number(n) => n
                .as_i64()
                .map(Val::Int)
                .or_else(|| n.as_u64().map(Val::Uint))
                .unwrap_or_else(|| Val::Double(n.as_f64().unwrap_or(f64::NAN))),
            Value::String(s) => Val::Str(Cow::Borrowed(s)),
            Value::Array(_) | Value::Object(_) => Val::Doc(v),
        }
    }

    /// The CEL type name, for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Val::Null => "null_type",
            Val::Bool(_) => "bool",
            Val::Int(_) => "int",
            Val::Uint(_) => "uint",
            Val::Double(_) => "double",
            Val::Str(_) => "string",
            Val::List(_) | Val::Doc(Value::Array(_)) => "list",
            Val::Map(_) | Val::Doc(_) => "map",
        }
    }

    /// The items of a list, or `None` for any other value.
    pub fn items(&self) -> Option<Vec<Val<'a>>> {
        match self {
            Val::List(items) => Some(items.clone()),
            Val::Doc(Value::Array(items)) => Some(items.iter().map(Val::from_json).collect()),
            _ => None,
        }
    }

    /// The keys of a map, or `None` for any other value.
    pub fn keys(&self) -> Option<Vec<Val<'a>>> {
        match self {
            Val::Map(entries) => Some(entries.iter().map(|(k, _)| k.clone()).collect()),
            Val::Doc(Value::Object(m)) => Some(
                m.iter()
                    .filter(|(_, v)| !v.is_null())
                    .map(|(k, _)| Val::Str(Cow::Borrowed(k.as_str())))
                    .collect(),
            ),
            _ => None,
        }
    }

    /// What a comprehension iterates: a list's items or a map's keys.
    pub fn range(&self) -> Result<Vec<Val<'a>>, CelError> {
        self.items()
            .or_else(|| self.keys())
            .ok_or(CelError::NoSuchOverload)
    }

    /// `Some(entry)` if this is a map holding `key`, `Some(None)` for a map without it,
    /// `None` if this is not a map.
    pub fn lookup(&self, key: &Val<'_>) -> Option<Option<Val<'a>>> {
        match self {
            Val::Map(entries) => Some(
                entries
                    .iter()
                    .find(|(k, _)| equals(k, key))
                    .map(|(_, v)| v.clone()),
            ),
            Val::Doc(Value::Object(m)) => Some(match key {
                Val::Str(k) => m
                    .get(k.as_ref())
                    .filter(|v| !v.is_null())
                    .map(Val::from_json),
                _ => None,
            }),
            _ => None,
        }
    }

    /// The number of items, entries or code points.
    pub fn size(&self) -> Result<i64, CelError> {
        let n = match self {
            Val::Str(s) => s.chars().count(),
            _ => self
                .items()
                .or_else(|| self.keys())
                .ok_or(CelError::NoSuchOverload)?
                .len(),
        };
        i64::try_from(n).map_err(|_| CelError::Overflow)
    }
}

/// CEL equality: numbers compare across int, uint and double; lists and maps compare
/// deeply; values of different types are unequal.
pub fn equals(a: &Val<'_>, b: &Val<'_>) -> bool {
    if let Some(o) = num_cmp(a, b) {
        return o == Ordering::Equal;
    }
    match (a, b) {
        (Val::Null, Val::Null) => true,
        (Val::Bool(x), Val::Bool(y)) => x == y,
        (Val::Str(x), Val::Str(y)) => x == y,
        _ => {
            if let (Some(x), Some(y)) = (a.items(), b.items()) {
                return x.len() == y.len() && x.iter().zip(&y).all(|(p, q)| equals(p, q));
            }
            match (a.keys(), b.keys()) {
                (Some(ka), Some(kb)) if ka.len() == kb.len() => {
                    ka.iter()
                        .all(|k| match (a.lookup(k).flatten(), b.lookup(k).flatten()) {
                            (Some(x), Some(y)) => equals(&x, &y),
                            _ => false,
                        })
                }
                _ => false,
            }
        }
    }
}

/// Compares two numbers of any numeric types; `None` if either is not a number (or NaN).
pub fn num_cmp(a: &Val<'_>, b: &Val<'_>) -> Option<Ordering> {
    match (a, b) {
        (Val::Int(x), Val::Int(y)) => Some(x.cmp(y)),
        (Val::Uint(x), Val::Uint(y)) => Some(x.cmp(y)),
        (Val::Int(x), Val::Uint(y)) => Some(int_uint(*x, *y)),
        (Val::Uint(x), Val::Int(y)) => Some(int_uint(*y, *x).reverse()),
        _ => as_f64(a)?.partial_cmp(&as_f64(b)?),
    }
}

fn int_uint(i: i64, u: u64) -> Ordering {
    u64::try_from(i).map_or(Ordering::Less, |i| i.cmp(&u))
}

fn as_f64(v: &Val<'_>) -> Option<f64> {
    match v {
        Val::Int(n) => Some(*n as f64),
        Val::Uint(n) => Some(*n as f64),
        Val::Double(x) => Some(*x),
        _ => None,
    }
}

/// The ordering of `<`, `<=`, `>`, `>=`: numbers, strings and bools; `Ok(None)` for NaN.
pub fn compare(a: &Val<'_>, b: &Val<'_>) -> Result<Option<Ordering>, CelError> {
    match (a, b) {
        (Val::Str(x), Val::Str(y)) => Ok(Some(x.cmp(y))),
        (Val::Bool(x), Val::Bool(y)) => Ok(Some(x.cmp(y))),
        _ if as_f64(a).is_some() && as_f64(b).is_some() => Ok(num_cmp(a, b)),
        _ => Err(CelError::NoSuchOverload),
    }
}

/// `a in b`: membership in a list, or key presence in a map.
pub fn contains(a: &Val<'_>, b: &Val<'_>) -> Result<bool, CelError> {
    if let Some(items) = b.items() {
        return Ok(items.iter().any(|x| equals(x, a)));
    }
    b.lookup(a)
        .map(|v| v.is_some())
        .ok_or(CelError::NoSuchOverload)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn equality_is_deep_and_numeric_across_types() {
        let doc = json!({"a": [1, 2, {"b": "c"}], "n": null});
        let same = json!({"a": [1.0, 2, {"b": "c"}]});
        assert!(equals(&Val::Doc(&doc), &Val::Doc(&same)));
        assert!(equals(&Val::Int(1), &Val::Uint(1)));
        assert!(equals(&Val::Int(2), &Val::Double(2.0)));
        assert!(!equals(&Val::Int(1), &Val::Str("1".into())));
        assert!(!equals(&Val::Int(-1), &Val::Uint(u64::MAX)));
        let list = Val::List(vec![Val::Int(1), Val::Int(2)]);
        assert!(equals(&list, &Val::from_json(&json!([1, 2]))));
        assert!(!equals(&list, &Val::from_json(&json!([1, 2, 3]))));
    }

    #[test]
    fn maps_skip_null_members() {
        let doc = json!({"a": 1, "n": null});
        let v = Val::Doc(&doc);
        assert_eq!(v.size().unwrap(), 1);
        assert!(v.lookup(&Val::Str("n".into())).unwrap().is_none());
        assert!(contains(&Val::Str("a".into()), &v).unwrap());
        assert!(!contains(&Val::Str("n".into()), &v).unwrap());
        assert!(contains(&Val::Int(1), &Val::Bool(true)).is_err());
    }

    #[test]
    fn ordering_needs_comparable_types() {
        let lt = |a, b| compare(&a, &b).map(|o| o == Some(Ordering::Less));
        assert!(lt(Val::Int(-1), Val::Uint(0)).unwrap());
        assert!(lt(Val::Str("a".into()), Val::Str("b".into())).unwrap());
        assert!(lt(Val::Int(1), Val::Double(1.5)).unwrap());
        assert!(lt(Val::Int(1), Val::Str("2".into())).is_err());
        assert_eq!(compare(&Val::Double(f64::NAN), &Val::Int(1)).unwrap(), None);
    }
}
