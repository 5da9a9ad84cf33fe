//! What the charts draw, taken from a run's samples and timeline: values that hold from each
//! moment (seconds since the run's start) until the next, the steps' starts and the
//! disruptions and interruptions.

use jiff::Timestamp;
use kerf_sim::scenario::{Kind, Outcome, Sample};

/// Colours of the instance types and capacity types (red and orange mark disruptions and
/// interruptions, so they come last).
const COLORS: [&str; 10] = [
    "#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f",
    "#aec7e8", "#98df8a",
];

/// One series: values holding from each time until the next, to the run's end.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub label: String,
    pub color: &'static str,
    /// `(seconds since the start, value)`, in time order.
    pub points: Vec<(f64, f64)>,
}

impl Series {
    /// The value at `t`: the last one set at or before it (0 before the first).
    pub fn at(&self, t: f64) -> f64 {
        self.points
            .iter()
            .take_while(|(at, _)| *at <= t)
            .last()
            .map_or(0.0, |(_, v)| *v)
    }

    /// Every value.
    pub fn values(&self) -> impl Iterator<Item = f64> + '_ {
        self.points.iter().map(|(_, v)| *v)
    }
}

/// Seconds from `start` to `t`.
pub fn offset(start: Timestamp, t: Timestamp) -> f64 {
    t.duration_since(start).as_secs_f64()
}

/// A series of one value of every sample.
pub fn of(o: &Outcome, label: &str, color: &'static str, f: impl Fn(&Sample) -> f64) -> Series {
    Series {
        label: label.into(),
        color,
        points: o
            .samples
            .iter()
            .map(|s| (offset(o.start, s.at), f(s)))
            .collect(),
    }
}

/// Every `instance-type/capacity-type` any of `runs` billed, in order: a shape keeps its
/// colour across the runs of a page.
pub fn shapes<'a>(runs: impl IntoIterator<Item = &'a Outcome>) -> Vec<String> {
    let mut all: Vec<String> = runs
        .into_iter()
        .flat_map(|o| o.samples.iter().flat_map(|s| s.nodes.keys().cloned()))
        .collect();
    all.sort();
    all.dedup();
    all
}

/// The instances EC2 bills (draining nodes included) per shape of `shapes` this run billed,
/// bottom of the stack first.
pub fn nodes(o: &Outcome, shapes: &[String]) -> Vec<Series> {
    shapes
        .iter()
        .enumerate()
        .filter(|(_, k)| o.samples.iter().any(|s| s.nodes.contains_key(*k)))
        .map(|(i, k)| {
            of(o, k, COLORS[i % COLORS.len()], |s| {
                s.nodes.get(k).copied().unwrap_or(0) as f64
            })
        })
        .collect()
}

/// Every instance EC2 bills: the top of the node stack.
pub fn total(o: &Outcome) -> Series {
    of(o, "total", "#222", |s| {
        s.nodes.values().sum::<usize>() as f64
    })
}

/// `a` minus `b` at every moment either changes (a run that ended keeps its last value).
pub fn difference(label: &str, a: &Series, b: &Series) -> Series {
    let mut times: Vec<f64> = a.points.iter().chain(&b.points).map(|(t, _)| *t).collect();
    times.sort_by(f64::total_cmp);
    times.dedup();
    let mut points: Vec<(f64, f64)> = Vec::with_capacity(times.len());
    for t in times {
        let v = a.at(t) - b.at(t);
        if points.last().is_none_or(|(_, last)| *last != v) {
            points.push((t, v));
        }
    }
    if let (Some(end), Some(last)) = (
        a.points
            .iter()
            .chain(&b.points)
            .map(|(t, _)| *t)
            .reduce(f64::max),
        points.last().copied(),
    ) && last.0 < end
    {
        points.push((end, last.1));
    }
    Series {
        label: label.into(),
        color: "#444",
        points,
    }
}

/// A step's start: its 1-based number and line.
#[derive(Debug, Clone, PartialEq)]
pub struct StepMark {
    pub at: f64,
    pub number: usize,
    pub text: String,
}

/// What a marker line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    Disruption,
    Interruption,
}

impl Marker {
    /// Its class and legend word.
    pub fn name(self) -> &'static str {
        match self {
            Marker::Disruption => "disruption",
            Marker::Interruption => "interruption",
        }
    }

    pub fn color(self) -> &'static str {
        match self {
            Marker::Disruption => "#d62728",
            Marker::Interruption => "#ff7f0e",
        }
    }
}

/// The steps and the disruptions and interruptions of one run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Marks {
    pub steps: Vec<StepMark>,
    /// `(seconds since the start, what, the timeline's line)`.
    pub events: Vec<(f64, Marker, String)>,
}

/// The marks of a run's timeline.
pub fn marks(o: &Outcome) -> Marks {
    let mut m = Marks::default();
    for e in &o.timeline {
        let at = offset(o.start, e.at);
        match e.kind {
            Kind::Step => m.steps.push(StepMark {
                at,
                number: m.steps.len() + 1,
                text: e.text.clone(),
            }),
            Kind::Disruption => m.events.push((at, Marker::Disruption, e.text.clone())),
            Kind::Interruption => m.events.push((at, Marker::Interruption, e.text.clone())),
            _ => {}
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(points: &[(f64, f64)]) -> Series {
        Series {
            label: "s".into(),
            color: "#000",
            points: points.to_vec(),
        }
    }

    #[test]
    fn a_value_holds_until_the_next() {
        let s = series(&[(0.0, 1.0), (10.0, 3.0), (20.0, 2.0)]);
        assert_eq!(s.at(-1.0), 0.0);
        assert_eq!(s.at(0.0), 1.0);
        assert_eq!(s.at(15.0), 3.0);
        assert_eq!(s.at(99.0), 2.0);
    }

    #[test]
    fn a_difference_changes_when_either_run_does_and_lasts_to_the_longer_end() {
        let kerf = series(&[(0.0, 0.0), (5.0, 2.0), (30.0, 1.0), (60.0, 1.0)]);
        let other = series(&[(0.0, 0.0), (8.0, 3.0), (40.0, 1.0), (90.0, 1.0)]);
        let d = difference("Kerf minus Karpenter", &kerf, &other);
        assert_eq!(
            d.points,
            [
                (0.0, 0.0),
                (5.0, 2.0),
                (8.0, -1.0),
                (30.0, -2.0),
                (40.0, 0.0),
                (90.0, 0.0)
            ]
        );
    }
}
