//! A small CEL interpreter for the `x-kubernetes-validations` rules of the CRDs the sim
//! serves: [`lex`] → [`parse`] (an [`ast::Expr`], macros expanded) → [`ast::Expr::check`]
//! (identifiers bound, functions known) → [`eval`] over the JSON object.
//!
//! Supported: int/uint/double/string (single, double, raw; escapes)/bool/null literals,
//! lists and maps; `self`, `oldSelf`; `.field`, `[index]`, `[key]`; `has()`; the macros
//! `all`, `exists`, `exists_one`, `filter`, `map` (lists iterate items, maps their keys);
//! `! - * / % + - < <= > >= == != in && || ?:`; and the functions listed in [`func`].
//! Semantics follow CEL: `&&`/`||` short-circuit and absorb an error when the other side
//! decides (`error || true` is `true`); missing keys, bad indexes, failed conversions,
//! overflow and type mismatches (`no such overload`) are errors.
//!
//! How the apiserver applies the rules is in [`rules`]. Not modelled: static type checking
//! (type errors appear at run time), cost budgets, `messageExpression`, `fieldPath`,
//! `reason`, validation ratcheting, and timestamps/durations (no rule uses them).
//!
//! Each distinct rule text is compiled once ([`program`]) and cached for the process.

pub mod ast;
pub mod eval;
pub mod func;
pub mod lex;
pub mod parse;
pub mod rules;
pub mod value;

pub use rules::check;

use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

/// A CEL compile-time or run-time error, worded as cel-go words it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CelError {
    /// The rule does not parse.
    #[error("Syntax error: {msg} at offset {pos}")]
    Syntax {
        /// Byte offset in the rule.
        pos: usize,
        /// What is wrong.
        msg: String,
    },
    /// An identifier that is neither `self`, `oldSelf` nor a macro variable.
    #[error("undeclared reference to '{0}'")]
    Undeclared(String),
    /// A function the interpreter does not implement (name, argument count).
    #[error("undeclared reference to '{0}' with {1} argument(s)")]
    UnknownFunction(String, usize),
    /// An operator or function applied to types it does not take.
    #[error("no such overload")]
    NoSuchOverload,
    /// A field or map key that is absent.
    #[error("no such key: {0}")]
    NoSuchKey(String),
    /// A list index outside the list.
    #[error("index '{0}' out of range in list size '{1}'")]
    OutOfRange(i64, usize),
    /// Integer arithmetic overflowed.
    #[error("integer overflow")]
    Overflow,
    /// `x / 0`
    #[error("division by zero")]
    DivisionByZero,
    /// `x % 0`
    #[error("modulus by zero")]
    ModulusByZero,
    /// A number that does not fit the target type.
    #[error("range error converting {0}")]
    Range(String),
    /// A string that does not convert (`int('x')`).
    #[error("{0}")]
    Conversion(String),
    /// A map literal with a repeated key.
    #[error("Failed with repeated key: {0}")]
    DuplicateKey(String),
    /// An invalid regular expression given to `matches`/`find`.
    #[error("invalid regular expression: {0}")]
    Regex(String),
    /// The rule evaluated to something other than a bool.
    #[error("expected a bool result, got {0}")]
    NotBool(&'static str),
}

/// A compiled rule.
#[derive(Debug)]
pub struct Program {
    expr: ast::Expr,
    transition: bool,
}

impl Program {
    /// Parses and checks a rule.
    pub fn compile(rule: &str) -> Result<Self, CelError> {
        let expr = parse::parse(rule)?;
        expr.check()?;
        let transition = expr.reads("oldSelf");
        Ok(Self { expr, transition })
    }

    /// Whether the rule reads `oldSelf` (evaluated only on updates with an old value).
    pub fn is_transition(&self) -> bool {
        self.transition
    }

    /// Evaluates the rule with `self` (and `oldSelf`, if given) bound.
    pub fn eval(&self, this: &Value, old: Option<&Value>) -> Result<bool, CelError> {
        let mut env = eval::Env::default();
        env.bind("self", value::Val::from_json(this));
        if let Some(o) = old {
            env.bind("oldSelf", value::Val::from_json(o));
        }
        match eval::eval(&self.expr, &mut env)? {
            value::Val::Bool(b) => Ok(b),
            other => Err(CelError::NotBool(other.type_name())),
        }
    }
}

type Cache = HashMap<String, Result<Arc<Program>, CelError>>;

static PROGRAMS: LazyLock<Mutex<Cache>> = LazyLock::new(|| Mutex::new(HashMap::new()));

/// The compiled form of a rule, compiled on first use and then shared.
pub fn program(rule: &str) -> Result<Arc<Program>, CelError> {
    if let Some(hit) = PROGRAMS.lock().ok().and_then(|c| c.get(rule).cloned()) {
        return hit;
    }
    let compiled = Program::compile(rule).map(Arc::new);
    if let Ok(mut cache) = PROGRAMS.lock() {
        cache.insert(rule.to_string(), compiled.clone());
    }
    compiled
}

#[cfg(test)]
mod tests;
