//! Label selectors (`labels.Parse` grammar), field selectors, and `metav1.LabelSelector`.

use crate::error::ApiError;
use serde_json::Value;

/// One label requirement.
#[derive(Debug, Clone, PartialEq)]
enum Req {
    Exists(String),
    NotExists(String),
    Eq(String, String),
    Ne(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
}

/// A parsed label selector (AND of requirements).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LabelSelector(Vec<Req>);

/// Splits on commas that are not inside parentheses.
fn split_top(s: &str) -> Vec<String> {
    let (mut out, mut cur, mut depth) = (Vec::new(), String::new(), 0i32);
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur);
    out
}

fn set_values(rest: &str, raw: &str) -> Result<Vec<String>, ApiError> {
    let inner = rest
        .trim()
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(|| ApiError::bad_request(format!("unable to parse requirement: {raw}")))?;
    Ok(inner.split(',').map(|v| v.trim().to_string()).collect())
}

fn parse_term(t: &str) -> Result<Req, ApiError> {
    let t = t.trim();
    if let Some(k) = t.strip_prefix('!') {
        return Ok(Req::NotExists(k.trim().to_string()));
    }
    if let Some((k, v)) = t.split_once("!=") {
        return Ok(Req::Ne(k.trim().into(), v.trim().into()));
    }
    if let Some((k, v)) = t.split_once("==").or_else(|| t.split_once('=')) {
        return Ok(Req::Eq(k.trim().into(), v.trim().into()));
    }
    if let Some((k, rest)) = t.split_once(" notin ") {
        return Ok(Req::NotIn(k.trim().into(), set_values(rest, t)?));
    }
    if let Some((k, rest)) = t.split_once(" in ") {
        return Ok(Req::In(k.trim().into(), set_values(rest, t)?));
    }
    if t.is_empty() || t.contains(char::is_whitespace) || t.contains(['(', ')']) {
        return Err(ApiError::bad_request(format!(
            "unable to parse requirement: {t}"
        )));
    }
    Ok(Req::Exists(t.to_string()))
}

impl LabelSelector {
    /// Parses `a=b,c!=d,e in (f,g),!h,...`.
    pub fn parse(s: &str) -> Result<Self, ApiError> {
        if s.trim().is_empty() {
            return Ok(Self::default());
        }
        split_top(s)
            .iter()
            .map(|t| parse_term(t))
            .collect::<Result<_, _>>()
            .map(Self)
    }

    /// Converts a `metav1.LabelSelector` object; `None` means "matches nothing" (nil selector).
    pub fn from_object(sel: &Value) -> Option<Self> {
        let obj = sel.as_object()?;
        let mut reqs = Vec::new();
        for (k, v) in obj
            .get("matchLabels")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            reqs.push(Req::Eq(
                k.clone(),
                v.as_str().unwrap_or_default().to_string(),
            ));
        }
        for e in obj
            .get("matchExpressions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let k = e["key"].as_str().unwrap_or_default().to_string();
            let vals: Vec<String> = e["values"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect();
            reqs.push(match e["operator"].as_str() {
                Some("In") => Req::In(k, vals),
                Some("NotIn") => Req::NotIn(k, vals),
                Some("DoesNotExist") => Req::NotExists(k),
                _ => Req::Exists(k),
            });
        }
        Some(Self(reqs))
    }

    /// Whether an object's `metadata.labels` satisfy every requirement.
    pub fn matches(&self, obj: &Value) -> bool {
        let labels = &obj["metadata"]["labels"];
        let get = |k: &str| labels.get(k).and_then(Value::as_str);
        self.0.iter().all(|r| match r {
            Req::Exists(k) => get(k).is_some(),
            Req::NotExists(k) => get(k).is_none(),
            Req::Eq(k, v) => get(k) == Some(v.as_str()),
            Req::Ne(k, v) => get(k) != Some(v.as_str()),
            Req::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            Req::NotIn(k, vs) => get(k).is_none_or(|x| vs.iter().all(|v| v != x)),
        })
    }
}

/// A parsed field selector (AND of `field=value` / `field!=value`).
#[derive(Debug, Clone, Default)]
pub struct FieldSelector(Vec<(String, bool, String)>);

fn unescape(s: &str) -> String {
    s.replace("\\,", ",")
        .replace("\\=", "=")
        .replace("\\\\", "\\")
}

fn split_unescaped_commas(s: &str) -> Vec<String> {
    let (mut out, mut cur, mut esc) = (Vec::new(), String::new(), false);
    for c in s.chars() {
        if c == ',' && !esc {
            out.push(std::mem::take(&mut cur));
            continue;
        }
        esc = c == '\\' && !esc;
        cur.push(c);
    }
    out.push(cur);
    out
}

impl FieldSelector {
    /// Parses and checks the fields against those the resource supports.
    pub fn parse(s: &str, supported: &[&str], namespaced: bool) -> Result<Self, ApiError> {
        let mut terms = Vec::new();
        for t in split_unescaped_commas(s)
            .into_iter()
            .filter(|t| !t.trim().is_empty())
        {
            let (f, eq, v) = if let Some((f, v)) = t.split_once("!=") {
                (f, false, v)
            } else if let Some((f, v)) = t.split_once("==").or_else(|| t.split_once('=')) {
                (f, true, v)
            } else {
                return Err(ApiError::bad_request(format!("invalid selector: '{s}'")));
            };
            let f = f.trim();
            let ok = f == "metadata.name"
                || (namespaced && f == "metadata.namespace")
                || supported.contains(&f);
            if !ok {
                return Err(ApiError::bad_request(format!(
                    "field label not supported: {f}"
                )));
            }
            terms.push((f.to_string(), eq, unescape(v.trim())));
        }
        Ok(Self(terms))
    }

    /// Whether the object satisfies every term (missing fields compare as "").
    pub fn matches(&self, obj: &Value) -> bool {
        self.0.iter().all(|(f, eq, v)| {
            let actual = field_value(obj, f);
            (actual == *v) == *eq
        })
    }
}

/// The string form of a dotted field, as the apiserver's field sets render it.
fn field_value(obj: &Value, path: &str) -> String {
    let mut cur = obj;
    for part in path.split('.') {
        cur = &cur[part];
    }
    match cur {
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Null if path == "spec.unschedulable" || path == "spec.hostNetwork" => "false".into(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn label_grammar() {
        let o = json!({"metadata": {"labels": {"a": "1", "b": "x"}}});
        for (s, want) in [
            ("a=1", true),
            ("a==1,b", true),
            ("a!=1", false),
            ("c!=1", true),
            ("b in (x, y)", true),
            ("b notin (x)", false),
            ("c notin (x)", true),
            ("!c", true),
            ("!a", false),
        ] {
            assert_eq!(LabelSelector::parse(s).unwrap().matches(&o), want, "{s}");
        }
        assert!(LabelSelector::parse("a in x").is_err());
    }

    #[test]
    fn field_grammar() {
        let p = json!({"metadata": {"name": "p"}, "spec": {"nodeName": "n,1"}});
        let f = FieldSelector::parse("spec.nodeName=n\\,1", &["spec.nodeName"], true).unwrap();
        assert!(f.matches(&p));
        assert!(FieldSelector::parse("spec.foo=1", &[], true).is_err());
    }
}
