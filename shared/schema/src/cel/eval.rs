//! The CEL evaluator: walks an [`Expr`] over [`Val`]ues. `&&`, `||` and `?:` are lazy and
//! `&&`/`||` are commutative over errors as in CEL (`error || true` is `true`); everything
//! else is strict (an error in an operand is the result).

use super::CelError;
use super::ast::{BinOp, Comprehension, Expr, Lit, Macro, UnOp};
use super::func;
use super::value::{Val, compare, contains, equals};
use std::borrow::Cow;
use std::cmp::Ordering;

/// The variables in scope: `self`, `oldSelf` and the macros' iteration variables.
#[derive(Debug, Default)]
pub struct Env<'a> {
    vars: Vec<(&'a str, Val<'a>)>,
}

impl<'a> Env<'a> {
    /// Binds a variable (shadowing an outer one of the same name).
    pub fn bind(&mut self, name: &'a str, v: Val<'a>) {
        self.vars.push((name, v));
    }

    fn unbind(&mut self) {
        self.vars.pop();
    }

    fn get(&self, name: &str) -> Result<Val<'a>, CelError> {
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| CelError::Undeclared(name.to_string()))
    }
}

/// Evaluates an expression.
pub fn eval<'a>(e: &'a Expr, env: &mut Env<'a>) -> Result<Val<'a>, CelError> {
    match e {
        Expr::Lit(l) => Ok(literal(l)),
        Expr::Ident(name) => env.get(name),
        Expr::Select(x, f) => select(&eval(x, env)?, f),
        Expr::Has(x, f) => has(&eval(x, env)?, f),
        Expr::Index(x, i) => index(&eval(x, env)?, &eval(i, env)?),
        Expr::Call(target, name, args) => {
            let mut vals = Vec::with_capacity(args.len() + 1);
            for a in target.iter().map(|t| &**t).chain(args) {
                vals.push(eval(a, env)?);
            }
            func::call(name, vals)
        }
        Expr::Comprehension(c) => comprehension(c, env),
        Expr::List(items) => items
            .iter()
            .map(|x| eval(x, env))
            .collect::<Result<_, _>>()
            .map(Val::List),
        Expr::Map(entries) => map(entries, env),
        Expr::Unary(op, x) => unary(*op, eval(x, env)?),
        Expr::Binary(op, a, b) => binary(*op, eval(a, env)?, eval(b, env)?),
        Expr::And(a, b) => logic(a, b, false, env),
        Expr::Or(a, b) => logic(a, b, true, env),
        Expr::Cond(c, a, b) => match eval(c, env)? {
            Val::Bool(true) => eval(a, env),
            Val::Bool(false) => eval(b, env),
            _ => Err(CelError::NoSuchOverload),
        },
    }
}

fn literal(l: &Lit) -> Val<'_> {
    match l {
        Lit::Null => Val::Null,
        Lit::Bool(b) => Val::Bool(*b),
        Lit::Int(n) => Val::Int(*n),
        Lit::Uint(n) => Val::Uint(*n),
        Lit::Double(x) => Val::Double(*x),
        Lit::Str(s) => Val::Str(Cow::Borrowed(s)),
    }
}

fn select<'a>(v: &Val<'a>, field: &str) -> Result<Val<'a>, CelError> {
    v.lookup(&Val::Str(Cow::Borrowed(field)))
        .ok_or(CelError::NoSuchOverload)?
        .ok_or_else(|| CelError::NoSuchKey(field.to_string()))
}

fn has<'a>(v: &Val<'_>, field: &str) -> Result<Val<'a>, CelError> {
    v.lookup(&Val::Str(Cow::Borrowed(field)))
        .map(|x| Val::Bool(x.is_some()))
        .ok_or(CelError::NoSuchOverload)
}

fn index<'a>(v: &Val<'a>, i: &Val<'_>) -> Result<Val<'a>, CelError> {
    if let Some(items) = v.items() {
        let n = match i {
            Val::Int(n) => *n,
            Val::Uint(n) => i64::try_from(*n).unwrap_or(i64::MAX),
            Val::Double(x) if x.fract() == 0.0 => *x as i64,
            _ => return Err(CelError::NoSuchOverload),
        };
        let len = items.len();
        return usize::try_from(n)
            .ok()
            .and_then(|k| items.into_iter().nth(k))
            .ok_or(CelError::OutOfRange(n, len));
    }
    v.lookup(i)
        .ok_or(CelError::NoSuchOverload)?
        .ok_or_else(|| CelError::NoSuchKey(key_text(i)))
}

fn key_text(k: &Val<'_>) -> String {
    match k {
        Val::Str(s) => s.to_string(),
        Val::Int(n) => n.to_string(),
        Val::Uint(n) => n.to_string(),
        Val::Bool(b) => b.to_string(),
        other => other.type_name().to_string(),
    }
}

fn map<'a>(entries: &'a [(Expr, Expr)], env: &mut Env<'a>) -> Result<Val<'a>, CelError> {
    let mut out: Vec<(Val<'a>, Val<'a>)> = Vec::with_capacity(entries.len());
    for (k, v) in entries {
        let key = eval(k, env)?;
        if !matches!(key, Val::Str(_) | Val::Int(_) | Val::Uint(_) | Val::Bool(_)) {
            return Err(CelError::NoSuchOverload);
        }
        if out.iter().any(|(k, _)| equals(k, &key)) {
            return Err(CelError::DuplicateKey(key_text(&key)));
        }
        out.push((key, eval(v, env)?));
    }
    Ok(Val::Map(out))
}

fn unary(op: UnOp, v: Val<'_>) -> Result<Val<'_>, CelError> {
    match (op, v) {
        (UnOp::Not, Val::Bool(b)) => Ok(Val::Bool(!b)),
        (UnOp::Neg, Val::Int(n)) => n.checked_neg().map(Val::Int).ok_or(CelError::Overflow),
        (UnOp::Neg, Val::Double(x)) => Ok(Val::Double(-x)),
        _ => Err(CelError::NoSuchOverload),
    }
}

fn binary<'a>(op: BinOp, a: Val<'a>, b: Val<'a>) -> Result<Val<'a>, CelError> {
    let ord = |want: fn(Ordering) -> bool| compare(&a, &b).map(|o| Val::Bool(o.is_some_and(want)));
    match op {
        BinOp::Eq => Ok(Val::Bool(equals(&a, &b))),
        BinOp::Ne => Ok(Val::Bool(!equals(&a, &b))),
        BinOp::Lt => ord(Ordering::is_lt),
        BinOp::Le => ord(Ordering::is_le),
        BinOp::Gt => ord(Ordering::is_gt),
        BinOp::Ge => ord(Ordering::is_ge),
        BinOp::In => contains(&a, &b).map(Val::Bool),
        _ => func::arith(op, a, b),
    }
}

/// `a && b` (`or` false) or `a || b` (`or` true): `short` on either side decides, even
/// if the other side is an error; otherwise an error wins over a non-bool.
fn logic<'a>(a: &'a Expr, b: &'a Expr, or: bool, env: &mut Env<'a>) -> Result<Val<'a>, CelError> {
    let short = or;
    let left = eval(a, env);
    if matches!(left, Ok(Val::Bool(x)) if x == short) {
        return Ok(Val::Bool(short));
    }
    let right = eval(b, env);
    match (left, right) {
        (_, Ok(Val::Bool(x))) if x == short => Ok(Val::Bool(short)),
        (Ok(Val::Bool(_)), Ok(Val::Bool(_))) => Ok(Val::Bool(!short)),
        (Err(e), _) | (_, Err(e)) => Err(e),
        _ => Err(CelError::NoSuchOverload),
    }
}

fn comprehension<'a>(c: &'a Comprehension, env: &mut Env<'a>) -> Result<Val<'a>, CelError> {
    let range = eval(&c.range, env)?.range()?;
    match c.kind {
        Macro::All => quantify(c, range, false, env),
        Macro::Exists => quantify(c, range, true, env),
        Macro::ExistsOne => {
            let mut n = 0;
            for x in range {
                n += usize::from(predicate(&c.body, &c.var, x, env)?);
            }
            Ok(Val::Bool(n == 1))
        }
        Macro::Filter => {
            let mut out = Vec::new();
            for x in range {
                if predicate(&c.body, &c.var, x.clone(), env)? {
                    out.push(x);
                }
            }
            Ok(Val::List(out))
        }
        Macro::Map => {
            let mut out = Vec::new();
            for x in range {
                if let Some(f) = &c.filter
                    && !predicate(f, &c.var, x.clone(), env)?
                {
                    continue;
                }
                env.bind(&c.var, x);
                let y = eval(&c.body, env);
                env.unbind();
                out.push(y?);
            }
            Ok(Val::List(out))
        }
    }
}

/// Evaluates a macro's predicate with the variable bound to `x`.
fn predicate<'a>(
    p: &'a Expr,
    var: &'a str,
    x: Val<'a>,
    env: &mut Env<'a>,
) -> Result<bool, CelError> {
    env.bind(var, x);
    let r = eval(p, env);
    env.unbind();
    match r? {
        Val::Bool(b) => Ok(b),
        _ => Err(CelError::NoSuchOverload),
    }
}

/// `all` (`short` false) / `exists` (`short` true): one `short` result decides; errors
/// elsewhere only count if nothing decides.
fn quantify<'a>(
    c: &'a Comprehension,
    range: Vec<Val<'a>>,
    short: bool,
    env: &mut Env<'a>,
) -> Result<Val<'a>, CelError> {
    let mut first_err = None;
    for x in range {
        match predicate(&c.body, &c.var, x, env) {
            Ok(b) if b == short => return Ok(Val::Bool(short)),
            Ok(_) => {}
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    first_err.map_or(Ok(Val::Bool(!short)), Err)
}
