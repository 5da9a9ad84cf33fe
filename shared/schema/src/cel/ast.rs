//! The CEL syntax tree, and the checks made once per rule after parsing: every identifier
//! is bound and every function is one the evaluator implements, with a supported arity.

use super::CelError;

/// A literal value.
#[derive(Debug, Clone, PartialEq)]
pub enum Lit {
    /// `null`
    Null,
    /// `true` / `false`
    Bool(bool),
    /// `42`
    Int(i64),
    /// `42u`
    Uint(u64),
    /// `4.2`
    Double(f64),
    /// `'text'`
    Str(String),
}

/// A prefix operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnOp {
    /// `!`
    Not,
    /// `-`
    Neg,
}

/// A strict (both operands evaluated) binary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `in`
    In,
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Rem,
}

/// A comprehension macro over a list (its items) or a map (its keys).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Macro {
    /// `r.all(x, p)`
    All,
    /// `r.exists(x, p)`
    Exists,
    /// `r.exists_one(x, p)`
    ExistsOne,
    /// `r.filter(x, p)`
    Filter,
    /// `r.map(x, t)` or `r.map(x, p, t)`
    Map,
}

/// An expanded comprehension macro.
#[derive(Debug, Clone, PartialEq)]
pub struct Comprehension {
    /// Which macro.
    pub kind: Macro,
    /// The list or map iterated.
    pub range: Expr,
    /// The iteration variable.
    pub var: String,
    /// The predicate of `map(x, p, t)`.
    pub filter: Option<Expr>,
    /// The predicate (or the transform of `map`).
    pub body: Expr,
}

/// A CEL expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A literal.
    Lit(Lit),
    /// A variable: `self`, `oldSelf` or a macro's iteration variable.
    Ident(String),
    /// `operand.field`
    Select(Box<Expr>, String),
    /// `has(operand.field)`
    Has(Box<Expr>, String),
    /// `operand[index]`
    Index(Box<Expr>, Box<Expr>),
    /// `f(args)` (no target) or `target.f(args)`.
    Call(Option<Box<Expr>>, String, Vec<Expr>),
    /// A comprehension macro.
    Comprehension(Box<Comprehension>),
    /// `[a, b]`
    List(Vec<Expr>),
    /// `{k: v}`
    Map(Vec<(Expr, Expr)>),
    /// `!x`, `-x`
    Unary(UnOp, Box<Expr>),
    /// A strict binary operator.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `a && b` (commutative, error-absorbing)
    And(Box<Expr>, Box<Expr>),
    /// `a || b` (commutative, error-absorbing)
    Or(Box<Expr>, Box<Expr>),
    /// `c ? a : b`
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
}

/// Functions the evaluator implements: name, whether called on a receiver, and the numbers
/// of arguments (receiver included) it takes.
const FUNCTIONS: [(&str, bool, &[usize]); 14] = [
    ("size", false, &[1]),
    ("size", true, &[1]),
    ("matches", false, &[2]),
    ("matches", true, &[2]),
    ("find", true, &[2]),
    ("split", true, &[2, 3]),
    ("startsWith", true, &[2]),
    ("endsWith", true, &[2]),
    ("contains", true, &[2]),
    ("int", false, &[1]),
    ("uint", false, &[1]),
    ("double", false, &[1]),
    ("string", false, &[1]),
    ("bool", false, &[1]),
];

/// The variables a Kubernetes validation rule may use.
pub const ROOT_VARS: [&str; 2] = ["self", "oldSelf"];

impl Expr {
    /// Fails on an unbound identifier or a function the evaluator does not implement.
    pub fn check(&self) -> Result<(), CelError> {
        let mut bound: Vec<&str> = ROOT_VARS.to_vec();
        self.check_in(&mut bound)
    }

    fn check_in<'e>(&'e self, bound: &mut Vec<&'e str>) -> Result<(), CelError> {
        match self {
            Expr::Lit(_) => Ok(()),
            Expr::Ident(name) if bound.contains(&name.as_str()) => Ok(()),
            Expr::Ident(name) => Err(CelError::Undeclared(name.clone())),
            Expr::Select(x, _) | Expr::Has(x, _) | Expr::Unary(_, x) => x.check_in(bound),
            Expr::Index(a, b) | Expr::Binary(_, a, b) | Expr::And(a, b) | Expr::Or(a, b) => {
                check_all([&**a, &**b], bound)
            }
            Expr::Cond(c, a, b) => check_all([&**c, &**a, &**b], bound),
            Expr::List(items) => check_all(items, bound),
            Expr::Map(entries) => check_all(entries.iter().flat_map(|(k, v)| [k, v]), bound),
            Expr::Call(target, name, args) => {
                let arity = args.len() + usize::from(target.is_some());
                let known = FUNCTIONS
                    .iter()
                    .any(|(n, r, a)| n == name && *r == target.is_some() && a.contains(&arity));
                if !known {
                    return Err(CelError::UnknownFunction(name.clone(), arity));
                }
                check_all(target.iter().map(|t| &**t).chain(args), bound)
            }
            Expr::Comprehension(c) => {
                c.range.check_in(bound)?;
                bound.push(&c.var);
                let body = check_all(c.filter.iter().chain([&c.body]), bound);
                bound.pop();
                body
            }
        }
    }

    /// Whether the expression reads the variable `name` (a transition rule reads `oldSelf`).
    pub fn reads(&self, name: &str) -> bool {
        match self {
            Expr::Lit(_) => false,
            Expr::Ident(n) => n == name,
            Expr::Select(x, _) | Expr::Has(x, _) | Expr::Unary(_, x) => x.reads(name),
            Expr::Index(a, b) | Expr::Binary(_, a, b) | Expr::And(a, b) | Expr::Or(a, b) => {
                a.reads(name) || b.reads(name)
            }
            Expr::Cond(c, a, b) => c.reads(name) || a.reads(name) || b.reads(name),
            Expr::List(items) => items.iter().any(|x| x.reads(name)),
            Expr::Map(entries) => entries.iter().any(|(k, v)| k.reads(name) || v.reads(name)),
            Expr::Call(target, _, args) => {
                target.as_ref().is_some_and(|t| t.reads(name)) || args.iter().any(|x| x.reads(name))
            }
            Expr::Comprehension(c) => {
                c.range.reads(name)
                    || (c.var != name
                        && (c.body.reads(name) || c.filter.as_ref().is_some_and(|f| f.reads(name))))
            }
        }
    }
}

fn check_all<'e>(
    exprs: impl IntoIterator<Item = &'e Expr>,
    bound: &mut Vec<&'e str>,
) -> Result<(), CelError> {
    exprs.into_iter().try_for_each(|e| e.check_in(bound))
}
