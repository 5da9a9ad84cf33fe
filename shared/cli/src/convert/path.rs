//! Which field a failed deserialization stopped at, read from the JSON text and the error's
//! position instead of deserializing the object a second time with a path-tracking
//! deserializer: every typed kind then needs one deserializer, not three, which halves what
//! the `kerf` command takes to compile.
//!
//! serde_json places an error from a `Deserialize` impl at the end of the value that was being
//! read (for a missing field, just after the object's closing brace), at the first byte of an
//! object or array it refused without reading, or just after a key it refused (unknown,
//! duplicate). No two values end at the same byte and none starts where another ends or a key
//! is refused, so the value or key there names the field, as a path-tracking deserializer
//! names it. Two cases name one step deeper than such a deserializer would, the step being
//! the culprit: a duplicated key (named itself, not its object), and a value an object's
//! visitor refuses after reading it whole, which in the Kubernetes types is only the check of
//! `apiVersion` and `kind` — and a document is always read as the kind it names.

use std::fmt;

/// One step from a value to one inside it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Segment {
    /// An object's member.
    Key(String),
    /// An array's element.
    Index(usize),
}

/// The steps from a document's root to a field.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldPath(pub Vec<Segment>);

impl fmt::Display for FieldPath {
    /// `spec.containers[0].image`; the root is `.`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str(".");
        }
        for (i, s) in self.0.iter().enumerate() {
            match s {
                Segment::Index(n) => write!(f, "[{n}]")?,
                Segment::Key(k) if i == 0 => f.write_str(k)?,
                Segment::Key(k) => write!(f, ".{k}")?,
            }
        }
        Ok(())
    }
}

/// The field a serde_json error in `text` arose in (the root when it has no position).
pub fn of_error(text: &str, e: &serde_json::Error) -> FieldPath {
    match offset(text, e.line(), e.column()) {
        Some(at) => at_offset(text, at),
        None => FieldPath::default(),
    }
}

/// The byte offset of serde_json's 1-based line and its column (bytes before the position on
/// that line); `None` for an error without a position.
fn offset(text: &str, line: usize, column: usize) -> Option<usize> {
    let start = match line {
        0 => return None,
        1 => 0,
        n => text.match_indices('\n').nth(n - 2)?.0 + 1,
    };
    Some((start + column).min(text.len()))
}

/// The field whose value ends at byte `at` of `text` (or, an object or array, starts there),
/// else the innermost object or array holding `at`.
pub fn at_offset(text: &str, at: usize) -> FieldPath {
    let mut scan = Scan {
        b: text.as_bytes(),
        i: 0,
        at,
        path: Vec::new(),
        exact: None,
        around: None,
    };
    scan.value();
    FieldPath(scan.exact.or(scan.around).unwrap_or_default())
}

/// A walk over well-formed JSON (the text has been parsed once already) that notes the paths
/// of the values around one byte.
struct Scan<'a> {
    b: &'a [u8],
    i: usize,
    at: usize,
    path: Vec<Segment>,
    exact: Option<Vec<Segment>>,
    around: Option<Vec<Segment>>,
}

impl Scan<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\n' | b'\r' | b'\t')) {
            self.i += 1;
        }
    }

    /// Reads one value; notes its path when it ends at the byte looked for, or is an object
    /// or array starting there (serde_json places a type error about a whole object or array
    /// at its first byte, having read none of it).
    fn value(&mut self) {
        self.whitespace();
        let start = self.i;
        let container = matches!(self.peek(), Some(b'{' | b'['));
        if container && start == self.at && self.exact.is_none() {
            self.exact = Some(self.path.clone());
        }
        match self.peek() {
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'"') => {
                self.string();
            }
            Some(_) => self.scalar(),
            None => return,
        }
        if self.i == self.at && self.exact.is_none() {
            self.exact = Some(self.path.clone());
        }
        if container && start < self.at && self.at < self.i && self.around.is_none() {
            self.around = Some(self.path.clone());
        }
    }

    fn object(&mut self) {
        self.i += 1;
        loop {
            self.whitespace();
            match self.peek() {
                Some(b'}') => {
                    self.i += 1;
                    return;
                }
                Some(b'"') => {
                    let key = self.string();
                    let after = self.i;
                    self.whitespace();
                    self.path.push(Segment::Key(key));
                    // A refused key (unknown, duplicate) is placed after it and its spaces.
                    if (after..=self.i).contains(&self.at) && self.exact.is_none() {
                        self.exact = Some(self.path.clone());
                    }
                    if self.peek() == Some(b':') {
                        self.i += 1;
                    }
                    self.value();
                    self.path.pop();
                }
                // A comma, or (never in checked JSON) anything else: step over it.
                Some(_) => self.i += 1,
                None => return,
            }
        }
    }

    fn array(&mut self) {
        self.i += 1;
        let mut index = 0;
        loop {
            self.whitespace();
            match self.peek() {
                Some(b']') => {
                    self.i += 1;
                    return;
                }
                Some(b',') => self.i += 1,
                Some(_) => {
                    self.path.push(Segment::Index(index));
                    self.value();
                    self.path.pop();
                    index += 1;
                }
                None => return,
            }
        }
    }

    /// Reads a string; returns its text, escapes resolved.
    fn string(&mut self) -> String {
        let start = self.i;
        self.i += 1;
        while let Some(c) = self.peek() {
            self.i += 1;
            match c {
                b'\\' => self.i += 1,
                b'"' => break,
                _ => {}
            }
        }
        let raw = self
            .b
            .get(start..self.i.min(self.b.len()))
            .unwrap_or_default();
        serde_json::from_slice(raw).unwrap_or_else(|_| String::from_utf8_lossy(raw).into_owned())
    }

    /// Reads a number or literal (at least one byte, so malformed text still ends the walk).
    fn scalar(&mut self) {
        self.i += 1;
        while let Some(c) = self.peek() {
            if matches!(c, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t') {
                break;
            }
            self.i += 1;
        }
    }
}

#[cfg(test)]
mod tests;
