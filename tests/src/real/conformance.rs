//! The conformance diff between Kerf's in-process API server and kube-apiserver: the answers
//! two servers gave to the same replayed requests ([`super::replay`]), compared step by step
//! and grouped by request class (method, path with names and namespaces as placeholders, query
//! keys), so each kind of difference is listed once with how often it occurred.

use std::collections::{BTreeMap, BTreeSet};

use super::replay::{Answer, Step};

/// `GET /api/v1/namespaces/{ns}/pods/{name}?labelSelector`: a request's class.
pub fn class(method: &str, uri: &str) -> String {
    let (path, query) = uri.split_once('?').unwrap_or((uri, ""));
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let start = match segs.first() {
        Some(&"api") => 2,
        Some(&"apis") => 3,
        _ => segs.len(),
    };
    let mut out: Vec<String> = segs.iter().take(start).map(|s| s.to_string()).collect();
    let mut rest = segs.get(start..).unwrap_or_default();
    if rest.len() > 2 && rest[0] == "namespaces" {
        out.extend(["namespaces".to_string(), "{ns}".to_string()]);
        rest = &rest[2..];
    }
    for (i, s) in rest.iter().enumerate() {
        out.push(if i == 1 {
            "{name}".into()
        } else {
            s.to_string()
        });
    }
    let mut keys: Vec<&str> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| p.split_once('=').map_or(p, |(k, _)| k))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    let q = if keys.is_empty() {
        String::new()
    } else {
        format!("?{}", keys.join("&"))
    };
    format!("{method} /{}{q}", out.join("/"))
}

/// How the two answers to one step differ, one line per difference (empty: they agree).
pub fn differences(in_process: &Answer, real: &Answer) -> Vec<String> {
    let mut out = Vec::new();
    if in_process.status != real.status {
        let why = |a: &Answer| {
            let m: String = a.message.chars().take(160).collect();
            if m.is_empty() {
                String::new()
            } else {
                format!(" ({m})")
            }
        };
        out.push(format!(
            "status {}{} here, {}{} on kube-apiserver",
            in_process.status,
            why(in_process),
            real.status,
            why(real)
        ));
    }
    if in_process.kind != real.kind {
        out.push(format!(
            "kind {:?} here, {:?} on kube-apiserver",
            in_process.kind, real.kind
        ));
    }
    if in_process.reason != real.reason {
        out.push(format!(
            "reason {:?} here, {:?} on kube-apiserver",
            in_process.reason, real.reason
        ));
    }
    // Shapes are compared between replies of the same kind and status only.
    if in_process.status == real.status && in_process.kind == real.kind {
        let only = |a: &BTreeSet<String>, b: &BTreeSet<String>| -> Vec<String> {
            a.difference(b).cloned().collect()
        };
        for p in only(&real.shape, &in_process.shape) {
            out.push(format!("field {p} only on kube-apiserver"));
        }
        for p in only(&in_process.shape, &real.shape) {
            out.push(format!("field {p} only here"));
        }
    }
    out
}

/// Every difference, by request class and then by difference, with how many steps showed it.
pub type Report = BTreeMap<String, BTreeMap<String, usize>>;

/// Compares the answers of both servers to the same steps.
pub fn diff(steps: &[Step], in_process: &[Answer], real: &[Answer]) -> Report {
    let mut report = Report::new();
    for ((step, a), b) in steps.iter().zip(in_process).zip(real) {
        for d in differences(a, b) {
            *report
                .entry(class(&step.method, &step.uri))
                .or_default()
                .entry(d)
                .or_default() += 1;
        }
    }
    report
}

/// A difference written down, with why it is harmless: it covers every reported difference
/// whose class contains `class` and whose text contains `difference`.
#[derive(Debug, Clone, Copy)]
pub struct Known {
    pub class: &'static str,
    pub difference: &'static str,
    pub why: &'static str,
}

/// The differences of `report` no [`Known`] entry covers, as `class: difference (n×)`.
pub fn unexplained(report: &Report, known: &[Known]) -> Vec<String> {
    let mut out = Vec::new();
    for (class, diffs) in report {
        for (d, n) in diffs {
            let covered = known
                .iter()
                .any(|k| class.contains(k.class) && d.contains(k.difference));
            if !covered {
                out.push(format!("{class}: {d} ({n}×)"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_hide_names_and_namespaces_and_keep_subresources_and_query_keys() {
        assert_eq!(
            class(
                "POST",
                "/api/v1/namespaces/default/pods/inflate-1/eviction?dryRun=All"
            ),
            "POST /api/v1/namespaces/{ns}/pods/{name}/eviction?dryRun"
        );
        assert_eq!(
            class(
                "GET",
                "/apis/karpenter.sh/v1/nodeclaims?labelSelector=a%3Db&limit=500"
            ),
            "GET /apis/karpenter.sh/v1/nodeclaims?labelSelector&limit"
        );
        assert_eq!(
            class("GET", "/api/v1/namespaces/kerf"),
            "GET /api/v1/namespaces/{name}"
        );
        assert_eq!(class("GET", "/apis"), "GET /apis");
    }

    #[test]
    fn a_known_difference_covers_only_what_it_names() {
        let mut report = Report::new();
        report.entry("GET /api/v1/pods".into()).or_default().insert(
            "field .items[].spec.dnsPolicy only on kube-apiserver".into(),
            3,
        );
        report
            .entry("GET /api/v1/nodes".into())
            .or_default()
            .insert("status 200 here, 404 on kube-apiserver".into(), 1);
        let known = [Known {
            class: "/pods",
            difference: ".spec.dnsPolicy",
            why: "defaulting",
        }];
        assert_eq!(
            unexplained(&report, &known),
            ["GET /api/v1/nodes: status 200 here, 404 on kube-apiserver (1×)"]
        );
    }
}
