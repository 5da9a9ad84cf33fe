//! Scrubbing text before it leaves Kerf (Events, decision events, log lines, errors).
//!
//! The webhook's secret is a path segment of its URL, and the API server quotes that URL in
//! the errors it returns when a webhook call fails. Every URL in a text keeps its scheme and
//! host and loses the rest (path, query, fragment), so no copy of an error carries the secret.

use std::borrow::Cow;

use serde_json::Value;

/// What replaces a URL's path and query.
pub const REDACTED: &str = "<redacted>";

/// Whether `c` can belong to a URL scheme (`https`, `git+ssh`).
fn scheme_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.')
}

/// Whether `c` ends a URL: whitespace, quotes, angle brackets, a backslash (JSON escapes).
fn ends_url(c: u8) -> bool {
    c.is_ascii_whitespace() || matches!(c, b'"' | b'\'' | b'<' | b'>' | b'\\' | b'`')
}

/// Whether `c` ends a URL's authority (host and port).
fn ends_host(c: u8) -> bool {
    ends_url(c) || matches!(c, b'/' | b'?' | b'#')
}

/// `text` with every URL's path, query and fragment replaced by [`REDACTED`]; borrowed when
/// nothing needed scrubbing. A URL without a host (a provider ID, `aws:///zone/i-1`) stays.
pub fn scrub(text: &str) -> Cow<'_, str> {
    if !text.contains("://") {
        return Cow::Borrowed(text);
    }
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut at = 0;
    while let Some(found) = text[at..].find("://") {
        let sep = at + found;
        let scheme_start = (0..sep)
            .rev()
            .take_while(|&i| scheme_char(bytes[i]))
            .last()
            .unwrap_or(sep);
        let host_start = sep + 3;
        let host_end = (host_start..bytes.len())
            .find(|&i| ends_host(bytes[i]))
            .unwrap_or(bytes.len());
        let url_end = (host_end..bytes.len())
            .find(|&i| ends_url(bytes[i]))
            .unwrap_or(bytes.len());
        if scheme_start < sep && host_end > host_start && url_end > host_end {
            out.push_str(&text[copied..host_end]);
            out.push('/');
            out.push_str(REDACTED);
            copied = url_end;
        }
        at = url_end.max(host_start);
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// [`scrub`] into an owned string.
pub fn scrubbed(text: &str) -> String {
    scrub(text).into_owned()
}

/// Scrubs every string in `value` (object keys stay as they are).
pub fn scrub_value(value: &mut Value) {
    match value {
        Value::String(s) => {
            if let Cow::Owned(clean) = scrub(s) {
                *s = clean;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(scrub_value),
        Value::Object(map) => map.values_mut().for_each(scrub_value),
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

#[cfg(test)]
#[path = "redact_tests.rs"]
mod tests;
