//! What a line's text is: a sequence item, a mapping entry, where a plain key ends, what a
//! plain scalar may start with and hold.

use std::borrow::Cow;

use super::scalar::{double_quoted, single_quoted};

/// A quoted key's decoded text and the rest of its line.
pub(super) fn map_owned<'a>((v, rest): (String, &'a str)) -> (Cow<'a, str>, &'a str) {
    (Cow::Owned(v), rest)
}

/// `- x` or a lone `-`: an item of a block sequence.
pub(super) fn is_item(body: &str) -> bool {
    body == "-" || body.starts_with("- ")
}

/// Whether a line's content is a mapping entry (`key:` with a plain or quoted key).
pub(super) fn is_entry(body: &str) -> bool {
    let quoted = match body.as_bytes().first() {
        Some(b'"') => double_quoted(body),
        Some(b'\'') => single_quoted(body),
        _ => return key_end(body).is_some(),
    };
    quoted.is_some_and(|(_, after)| {
        after
            .trim_start_matches(' ')
            .strip_prefix(':')
            .is_some_and(|a| a.is_empty() || a.starts_with(' '))
    })
}

/// Where a plain key ends: the first `:` followed by a space or the end of the line; `None`
/// when there is none, or a comment or a tab-separated colon comes first.
pub(super) fn key_end(body: &str) -> Option<usize> {
    let b = body.as_bytes();
    for i in 0..b.len() {
        match b[i] {
            b':' if i + 1 == b.len() || b[i + 1] == b' ' => return Some(i),
            b':' if b[i + 1] == b'\t' => return None,
            b'#' if i > 0 && matches!(b[i - 1], b' ' | b'\t') => return None,
            _ => {}
        }
    }
    None
}

/// Whether a plain scalar on one line holds no comment and no `: ` (which would make it a
/// key, or an error).
pub(super) fn plain_rest(s: &str) -> bool {
    let b = s.as_bytes();
    !(0..b.len()).any(|i| match b[i] {
        b':' => matches!(b.get(i + 1), None | Some(b' ' | b'\t')),
        b'#' => i > 0 && matches!(b[i - 1], b' ' | b'\t'),
        _ => false,
    })
}

/// Whether a plain scalar may start this way (no indicator this reader leaves to the full
/// one).
pub(super) fn plain_start(s: &str) -> bool {
    match s.as_bytes().first() {
        None => false,
        Some(b'-' | b'?' | b':') => s.len() > 1 && !matches!(s.as_bytes()[1], b' ' | b'\t'),
        Some(c) => !b"[]{},#&*!|>'\"%@`\t".contains(c),
    }
}
