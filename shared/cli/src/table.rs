//! Human-readable plan output, in the style of `kubectl get nodeclaims`.

use std::fmt::Write;

use kerf_engine::Plan;

/// Left-aligned columns separated by three spaces, like kubectl.
pub fn columns(rows: &[Vec<String>]) -> String {
    let n = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..n)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(String::len)
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in rows {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(i, cell)| format!("{cell:<w$}", w = widths[i]))
            .collect();
        let _ = writeln!(out, "{}", line.join("   ").trim_end());
    }
    out
}

/// The plan as tables: launches, unschedulable pods, disruptions, summary.
pub fn plan(p: &Plan) -> String {
    let mut out = String::new();
    let mut rows = vec![
        ["NAME", "TYPE", "CAPACITY", "ZONE", "PODS", "PRICE"]
            .map(String::from)
            .to_vec(),
    ];
    for l in &p.launches {
        rows.push(vec![
            l.node_claim.clone(),
            l.instance_type.clone(),
            l.capacity_type.to_string(),
            l.zone.clone(),
            l.pods.len().to_string(),
            money(l.price),
        ]);
    }
    out.push_str(&columns(&rows));
    if !p.nominations.is_empty() {
        let mut rows = vec![vec!["NOMINATED POD".to_string(), "NODE".to_string()]];
        rows.extend(
            p.nominations
                .iter()
                .map(|n| vec![n.pod.clone(), n.node.clone()]),
        );
        out.push('\n');
        out.push_str(&columns(&rows));
    }
    if !p.unschedulable.is_empty() {
        let mut rows = vec![vec!["UNSCHEDULABLE POD".to_string(), "REASON".to_string()]];
        rows.extend(
            p.unschedulable
                .iter()
                .map(|u| vec![u.pod.clone(), u.reason.clone()]),
        );
        out.push('\n');
        out.push_str(&columns(&rows));
    }
    disruptions(p, &mut out);
    cost_limits(p, &mut out);
    let s = &p.summary;
    let _ = writeln!(
        out,
        "\n{} pending, {} scheduled, {} unschedulable; {} costing ${}/hour",
        s.pending_pods,
        s.scheduled_pods,
        s.unschedulable_pods,
        counted(s.new_node_claims, "new nodeclaim"),
        money(s.new_hourly_cost)
    );
    if !p.disruptions.is_empty() || !p.skipped.is_empty() {
        let _ = writeln!(
            out,
            "{} of {} saving ${}/hour; {} left alone",
            counted(s.disruptions, "disruption"),
            counted(s.disrupted_node_claims, "nodeclaim"),
            money(s.savings_per_hour),
            counted(p.skipped.len(), "node")
        );
    }
    out
}

/// NodePools with a dollar limit: the limit, what runs now, what the plan is charged, and
/// what is left (USD per hour).
fn cost_limits(p: &Plan, out: &mut String) {
    if p.cost_limits.is_empty() {
        return;
    }
    let mut rows = vec![
        ["NODEPOOL", "MAX $/HOUR", "CURRENT", "PLANNED", "REMAINING"]
            .map(String::from)
            .to_vec(),
    ];
    rows.extend(p.cost_limits.iter().map(|c| {
        vec![
            c.node_pool.clone(),
            money(c.max_cost_per_hour),
            money(c.current_cost_per_hour),
            money(c.planned_cost_per_hour),
            money(c.remaining_per_hour),
        ]
    }));
    out.push('\n');
    out.push_str(&columns(&rows));
}

/// `1 node`, `2 nodes`: a count and its noun, plural unless the count is one.
pub fn counted(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// Disruption commands, then the managed nodes left alone with why.
fn disruptions(p: &Plan, out: &mut String) {
    if !p.disruptions.is_empty() {
        let mut rows = vec![
            [
                "REASON",
                "ACTION",
                "NODECLAIMS",
                "REPLACEMENTS",
                "SAVINGS/H",
            ]
            .map(String::from)
            .to_vec(),
        ];
        rows.extend(p.disruptions.iter().map(|d| {
            let repl: Vec<String> = d
                .replacements
                .iter()
                .map(|l| format!("{} {}", l.instance_type, l.capacity_type))
                .collect();
            vec![
                d.reason.as_str().into(),
                d.action.as_str().into(),
                d.node_claims.join(","),
                if repl.is_empty() {
                    "-".into()
                } else {
                    repl.join(",")
                },
                money(d.savings_per_hour),
            ]
        }));
        out.push('\n');
        out.push_str(&columns(&rows));
    }
    if !p.skipped.is_empty() {
        let mut rows = vec![
            ["LEFT ALONE", "NODE", "KIND", "REASON"]
                .map(String::from)
                .to_vec(),
        ];
        rows.extend(p.skipped.iter().map(|s| {
            let kind = serde_json::to_value(s.kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            vec![s.node_claim.clone(), s.node.clone(), kind, s.reason.clone()]
        }));
        out.push('\n');
        out.push_str(&columns(&rows));
    }
}

/// Dollars to four decimals; amounts that round to zero print as `0.0000`, never `-0.0000`.
pub fn money(x: f64) -> String {
    let s = format!("{x:.4}");
    match s.strip_prefix('-') {
        Some(rest) if rest.bytes().all(|b| b == b'0' || b == b'.') => rest.to_string(),
        _ => s,
    }
}
