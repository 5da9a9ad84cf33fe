//! `kerf sim --report FILE.html`: one self-contained page (inline SVG, no script, no network)
//! with the run's charts: nodes by instance type and capacity type, pending pods and cost per
//! hour over simulated time, disruptions and interruptions marked; one section per run.

use std::fmt::Write;

use crate::table::counted;
use jiff::Timestamp;
use kerf_sim::scenario::{Kind, Outcome, Sample};

const WIDTH: f64 = 860.0;
const HEIGHT: f64 = 200.0;
const LEFT: f64 = 56.0;
const BOTTOM: f64 = 24.0;
const COLORS: [&str; 10] = [
    "#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f",
    "#ff7f0e", "#d62728",
];

/// The whole page for one or more runs (Kerf's, and Karpenter's with `--compare`).
pub fn page(title: &str, runs: &[(&str, &Outcome)]) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>kerf sim: {}</title>\
         <style>body{{font-family:sans-serif;margin:24px;color:#222}}h2{{margin-top:32px}}\
         .chart{{margin:8px 0 20px}}.legend span{{margin-right:14px;font-size:13px}}\
         .legend i{{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:middle}}\
         table{{border-collapse:collapse;font-size:13px}}td,th{{padding:2px 10px;text-align:left}}</style>\
         </head><body>\n<h1>kerf sim: {}</h1>\n",
        esc(title),
        esc(title)
    );
    if runs.len() > 1 {
        h.push_str(&comparison(runs));
    }
    for (label, o) in runs {
        h.push_str(&section(label, o));
    }
    h.push_str("</body></html>\n");
    h
}

fn esc(s: &str) -> String {
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

fn section(label: &str, o: &Outcome) -> String {
    let id = label
        .to_lowercase()
        .replace(|c: char| !c.is_alphanumeric(), "-");
    let mut h = String::new();
    let _ = writeln!(
        h,
        "<section id=\"run-{id}\"><h2>{}</h2><p>simulated {} s; cost ${:.4}; {:.2} node-hours; \
         {} launched; {}; {}</p>",
        esc(label),
        o.simulated.as_secs(),
        o.cost,
        o.node_hours,
        counted(o.last.launched, "NodeClaim"),
        counted(o.last.disruptions(), "disruption"),
        counted(o.last.interruptions, "interruption")
    );
    let x = Axis::new(o.start, o.samples.last().map_or(o.start, |s| s.at));
    let shapes: Vec<String> = {
        let mut all: Vec<String> = o
            .samples
            .iter()
            .flat_map(|s| s.nodes.keys().cloned())
            .collect();
        all.sort();
        all.dedup();
        all
    };
    let node_series: Vec<(String, Vec<(Timestamp, f64)>)> = shapes
        .iter()
        .map(|k| {
            (
                k.clone(),
                points(&o.samples, |s| *s.nodes.get(k).unwrap_or(&0) as f64),
            )
        })
        .collect();
    h.push_str(&chart(
        &id,
        "nodes",
        "Nodes by instance type and capacity type",
        &x,
        &node_series,
        o,
    ));
    let pending = vec![(
        "pending pods".to_string(),
        points(&o.samples, |s| s.pending as f64),
    )];
    h.push_str(&chart(&id, "pending", "Pending pods", &x, &pending, o));
    let cost = vec![(
        "USD per hour".to_string(),
        points(&o.samples, |s| s.cost_per_hour),
    )];
    h.push_str(&chart(&id, "cost", "Cost per hour (USD)", &x, &cost, o));
    h.push_str("</section>\n");
    h
}

fn points(samples: &[Sample], f: impl Fn(&Sample) -> f64) -> Vec<(Timestamp, f64)> {
    samples.iter().map(|s| (s.at, f(s))).collect()
}

struct Axis {
    start: Timestamp,
    span: f64,
}

impl Axis {
    fn new(start: Timestamp, end: Timestamp) -> Self {
        let span = end.duration_since(start).as_secs_f64().max(1.0);
        Axis { start, span }
    }

    fn x(&self, t: Timestamp) -> f64 {
        LEFT + (WIDTH - LEFT - 10.0) * t.duration_since(self.start).as_secs_f64() / self.span
    }
}

fn chart(
    run: &str,
    name: &str,
    title: &str,
    x: &Axis,
    series: &[(String, Vec<(Timestamp, f64)>)],
    o: &Outcome,
) -> String {
    let max = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|(_, v)| *v))
        .fold(0.0_f64, f64::max)
        .max(1e-9);
    let y = |v: f64| HEIGHT - BOTTOM - (HEIGHT - BOTTOM - 10.0) * v / max;
    let mut svg = String::new();
    let _ = write!(
        svg,
        "<div class=\"chart\" id=\"{run}-{name}\"><h3>{}</h3><svg xmlns=\"http://www.w3.org/2000/svg\" \
         width=\"{WIDTH}\" height=\"{HEIGHT}\" role=\"img\">",
        esc(title)
    );
    let _ = write!(
        svg,
        "<line x1=\"{LEFT}\" y1=\"{0}\" x2=\"{WIDTH}\" y2=\"{0}\" stroke=\"#999\"/>\
         <line x1=\"{LEFT}\" y1=\"10\" x2=\"{LEFT}\" y2=\"{0}\" stroke=\"#999\"/>\
         <text x=\"{1}\" y=\"{2}\" font-size=\"11\" text-anchor=\"end\">{3}</text>\
         <text x=\"{1}\" y=\"{0}\" font-size=\"11\" text-anchor=\"end\">0</text>\
         <text x=\"{WIDTH}\" y=\"{HEIGHT}\" font-size=\"11\" text-anchor=\"end\">{4} min</text>",
        HEIGHT - BOTTOM,
        LEFT - 4.0,
        y(max) + 4.0,
        trim(max),
        (x.span / 60.0).round()
    );
    for e in &o.timeline {
        let (color, what) = match e.kind {
            Kind::Disruption => ("#d62728", "disruption"),
            Kind::Interruption => ("#ff7f0e", "interruption"),
            _ => continue,
        };
        let px = x.x(e.at);
        let _ = write!(
            svg,
            "<line class=\"marker {what}\" x1=\"{px:.1}\" y1=\"10\" x2=\"{px:.1}\" y2=\"{}\" \
             stroke=\"{color}\" stroke-dasharray=\"3,3\"><title>{}</title></line>",
            HEIGHT - BOTTOM,
            esc(&e.text)
        );
    }
    let mut legend = String::from("<div class=\"legend\">");
    for (i, (label, pts)) in series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let mut d = String::new();
        for (j, (t, v)) in pts.iter().enumerate() {
            let (px, py) = (x.x(*t), y(*v));
            if j == 0 {
                let _ = write!(d, "M{px:.1},{py:.1}");
            } else {
                let _ = write!(d, " H{px:.1} V{py:.1}");
            }
        }
        let _ = write!(
            svg,
            "<path class=\"series\" data-series=\"{}\" d=\"{d}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"/>",
            esc(label)
        );
        let _ = write!(
            legend,
            "<span><i style=\"background:{color}\"></i>{}</span>",
            esc(label)
        );
    }
    legend.push_str("</div>");
    svg.push_str("</svg>");
    svg.push_str(&legend);
    svg.push_str("</div>\n");
    svg
}

fn trim(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}
