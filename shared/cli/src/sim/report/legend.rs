//! A chart's legend, below it: every series, the total of a stack, the step marks, the
//! disruption and interruption markers, and the shading after a run's end.

use super::chart::{Chart, Look};
use super::esc;
use super::series::Marker;

/// One legend entry: a swatch (`area`, `line`, `dash` or `step`) in `color`, and its words.
fn entry(kind: &str, color: &str, label: &str) -> String {
    format!(
        "<span class=\"legend-entry\" data-legend=\"{0}\"><i class=\"{kind}\" \
         style=\"--c:{color}\"></i>{0}</span>",
        esc(label)
    )
}

/// Every series, the total, the step marks, the markers and the shading the chart draws.
pub(super) fn legend(c: &Chart<'_>, span: f64) -> String {
    let mut l = String::from("<div class=\"legend\">");
    let swatch = match c.look {
        Look::Stacked => "area",
        Look::Line => "line",
    };
    for s in &c.series {
        l.push_str(&entry(swatch, s.color, &s.label));
    }
    if c.look == Look::Stacked {
        l.push_str(&entry("line", "#222", "total"));
    }
    if let Some(marks) = c.marks {
        l.push_str(&entry("step", "#555", "a step starts (numbered as listed)"));
        for m in [Marker::Disruption, Marker::Interruption] {
            let none = !marks.events.iter().any(|(_, k, _)| *k == m);
            let label = if none {
                format!("{} (none)", m.name())
            } else {
                m.name().to_string()
            };
            l.push_str(&entry("dash", m.color(), &label));
        }
    }
    if c.end < span - 0.5 {
        l.push_str(&entry("area", "#f2f2f2", "after this run ended"));
    }
    l.push_str("</div>");
    l
}
