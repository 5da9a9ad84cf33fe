//! Kubernetes resource quantities (`100m`, `1.5Gi`, `2e3`) as exact milli-units.

use std::fmt;

use crate::CatalogError;

/// A resource quantity in milli-units (1 cpu = 1000, 1 byte of memory = 1000).
pub type Milli = i64;

const BINARY: [(&str, i128); 6] = [
    ("Ki", 1 << 10),
    ("Mi", 1 << 20),
    ("Gi", 1 << 30),
    ("Ti", 1 << 40),
    ("Pi", 1 << 50),
    ("Ei", 1 << 60),
];

const DECIMAL: [(&str, i32); 7] = [
    ("n", -9),
    ("u", -6),
    ("m", -3),
    ("k", 3),
    ("M", 6),
    ("G", 9),
    ("T", 12),
];

/// Parses a Kubernetes quantity into milli-units, rounding fractions of a milli-unit up
/// (as the API server does when it canonicalises a quantity). Like the API server, it takes
/// no surrounding whitespace.
pub fn parse(s: &str) -> Result<Milli, CatalogError> {
    let bad = || CatalogError::Quantity(s.to_string());
    let t = s;
    if t.is_empty() || t.trim() != t {
        return Err(bad());
    }
    let (num, mult_num, mult_exp) = split_suffix(t).ok_or_else(bad)?;
    let (neg, digits) = match num.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, num.strip_prefix('+').unwrap_or(num)),
    };
    let (int_part, frac_part) = match digits.split_once('.') {
        Some((i, f)) => (i, f),
        None => (digits, ""),
    };
    if (int_part.is_empty() && frac_part.is_empty())
        || !int_part.bytes().all(|b| b.is_ascii_digit())
        || !frac_part.bytes().all(|b| b.is_ascii_digit())
        || frac_part.len() > 18
        || int_part.len() > 19
    {
        return Err(bad());
    }
    // value = (int_part.frac_part) * mult_num * 10^mult_exp * 1000
    let mantissa: i128 = format!("{int_part}{frac_part}")
        .parse::<i128>()
        .unwrap_or(0);
    let exp = mult_exp + 3 - frac_part.len() as i32;
    // Values beyond i64 milli-units (e.g. a limit of 10000000Gi) saturate: they mean "huge".
    let scaled = mantissa
        .checked_mul(mult_num)
        .and_then(|m| scale(m, exp))
        .unwrap_or(i128::MAX);
    let v = i64::try_from(scaled).unwrap_or(i64::MAX);
    Ok(if neg { -v } else { v })
}

fn split_suffix(t: &str) -> Option<(&str, i128, i32)> {
    for (suf, mult) in BINARY {
        if let Some(n) = t.strip_suffix(suf) {
            return Some((n, mult, 0));
        }
    }
    if let Some(pos) = t.find(['e', 'E']) {
        let exp: i32 = t[pos + 1..].parse().ok()?;
        return Some((&t[..pos], 1, exp));
    }
    for (suf, exp) in DECIMAL {
        if let Some(n) = t.strip_suffix(suf) {
            return Some((n, 1, exp));
        }
    }
    Some((t, 1, 0))
}

/// `v * 10^exp`, rounding a fractional result up.
fn scale(v: i128, exp: i32) -> Option<i128> {
    if exp >= 0 {
        v.checked_mul(10i128.checked_pow(exp as u32)?)
    } else {
        let d = 10i128.checked_pow((-exp) as u32)?;
        Some(v.div_euclid(d) + i128::from(v.rem_euclid(d) != 0))
    }
}

/// How a quantity is written back out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Whole units when exact, otherwise milli-units (`1930m`, `4`).
    DecimalMilli,
    /// The largest binary suffix that keeps the value exact (`6903Mi`, `17Gi`).
    Binary,
}

/// Renders milli-units the way Kubernetes prints them.
pub fn format(v: Milli, f: Format) -> String {
    Display(v, f).to_string()
}

struct Display(Milli, Format);

impl fmt::Display for Display {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Display(v, f) = *self;
        if v % 1000 != 0 {
            return write!(out, "{v}m");
        }
        let units = v / 1000;
        if f == Format::Binary && units != 0 {
            for (suf, mult) in BINARY.iter().rev() {
                let m = *mult as i64;
                if units % m == 0 {
                    return write!(out, "{}{suf}", units / m);
                }
            }
        }
        write!(out, "{units}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_common_forms() {
        assert_eq!(parse("100m").unwrap(), 100);
        assert_eq!(parse("1").unwrap(), 1000);
        assert_eq!(parse("1.5").unwrap(), 1500);
        assert_eq!(parse("0.1").unwrap(), 100);
        assert_eq!(parse("100Mi").unwrap(), 100 * 1024 * 1024 * 1000);
        assert_eq!(parse("1Gi").unwrap(), (1i64 << 30) * 1000);
        assert_eq!(parse("2k").unwrap(), 2_000_000);
        assert_eq!(parse("1e3").unwrap(), 1_000_000);
        assert_eq!(parse("1.5Gi").unwrap(), 3 * (1i64 << 29) * 1000);
        assert_eq!(parse("500n").unwrap(), 1, "fractions of a milli round up");
        assert_eq!(parse("-1").unwrap(), -1000);
        assert_eq!(
            parse("10000000Gi").unwrap(),
            i64::MAX,
            "huge values saturate"
        );
    }

    #[test]
    fn rejects_garbage() {
        for bad in ["", "abc", "1.2.3", "1Xi", "--1", "1e", "Mi"] {
            assert!(parse(bad).is_err(), "{bad} should not parse");
        }
    }

    #[test]
    fn formats_like_kubernetes() {
        assert_eq!(format(1930, Format::DecimalMilli), "1930m");
        assert_eq!(format(4000, Format::DecimalMilli), "4");
        assert_eq!(format(6903 * (1 << 20) * 1000, Format::Binary), "6903Mi");
        assert_eq!(format(17 * (1i64 << 30) * 1000, Format::Binary), "17Gi");
        assert_eq!(format(29_000, Format::Binary), "29");
    }
}
