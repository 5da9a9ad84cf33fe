//! A sequence at column 0, as `kubectl get -o yaml` writes a `List`'s `items:`: each item
//! starts on a line of its own (`- ` at column 0), so the items are cut apart by their lines
//! and read on every core, then joined in order.

use super::Parser;

impl Parser<'_> {
    /// The sequence at column 0 starting at the cursor.
    pub(super) fn top_sequence(&mut self) -> Option<()> {
        let (starts, end) = item_lines(self.text, self.pos);
        let mut chunks: Vec<&str> = Vec::with_capacity(starts.len());
        for (i, &s) in starts.iter().enumerate() {
            chunks.push(&self.text[s..starts.get(i + 1).copied().unwrap_or(end)]);
        }
        let items = crate::parallel::map(&chunks, |chunk| {
            let mut p = Parser::new(chunk);
            p.sequence(0)?;
            // One item each; the brackets are the whole sequence's.
            (p.peek().is_none()).then(|| p.out[1..p.out.len() - 1].to_string())
        });
        self.out.push('[');
        for (i, item) in items.into_iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            self.out.push_str(&item?);
        }
        self.out.push(']');
        self.pos = end;
        self.peeked = None;
        Some(())
    }
}

/// Where each item of the column-0 sequence at `from` starts, and where the sequence ends (the
/// first other line at column 0 that is not blank or a comment).
fn item_lines(text: &str, from: usize) -> (Vec<usize>, usize) {
    let mut starts = Vec::new();
    let mut pos = from;
    while pos < text.len() {
        let line = &text[pos..];
        let len = line.find('\n').map_or(line.len(), |n| n + 1);
        let line = &line[..len];
        if line.starts_with("- ") || line.trim_end() == "-" {
            starts.push(pos);
        } else if !(line.starts_with(' ') || line.starts_with('#') || line.trim().is_empty()) {
            break;
        }
        pos += len;
    }
    (starts, pos.min(text.len()))
}
