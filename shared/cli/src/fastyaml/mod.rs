//! A fast reader for the YAML that `kubectl get -o yaml` and other dump tools write: block
//! mappings and sequences, plain, quoted and literal (`|`, `|-`) scalars, comments and
//! empty `[]`/`{}`, turned straight into JSON text. It reads what it reads exactly as the full
//! YAML reader does, and gives up on the first thing it does not (anchors, tags, flow
//! collections, folded or multi-line scalars, floats, duplicate keys, control characters,
//! anything malformed): the caller then reads the whole file with the full reader, which also
//! reports the errors. A dump of tens of megabytes reads about ten times faster this way.

pub mod check;
mod items;
mod literal;
mod scalar;
mod syntax;
#[cfg(test)]
mod tests;

use std::borrow::Cow;

use scalar::{Plain, double_quoted, resolve, single_quoted, write_plain, write_str};
use syntax::{is_entry, is_item, key_end, map_owned, plain_rest, plain_start};

/// One YAML document of a stream: its 1-based number as the full reader counts them and its
/// content as JSON text.
#[derive(Debug, PartialEq, Eq)]
pub struct Document {
    pub number: usize,
    pub json: String,
}

/// Every non-empty document of `text` as JSON, or `None` when anything in it is beyond this
/// reader.
pub fn documents(text: &str) -> Option<Vec<Document>> {
    let parts = split(text)?;
    // Documents are independent: check and read them on every core, number them in order.
    let read = crate::parallel::map(&parts, |(_, body)| {
        plain_text(body).then(|| document(body)).flatten()
    });
    let mut out = Vec::new();
    let mut number = 0;
    for ((explicit, _), json) in parts.iter().zip(read) {
        match json? {
            // An empty document counts when a marker opened it.
            None => number += usize::from(*explicit),
            Some(json) => {
                number += 1;
                out.push(Document { number, json });
            }
        }
    }
    Some(out)
}

/// One document's JSON (`Some(None)` when it is empty), or `None` when it is beyond this
/// reader.
fn document(body: &str) -> Option<Option<String>> {
    let mut p = Parser::new(body);
    let Some(first) = p.peek() else {
        return Some(None);
    };
    p.node(first.indent)?;
    if p.peek().is_some() {
        return None;
    }
    Some(Some(p.out))
}

/// No carriage return, byte-order mark, tab-free control character, DEL or C1 control: all
/// either errors or line breaks the full reader handles.
fn plain_text(text: &str) -> bool {
    let b = text.as_bytes();
    // Nearly every byte of a dump is printable ASCII or a line break: look for the bytes that
    // can start a refused character a block at a time (a loop the compiler vectorises), and
    // check character by character only when one is there.
    let suspect = |c: u8| (c < 0x20 && c != b'\n' && c != b'\t') || matches!(c, 0x7f | 0xc2 | 0xef);
    let clean = |block: &[u8]| !block.iter().fold(false, |any, &c| any | suspect(c));
    if b.chunks(64).all(clean) {
        return true;
    }
    !b.iter().enumerate().any(|(i, &c)| match c {
        b'\n' | b'\t' => false,
        0..=0x1f | 0x7f => true,
        0xc2 => b.get(i + 1).is_some_and(|n| (0x80..=0x9f).contains(n)),
        0xef => b
            .get(i + 1..i + 3)
            .is_some_and(|n| n == [0xbb, 0xbf] || n == [0xbf, 0xbe] || n == [0xbf, 0xbf]),
        _ => false,
    })
}

/// The stream's documents: (opened by a `---` marker, body). A directive, a document end
/// marker or content on a marker's line is beyond this reader.
fn split(text: &str) -> Option<Vec<(bool, &str)>> {
    let b = text.as_bytes();
    let starts_line =
        |needle: &[u8]| b.starts_with(&needle[1..]) || memchr::memmem::find(b, needle).is_some();
    if starts_line(b"\n%") || starts_line(b"\n...") {
        return None;
    }
    let first = b.starts_with(b"---").then_some(0);
    let markers = first
        .into_iter()
        .chain(memchr::memmem::find_iter(b, b"\n---").map(|i| i + 1));
    let mut docs = Vec::new();
    let (mut start, mut explicit) = (0, false);
    for pos in markers {
        let end = memchr::memchr(b'\n', &b[pos..]).map_or(text.len(), |n| pos + n);
        let rest = &text[pos + 3..end];
        // `----` or `---x` is content, not a marker.
        if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
            continue;
        }
        let after = rest.trim_start();
        if !(after.is_empty() || (after.starts_with('#') && plain_text(after))) {
            return None;
        }
        docs.push((explicit, &text[start..pos]));
        (start, explicit) = (end + 1, true);
    }
    docs.push((explicit, &text[start.min(text.len())..]));
    Some(docs)
}

/// The longest key (in bytes, colon included) this reader takes: below YAML's limit of 1024
/// characters for an implicit key, whatever the characters' width.
const LONGEST_KEY: usize = 1000;

/// A line: its indentation (spaces) and the rest, without trailing spaces.
#[derive(Clone, Copy, Debug)]
struct Line<'a> {
    indent: usize,
    body: &'a str,
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
    /// The rest of a line after `- `, read as a line of its own at its column.
    pending: Option<Line<'a>>,
    /// The last line [`Parser::peek`] found: where it was looked for, and where the next starts.
    peeked: Option<(usize, Line<'a>, usize)>,
    out: String,
    /// The JSON keys of the mappings being written (start, end in `out`), for duplicates.
    keys: Vec<(usize, usize)>,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Self {
        Parser {
            text,
            pos: 0,
            pending: None,
            peeked: None,
            out: String::with_capacity(text.len()),
            keys: Vec::new(),
        }
    }

    /// The raw line at the cursor and where the next one starts.
    fn raw_line(&self) -> Option<(&'a str, usize)> {
        if self.pos >= self.text.len() {
            return None;
        }
        let rest = &self.text[self.pos..];
        let end = rest.find('\n').map_or(rest.len(), |n| n);
        Some((&rest[..end], self.pos + end + 1))
    }

    /// The next line with content (blank and comment lines skipped); `None` at the end or
    /// when a tab indents it.
    fn peek(&mut self) -> Option<Line<'a>> {
        if let Some(l) = self.pending {
            return Some(l);
        }
        if let Some((at, l, _)) = self.peeked
            && at == self.pos
        {
            return Some(l);
        }
        while let Some((raw, next)) = self.raw_line() {
            let body = raw.trim_start_matches(' ');
            let trimmed = body.trim_end_matches([' ', '\t']);
            if (trimmed.is_empty() && !raw.contains('\t')) || trimmed.starts_with('#') {
                self.pos = next;
                continue;
            }
            // Indentation is spaces only: a tab makes the line one no node takes, so the
            // caller finds content it cannot place. So does a tab in trailing white space,
            // which YAML refuses after an indicator (`-\t`, `key:\t`).
            let indent = if body.starts_with('\t') || body[trimmed.len()..].contains('\t') {
                usize::MAX
            } else {
                raw.len() - body.len()
            };
            let line = Line {
                indent,
                body: trimmed,
            };
            self.peeked = Some((self.pos, line, next));
            return Some(line);
        }
        None
    }

    fn advance(&mut self) {
        if self.pending.take().is_some() {
            return;
        }
        match self.peeked {
            Some((at, _, next)) if at == self.pos => self.pos = next,
            _ => {
                if let Some((_, next)) = self.raw_line() {
                    self.pos = next;
                }
            }
        }
    }

    /// A node whose first line is at `indent`.
    fn node(&mut self, indent: usize) -> Option<()> {
        let line = self.peek()?;
        // A tab-indented line (`usize::MAX`) or one of tabs only belongs to no node.
        if line.indent != indent || line.indent == usize::MAX || line.body.is_empty() {
            return None;
        }
        if is_item(line.body) {
            self.sequence(indent)
        } else {
            self.mapping(indent)
        }
    }

    fn sequence(&mut self, indent: usize) -> Option<()> {
        self.out.push('[');
        let mut first = true;
        while let Some(line) = self.peek() {
            if line.indent != indent || !is_item(line.body) {
                break;
            }
            if !first {
                self.out.push(',');
            }
            first = false;
            self.advance();
            let rest = &line.body[1..];
            let content = rest.trim_start_matches(' ');
            if content.is_empty() {
                self.nested(indent, true)?;
            } else if is_item(content) || is_entry(content) {
                let column = indent + 1 + (rest.len() - content.len());
                self.pending = Some(Line {
                    indent: column,
                    body: content,
                });
                self.node(column)?;
            } else {
                self.value(content, indent)?;
            }
        }
        self.out.push(']');
        if let Some(l) = self.peek()
            && l.indent > indent
        {
            return None;
        }
        Some(())
    }

    fn mapping(&mut self, indent: usize) -> Option<()> {
        self.out.push('{');
        let base = self.keys.len();
        while let Some(line) = self.peek() {
            if line.indent != indent || is_item(line.body) {
                break;
            }
            let (key, rest) = self.key(line.body)?;
            if self.keys.len() > base {
                self.out.push(',');
            }
            let start = self.out.len();
            write_str(&mut self.out, &key);
            let end = self.out.len();
            let text = &self.out[start..end];
            if self.keys[base..]
                .iter()
                .any(|&(s, e)| &self.out[s..e] == text)
            {
                return None;
            }
            self.keys.push((start, end));
            self.out.push(':');
            self.advance();
            let rest = rest.trim_start_matches(' ');
            if rest.is_empty() {
                self.nested(indent, false)?;
            } else {
                self.value(rest, indent)?;
            }
        }
        self.keys.truncate(base);
        self.out.push('}');
        match self.peek() {
            Some(l) if l.indent > indent => None,
            _ => Some(()),
        }
    }

    /// The value on the lines after `key:` or `-`: a deeper node, a sequence at the key's own
    /// indentation (kubectl's style), or null.
    fn nested(&mut self, indent: usize, in_item: bool) -> Option<()> {
        match self.peek() {
            Some(l) if l.indent > indent && l.indent != usize::MAX => {
                if !is_item(l.body) && !is_entry(l.body) {
                    return None;
                }
                self.node(l.indent)
            }
            Some(l) if l.indent == 0 && indent == 0 && !in_item && is_item(l.body) => {
                self.top_sequence()
            }
            Some(l) if l.indent == indent && !in_item && is_item(l.body) => self.sequence(indent),
            _ => {
                self.out.push_str("null");
                Some(())
            }
        }
    }

    /// A mapping key: its text and the rest of the line after the colon.
    fn key(&self, body: &'a str) -> Option<(Cow<'a, str>, &'a str)> {
        let (key, after) = match *body.as_bytes().first()? {
            b'"' => map_owned(double_quoted(body)?),
            b'\'' => map_owned(single_quoted(body)?),
            _ => {
                let end = key_end(body)?;
                let key = body[..end].trim_end_matches(' ');
                if key.ends_with('\t') || !plain_start(key) || resolve(key)? != Plain::Str {
                    return None;
                }
                (Cow::Borrowed(key), &body[end..])
            }
        };
        let after = after.trim_start_matches(' ').strip_prefix(':')?;
        // YAML limits an implicit key to 1024 characters up to its colon; long keys are left
        // to the full reader, which decides where that limit falls.
        if body.len() - after.len() > LONGEST_KEY {
            return None;
        }
        (after.is_empty() || after.starts_with(' ')).then_some((key, after))
    }

    /// A value that starts on the current line (`s`) of a node at `indent`.
    fn value(&mut self, s: &'a str, indent: usize) -> Option<()> {
        match *s.as_bytes().first()? {
            b'"' | b'\'' => {
                let (v, rest) = if s.starts_with('"') {
                    double_quoted(s)?
                } else {
                    single_quoted(s)?
                };
                let rest = rest.trim_start_matches([' ', '\t']);
                if !(rest.is_empty() || (rest.starts_with('#') && rest.len() < s.len())) {
                    return None;
                }
                write_str(&mut self.out, &v);
            }
            b'|' => self.literal(s, indent)?,
            b'[' | b'{' => match s {
                "[]" | "{}" => self.out.push_str(s),
                _ => return None,
            },
            _ => {
                if !plain_start(s) || !plain_rest(s) {
                    return None;
                }
                let p = resolve(s)?;
                write_plain(&mut self.out, s, p);
            }
        }
        // A deeper line after a scalar would continue it: beyond this reader.
        match self.peek() {
            Some(l) if l.indent > indent => None,
            _ => Some(()),
        }
    }
}
