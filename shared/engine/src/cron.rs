//! Cron schedules of disruption budgets, as Karpenter reads them: five fields (minute,
//! hour, day of month, month, day of week) with `*`, lists, ranges and steps, or one of the
//! macros `@yearly`, `@annually`, `@monthly`, `@weekly`, `@daily`, `@midnight`, `@hourly`;
//! always in UTC. Day of month and day of week combine as in Vixie cron: when both are
//! restricted, either may match.

use std::fmt;

/// A parsed schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cron {
    minutes: u64,
    hours: u64,
    days: u64,
    months: u64,
    weekdays: u64,
    days_any: bool,
    weekdays_any: bool,
}

/// Why a schedule does not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CronError(pub String);

impl fmt::Display for CronError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CronError {}

fn macro_expansion(s: &str) -> Option<&'static str> {
    Some(match s {
        "@yearly" | "@annually" => "0 0 1 1 *",
        "@monthly" => "0 0 1 * *",
        "@weekly" => "0 0 * * 0",
        "@daily" | "@midnight" => "0 0 * * *",
        "@hourly" => "0 * * * *",
        _ => return None,
    })
}

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];
const DAYS: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

fn value(s: &str, lo: u32, hi: u32, names: &[&str], field: &str) -> Result<u32, CronError> {
    let lower = s.to_ascii_lowercase();
    if let Some(i) = names.iter().position(|n| *n == lower) {
        return Ok(i as u32 + lo);
    }
    let v: u32 = s
        .parse()
        .map_err(|_| CronError(format!("{field}: {s:?} is not a number")))?;
    // Day of week 7 is Sunday too.
    let v = if field == "day of week" && v == 7 {
        0
    } else {
        v
    };
    if v < lo || v > hi {
        return Err(CronError(format!("{field}: {v} is outside {lo}-{hi}")));
    }
    Ok(v)
}

/// Parses one field into a bit set; `any` tells whether it was `*` (or `?`).
fn field(s: &str, lo: u32, hi: u32, names: &[&str], name: &str) -> Result<(u64, bool), CronError> {
    let mut bits = 0u64;
    let any = s == "*" || s == "?";
    for part in s.split(',') {
        let (range, step) = match part.split_once('/') {
            Some((r, st)) => {
                let st: u32 = st
                    .parse()
                    .map_err(|_| CronError(format!("{name}: bad step {st:?}")))?;
                if st == 0 {
                    return Err(CronError(format!("{name}: step must be positive")));
                }
                (r, st)
            }
            None => (part, 1),
        };
        let (a, b) = if range == "*" || range == "?" {
            (lo, hi)
        } else if let Some((a, b)) = range.split_once('-') {
            (
                value(a, lo, hi, names, name)?,
                value(b, lo, hi, names, name)?,
            )
        } else {
            let v = value(range, lo, hi, names, name)?;
            (v, if part.contains('/') { hi } else { v })
        };
        if a > b {
            return Err(CronError(format!("{name}: range {a}-{b} runs backwards")));
        }
        let mut v = a;
        while v <= b {
            bits |= 1 << v;
            v += step;
        }
    }
    Ok((bits, any))
}

impl Cron {
    /// Parses a schedule.
    pub fn parse(s: &str) -> Result<Cron, CronError> {
        let s = s.trim();
        let expanded = if s.starts_with('@') {
            macro_expansion(s).ok_or_else(|| CronError(format!("unknown macro {s:?}")))?
        } else {
            s
        };
        let f: Vec<&str> = expanded.split_whitespace().collect();
        if f.len() != 5 {
            return Err(CronError(format!(
                "expected 5 fields (minute hour day-of-month month day-of-week), found {}",
                f.len()
            )));
        }
        let (minutes, _) = field(f[0], 0, 59, &[], "minute")?;
        let (hours, _) = field(f[1], 0, 23, &[], "hour")?;
        let (days, days_any) = field(f[2], 1, 31, &[], "day of month")?;
        let (months, _) = field(f[3], 1, 12, &MONTHS, "month")?;
        let (weekdays, weekdays_any) = field(f[4], 0, 6, &DAYS, "day of week")?;
        Ok(Cron {
            minutes,
            hours,
            days,
            months,
            weekdays,
            days_any,
            weekdays_any,
        })
    }

    /// Whether the schedule fires at the minute starting at `unix_secs` (UTC).
    pub fn fires_at(&self, unix_secs: i64) -> bool {
        let (min, hour, day, month, weekday) = civil(unix_secs);
        let bit = |set: u64, v: u32| set & (1 << v) != 0;
        let day_ok = match (self.days_any, self.weekdays_any) {
            (true, true) => true,
            (true, false) => bit(self.weekdays, weekday),
            (false, true) => bit(self.days, day),
            (false, false) => bit(self.days, day) || bit(self.weekdays, weekday),
        };
        bit(self.minutes, min) && bit(self.hours, hour) && bit(self.months, month) && day_ok
    }

    /// Whether a window of `duration_secs` opened by the schedule covers `now` (Karpenter:
    /// the budget is active when the last firing at or before `now` is less than `duration`
    /// ago). Scans at most `duration` minute by minute.
    pub fn active(&self, now: i64, duration_secs: i64) -> bool {
        let start = now - now.rem_euclid(60);
        let mut t = start;
        while now - t < duration_secs {
            if self.fires_at(t) {
                return true;
            }
            t -= 60;
        }
        false
    }
}

/// (minute, hour, day of month, month, day of week) of a Unix time, UTC.
fn civil(unix_secs: i64) -> (u32, u32, u32, u32, u32) {
    let days = unix_secs.div_euclid(86_400);
    let secs = unix_secs.rem_euclid(86_400);
    let weekday = (days + 4).rem_euclid(7) as u32; // 1970-01-01 was a Thursday
    let (_, month, day) = crate::time::civil_from_days(days);
    (
        (secs / 60 % 60) as u32,
        (secs / 3600) as u32,
        day,
        month,
        weekday,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    // 2026-11-24T02:30:00Z is a Tuesday.
    const T: i64 = 1_795_487_400;

    #[test]
    fn civil_time_is_right() {
        assert_eq!(civil(T), (30, 2, 24, 11, 2));
        assert_eq!(civil(0), (0, 0, 1, 1, 4));
    }

    #[test]
    fn fields_macros_and_errors() {
        assert!(
            Cron::parse("@daily")
                .unwrap()
                .fires_at(T - 2 * 3600 - 30 * 60)
        );
        let c = Cron::parse("30 2 * * tue").unwrap();
        assert!(c.fires_at(T));
        assert!(!c.fires_at(T + 60));
        assert!(
            Cron::parse("*/15 9-17 * * 1-5")
                .unwrap()
                .fires_at(T + 7 * 3600)
        );
        assert!(
            Cron::parse("0 0 24 11 0").unwrap().fires_at(T - 9000),
            "day OR weekday"
        );
        for bad in [
            "* * * *",
            "60 * * * *",
            "* 24 * * *",
            "*/0 * * * *",
            "5-1 * * * *",
            "@often",
            "x * * * *",
        ] {
            assert!(Cron::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_window_is_active_for_its_duration() {
        let c = Cron::parse("0 2 * * *").unwrap();
        assert!(c.active(T, 3600), "opened 30 minutes ago for an hour");
        assert!(!c.active(T, 30 * 60), "30-minute window just closed");
        assert!(!c.active(T + 3600, 3600));
    }
}
