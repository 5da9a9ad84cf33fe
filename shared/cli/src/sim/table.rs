//! The end of a run: the NodeClaims as `kubectl get nodeclaims` shows them, and the cost.

use std::time::Duration;

use kerf_sim::scenario::Outcome;

use kerf_sim::table::age;

use crate::table::{columns, counted};

/// `kubectl get nodeclaims` (NAME TYPE CAPACITY ZONE NODE READY AGE) at the end of the run.
pub fn claims(o: &Outcome) -> String {
    if o.last.claims.is_empty() {
        return "\nNo NodeClaims at the end.\n".into();
    }
    let header = ["NAME", "TYPE", "CAPACITY", "ZONE", "NODE", "READY", "AGE"];
    let mut rows: Vec<Vec<String>> = vec![header.iter().map(|h| h.to_string()).collect()];
    rows.extend(o.last.claims.iter().map(|c| {
        vec![
            c.name.clone(),
            c.instance_type.clone(),
            c.capacity_type.clone(),
            c.zone.clone(),
            c.node.clone(),
            if c.ready { "True" } else { "False" }.into(),
            age(o.last.at.duration_since(c.created).as_secs()),
        ]
    }));
    format!("\n{}", columns(&rows))
}

/// Cost and counts over the run.
pub fn summary(o: &Outcome, wall: Duration) -> String {
    let invariants = if o.violations.is_empty() {
        "invariants held (no orphan instance, no NodeClaim without its instance, none launched twice, no pod outside its volume's zone)\n".to_string()
    } else {
        let lines: Vec<String> = o.violations.iter().map(|v| format!("  {v}\n")).collect();
        format!("INVARIANTS VIOLATED:\n{}", lines.concat())
    };
    format!(
        "\n{}: simulated {} in {:.2} s; {} placed, {} launched, {}, {}; cost ${:.4} \
         ({:.2} node-hours); now {}, ${:.4}/h\n{invariants}",
        o.name,
        age(o.simulated.as_secs()),
        wall.as_secs_f64(),
        counted(o.last.placed, "pod"),
        counted(o.last.launched, "NodeClaim"),
        counted(o.measures.disruptions.values().sum::<usize>(), "disruption"),
        counted(o.last.interruptions, "interruption"),
        o.cost,
        o.node_hours,
        counted(o.last.claims.len(), "node"),
        o.last.cost_per_hour()
    )
}

/// Cost and node-hours of a run carried to `end` of simulated time: a run whose waits ended
/// sooner keeps its last nodes until then, so both runs are compared over the same span.
pub fn over(o: &Outcome, end: jiff::SignedDuration) -> (f64, f64) {
    let extra = (end - o.simulated).as_secs_f64().max(0.0) / 3600.0;
    (
        o.cost + o.last.billed_per_hour * extra,
        o.node_hours + o.last.billed_instances() as f64 * extra,
    )
}

/// The longest run's span: every run is compared over it ([`over`]).
pub fn span(runs: &[(&str, Outcome)]) -> jiff::SignedDuration {
    runs.iter()
        .map(|(_, o)| o.simulated)
        .max()
        .unwrap_or_default()
}

/// Kerf's run against Karpenter's decisions on the same scenario, over the same span.
pub fn comparison(runs: &[(&str, Outcome)]) -> String {
    let end = span(runs);
    let mut rows = vec![
        [
            "DECISIONS",
            "COST",
            "NODE-HOURS",
            "$/H AT END",
            "LAUNCHED",
            "DISRUPTIONS",
            "ASSERTIONS FAILED",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for (label, o) in runs {
        let (cost, hours) = over(o, end);
        rows.push(vec![
            label.to_string(),
            format!("${cost:.4}"),
            format!("{hours:.2}"),
            format!("${:.4}", o.last.billed_per_hour),
            o.last.launched.to_string(),
            o.last.disruptions().to_string(),
            o.failures.len().to_string(),
        ]);
    }
    let mut out = format!(
        "\nover {} of simulated time:\n{}",
        age(end.as_secs()),
        columns(&rows)
    );
    if let [(_, kerf), (_, other)] = runs {
        let (k, c) = (over(kerf, end).0, over(other, end).0);
        let pct = if c > 0.0 {
            100.0 * (c - k).abs() / c
        } else {
            0.0
        };
        let word = if k <= c { "less" } else { "more" };
        out.push_str(&format!(
            "Kerf's decisions cost ${:.4} {word} ({pct:.1}%) than Karpenter's on this scenario.\n",
            (c - k).abs()
        ));
        for f in &other.failures {
            out.push_str(&format!("  with Karpenter's decisions: {f}\n"));
        }
    }
    out
}
