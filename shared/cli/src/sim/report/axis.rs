//! The charts' axes: simulated time since the run's start (ticks every round number of
//! seconds or minutes, labelled m:ss, or h:mm for runs of an hour or more) and values (ticks
//! at 1, 2 or 5 × 10ⁿ, labelled with the chart's unit).

/// Round tick intervals of the time axis, in seconds.
const TIME_STEPS: [f64; 18] = [
    1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 900.0, 1800.0, 3600.0, 7200.0,
    10800.0, 21600.0, 43200.0, 86400.0,
];

/// At most this many intervals between time ticks.
const TIME_TICKS: f64 = 8.0;

/// At most this many intervals between value ticks.
const VALUE_TICKS: f64 = 5.0;

/// Simulated time from 0 (the run's start) to `span` seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeAxis {
    pub span: f64,
    step: f64,
    hours: bool,
}

impl TimeAxis {
    /// An axis from the start to `span` seconds (at least one second).
    pub fn new(span: f64) -> Self {
        let span = if span.is_finite() { span.max(1.0) } else { 1.0 };
        let step = TIME_STEPS
            .iter()
            .copied()
            .find(|s| span / s <= TIME_TICKS)
            .unwrap_or_else(|| (span / TIME_TICKS / 86400.0).ceil() * 86400.0);
        TimeAxis {
            span,
            step,
            hours: span >= 3600.0,
        }
    }

    /// The ticks, in seconds since the start, from 0 to the span.
    pub fn ticks(&self) -> Vec<f64> {
        let n = (self.span / self.step + 1e-9).floor() as usize;
        (0..=n).map(|i| i as f64 * self.step).collect()
    }

    /// `m:ss`, or `h:mm` on an axis of an hour or more.
    pub fn label(&self, secs: f64) -> String {
        let s = secs.max(0.0).round() as u64;
        if self.hours {
            format!("{}:{:02}", s / 3600, s % 3600 / 60)
        } else {
            format!("{}:{:02}", s / 60, s % 60)
        }
    }

    /// The axis title, saying how its labels read.
    pub fn title(&self) -> &'static str {
        if self.hours {
            "simulated time since the start (h:mm)"
        } else {
            "simulated time since the start (m:ss)"
        }
    }
}

/// What a chart's values count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Whole things: nodes, pods (the word names them on the axis).
    Count(&'static str),
    /// US dollars per hour.
    UsdPerHour,
}

/// Values from `min` to `max`, ticked every `step`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ValueAxis {
    pub min: f64,
    pub max: f64,
    step: f64,
    unit: Unit,
    /// Labels carry their sign (a difference).
    signed: bool,
}

impl ValueAxis {
    /// An axis holding every value of `values` and 0, its ends on ticks.
    pub fn new(values: impl IntoIterator<Item = f64>, unit: Unit) -> Self {
        let (lo, hi) = values
            .into_iter()
            .filter(|v| v.is_finite())
            .fold((0.0_f64, 0.0_f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
        let step = nice_step(hi - lo, unit);
        let (mut min, mut max) = (
            (lo / step + 1e-9).floor() * step,
            (hi / step - 1e-9).ceil() * step,
        );
        if max - min < step {
            max = min + step;
        }
        if min > 0.0 {
            min = 0.0;
        }
        ValueAxis {
            min,
            max,
            step,
            unit,
            signed: false,
        }
    }

    /// The same axis, its labels signed (`+1`, `−$0.02/h`).
    pub fn signed(self) -> Self {
        ValueAxis {
            signed: true,
            ..self
        }
    }

    /// The ticks, from the bottom up.
    pub fn ticks(&self) -> Vec<f64> {
        let n = ((self.max - self.min) / self.step + 1e-9).floor() as usize;
        (0..=n)
            .map(|i| self.min + i as f64 * self.step)
            .map(|v| if v.abs() < self.step * 1e-6 { 0.0 } else { v })
            .collect()
    }

    /// A tick's label: a count, or dollars per hour with as many decimals as the ticks need.
    pub fn label(&self, v: f64) -> String {
        let sign = match () {
            _ if v < 0.0 => "\u{2212}",
            _ if self.signed && v > 0.0 => "+",
            _ => "",
        };
        match self.unit {
            Unit::Count(_) => format!("{sign}{:.0}", v.abs()),
            Unit::UsdPerHour => {
                let decimals = (-(self.step.log10() + 1e-9).floor()).max(2.0) as usize;
                format!("{sign}${:.decimals$}/h", v.abs())
            }
        }
    }

    /// What the values are, written atop the axis.
    pub fn title(&self) -> &'static str {
        match self.unit {
            Unit::Count(what) => what,
            Unit::UsdPerHour => "USD per hour",
        }
    }
}

/// The smallest 1, 2 or 5 × 10ⁿ that cuts `range` into at most [`VALUE_TICKS`] intervals
/// (whole numbers for counts).
fn nice_step(range: f64, unit: Unit) -> f64 {
    let floor = match unit {
        Unit::Count(_) => 1.0,
        Unit::UsdPerHour => 0.001,
    };
    let rough = (range / VALUE_TICKS).max(floor);
    let magnitude = 10f64.powf(rough.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= rough * (1.0 - 1e-9))
        .unwrap_or(10.0 * magnitude)
        .max(floor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_ticks_are_round_and_read_as_minutes_and_seconds() {
        let t = TimeAxis::new(105.0);
        assert_eq!(t.ticks(), [0.0, 15.0, 30.0, 45.0, 60.0, 75.0, 90.0, 105.0]);
        let labels: Vec<String> = t.ticks().iter().map(|s| t.label(*s)).collect();
        assert_eq!(
            labels,
            [
                "0:00", "0:15", "0:30", "0:45", "1:00", "1:15", "1:30", "1:45"
            ]
        );
        assert!(t.title().contains("m:ss"));
        let t = TimeAxis::new(330.0);
        assert_eq!(t.ticks().last(), Some(&300.0));
        assert_eq!(t.label(300.0), "5:00");
    }

    #[test]
    fn a_run_of_hours_reads_as_hours_and_minutes() {
        let t = TimeAxis::new(5400.0);
        assert_eq!(
            t.ticks(),
            [0.0, 900.0, 1800.0, 2700.0, 3600.0, 4500.0, 5400.0]
        );
        assert_eq!(t.label(4500.0), "1:15");
        assert!(t.title().contains("h:mm"));
        assert_eq!(TimeAxis::new(f64::NAN).ticks(), [0.0, 1.0]);
    }

    #[test]
    fn counts_tick_at_whole_numbers_from_zero_to_a_round_top() {
        let y = ValueAxis::new([3.0, 4.0, 1.0], Unit::Count("nodes"));
        assert_eq!(y.ticks(), [0.0, 1.0, 2.0, 3.0, 4.0]);
        assert_eq!(y.label(4.0), "4");
        let y = ValueAxis::new([13.0], Unit::Count("pods"));
        assert_eq!(y.ticks(), [0.0, 5.0, 10.0, 15.0]);
        let empty = ValueAxis::new([], Unit::Count("pods"));
        assert_eq!((empty.min, empty.max), (0.0, 1.0));
    }

    #[test]
    fn dollars_per_hour_carry_their_unit_and_enough_decimals() {
        let y = ValueAxis::new([0.1176, 0.0787], Unit::UsdPerHour);
        assert!((y.max - 0.15).abs() < 1e-12, "{y:?}");
        assert_eq!(y.label(y.max), "$0.15/h");
        assert_eq!(y.label(0.0), "$0.00/h");
        let small = ValueAxis::new([0.0042], Unit::UsdPerHour);
        assert_eq!(small.label(small.max), "$0.005/h");
    }

    #[test]
    fn a_difference_spans_zero_and_signs_its_labels() {
        let y = ValueAxis::new([-2.0, 1.0], Unit::Count("nodes")).signed();
        assert_eq!(y.ticks(), [-2.0, -1.0, 0.0, 1.0]);
        assert_eq!(y.label(-2.0), "\u{2212}2");
        assert_eq!(y.label(1.0), "+1");
        assert_eq!(y.label(0.0), "0");
        let c = ValueAxis::new([-0.02], Unit::UsdPerHour).signed();
        assert_eq!(c.label(c.min), "\u{2212}$0.020/h");
        assert_eq!(c.max, 0.0);
    }
}
