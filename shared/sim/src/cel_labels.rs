//! The label-restriction CEL rules of Karpenter's CRDs, recognised by shape:
//!
//! * `self != "L"` and `self.all(x, x != "L")` (a key, or every key of a label map);
//! * `self in [..] || !self.find("^([^/]+)").endsWith("D")` and its `self.all(x, …)` form:
//!   a key in domain `D` must be one of the listed well-known labels.

use regex::Regex;
use serde_json::Value;
use std::sync::LazyLock;

static NE: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r#"^self != "([^"]*)"$"#).ok());
static ALL_NE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r#"^self\.all\(x, x != "([^"]*)"\)$"#).ok());
static DOMAIN: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r#"^self in \[([^\]]*)\] \|\| !self\.find\("\^\(\[\^/\]\+\)"\)\.endsWith\("([^"]+)"\)$"#,
    )
    .ok()
});
static ALL_DOMAIN: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r#"^self\.all\(x, x in \[([^\]]*)\] \|\| !x\.find\("\^\(\[\^/\]\+\)"\)\.endsWith\("([^"]+)"\)\)$"#).ok()
});

fn captures<'a>(re: &LazyLock<Option<Regex>>, rule: &'a str) -> Option<Vec<&'a str>> {
    let c = re.as_ref()?.captures(rule)?;
    Some(c.iter().skip(1).flatten().map(|m| m.as_str()).collect())
}

/// The strings `self` stands for in an `all` macro: a map's keys or a list's items.
fn members(v: &Value) -> Vec<&str> {
    match v {
        Value::Object(map) => map.keys().map(String::as_str).collect(),
        Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// `"a", "b"` → `["a", "b"]`.
fn list(text: &str) -> Vec<&str> {
    text.split(',')
        .map(|s| s.trim().trim_matches('"'))
        .filter(|s| !s.is_empty())
        .collect()
}

/// The label's domain: everything before the first `/` (the whole key without one).
fn domain(key: &str) -> &str {
    key.split('/').next().unwrap_or_default()
}

fn allowed(key: &str, known: &[&str], restricted_domain: &str) -> bool {
    known.contains(&key) || !domain(key).ends_with(restricted_domain)
}

/// `Some(passed)` for a recognised label rule, `None` otherwise.
pub fn eval(rule: &str, v: &Value) -> Option<bool> {
    if let Some(c) = captures(&NE, rule) {
        return Some(v.as_str() != Some(c[0]));
    }
    if let Some(c) = captures(&ALL_NE, rule) {
        return Some(members(v).iter().all(|k| *k != c[0]));
    }
    if let Some(c) = captures(&DOMAIN, rule).filter(|c| c.len() == 2) {
        let key = v.as_str()?;
        return Some(allowed(key, &list(c[0]), c[1]));
    }
    let c = captures(&ALL_DOMAIN, rule).filter(|c| c.len() == 2)?;
    let known = list(c[0]);
    Some(members(v).iter().all(|k| allowed(k, &known, c[1])))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const KEY: &str = r#"self in ["karpenter.sh/capacity-type", "karpenter.sh/nodepool"] || !self.find("^([^/]+)").endsWith("karpenter.sh")"#;
    const MAP: &str = r#"self.all(x, x in ["karpenter.k8s.aws/instance-family"] || !x.find("^([^/]+)").endsWith("karpenter.k8s.aws"))"#;

    #[test]
    fn restricted_domains_allow_only_their_well_known_labels() {
        assert_eq!(eval(KEY, &json!("karpenter.sh/capacity-type")), Some(true));
        assert_eq!(eval(KEY, &json!("karpenter.sh/custom")), Some(false));
        assert_eq!(eval(KEY, &json!("team.example.com/x")), Some(true));
        assert_eq!(
            eval(MAP, &json!({"karpenter.k8s.aws/instance-family": "m5"})),
            Some(true)
        );
        assert_eq!(
            eval(MAP, &json!({"karpenter.k8s.aws/mine": "x"})),
            Some(false)
        );
    }

    #[test]
    fn single_labels_are_forbidden() {
        let rule = r#"self != "kubernetes.io/hostname""#;
        assert_eq!(eval(rule, &json!("kubernetes.io/hostname")), Some(false));
        assert_eq!(eval(rule, &json!("kubernetes.io/arch")), Some(true));
        let all = r#"self.all(x, x != "karpenter.sh/nodepool")"#;
        assert_eq!(
            eval(all, &json!({"karpenter.sh/nodepool": "a"})),
            Some(false)
        );
        assert_eq!(eval("self.size() > 3", &json!("x")), None);
    }
}
