//! What happened during a run, drawn over a chart: a numbered line where each step starts
//! (steps starting together share one), and a dashed line at each disruption and
//! interruption, the timeline's lines in their tooltips.

use std::fmt::Write;

use super::chart::{Plot, TOP};
use super::esc;
use super::series::{Marker, StepMark};

/// Steps starting closer than this (in pixels) share one mark.
const STEP_GAP: f64 = 30.0;

/// The steps in groups, each starting less than [`STEP_GAP`] after its first.
fn grouped<'m>(p: &Plot<'_>, steps: &'m [StepMark]) -> Vec<&'m [StepMark]> {
    let mut groups: Vec<&[StepMark]> = Vec::new();
    let mut from = 0;
    for i in 1..=steps.len() {
        let split = steps
            .get(i)
            .is_none_or(|s| p.px(s.at) - p.px(steps[from].at) >= STEP_GAP);
        if split {
            groups.push(&steps[from..i]);
            from = i;
        }
    }
    groups
}

/// A numbered line at each step's start (steps starting together share one: `2–4`), each
/// step's line in its tooltip.
pub(super) fn steps(p: &Plot<'_>, steps: &[StepMark]) -> String {
    let mut g = String::from("<g class=\"steps\">");
    for group in grouped(p, steps) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let numbers = if first.number == last.number {
            first.number.to_string()
        } else {
            format!("{}\u{2013}{}", first.number, last.number)
        };
        let tip: Vec<String> = group
            .iter()
            .map(|s| format!("step {} at {}: {}", s.number, p.x.label(s.at), s.text))
            .collect();
        let x = p.px(first.at);
        let _ = write!(
            g,
            "<g class=\"step-mark\" data-steps=\"{numbers}\"><title>{}</title>\
             <line x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#555\" \
             stroke-width=\"1\" stroke-opacity=\"0.7\"/><text class=\"step-label\" x=\"{x:.1}\" \
             y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\" fill=\"#333\">{numbers}</text></g>",
            esc(&tip.join("\n")),
            TOP - 6.0,
            p.bottom(),
            TOP - 9.0
        );
    }
    g.push_str("</g>");
    g
}

/// A dashed line at each disruption and interruption (those at the same moment share one).
pub(super) fn markers(p: &Plot<'_>, events: &[(f64, Marker, String)]) -> String {
    let mut g = String::from("<g class=\"markers\">");
    let mut i = 0;
    while i < events.len() {
        let (at, kind, _) = &events[i];
        let x = p.px(*at);
        let same = events[i..]
            .iter()
            .take_while(|(t, k, _)| k == kind && (p.px(*t) - x).abs() < 1.5)
            .count();
        let tip: Vec<&str> = events[i..i + same].iter().map(|e| e.2.as_str()).collect();
        let _ = write!(
            g,
            "<line class=\"marker {}\" x1=\"{x:.1}\" y1=\"{TOP}\" x2=\"{x:.1}\" y2=\"{:.1}\" \
             stroke=\"{}\" stroke-width=\"1.5\" stroke-dasharray=\"4,3\"><title>{}</title></line>",
            kind.name(),
            p.bottom(),
            kind.color(),
            esc(&tip.join("\n"))
        );
        i += same;
    }
    g.push_str("</g>");
    g
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::report::axis::{TimeAxis, Unit, ValueAxis};

    fn step(at: f64, number: usize) -> StepMark {
        StepMark {
            at,
            number,
            text: format!("step {number} & more"),
        }
    }

    #[test]
    fn steps_starting_together_share_one_numbered_mark() {
        let (x, y) = (
            TimeAxis::new(105.0),
            ValueAxis::new([4.0], Unit::Count("nodes")),
        );
        let p = Plot { x: &x, y: &y };
        let all = [
            step(0.0, 1),
            step(53.0, 2),
            step(53.0, 3),
            step(54.0, 4),
            step(105.0, 5),
        ];
        let svg = steps(&p, &all);
        let marks: Vec<&str> = svg
            .split("data-steps=\"")
            .skip(1)
            .filter_map(|s| s.split('"').next())
            .collect();
        assert_eq!(marks, ["1", "2\u{2013}4", "5"]);
        assert!(svg.contains("step 4 at 0:54: step 4 &amp; more"), "{svg}");
    }

    #[test]
    fn markers_at_one_moment_share_a_line_of_their_kind() {
        let (x, y) = (
            TimeAxis::new(100.0),
            ValueAxis::new([1.0], Unit::Count("nodes")),
        );
        let p = Plot { x: &x, y: &y };
        let events = [
            (
                40.0,
                Marker::Disruption,
                "DisruptionLaunching a".to_string(),
            ),
            (
                40.0,
                Marker::Disruption,
                "DisruptionTerminating b".to_string(),
            ),
            (
                40.0,
                Marker::Interruption,
                "spot interruption warning".to_string(),
            ),
            (
                70.0,
                Marker::Disruption,
                "DisruptionTerminating c".to_string(),
            ),
        ];
        let svg = markers(&p, &events);
        assert_eq!(svg.matches("class=\"marker disruption\"").count(), 2);
        assert_eq!(svg.matches("class=\"marker interruption\"").count(), 1);
        assert!(svg.contains("DisruptionLaunching a\nDisruptionTerminating b"));
    }
}
