//! Label selector matching for pods (topology and affinity) and node selector terms for
//! existing nodes, with kube-scheduler's semantics.

use std::collections::BTreeMap;

use crate::model::LabelSelector;
use crate::requirements::{Operator, SelectorRequirement};

/// True when `labels` satisfy a label selector (an empty selector matches everything).
pub fn matches(sel: &LabelSelector, labels: &BTreeMap<String, String>) -> bool {
    sel.match_labels
        .iter()
        .all(|(k, v)| labels.get(k) == Some(v))
        && sel
            .match_expressions
            .iter()
            .all(|e| expression_matches(e, |k| labels.get(k).cloned()))
}

/// True when a node's labels satisfy one requirement, as kube-scheduler evaluates it.
pub fn expression_matches<F>(e: &SelectorRequirement, label: F) -> bool
where
    F: Fn(&str) -> Option<String>,
{
    let v = label(&e.key);
    let int = |s: &str| s.parse::<i64>().ok();
    match e.operator {
        Operator::In => v.is_some_and(|v| e.values.contains(&v)),
        Operator::NotIn => v.is_none_or(|v| !e.values.contains(&v)),
        Operator::Exists => v.is_some(),
        Operator::DoesNotExist => v.is_none(),
        Operator::Gt | Operator::Lt | Operator::Gte | Operator::Lte => {
            let (Some(n), Some(bound)) = (
                v.as_deref().and_then(int),
                e.values.first().and_then(|b| int(b)),
            ) else {
                return false;
            };
            match e.operator {
                Operator::Gt => n > bound,
                Operator::Lt => n < bound,
                Operator::Gte => n >= bound,
                _ => n <= bound,
            }
        }
    }
}

/// True when every expression of a node selector term matches.
pub fn term_matches<F>(term: &[SelectorRequirement], label: F) -> bool
where
    F: Fn(&str) -> Option<String>,
{
    term.iter().all(|e| expression_matches(e, &label))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn expr(key: &str, op: Operator, values: &[&str]) -> SelectorRequirement {
        SelectorRequirement {
            key: key.into(),
            operator: op,
            values: values.iter().map(|s| s.to_string()).collect(),
            min_values: None,
        }
    }

    #[test]
    fn match_labels_and_expressions() {
        let l = labels(&[("app", "web"), ("tier", "1")]);
        let mut s = LabelSelector::default();
        assert!(matches(&s, &l), "empty selector matches all");
        s.match_labels.insert("app".into(), "web".into());
        assert!(matches(&s, &l));
        s.match_expressions
            .push(expr("tier", Operator::In, &["1", "2"]));
        assert!(matches(&s, &l));
        s.match_expressions
            .push(expr("gone", Operator::DoesNotExist, &[]));
        assert!(matches(&s, &l));
        s.match_expressions
            .push(expr("tier", Operator::NotIn, &["1"]));
        assert!(!matches(&s, &l));
    }

    #[test]
    fn numeric_operators_need_integers() {
        let l = labels(&[("cpu", "8"), ("name", "x")]);
        let get = |k: &str| l.get(k).cloned();
        assert!(expression_matches(&expr("cpu", Operator::Gt, &["4"]), get));
        assert!(!expression_matches(&expr("cpu", Operator::Lt, &["4"]), get));
        assert!(expression_matches(&expr("cpu", Operator::Gte, &["8"]), get));
        assert!(!expression_matches(
            &expr("name", Operator::Gt, &["1"]),
            get
        ));
        assert!(!expression_matches(
            &expr("missing", Operator::Lt, &["1"]),
            get
        ));
    }
}
