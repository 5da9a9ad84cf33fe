//! The live timeline: one line per launch, deletion, disruption, interruption and step, with
//! simulated time, nodes, pending pods and $/h; on a terminal, a progress bar under it.

use std::io::Write;

use jiff::Timestamp;
use kerf_sim::scenario::{Observation, Progress, TimelineEvent};

/// Prints nothing while the run goes.
pub struct Quiet;

impl Progress for Quiet {
    fn step(&mut self, _: usize, _: usize, _: &str, _: Timestamp) {}
    fn tick(&mut self, _: &[TimelineEvent], _: &Observation) {}
}

/// Prints the run as it goes.
pub struct Live<'a> {
    out: &'a mut dyn Write,
    terminal: bool,
    start: Option<Timestamp>,
    step: (usize, usize),
    bar_shown: bool,
}

/// `HH:MM:SS` since the start.
pub fn clock(start: Timestamp, at: Timestamp) -> String {
    let s = at.duration_since(start).as_secs().max(0);
    format!("{:02}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60)
}

fn state(o: &Observation) -> String {
    format!(
        "nodes {:>3}  pending {:>4}  {:>9}",
        o.claims.len(),
        o.pending,
        format!("${:.2}/h", o.cost_per_hour())
    )
}

impl<'a> Live<'a> {
    pub fn new(out: &'a mut dyn Write, terminal: bool) -> Self {
        Live {
            out,
            terminal,
            start: None,
            step: (0, 0),
            bar_shown: false,
        }
    }

    fn clear_bar(&mut self) {
        if self.bar_shown {
            let _ = write!(self.out, "\r\x1b[2K");
            self.bar_shown = false;
        }
    }

    fn bar(&mut self, o: &Observation) {
        let (i, n) = self.step;
        let width = 24;
        let done = (width * i.saturating_sub(1)).checked_div(n).unwrap_or(0);
        let t = clock(self.start.unwrap_or(o.at), o.at);
        let _ = write!(
            self.out,
            "[{}{}] step {i}/{n}  {t}  {}",
            "=".repeat(done),
            " ".repeat(width - done),
            state(o)
        );
        let _ = self.out.flush();
        self.bar_shown = true;
    }

    /// Ends the live part (removes the bar).
    pub fn finish(&mut self) {
        self.clear_bar();
        let _ = self.out.flush();
    }
}

impl Progress for Live<'_> {
    fn step(&mut self, index: usize, total: usize, text: &str, at: Timestamp) {
        let start = *self.start.get_or_insert(at);
        self.step = (index, total);
        self.clear_bar();
        let _ = writeln!(
            self.out,
            "{}  step {index}/{total}: {text}",
            clock(start, at)
        );
    }

    fn tick(&mut self, lines: &[TimelineEvent], now: &Observation) {
        let start = *self.start.get_or_insert(now.at);
        if !lines.is_empty() {
            self.clear_bar();
        }
        for l in lines {
            let _ = writeln!(
                self.out,
                "{}  {}  {}",
                clock(start, l.at),
                state(now),
                l.text
            );
        }
        if self.terminal {
            self.clear_bar();
            self.bar(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kerf_sim::scenario::Kind;

    #[test]
    fn the_state_columns_line_up_whatever_the_text() {
        let mut buf = Vec::new();
        let mut live = Live::new(&mut buf, false);
        let at = Timestamp::UNIX_EPOCH;
        let o = Observation {
            at,
            pending: 12,
            ..Observation::default()
        };
        let line = |text: &str| TimelineEvent {
            at,
            kind: Kind::Other,
            text: text.into(),
        };
        live.tick(&[line("short")], &o);
        live.tick(&[line(&"a long disruption message ".repeat(5))], &o);
        let text = String::from_utf8(buf).unwrap();
        let cols: Vec<usize> = text.lines().map(|l| l.find("pending").unwrap()).collect();
        assert_eq!(cols.len(), 2);
        assert_eq!(cols[0], cols[1], "{text}");
        assert!(text.lines().all(|l| l.contains("$0.00/h")), "{text}");
    }
}
