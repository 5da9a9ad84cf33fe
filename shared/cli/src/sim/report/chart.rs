//! One chart: an inline SVG of the series (stacked areas with their total, or a line over a
//! light area) in their frame of gridlines and axes ([`super::frame`]), the run's steps,
//! disruptions and interruptions over them ([`super::marks`]), the time after a run's end
//! shaded, and the legend below ([`super::legend`]).

use std::fmt::Write;

use super::axis::{TimeAxis, ValueAxis};
use super::esc;
use super::series::{Marks, Series};
use super::{frame, legend, marks};

const WIDTH: f64 = 900.0;
pub(super) const HEIGHT: f64 = 250.0;
/// Room left of the plot for the value ticks' labels and the axis title.
pub(super) const LEFT: f64 = 78.0;
/// Room right of the plot for the total's last value.
const RIGHT: f64 = 40.0;
/// Room above the plot for the steps' numbers.
pub(super) const TOP: f64 = 26.0;
/// Room below the plot for the time ticks' labels and the axis title.
const BOTTOM: f64 = 42.0;

/// How the series are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Look {
    /// Areas stacked bottom first, their total a dark line along the top.
    Stacked,
    /// Each series a line over a light area down to zero.
    Line,
}

/// A chart to draw.
#[derive(Debug)]
pub struct Chart<'a> {
    pub id: String,
    pub title: &'a str,
    /// One line under the title: what the values are.
    pub note: &'a str,
    pub look: Look,
    pub series: Vec<Series>,
    /// The run's steps, disruptions and interruptions (none on a difference).
    pub marks: Option<&'a Marks>,
    /// When the run ended (seconds); the time after it, up to the axis' end, is shaded.
    pub end: f64,
}

/// Where values and times land in the SVG.
pub(super) struct Plot<'a> {
    pub(super) x: &'a TimeAxis,
    pub(super) y: &'a ValueAxis,
}

impl Plot<'_> {
    pub(super) fn px(&self, t: f64) -> f64 {
        LEFT + (WIDTH - LEFT - RIGHT) * (t / self.x.span).clamp(0.0, 1.0)
    }

    pub(super) fn py(&self, v: f64) -> f64 {
        let bottom = HEIGHT - BOTTOM;
        let span = (self.y.max - self.y.min).max(f64::MIN_POSITIVE);
        bottom - (bottom - TOP) * ((v - self.y.min) / span).clamp(0.0, 1.0)
    }

    pub(super) fn right(&self) -> f64 {
        WIDTH - RIGHT
    }

    pub(super) fn bottom(&self) -> f64 {
        HEIGHT - BOTTOM
    }
}

/// The chart's HTML: a heading, the SVG and the legend.
pub fn draw(c: &Chart<'_>, x: &TimeAxis, y: &ValueAxis) -> String {
    let p = Plot { x, y };
    let mut h = format!(
        "<div class=\"chart\" id=\"{}\"><h3>{}</h3><p class=\"note\">{}</p>\
         <svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{HEIGHT}\" \
         viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\" aria-label=\"{}\">",
        esc(&c.id),
        esc(c.title),
        esc(c.note),
        esc(c.title)
    );
    h.push_str(&frame::grid(&p));
    h.push_str(&ended(&p, c.end));
    match c.look {
        Look::Stacked => h.push_str(&stacked(&p, &c.series, c.end)),
        Look::Line => h.push_str(&lines(&p, &c.series, c.end)),
    }
    if let Some(m) = c.marks {
        h.push_str(&marks::steps(&p, &m.steps));
        h.push_str(&marks::markers(&p, &m.events));
    }
    h.push_str(&frame::x_axis(&p));
    h.push_str(&frame::y_axis(&p));
    h.push_str("</svg>");
    h.push_str(&legend::legend(c, p.x.span));
    h.push_str("</div>\n");
    h
}

/// The time after the run's end, shaded.
fn ended(p: &Plot<'_>, end: f64) -> String {
    if end >= p.x.span - 0.5 {
        return String::new();
    }
    let x = p.px(end);
    format!(
        "<rect class=\"ended\" x=\"{x:.1}\" y=\"{TOP}\" width=\"{:.1}\" height=\"{:.1}\" \
         fill=\"#f2f2f2\"><title>the run ended at {}</title></rect>",
        p.right() - x,
        p.bottom() - TOP,
        p.x.label(end)
    )
}

/// A step path along `top` (values holding from each time) from the first time to `end`;
/// with a `base` (at the same times), back along it to close an area.
fn outline(p: &Plot<'_>, top: &[(f64, f64)], base: Option<&[(f64, f64)]>, end: f64) -> String {
    let (Some(first), Some(last)) = (top.first(), top.last()) else {
        return String::new();
    };
    let mut d = format!("M{:.1},{:.1}", p.px(first.0), p.py(first.1));
    for (t, v) in &top[1..] {
        let _ = write!(d, " H{:.1} V{:.1}", p.px(*t), p.py(*v));
    }
    let _ = write!(d, " H{:.1}", p.px(end.max(last.0)));
    if let Some(base) = base {
        for (i, (t, v)) in base.iter().enumerate().rev() {
            let _ = write!(d, " V{:.1}", p.py(*v));
            if i > 0 {
                let _ = write!(d, " H{:.1}", p.px(*t));
            }
        }
        let _ = write!(d, " H{:.1} Z", p.px(first.0));
    }
    d
}

/// The line of `s` and its light area down to zero.
fn lines(p: &Plot<'_>, series: &[Series], end: f64) -> String {
    let mut g = String::from("<g class=\"lines\">");
    for s in series {
        let top = outline(p, &s.points, None, end);
        let zero: Vec<(f64, f64)> = s.points.iter().map(|(t, _)| (*t, 0.0)).collect();
        let area = outline(p, &s.points, Some(&zero), end);
        let _ = write!(
            g,
            "<path class=\"series-area\" d=\"{area}\" fill=\"{0}\" fill-opacity=\"0.12\"/>\
             <path class=\"series line\" data-series=\"{1}\" d=\"{top}\" fill=\"none\" \
             stroke=\"{0}\" stroke-width=\"2\"><title>{1}</title></path>",
            s.color,
            esc(&s.label)
        );
    }
    g.push_str("</g>");
    g
}

/// `series` stacked bottom first (all at the same times), and their total along the top,
/// its last value written after the end.
fn stacked(p: &Plot<'_>, series: &[Series], end: f64) -> String {
    let mut g = String::from("<g class=\"stack\">");
    let mut base: Vec<(f64, f64)> = series
        .first()
        .map(|s| s.points.iter().map(|(t, _)| (*t, 0.0)).collect())
        .unwrap_or_default();
    for s in series {
        let top: Vec<(f64, f64)> = base
            .iter()
            .zip(&s.points)
            .map(|((t, b), (_, v))| (*t, b + v))
            .collect();
        let _ = write!(
            g,
            "<path class=\"series stacked\" data-series=\"{0}\" d=\"{1}\" fill=\"{2}\" \
             fill-opacity=\"0.85\" stroke=\"#fff\" stroke-width=\"0.5\"><title>{0}</title></path>",
            esc(&s.label),
            outline(p, &top, Some(&base), end),
            s.color
        );
        base = top;
    }
    if let Some(&(_, last)) = base.last() {
        let _ = write!(
            g,
            "<path class=\"series total\" data-series=\"total\" d=\"{}\" fill=\"none\" \
             stroke=\"#222\" stroke-width=\"1.5\"><title>total</title></path>\
             <text class=\"total-label\" x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" \
             font-weight=\"bold\">{}</text>",
            outline(p, &base, None, end),
            p.px(end) + 4.0,
            p.py(last) + 4.0,
            p.y.label(last)
        );
    }
    g.push_str("</g>");
    g
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::report::axis::Unit;

    fn series(label: &str, points: &[(f64, f64)]) -> Series {
        Series {
            label: label.into(),
            color: "#123456",
            points: points.to_vec(),
        }
    }

    /// The `d` of the path whose `data-series` is `label`.
    fn path<'h>(html: &'h str, label: &str) -> &'h str {
        let from = html
            .find(&format!("data-series=\"{label}\""))
            .unwrap_or_else(|| panic!("no series {label}: {html}"));
        let d = &html[from..];
        let d = &d[d.find("d=\"").unwrap() + 3..];
        &d[..d.find('"').unwrap()]
    }

    #[test]
    fn stacked_series_sit_on_the_ones_below_and_the_total_runs_along_the_top() {
        let (x, y) = (
            TimeAxis::new(100.0),
            ValueAxis::new([3.0], Unit::Count("nodes")),
        );
        let p = Plot { x: &x, y: &y };
        let c = Chart {
            id: "kerf-nodes".into(),
            title: "Nodes",
            note: "",
            look: Look::Stacked,
            series: vec![
                series("a/spot", &[(0.0, 1.0), (50.0, 2.0), (100.0, 2.0)]),
                series("b/on-demand", &[(0.0, 1.0), (50.0, 1.0), (100.0, 0.0)]),
            ],
            marks: None,
            end: 100.0,
        };
        let html = draw(&c, &x, &y);
        // b's area starts on top of a's one node and reaches two.
        let (one, two, three) = (p.py(1.0), p.py(2.0), p.py(3.0));
        assert!(
            path(&html, "b/on-demand").starts_with(&format!("M{LEFT:.1},{two:.1}")),
            "{html}"
        );
        assert!(path(&html, "b/on-demand").ends_with(&format!("V{one:.1} H{LEFT:.1} Z")));
        assert_eq!(
            path(&html, "total"),
            format!(
                "M{LEFT:.1},{two:.1} H{:.1} V{three:.1} H{:.1} V{two:.1} H{:.1}",
                p.px(50.0),
                p.px(100.0),
                p.px(100.0)
            )
        );
        assert!(html.contains(">2</text>"), "the total's last value: {html}");
        assert!(html.contains("data-legend=\"total\""));
        assert!(
            !html.contains("class=\"step-mark\""),
            "no steps on this chart"
        );
    }

    #[test]
    fn a_run_that_ended_before_the_axis_has_the_rest_shaded() {
        let (x, y) = (
            TimeAxis::new(300.0),
            ValueAxis::new([1.0], Unit::Count("pods")),
        );
        let c = Chart {
            id: "kerf-pending".into(),
            title: "Pending pods",
            note: "",
            look: Look::Line,
            series: vec![series("pending pods", &[(0.0, 1.0), (200.0, 0.0)])],
            marks: None,
            end: 200.0,
        };
        let html = draw(&c, &x, &y);
        assert!(html.contains("class=\"ended\""), "{html}");
        assert!(html.contains("the run ended at 3:20"));
        assert!(html.contains("data-legend=\"after this run ended\""));
    }
}
