//! Scalars of the fast reader: plain scalars resolved as the full YAML reader resolves them
//! (null, booleans, integers, finite floats; infinities, NaN and 128-bit integers are left to
//! the full reader), quoted scalars decoded, and every value written as JSON text.

use std::fmt::Write;

/// What a plain scalar resolves to.
#[derive(Debug, PartialEq)]
pub enum Plain {
    Null,
    Bool(bool),
    Unsigned(u64),
    Signed(i64),
    Float(f64),
    Str,
}

/// Resolves a plain scalar as the full reader does (YAML 1.2 core schema: `~`, `null`,
/// `true`/`false` in three spellings, decimal, `0x`, `0o` and `0b` integers, floats); `None`
/// for what only the full reader decides (infinities, NaN, integers beyond 64 bits).
pub fn resolve(s: &str) -> Option<Plain> {
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return Some(Plain::Null),
        "true" | "True" | "TRUE" => return Some(Plain::Bool(true)),
        "false" | "False" | "FALSE" => return Some(Plain::Bool(false)),
        _ => {}
    }
    let first = s.as_bytes()[0];
    if !(first.is_ascii_digit() || matches!(first, b'+' | b'-' | b'.')) {
        // Rust's float syntax also takes `inf`, `nan` and `infinity`, none of them finite,
        // which the full reader keeps as strings.
        return Some(Plain::Str);
    }
    if let Some(n) = unsigned(s) {
        return Some(Plain::Unsigned(n));
    }
    if let Some(n) = negative(s) {
        return Some(Plain::Signed(n));
    }
    if unsigned_wide(s) || negative_wide(s) {
        return None;
    }
    match float(s) {
        Float::Finite(f) => Some(Plain::Float(f)),
        Float::Special => None,
        Float::Not => Some(Plain::Str),
    }
}

/// Leading zeros followed by digits only: a string in YAML 1.2.
fn zero_padded(s: &str) -> bool {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    s.len() > 1 && s.starts_with('0') && s[1..].bytes().all(|b| b.is_ascii_digit())
}

/// A prefixed (`0x`, `0o`, `0b`) body: its digits and radix.
fn prefixed(s: &str) -> Option<(&str, u32)> {
    for (p, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
        if let Some(rest) = s.strip_prefix(p) {
            return Some((rest, radix));
        }
    }
    None
}

fn unsigned(s: &str) -> Option<u64> {
    let body = s.strip_prefix('+').unwrap_or(s);
    if let Some((digits, radix)) = prefixed(body) {
        if digits.starts_with(['+', '-']) {
            return None;
        }
        if let Ok(n) = u64::from_str_radix(digits, radix) {
            return Some(n);
        }
    }
    if body.starts_with(['+', '-']) || zero_padded(s) {
        return None;
    }
    body.parse().ok()
}

fn negative(s: &str) -> Option<i64> {
    let rest = s.strip_prefix('-')?;
    if let Some((digits, radix)) = prefixed(rest)
        && let Ok(n) = i64::from_str_radix(&format!("-{digits}"), radix)
    {
        return Some(n);
    }
    if zero_padded(s) {
        return None;
    }
    s.parse().ok()
}

/// An integer only 128 bits hold: the full reader keeps it as a number this reader does not
/// write.
fn unsigned_wide(s: &str) -> bool {
    let body = s.strip_prefix('+').unwrap_or(s);
    prefixed(body).is_some_and(|(d, r)| u128::from_str_radix(d, r).is_ok())
        || (!zero_padded(s) && !body.starts_with(['+', '-']) && body.parse::<u128>().is_ok())
}

fn negative_wide(s: &str) -> bool {
    s.strip_prefix('-').is_some_and(|rest| {
        prefixed(rest).is_some_and(|(d, r)| i128::from_str_radix(&format!("-{d}"), r).is_ok())
            || (!zero_padded(s) && s.parse::<i128>().is_ok())
    })
}

/// How the full reader reads a scalar that is no integer.
enum Float {
    Finite(f64),
    /// `.inf`, `-.inf` or `.nan` in one of their spellings: no JSON number.
    Special,
    Not,
}

/// Reads `s` as the full reader reads floats: Rust's syntax when finite (after one optional
/// `+`), and YAML's spellings of infinity and NaN.
fn float(s: &str) -> Float {
    if zero_padded(s) {
        return Float::Not;
    }
    let body = match s.strip_prefix('+') {
        Some(b) if b.starts_with(['+', '-']) => return Float::Not,
        Some(b) => b,
        None => s,
    };
    let special = [
        ".inf", ".Inf", ".INF", "-.inf", "-.Inf", "-.INF", ".nan", ".NaN", ".NAN",
    ];
    if special.contains(&body) {
        return Float::Special;
    }
    match body.parse::<f64>() {
        Ok(f) if f.is_finite() => Float::Finite(f),
        _ => Float::Not,
    }
}

/// Writes a resolved plain scalar.
pub fn write_plain(out: &mut String, s: &str, p: Plain) {
    match p {
        Plain::Null => out.push_str("null"),
        Plain::Bool(b) => out.push_str(if b { "true" } else { "false" }),
        Plain::Unsigned(n) => {
            let _ = write!(out, "{n}");
        }
        Plain::Signed(n) => {
            let _ = write!(out, "{n}");
        }
        // serde_json writes the shortest text that reads back as the same float.
        Plain::Float(f) => match serde_json::Number::from_f64(f) {
            Some(n) => {
                let _ = write!(out, "{n}");
            }
            None => out.push_str("null"),
        },
        Plain::Str => write_str(out, s),
    }
}

/// Writes `s` as a JSON string.
pub fn write_str(out: &mut String, s: &str) {
    out.push('"');
    // Most strings need no escape: find that out a block at a time (vectorised).
    let escaped = |c: u8| c < 0x20 || matches!(c, b'"' | b'\\' | 0x7f);
    if s.as_bytes()
        .chunks(32)
        .all(|b| !b.iter().fold(false, |any, &c| any | escaped(c)))
    {
        out.push_str(s);
        out.push('"');
        return;
    }
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        let esc = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\t' => "\\t",
            0..=0x1f | 0x7f => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if esc.is_empty() {
            let _ = write!(out, "\\u{b:04x}");
        } else {
            out.push_str(esc);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// A single-quoted scalar at the start of `s` (`''` is a quote): its value and the rest of
/// the line after the closing quote; `None` when it does not close on this line.
pub fn single_quoted(s: &str) -> Option<(String, &str)> {
    let body = s.strip_prefix('\'')?;
    let mut value = String::new();
    let mut rest = body;
    loop {
        let end = rest.find('\'')?;
        value.push_str(&rest[..end]);
        let after = &rest[end + 1..];
        if let Some(more) = after.strip_prefix('\'') {
            value.push('\'');
            rest = more;
        } else {
            return Some((value, after));
        }
    }
}

/// A double-quoted scalar at the start of `s`, with the escapes JSON also has plus `\x`,
/// `\u` and `\U`; `None` for any other escape, a surrogate, or no closing quote on this line.
pub fn double_quoted(s: &str) -> Option<(String, &str)> {
    let body = s.strip_prefix('"')?;
    let mut value = String::new();
    let mut chars = body.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((value, &body[i + 1..])),
            '\\' => {
                let (_, e) = chars.next()?;
                let hex = |n: usize, chars: &mut std::str::CharIndices<'_>| {
                    let digits: String = chars.by_ref().take(n).map(|(_, c)| c).collect();
                    (digits.len() == n)
                        .then(|| u32::from_str_radix(&digits, 16).ok())
                        .flatten()
                        .and_then(char::from_u32)
                };
                value.push(match e {
                    '"' => '"',
                    '\\' => '\\',
                    '/' => '/',
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    'b' => '\u{8}',
                    'f' => '\u{c}',
                    'x' => hex(2, &mut chars)?,
                    'u' => hex(4, &mut chars)?,
                    'U' => hex(8, &mut chars)?,
                    _ => return None,
                });
            }
            _ => value.push(c),
        }
    }
    None
}
