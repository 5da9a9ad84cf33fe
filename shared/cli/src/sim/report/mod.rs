//! `kerf sim --report FILE.html`: one self-contained page (inline SVG, no script, no network)
//! with the run's charts over simulated time: the instances EC2 bills stacked by instance type
//! and capacity type with their total, pending pods and cost per hour, each with a time axis
//! (m:ss or h:mm from the run's start), a value axis with its unit, the scenario's steps
//! numbered along the top and disruptions and interruptions marked. Runs compared side by
//! side share one time scale and one value scale per chart, and a last row charts their
//! difference.

mod axis;
mod chart;
mod frame;
mod legend;
mod marks;
mod series;

use std::fmt::Write;

use crate::table::counted;
use kerf_sim::scenario::Outcome;

use axis::{TimeAxis, Unit, ValueAxis};
use chart::{Chart, Look, draw};
use series::{Marks, Series};

const STYLE: &str = "body{font-family:sans-serif;margin:24px;color:#222;max-width:920px}\
    h2{margin-top:32px;border-bottom:1px solid #ddd}h3{margin:18px 0 2px;font-size:16px}\
    .chart{margin:6px 0 18px}.note{margin:0 0 4px;font-size:12px;color:#555}\
    .legend{font-size:12px;margin-left:78px}.legend-entry{margin-right:14px;white-space:nowrap}\
    .legend i{display:inline-block;width:14px;height:10px;margin-right:5px;\
    vertical-align:middle;background:var(--c);border:1px solid rgba(0,0,0,.15)}\
    .legend i.line,.legend i.dash{height:0;border:0;border-top:2px solid var(--c);background:none}\
    .legend i.dash{border-top-style:dashed}\
    .legend i.step{width:0;height:12px;border:0;border-left:1px solid var(--c);background:none;\
    margin:0 9px 0 6px}\
    ol.steps{font-size:13px;padding-left:28px}ol.steps .at{color:#555;margin-right:6px;\
    font-variant-numeric:tabular-nums}\
    table{border-collapse:collapse;font-size:13px}td,th{padding:2px 10px;text-align:left}";

/// The whole page for one or more runs (Kerf's, and Karpenter's with `--compare`).
pub fn page(title: &str, runs: &[(&str, &Outcome)]) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>kerf sim: {0}\
         </title><style>{STYLE}</style></head><body>\n<h1>kerf sim: {0}</h1>\n",
        esc(title)
    );
    if runs.len() > 1 {
        h.push_str(&comparison(runs));
    }
    let shapes = series::shapes(runs.iter().map(|(_, o)| *o));
    let charted: Vec<Charted> = runs
        .iter()
        .map(|(label, o)| Charted::new(label, o, &shapes))
        .collect();
    let scales = Scales::new(&charted);
    for c in &charted {
        h.push_str(&section(c, &scales));
    }
    if let [a, b] = charted.as_slice() {
        h.push_str(&difference(a, b, &scales.time));
    }
    h.push_str("</body></html>\n");
    h
}

pub(super) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn comparison(runs: &[(&str, &Outcome)]) -> String {
    let end = runs
        .iter()
        .map(|(_, o)| o.simulated)
        .max()
        .unwrap_or_default();
    let mut h = format!(
        "<p>Over {} s of simulated time (a run whose waits ended sooner keeps its last nodes \
         until then):</p><table id=\"comparison\"><tr><th>decisions</th><th>cost (USD)</th>\
         <th>node-hours</th><th>NodeClaims launched</th><th>disruptions</th></tr>\n",
        end.as_secs()
    );
    for (label, o) in runs {
        let (cost, hours) = super::table::over(o, end);
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{:.4}</td><td>{:.2}</td><td>{}</td><td>{}</td></tr>",
            esc(label),
            cost,
            hours,
            o.last.launched,
            o.last.disruptions()
        );
    }
    h.push_str("</table>\n");
    h
}

/// One run's series and marks.
struct Charted<'a> {
    label: &'a str,
    /// For the ids: the label in lower case, dashes for the rest.
    id: String,
    o: &'a Outcome,
    nodes: Vec<Series>,
    total: Series,
    pending: Series,
    cost: Series,
    marks: Marks,
    /// Seconds from the start to the run's end.
    end: f64,
}

impl<'a> Charted<'a> {
    fn new(label: &'a str, o: &'a Outcome, shapes: &[String]) -> Self {
        Charted {
            label,
            id: label
                .to_lowercase()
                .replace(|c: char| !c.is_alphanumeric(), "-"),
            o,
            nodes: series::nodes(o, shapes),
            total: series::total(o),
            pending: series::of(o, "pending pods", "#9467bd", |s| s.pending as f64),
            cost: series::of(o, "USD per hour", "#1f77b4", |s| s.cost_per_hour),
            marks: series::marks(o),
            end: o.simulated.as_secs_f64().max(
                o.samples
                    .last()
                    .map_or(0.0, |s| series::offset(o.start, s.at)),
            ),
        }
    }
}

/// One time scale for every run, and one value scale per chart: runs side by side read
/// against the same ticks.
struct Scales {
    time: TimeAxis,
    nodes: ValueAxis,
    pending: ValueAxis,
    cost: ValueAxis,
}

impl Scales {
    fn new(runs: &[Charted<'_>]) -> Self {
        let all = |f: fn(&Charted<'_>) -> f64| runs.iter().map(f).collect::<Vec<f64>>();
        Scales {
            time: TimeAxis::new(runs.iter().map(|c| c.end).fold(0.0, f64::max)),
            nodes: ValueAxis::new(all(|c| top(&c.total)), Unit::Count("nodes")),
            pending: ValueAxis::new(all(|c| top(&c.pending)), Unit::Count("pods")),
            cost: ValueAxis::new(all(|c| top(&c.cost)), Unit::UsdPerHour),
        }
    }
}

/// The highest value of `s` (0 when it has none).
fn top(s: &Series) -> f64 {
    s.values().fold(0.0, f64::max)
}

/// A run's heading, summary, steps and its three charts.
fn section(c: &Charted<'_>, scales: &Scales) -> String {
    let o = c.o;
    let mut h = String::new();
    let _ = writeln!(
        h,
        "<section id=\"run-{}\"><h2>{}</h2><p>simulated {} s; cost ${:.4}; {:.2} node-hours; \
         {} launched; {}; {}</p>",
        c.id,
        esc(c.label),
        o.simulated.as_secs(),
        o.cost,
        o.node_hours,
        counted(o.last.launched, "NodeClaim"),
        counted(o.last.disruptions(), "disruption"),
        counted(o.last.interruptions, "interruption")
    );
    h.push_str(&steps_list(&c.marks, &scales.time));
    let chart = |name: &str, title, note, look, series: Vec<Series>| Chart {
        id: format!("{}-{name}", c.id),
        title,
        note,
        look,
        series,
        marks: Some(&c.marks),
        end: c.end,
    };
    let nodes = chart(
        "nodes",
        "Nodes by instance type and capacity type",
        "Instances EC2 bills, stacked; a draining node counts until its instance is terminated.",
        Look::Stacked,
        c.nodes.clone(),
    );
    h.push_str(&draw(&nodes, &scales.time, &scales.nodes));
    let pending = chart(
        "pending",
        "Pending pods",
        "Pods not yet bound to a node.",
        Look::Line,
        vec![c.pending.clone()],
    );
    h.push_str(&draw(&pending, &scales.time, &scales.pending));
    let cost = chart(
        "cost",
        "Cost per hour (USD)",
        "What the instances above cost per hour, draining ones included.",
        Look::Line,
        vec![c.cost.clone()],
    );
    h.push_str(&draw(&cost, &scales.time, &scales.cost));
    h.push_str("</section>\n");
    h
}

/// The run's steps, numbered as on the charts, with when each started.
fn steps_list(m: &Marks, time: &TimeAxis) -> String {
    if m.steps.is_empty() {
        return String::new();
    }
    let mut h = String::from("<ol class=\"steps\">");
    for s in &m.steps {
        let _ = write!(
            h,
            "<li value=\"{}\"><span class=\"at\">{}</span>{}</li>",
            s.number,
            time.label(s.at),
            esc(&s.text)
        );
    }
    h.push_str("</ol>\n");
    h
}

/// The last row: `a` minus `b` in nodes, cost per hour and pending pods, on the same time
/// scale.
fn difference(a: &Charted<'_>, b: &Charted<'_>, time: &TimeAxis) -> String {
    let label = format!("{} minus {}", a.label, b.label);
    let mut h = format!(
        "<section id=\"difference\"><h2>{}</h2><p>At each moment, {}'s value minus {}'s: \
         above zero {} has more. A run that ended sooner keeps its last value.</p>\n",
        esc(&label),
        esc(a.label),
        esc(b.label),
        esc(a.label)
    );
    let rows = [
        (
            "nodes",
            "Nodes",
            "Instances EC2 bills.",
            &a.total,
            &b.total,
            Unit::Count("nodes"),
        ),
        (
            "cost",
            "Cost per hour (USD)",
            "USD per hour.",
            &a.cost,
            &b.cost,
            Unit::UsdPerHour,
        ),
        (
            "pending",
            "Pending pods",
            "Pods not yet bound.",
            &a.pending,
            &b.pending,
            Unit::Count("pods"),
        ),
    ];
    for (name, title, note, x, y, unit) in rows {
        let d = series::difference(&label, x, y);
        let scale = ValueAxis::new(d.values(), unit).signed();
        let c = Chart {
            id: format!("difference-{name}"),
            title,
            note,
            look: Look::Line,
            end: time.span,
            series: vec![d],
            marks: None,
        };
        h.push_str(&draw(&c, time, &scale));
    }
    h.push_str("</section>\n");
    h
}
