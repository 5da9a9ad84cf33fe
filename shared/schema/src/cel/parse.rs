//! A recursive-descent parser for CEL's grammar, lowest precedence first:
//! `?:`, `||`, `&&`, relations (`== != < <= > >= in`), `+ -`, `* / %`, unary `! -`,
//! member access (`.f`, `.f(..)`, `[i]`), primaries. Macros (`has`, `all`, `exists`,
//! `exists_one`, `filter`, `map`) are expanded here.

use super::CelError;
use super::ast::{BinOp, Comprehension, Expr, Lit, Macro, UnOp};
use super::lex::{Tok, lex};

/// Trees deeper than this (nesting plus operator chains) are refused rather than risking the
/// stack while parsing, checking, evaluating or dropping them.
const MAX_DEPTH: usize = 64;

/// Parses one expression that must span the whole source.
pub fn parse(src: &str) -> Result<Expr, CelError> {
    let mut p = Parser {
        toks: lex(src)?,
        i: 0,
        depth: 0,
        len: src.len(),
    };
    let e = p.expr()?;
    match p.toks.get(p.i) {
        None => Ok(e),
        Some((_, t)) => Err(p.err(format!("unexpected {t:?} after the expression"))),
    }
}

struct Parser {
    toks: Vec<(usize, Tok)>,
    i: usize,
    depth: usize,
    len: usize,
}

impl Parser {
    fn err(&self, msg: impl Into<String>) -> CelError {
        let pos = self.toks.get(self.i).map_or(self.len, |(p, _)| *p);
        CelError::Syntax {
            pos,
            msg: msg.into(),
        }
    }

    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.i).map(|(_, t)| t)
    }

    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.i).map(|(_, t)| t.clone());
        self.i += 1;
        t
    }

    fn eat(&mut self, p: &str) -> bool {
        let hit = matches!(self.peek(), Some(Tok::Punct(q)) if *q == p);
        self.i += usize::from(hit);
        hit
    }

    fn expect(&mut self, p: &str) -> Result<(), CelError> {
        if self.eat(p) {
            Ok(())
        } else {
            Err(self.err(format!("expected '{p}'")))
        }
    }

    fn ident(&mut self) -> Result<String, CelError> {
        match self.next() {
            Some(Tok::Ident(s)) if !is_reserved(&s) => Ok(s),
            _ => {
                self.i -= 1;
                Err(self.err("expected an identifier"))
            }
        }
    }

    /// `or ['?' or ':' expr]`
    fn expr(&mut self) -> Result<Expr, CelError> {
        let base = self.deeper()?;
        let c = self.or()?;
        let e = if self.eat("?") {
            let a = self.or()?;
            self.expect(":")?;
            let b = self.expr()?;
            Expr::Cond(Box::new(c), Box::new(a), Box::new(b))
        } else {
            c
        };
        self.depth = base;
        Ok(e)
    }

    /// Counts one more level of the tree being built (a nested expression or one more
    /// link of an operator chain); returns the depth to restore when the level is done.
    fn deeper(&mut self) -> Result<usize, CelError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err("expression nested too deeply"));
        }
        Ok(self.depth - 1)
    }

    fn or(&mut self) -> Result<Expr, CelError> {
        let base = self.depth;
        let mut e = self.and()?;
        while self.eat("||") {
            self.deeper()?;
            e = Expr::Or(Box::new(e), Box::new(self.and()?));
        }
        self.depth = base;
        Ok(e)
    }

    fn and(&mut self) -> Result<Expr, CelError> {
        let base = self.depth;
        let mut e = self.relation()?;
        while self.eat("&&") {
            self.deeper()?;
            e = Expr::And(Box::new(e), Box::new(self.relation()?));
        }
        self.depth = base;
        Ok(e)
    }

    fn binary(
        &mut self,
        ops: &[(&str, BinOp)],
        operand: fn(&mut Self) -> Result<Expr, CelError>,
    ) -> Result<Expr, CelError> {
        let base = self.depth;
        let mut e = operand(self)?;
        loop {
            let op = match self.peek() {
                Some(Tok::Punct(p)) => ops.iter().find(|(s, _)| s == p),
                Some(Tok::Ident(w)) if w == "in" => ops.iter().find(|(s, _)| *s == "in"),
                _ => None,
            };
            let Some((_, op)) = op else {
                self.depth = base;
                return Ok(e);
            };
            self.i += 1;
            self.deeper()?;
            e = Expr::Binary(*op, Box::new(e), Box::new(operand(self)?));
        }
    }

    fn relation(&mut self) -> Result<Expr, CelError> {
        const OPS: [(&str, BinOp); 7] = [
            ("==", BinOp::Eq),
            ("!=", BinOp::Ne),
            ("<", BinOp::Lt),
            ("<=", BinOp::Le),
            (">", BinOp::Gt),
            (">=", BinOp::Ge),
            ("in", BinOp::In),
        ];
        self.binary(&OPS, Self::addition)
    }

    fn addition(&mut self) -> Result<Expr, CelError> {
        self.binary(
            &[("+", BinOp::Add), ("-", BinOp::Sub)],
            Self::multiplication,
        )
    }

    fn multiplication(&mut self) -> Result<Expr, CelError> {
        const OPS: [(&str, BinOp); 3] = [("*", BinOp::Mul), ("/", BinOp::Div), ("%", BinOp::Rem)];
        self.binary(&OPS, Self::unary)
    }

    fn unary(&mut self) -> Result<Expr, CelError> {
        if self.eat("!") {
            return Ok(Expr::Unary(UnOp::Not, Box::new(self.nested(Self::unary)?)));
        }
        if self.eat("-") {
            return Ok(match self.nested(Self::unary)? {
                Expr::Lit(Lit::Int(n)) => Expr::Lit(Lit::Int(-n)),
                Expr::Lit(Lit::Double(x)) => Expr::Lit(Lit::Double(-x)),
                e => Expr::Unary(UnOp::Neg, Box::new(e)),
            });
        }
        self.member()
    }

    /// Runs `f` one level deeper (so chains of prefix operators are bounded too).
    fn nested(&mut self, f: fn(&mut Self) -> Result<Expr, CelError>) -> Result<Expr, CelError> {
        let base = self.deeper()?;
        let e = f(self)?;
        self.depth = base;
        Ok(e)
    }

    fn member(&mut self) -> Result<Expr, CelError> {
        let base = self.depth;
        let mut e = self.primary()?;
        loop {
            if self.peek() == Some(&Tok::Punct(".")) || self.peek() == Some(&Tok::Punct("[")) {
                self.deeper()?;
            }
            if self.eat(".") {
                let name = self.ident()?;
                e = if self.eat("(") {
                    let args = self.list_of(")")?;
                    method(e, name, args).map_err(|m| self.err(m))?
                } else {
                    Expr::Select(Box::new(e), name)
                };
            } else if self.eat("[") {
                let idx = self.expr()?;
                self.expect("]")?;
                e = Expr::Index(Box::new(e), Box::new(idx));
            } else {
                self.depth = base;
                return Ok(e);
            }
        }
    }

    fn primary(&mut self) -> Result<Expr, CelError> {
        let lit = match self.next() {
            Some(Tok::Int(n)) => Lit::Int(n),
            Some(Tok::Uint(n)) => Lit::Uint(n),
            Some(Tok::Double(x)) => Lit::Double(x),
            Some(Tok::Str(s)) => Lit::Str(s),
            Some(Tok::Ident(w)) => return self.word(w),
            Some(Tok::Punct("(")) => {
                let e = self.expr()?;
                self.expect(")")?;
                return Ok(e);
            }
            Some(Tok::Punct("[")) => return self.list_of("]").map(Expr::List),
            Some(Tok::Punct("{")) => return self.map_entries(),
            _ => {
                self.i -= 1;
                return Err(self.err("expected an expression"));
            }
        };
        Ok(Expr::Lit(lit))
    }

    /// A keyword literal, a global call (or `has` macro), or a variable.
    fn word(&mut self, w: String) -> Result<Expr, CelError> {
        match w.as_str() {
            "true" => return Ok(Expr::Lit(Lit::Bool(true))),
            "false" => return Ok(Expr::Lit(Lit::Bool(false))),
            "null" => return Ok(Expr::Lit(Lit::Null)),
            w if is_reserved(w) => {
                self.i -= 1;
                return Err(self.err(format!("reserved word '{w}'")));
            }
            _ => {}
        }
        if !self.eat("(") {
            return Ok(Expr::Ident(w));
        }
        let mut args = self.list_of(")")?;
        if w != "has" {
            return Ok(Expr::Call(None, w, args));
        }
        match (args.pop(), args.is_empty()) {
            (Some(Expr::Select(operand, field)), true) => Ok(Expr::Has(operand, field)),
            _ => Err(self.err("has() takes one field selection, as in has(self.f)")),
        }
    }

    /// Comma-separated expressions up to `close` (a trailing comma is allowed).
    fn list_of(&mut self, close: &str) -> Result<Vec<Expr>, CelError> {
        let mut items = Vec::new();
        while !self.eat(close) {
            items.push(self.expr()?);
            if !self.eat(",") {
                self.expect(close)?;
                break;
            }
        }
        Ok(items)
    }

    fn map_entries(&mut self) -> Result<Expr, CelError> {
        let mut entries = Vec::new();
        while !self.eat("}") {
            let k = self.expr()?;
            self.expect(":")?;
            entries.push((k, self.expr()?));
            if !self.eat(",") {
                self.expect("}")?;
                break;
            }
        }
        Ok(Expr::Map(entries))
    }
}

fn is_reserved(w: &str) -> bool {
    matches!(
        w,
        "true"
            | "false"
            | "null"
            | "in"
            | "as"
            | "break"
            | "const"
            | "continue"
            | "else"
            | "for"
            | "function"
            | "if"
            | "import"
            | "let"
            | "loop"
            | "package"
            | "namespace"
            | "return"
            | "var"
            | "void"
            | "while"
    )
}

/// `target.name(args)`: a comprehension macro, or a method call.
fn method(target: Expr, name: String, mut args: Vec<Expr>) -> Result<Expr, String> {
    let kind = match name.as_str() {
        "all" => Macro::All,
        "exists" => Macro::Exists,
        "exists_one" => Macro::ExistsOne,
        "filter" => Macro::Filter,
        "map" => Macro::Map,
        _ => return Ok(Expr::Call(Some(Box::new(target)), name, args)),
    };
    let arity_ok = args.len() == 2 || (kind == Macro::Map && args.len() == 3);
    if !arity_ok {
        return Err(format!("{name}() takes a variable and an expression"));
    }
    let body = args.pop().ok_or("missing macro body")?;
    let filter = if args.len() == 2 { args.pop() } else { None };
    let var = match args.pop() {
        Some(Expr::Ident(v)) => v,
        _ => return Err(format!("the first argument of {name}() must be a variable")),
    };
    Ok(Expr::Comprehension(Box::new(Comprehension {
        kind,
        range: target,
        var,
        filter,
        body,
    })))
}
