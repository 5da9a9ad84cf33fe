//! Durations and timestamps as Kubernetes writes them: Go durations (`90s`, `1h30m`,
//! `1.5h`, `300ms`) and RFC 3339 UTC times, both pure (seconds since the Unix epoch).

use crate::model::Timestamp;

/// Parses a Go duration (`time.ParseDuration`) into whole seconds, rounded up so a
/// protection it measures is never cut short. `None` when it is not a valid duration or is
/// negative.
pub fn parse_duration(s: &str) -> Option<i64> {
    let s = s.trim();
    if s == "0" {
        return Some(0);
    }
    if s.is_empty() || s.starts_with('-') {
        return None;
    }
    let mut rest = s.strip_prefix('+').unwrap_or(s);
    let mut nanos: f64 = 0.0;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (num, tail) = rest.split_at(num_len);
        if num.is_empty() || num == "." || num.matches('.').count() > 1 {
            return None;
        }
        let value: f64 = num.parse().ok()?;
        let unit_len = tail
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(tail.len());
        let (unit, next) = tail.split_at(unit_len);
        nanos += value * unit_nanos(unit)?;
        rest = next;
    }
    Some((nanos / 1e9).ceil() as i64)
}

fn unit_nanos(unit: &str) -> Option<f64> {
    Some(match unit {
        "ns" => 1.0,
        "us" | "µs" | "μs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "m" => 60e9,
        "h" => 3600e9,
        _ => return None,
    })
}

/// A Unix time as RFC 3339 UTC (`2026-01-02T03:04:05Z`).
pub fn format_rfc3339(t: Timestamp) -> String {
    let days = t.div_euclid(86_400);
    let secs = t.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// Parses an RFC 3339 time (`Z` or a numeric offset, optional fraction, which is dropped).
pub fn parse_rfc3339(s: &str) -> Option<Timestamp> {
    let b = s.trim().as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        std::str::from_utf8(b.get(r)?).ok()?.parse().ok()
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, se) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || se > 60 {
        return None;
    }
    let mut i = 19;
    if b.get(i) == Some(&b'.') {
        i += 1;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
    }
    let offset = match b.get(i)? {
        b'Z' | b'z' if i + 1 == b.len() => 0,
        b'+' | b'-' if i + 6 == b.len() && b[i + 3] == b':' => {
            let sign = if b[i] == b'-' { -1 } else { 1 };
            sign * (num(i + 1..i + 3)? * 3600 + num(i + 4..i + 6)? * 60)
        }
        _ => return None,
    };
    Some(days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + se - offset)
}

/// Howard Hinnant's days-to-civil: (year, month, day) of a day count since 1970-01-01.
pub(crate) fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations_parse_to_seconds_rounded_up() {
        assert_eq!(parse_duration("5m"), Some(300));
        assert_eq!(parse_duration("1h30m"), Some(5400));
        assert_eq!(parse_duration("1.5h"), Some(5400));
        assert_eq!(parse_duration("2h45m0s"), Some(9900));
        assert_eq!(parse_duration("300ms"), Some(1));
        assert_eq!(parse_duration("0"), Some(0));
        assert_eq!(parse_duration("720h"), Some(2_592_000));
        for bad in ["", "5", "-5m", "5x", "true", "1..5h", "h"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }

    #[test]
    fn rfc3339_round_trips() {
        let t = parse_rfc3339("2026-11-24T02:30:00Z").unwrap();
        assert_eq!(t, 1_795_487_400);
        assert_eq!(format_rfc3339(t), "2026-11-24T02:30:00Z");
        assert_eq!(parse_rfc3339("2026-11-24T04:30:00.123+02:00"), Some(t));
        assert_eq!(format_rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(
            format_rfc3339(parse_rfc3339("2024-02-29T23:59:59Z").unwrap()),
            "2024-02-29T23:59:59Z"
        );
        for bad in ["2026-13-01T00:00:00Z", "yesterday", "2026-01-01T00:00:00"] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }
}
