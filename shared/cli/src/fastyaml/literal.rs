//! Literal block scalars (`|`, `|-`): the lines deeper than their node, at the first line's
//! indentation, blank lines kept inside and dropped after.

use super::Parser;
use super::scalar::write_str;

impl Parser<'_> {
    /// A literal block scalar (`|` or `|-`) of a node at `indent`: its lines at the first
    /// one's indentation (deeper than `indent`), blank lines kept inside and dropped after.
    pub(super) fn literal(&mut self, header: &str, indent: usize) -> Option<()> {
        let strip = match header[1..].trim_end_matches(' ') {
            "" => false,
            "-" => true,
            _ => return None,
        };
        let mut lines: Vec<Option<&str>> = Vec::new();
        let (mut ci, mut widest_blank, mut ends_in_newline) = (None, 0, true);
        while let Some((raw, next)) = self.raw_line() {
            let rest = raw.trim_start_matches(' ');
            let spaces = raw.len() - rest.len();
            if rest.is_empty() {
                widest_blank = widest_blank.max(spaces);
                lines.push(None);
            } else if rest.trim_start_matches([' ', '\t']).is_empty() {
                return None;
            } else {
                match ci {
                    None if spaces > indent => ci = Some(spaces),
                    Some(c) if spaces >= c => {}
                    _ => break,
                }
                let line = &raw[ci?..];
                if line.starts_with('\t') {
                    return None;
                }
                lines.push(Some(line));
                ends_in_newline = next <= self.text.len();
            }
            self.pos = next;
        }
        let ci = ci?;
        // A blank line wider than the content, or a last line without a line break, is
        // read differently by YAML readers: leave it to the full one.
        if widest_blank > ci || (!strip && !ends_in_newline) {
            return None;
        }
        let last = lines.iter().rposition(Option::is_some)?;
        let mut value = String::new();
        for (i, l) in lines[..=last].iter().enumerate() {
            value.push_str(l.unwrap_or(""));
            if i < last || !strip {
                value.push('\n');
            }
        }
        write_str(&mut self.out, &value);
        Some(())
    }
}
