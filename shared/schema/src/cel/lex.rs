//! The CEL lexer: source text to [`Tok`]ens (literals with their escapes decoded).

use super::CelError;

/// One token, with the byte offset it starts at.
#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    /// An integer literal (`42`, `0x2A`).
    Int(i64),
    /// An unsigned literal (`42u`).
    Uint(u64),
    /// A floating-point literal (`1.5`, `1e3`).
    Double(f64),
    /// A string literal, escapes decoded.
    Str(String),
    /// An identifier or reserved word (`self`, `true`, `in`).
    Ident(String),
    /// An operator or punctuation (`&&`, `.`, `(`).
    Punct(&'static str),
}

/// Operators and punctuation, longest first so that `<=` wins over `<`.
const PUNCTS: [&str; 24] = [
    "==", "!=", "<=", ">=", "&&", "||", "<", ">", "!", "+", "-", "*", "/", "%", "?", ":", ".", ",",
    "(", ")", "[", "]", "{", "}",
];

/// Splits a rule into tokens, each with its byte offset.
pub fn lex(src: &str) -> Result<Vec<(usize, Tok)>, CelError> {
    let mut lx = Lexer { src, pos: 0 };
    let mut out = Vec::new();
    while let Some(c) = lx.skip_space() {
        let at = lx.pos;
        let tok = if c.is_ascii_digit() || (c == '.' && lx.next_is_digit(1)) {
            lx.number()?
        } else if c == '"' || c == '\'' {
            lx.string(false)?
        } else if (c == 'r' || c == 'R') && matches!(lx.peek(1), Some('"' | '\'')) {
            lx.pos += 1;
            lx.string(true)?
        } else if c == '_' || c.is_ascii_alphabetic() {
            Tok::Ident(lx.ident())
        } else {
            lx.punct()?
        };
        out.push((at, tok));
    }
    Ok(out)
}

struct Lexer<'s> {
    src: &'s str,
    pos: usize,
}

impl<'s> Lexer<'s> {
    fn rest(&self) -> &'s str {
        self.src.get(self.pos..).unwrap_or_default()
    }

    fn peek(&self, n: usize) -> Option<char> {
        self.rest().chars().nth(n)
    }

    fn next_is_digit(&self, n: usize) -> bool {
        self.peek(n).is_some_and(|c| c.is_ascii_digit())
    }

    fn err(&self, msg: impl Into<String>) -> CelError {
        CelError::Syntax {
            pos: self.pos,
            msg: msg.into(),
        }
    }

    /// Skips blanks and `//` comments; the next character, if any.
    fn skip_space(&mut self) -> Option<char> {
        loop {
            let rest = self.rest();
            let trimmed = rest.trim_start();
            self.pos += rest.len() - trimmed.len();
            if !trimmed.starts_with("//") {
                return trimmed.chars().next();
            }
            self.pos += trimmed.find('\n').unwrap_or(trimmed.len());
        }
    }

    fn take_while(&mut self, f: impl Fn(char) -> bool) -> &'s str {
        let rest = self.rest();
        let n = rest.find(|c| !f(c)).unwrap_or(rest.len());
        self.pos += n;
        rest.get(..n).unwrap_or_default()
    }

    fn ident(&mut self) -> String {
        self.take_while(|c| c == '_' || c.is_ascii_alphanumeric())
            .to_string()
    }

    fn punct(&mut self) -> Result<Tok, CelError> {
        let rest = self.rest();
        let p = PUNCTS
            .iter()
            .find(|p| rest.starts_with(**p))
            .ok_or_else(|| self.err(format!("unexpected character {:?}", rest.chars().next())))?;
        self.pos += p.len();
        Ok(Tok::Punct(p))
    }

    fn number(&mut self) -> Result<Tok, CelError> {
        let rest = self.rest();
        if let Some(hex) = rest.strip_prefix("0x").or_else(|| rest.strip_prefix("0X")) {
            let digits: String = hex.chars().take_while(char::is_ascii_hexdigit).collect();
            self.pos += 2 + digits.len();
            let v = u64::from_str_radix(&digits, 16).map_err(|e| self.err(e.to_string()))?;
            return self.int_suffix(v);
        }
        let start = self.pos;
        self.take_while(|c| c.is_ascii_digit());
        let mut float = false;
        if self.peek(0) == Some('.') && self.next_is_digit(1) {
            float = true;
            self.pos += 1;
            self.take_while(|c| c.is_ascii_digit());
        }
        if matches!(self.peek(0), Some('e' | 'E')) {
            float = true;
            self.pos += 1;
            if matches!(self.peek(0), Some('+' | '-')) {
                self.pos += 1;
            }
            self.take_while(|c| c.is_ascii_digit());
        }
        let text = self.src.get(start..self.pos).unwrap_or_default();
        if float {
            return text
                .parse()
                .map(Tok::Double)
                .map_err(|_| self.err(format!("bad number {text:?}")));
        }
        let v = text.parse::<u64>().map_err(|e| self.err(e.to_string()))?;
        self.int_suffix(v)
    }

    /// `42u` is a uint; `42` an int (which must fit in 63 bits).
    fn int_suffix(&mut self, v: u64) -> Result<Tok, CelError> {
        if matches!(self.peek(0), Some('u' | 'U')) {
            self.pos += 1;
            return Ok(Tok::Uint(v));
        }
        i64::try_from(v)
            .map(Tok::Int)
            .map_err(|_| self.err("integer literal overflows int"))
    }

    fn string(&mut self, raw: bool) -> Result<Tok, CelError> {
        let quote = self.peek(0).ok_or_else(|| self.err("missing quote"))?;
        self.pos += 1;
        let mut out = String::new();
        loop {
            let c = self
                .peek(0)
                .ok_or_else(|| self.err("unterminated string"))?;
            self.pos += c.len_utf8();
            match c {
                c if c == quote => return Ok(Tok::Str(out)),
                '\n' | '\r' => return Err(self.err("newline in string")),
                '\\' if !raw => out.push(self.escape()?),
                c => out.push(c),
            }
        }
    }

    /// Decodes the escape after a backslash.
    fn escape(&mut self) -> Result<char, CelError> {
        let c = self
            .peek(0)
            .ok_or_else(|| self.err("unterminated escape"))?;
        self.pos += c.len_utf8();
        let simple = match c {
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'f' => Some('\u{c}'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\u{b}'),
            '\\' | '\'' | '"' | '`' | '?' => Some(c),
            _ => None,
        };
        if let Some(s) = simple {
            return Ok(s);
        }
        let (len, radix) = match c {
            'x' | 'X' => (2, 16),
            'u' => (4, 16),
            'U' => (8, 16),
            '0'..='3' => {
                self.pos -= 1;
                (3, 8)
            }
            _ => return Err(self.err(format!("invalid escape \\{c}"))),
        };
        let digits: String = self.rest().chars().take(len).collect();
        let code = u32::from_str_radix(&digits, radix)
            .ok()
            .filter(|_| digits.len() == len)
            .ok_or_else(|| self.err(format!("invalid escape digits {digits:?}")))?;
        self.pos += len;
        char::from_u32(code).ok_or_else(|| self.err("invalid code point"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(src: &str) -> Vec<Tok> {
        lex(src).unwrap().into_iter().map(|(_, t)| t).collect()
    }

    #[test]
    fn numbers_strings_and_operators() {
        assert_eq!(
            toks("1 2u 0x1F 1.5 2e3 .5"),
            vec![
                Tok::Int(1),
                Tok::Uint(2),
                Tok::Int(31),
                Tok::Double(1.5),
                Tok::Double(2000.0),
                Tok::Double(0.5)
            ]
        );
        assert_eq!(
            toks(r#"'a\'b' "c\n\x41\u00e9\101" r'\d'"#),
            vec![
                Tok::Str("a'b".into()),
                Tok::Str("c\nAéA".into()),
                Tok::Str(r"\d".into())
            ]
        );
        assert_eq!(
            toks("a<=b&&!c.d // note"),
            vec![
                Tok::Ident("a".into()),
                Tok::Punct("<="),
                Tok::Ident("b".into()),
                Tok::Punct("&&"),
                Tok::Punct("!"),
                Tok::Ident("c".into()),
                Tok::Punct("."),
                Tok::Ident("d".into())
            ]
        );
    }

    #[test]
    fn bad_input_is_a_syntax_error() {
        for src in ["'open", "a # b", r"'\q'", "9223372036854775808", "'a\nb'"] {
            assert!(matches!(lex(src), Err(CelError::Syntax { .. })), "{src}");
        }
        assert_eq!(toks("9223372036854775808u"), vec![Tok::Uint(1 << 63)]);
    }
}
