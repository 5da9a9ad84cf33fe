//! CEL's built-in functions the CRD rules use (`size`, `matches`, the Kubernetes string and
//! regex extensions `find`, `split`, `startsWith`, `endsWith`, `contains`, and the type
//! conversions `int`, `uint`, `double`, `string`, `bool`), and the arithmetic operators.

use super::CelError;
use super::ast::BinOp;
use super::value::Val;
use regex::Regex;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

/// Calls a function; a method's receiver is the first argument.
pub fn call<'a>(name: &str, args: Vec<Val<'a>>) -> Result<Val<'a>, CelError> {
    match (name, args.as_slice()) {
        ("size", [x]) => x.size().map(Val::Int),
        ("matches", [Val::Str(s), Val::Str(re)]) => Ok(Val::Bool(regex(re)?.is_match(s))),
        ("find", [Val::Str(s), Val::Str(re)]) => {
            let found = regex(re)?.find(s).map_or("", |m| m.as_str()).to_string();
            Ok(Val::Str(Cow::Owned(found)))
        }
        ("split", [Val::Str(s), Val::Str(sep)]) => Ok(split(s, sep, -1)),
        ("split", [Val::Str(s), Val::Str(sep), Val::Int(n)]) => Ok(split(s, sep, *n)),
        ("startsWith", [Val::Str(s), Val::Str(p)]) => Ok(Val::Bool(s.starts_with(p.as_ref()))),
        ("endsWith", [Val::Str(s), Val::Str(p)]) => Ok(Val::Bool(s.ends_with(p.as_ref()))),
        ("contains", [Val::Str(s), Val::Str(p)]) => Ok(Val::Bool(s.contains(p.as_ref()))),
        ("int", [x]) => to_int(x).map(Val::Int),
        ("uint", [x]) => to_uint(x).map(Val::Uint),
        ("double", [x]) => to_double(x).map(Val::Double),
        ("string", [x]) => to_string(x).map(|s| Val::Str(Cow::Owned(s))),
        ("bool", [Val::Bool(b)]) => Ok(Val::Bool(*b)),
        ("bool", [Val::Str(s)]) => to_bool(s).map(Val::Bool),
        _ => Err(CelError::NoSuchOverload),
    }
}

static REGEXES: LazyLock<Mutex<HashMap<String, Regex>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// A compiled (and cached) RE2-style pattern.
fn regex(pattern: &str) -> Result<Regex, CelError> {
    if let Some(re) = REGEXES.lock().ok().and_then(|c| c.get(pattern).cloned()) {
        return Ok(re);
    }
    let re = Regex::new(pattern).map_err(|e| CelError::Regex(e.to_string()))?;
    if let Ok(mut cache) = REGEXES.lock() {
        cache.insert(pattern.to_string(), re.clone());
    }
    Ok(re)
}

/// Go's `strings.SplitN`: `n < 0` splits everywhere, `n == 0` gives no parts, an empty
/// separator splits into characters.
fn split<'a>(s: &str, sep: &str, n: i64) -> Val<'a> {
    let limit = usize::try_from(n).unwrap_or(usize::MAX);
    let owned = |p: &str| Val::Str(Cow::Owned(p.to_string()));
    let parts: Vec<Val<'a>> = if limit == 0 {
        Vec::new()
    } else if sep.is_empty() {
        let chars: Vec<char> = s.chars().collect();
        let head = chars.len().min(limit - 1);
        let mut parts: Vec<Val<'a>> = chars
            .iter()
            .take(head)
            .map(|c| owned(&c.to_string()))
            .collect();
        if head < chars.len() {
            parts.push(owned(&chars[head..].iter().collect::<String>()));
        }
        parts
    } else {
        s.splitn(limit, sep).map(owned).collect()
    };
    Val::List(parts)
}

fn to_int(x: &Val<'_>) -> Result<i64, CelError> {
    match x {
        Val::Int(n) => Ok(*n),
        Val::Uint(n) => i64::try_from(*n).map_err(|_| CelError::Range(format!("{n} to int"))),
        Val::Double(d)
            if d.is_finite() && *d > -9.223_372_036_854_776e18 && *d < 9.223_372_036_854_776e18 =>
        {
            Ok(d.trunc() as i64)
        }
        Val::Double(d) => Err(CelError::Range(format!("{d} to int"))),
        Val::Str(s) => s.parse().map_err(|e| parse_err("ParseInt", s, &e)),
        _ => Err(CelError::NoSuchOverload),
    }
}

fn to_uint(x: &Val<'_>) -> Result<u64, CelError> {
    match x {
        Val::Uint(n) => Ok(*n),
        Val::Int(n) => u64::try_from(*n).map_err(|_| CelError::Range(format!("{n} to uint"))),
        Val::Double(d) if d.is_finite() && *d > -1.0 && *d < 1.844_674_407_370_955_2e19 => {
            Ok(d.trunc() as u64)
        }
        Val::Double(d) => Err(CelError::Range(format!("{d} to uint"))),
        Val::Str(s) => s.parse().map_err(|e| parse_err("ParseUint", s, &e)),
        _ => Err(CelError::NoSuchOverload),
    }
}

fn to_double(x: &Val<'_>) -> Result<f64, CelError> {
    match x {
        Val::Double(d) => Ok(*d),
        Val::Int(n) => Ok(*n as f64),
        Val::Uint(n) => Ok(*n as f64),
        Val::Str(s) => s.parse().map_err(|e| parse_err("ParseFloat", s, &e)),
        _ => Err(CelError::NoSuchOverload),
    }
}

fn to_string(x: &Val<'_>) -> Result<String, CelError> {
    match x {
        Val::Str(s) => Ok(s.to_string()),
        Val::Int(n) => Ok(n.to_string()),
        Val::Uint(n) => Ok(n.to_string()),
        Val::Double(d) => Ok(d.to_string()),
        Val::Bool(b) => Ok(b.to_string()),
        _ => Err(CelError::NoSuchOverload),
    }
}

fn to_bool(s: &str) -> Result<bool, CelError> {
    match s {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Ok(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Ok(false),
        _ => Err(CelError::Conversion(
            "type conversion error from 'string' to 'bool'".into(),
        )),
    }
}

/// A failed conversion worded as Go's `strconv` (which the apiserver reports).
fn parse_err(func: &str, s: &str, e: &dyn std::error::Error) -> CelError {
    let why = if e.to_string().contains("too large") || e.to_string().contains("too small") {
        "value out of range"
    } else {
        "invalid syntax"
    };
    CelError::Conversion(format!("strconv.{func}: parsing {s:?}: {why}"))
}

/// `+ - * / %` over ints, uints and doubles (no mixing, as in CEL); `+` also joins strings
/// and lists. Integer overflow and division by zero are errors.
pub fn arith<'a>(op: BinOp, a: Val<'a>, b: Val<'a>) -> Result<Val<'a>, CelError> {
    match (a, b) {
        (Val::Int(x), Val::Int(y)) => int_op(op, x, y).map(Val::Int),
        (Val::Uint(x), Val::Uint(y)) => uint_op(op, x, y).map(Val::Uint),
        (Val::Double(x), Val::Double(y)) => double_op(op, x, y).map(Val::Double),
        (Val::Str(x), Val::Str(y)) if op == BinOp::Add => {
            Ok(Val::Str(Cow::Owned(format!("{x}{y}"))))
        }
        (a, b) if op == BinOp::Add => match (a.items(), b.items()) {
            (Some(mut x), Some(y)) => {
                x.extend(y);
                Ok(Val::List(x))
            }
            _ => Err(CelError::NoSuchOverload),
        },
        _ => Err(CelError::NoSuchOverload),
    }
}

/// Checked integer arithmetic, the same for `int` and `uint`.
macro_rules! checked_op {
    ($name:ident, $t:ty) => {
        fn $name(op: BinOp, x: $t, y: $t) -> Result<$t, CelError> {
            let r = match op {
                BinOp::Add => x.checked_add(y),
                BinOp::Sub => x.checked_sub(y),
                BinOp::Mul => x.checked_mul(y),
                BinOp::Div if y == 0 => return Err(CelError::DivisionByZero),
                BinOp::Div => x.checked_div(y),
                BinOp::Rem if y == 0 => return Err(CelError::ModulusByZero),
                BinOp::Rem => x.checked_rem(y),
                _ => return Err(CelError::NoSuchOverload),
            };
            r.ok_or(CelError::Overflow)
        }
    };
}

checked_op!(int_op, i64);
checked_op!(uint_op, u64);

fn double_op(op: BinOp, x: f64, y: f64) -> Result<f64, CelError> {
    match op {
        BinOp::Add => Ok(x + y),
        BinOp::Sub => Ok(x - y),
        BinOp::Mul => Ok(x * y),
        BinOp::Div => Ok(x / y),
        _ => Err(CelError::NoSuchOverload),
    }
}
