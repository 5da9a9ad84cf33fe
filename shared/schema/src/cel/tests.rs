//! Parser and evaluator tests: precedence, operators, short-circuiting, macros, functions
//! and errors.

use super::ast::{BinOp, Expr, Lit, Macro, UnOp};
use super::parse::parse;
use super::*;
use serde_json::json;

fn run(rule: &str, this: Value) -> Result<bool, CelError> {
    Program::compile(rule)?.eval(&this, None)
}

fn yes(rule: &str, this: Value) {
    assert_eq!(run(rule, this.clone()), Ok(true), "{rule} over {this}");
}

fn no(rule: &str, this: Value) {
    assert_eq!(run(rule, this.clone()), Ok(false), "{rule} over {this}");
}

fn fails(rule: &str, this: Value) -> CelError {
    match run(rule, this) {
        Err(e) => e,
        ok => panic!("{rule} gave {ok:?}"),
    }
}

#[test]
fn arithmetic_and_precedence() {
    yes("1 + 2 * 3 == 7", json!(null));
    yes("(1 + 2) * 3 == 9", json!(null));
    yes("7 / 2 == 3 && 7 % 2 == 1 && -7 / 2 == -3", json!(null));
    yes("1.5 * 2.0 == 3.0 && 3u + 4u == 7u", json!(null));
    yes("'ab' + 'c' == 'abc' && [1] + [2] == [1, 2]", json!(null));
    yes("1 < 2 == true", json!(null));
    yes("!false && !!true", json!(null));
    yes("-self == -3", json!(3));
    yes("1 == 1.0 && 1u == 1 && 2 > 1.5", json!(null));
    no("1 == '1'", json!(null));
    yes("(false ? 1 : 2) == 2", json!(null));
    yes("'b' > 'a' && true > false", json!(null));
}

#[test]
fn arithmetic_errors() {
    assert_eq!(fails("1 / 0 == 1", json!(null)), CelError::DivisionByZero);
    assert_eq!(fails("1 % 0 == 1", json!(null)), CelError::ModulusByZero);
    assert_eq!(
        fails("9223372036854775807 + 1 > 0", json!(null)),
        CelError::Overflow
    );
    assert_eq!(
        fails("1 + 1.0 == 2.0", json!(null)),
        CelError::NoSuchOverload
    );
    assert_eq!(fails("1 < 'a'", json!(null)), CelError::NoSuchOverload);
    assert_eq!(fails("!1", json!(null)), CelError::NoSuchOverload);
    assert_eq!(fails("self", json!(1)), CelError::NotBool("int"));
    // `?:` binds loosest: this is `true ? 1 : (2 == 2)`.
    assert_eq!(
        fails("true ? 1 : 2 == 2", json!(null)),
        CelError::NotBool("int")
    );
}

#[test]
fn logic_short_circuits_and_absorbs_errors() {
    let obj = json!({"a": 1});
    yes("self.a == 1 || self.missing == 1", obj.clone());
    yes("self.missing == 1 || self.a == 1", obj.clone());
    no("self.missing == 1 && self.a == 2", obj.clone());
    no("self.a == 2 && self.missing == 1", obj.clone());
    let missing = CelError::NoSuchKey("missing".into());
    assert_eq!(
        fails("self.missing == 1 || self.a == 2", obj.clone()),
        missing
    );
    assert_eq!(
        fails("self.a == 1 && self.missing == 1", obj.clone()),
        missing
    );
    assert_eq!(fails("self.missing ? true : true", obj.clone()), missing);
    yes("self.a == 1 ? true : self.missing", obj.clone());
    assert_eq!(fails("1 || false", obj.clone()), CelError::NoSuchOverload);
    yes("1 || true", obj);
}

#[test]
fn fields_indexes_and_has() {
    let obj = json!({"a": {"b": [10, 20]}, "m": {"k": "v"}, "n": null});
    yes(
        "self.a.b[1] == 20 && self.m['k'] == 'v' && self['a'].b[0] == 10",
        obj.clone(),
    );
    yes(
        "has(self.a) && has(self.a.b) && !has(self.zz) && !has(self.n)",
        obj.clone(),
    );
    yes(
        "'k' in self.m && !('x' in self.m) && 20 in self.a.b",
        obj.clone(),
    );
    assert_eq!(
        fails("self.a.b[2] == 0", obj.clone()),
        CelError::OutOfRange(2, 2)
    );
    assert_eq!(
        fails("self.m['x'] == ''", obj.clone()),
        CelError::NoSuchKey("x".into())
    );
    assert_eq!(
        fails("self.n == null", obj.clone()),
        CelError::NoSuchKey("n".into())
    );
    assert_eq!(fails("has(self.a.b.c)", obj), CelError::NoSuchOverload);
}

#[test]
fn macros_over_lists_and_maps() {
    let list = json!([{"x": 1}, {"x": 2}, {"x": 3}]);
    yes("self.all(e, e.x > 0)", list.clone());
    no("self.all(e, e.x > 1)", list.clone());
    yes("self.exists(e, e.x == 2)", list.clone());
    yes("self.exists_one(e, e.x > 2)", list.clone());
    no("self.exists_one(e, e.x > 1)", list.clone());
    yes("self.filter(e, e.x >= 2).size() == 2", list.clone());
    yes("self.map(e, e.x * 10) == [10, 20, 30]", list.clone());
    yes("self.map(e, e.x > 1, e.x) == [2, 3]", list.clone());
    yes("self.all(e, self.exists(f, f.x == e.x))", list.clone());
    let map = json!({"a": "1", "b": "2"});
    yes("self.all(k, k in ['a', 'b'] && self[k] != '')", map.clone());
    yes("self.map(k, k) == ['a', 'b'] && [].all(x, false)", map);
    // all: a false item decides even after an error; exists: a true one does.
    let mixed = json!([{"y": 1}, {"x": 0}]);
    no("self.all(e, e.x > 0)", mixed.clone());
    yes("self.exists(e, e.x == 0)", mixed.clone());
    assert_eq!(
        fails("self.all(e, e.x >= 0)", mixed.clone()),
        CelError::NoSuchKey("x".into())
    );
    assert_eq!(
        fails("self.exists_one(e, e.x == 0)", mixed),
        CelError::NoSuchKey("x".into())
    );
    assert_eq!(
        fails("self.all(e, true)", json!(1)),
        CelError::NoSuchOverload
    );
}

#[test]
fn string_functions_and_conversions() {
    yes("self.size() == 3 && size(self) == 3", json!("héé"));
    yes("size([1, 2]) == 2 && {'a': 1}.size() == 1", json!(null));
    yes(
        "self.matches('^[a-z0-9]+@.+$') && !self.matches('^[a-z]+@') && !self.matches('^@')",
        json!("al2@latest"),
    );
    yes("matches(self, 'latest')", json!("al2@latest"));
    yes(
        "self.find('^[^@]+') == 'al2' && self.find('[0-9]{5}') == ''",
        json!("al2@v1"),
    );
    yes(
        "self.split('@') == ['a', 'b', 'c'] && self.split('@', 2) == ['a', 'b@c']",
        json!("a@b@c"),
    );
    yes(
        "'ab'.split('') == ['a', 'b'] && 'x'.split('@')[0] == 'x'",
        json!(null),
    );
    yes(
        "self.startsWith('kube') && self.endsWith('/x') && self.contains('io/')",
        json!("kubernetes.io/x"),
    );
    yes(
        "int('42') == 42 && int(2.9) == 2 && int(3u) == 3 && uint(4) == 4u",
        json!(null),
    );
    yes(
        "double('1.5') == 1.5 && string(12) == '12' && string(true) == 'true'",
        json!(null),
    );
    yes("bool('true') && !bool('false')", json!(null));
    assert_eq!(
        fails("int(self) > 0", json!("abc")),
        CelError::Conversion("strconv.ParseInt: parsing \"abc\": invalid syntax".into())
    );
    assert!(matches!(
        fails("uint(-1) > 0u", json!(null)),
        CelError::Range(_)
    ));
    assert!(matches!(
        fails("self.matches('(')", json!("x")),
        CelError::Regex(_)
    ));
    assert_eq!(
        fails("'a'.split('@')[1] == ''", json!(null)),
        CelError::OutOfRange(1, 1)
    );
}

#[test]
fn transitions_and_compile_checks() {
    let p = Program::compile("self == oldSelf").unwrap();
    assert!(p.is_transition());
    assert_eq!(
        p.eval(&json!({"a": [1]}), Some(&json!({"a": [1]}))),
        Ok(true)
    );
    assert_eq!(
        p.eval(&json!({"a": [1]}), Some(&json!({"a": [2]}))),
        Ok(false)
    );
    assert!(
        !Program::compile("self.all(oldSelf, oldSelf > 0)")
            .unwrap()
            .is_transition()
    );
    assert!(
        Program::compile("has(self.a) == has(oldSelf.a)")
            .unwrap()
            .is_transition()
    );
    assert_eq!(
        Program::compile("other == 1").unwrap_err(),
        CelError::Undeclared("other".into())
    );
    assert_eq!(
        Program::compile("self.all(x, x) && x").unwrap_err(),
        CelError::Undeclared("x".into())
    );
    assert_eq!(
        Program::compile("self.lowerAscii() == 'a'").unwrap_err(),
        CelError::UnknownFunction("lowerAscii".into(), 1)
    );
    assert_eq!(
        Program::compile("self.int() == 1").unwrap_err(),
        CelError::UnknownFunction("int".into(), 1)
    );
    let a = program("self != ''").unwrap();
    let b = program("self != ''").unwrap();
    assert!(Arc::ptr_eq(&a, &b), "compiled once, then shared");
}

fn id(s: &str) -> Box<Expr> {
    Box::new(Expr::Ident(s.into()))
}

fn int(n: i64) -> Box<Expr> {
    Box::new(Expr::Lit(Lit::Int(n)))
}

#[test]
fn precedence_follows_the_cel_grammar() {
    // a || b && c  ==  a || (b && c)
    assert_eq!(
        parse("a || b && c").unwrap(),
        Expr::Or(id("a"), Box::new(Expr::And(id("b"), id("c"))))
    );
    // 1 + 2 * 3 == 7  ==  (1 + (2 * 3)) == 7
    let sum = Expr::Binary(
        BinOp::Add,
        int(1),
        Box::new(Expr::Binary(BinOp::Mul, int(2), int(3))),
    );
    assert_eq!(
        parse("1 + 2 * 3 == 7").unwrap(),
        Expr::Binary(BinOp::Eq, Box::new(sum), int(7))
    );
    // !a.b  ==  !(a.b); a ? b : c ? d : e is right-associative
    assert_eq!(
        parse("!a.b").unwrap(),
        Expr::Unary(UnOp::Not, Box::new(Expr::Select(id("a"), "b".into())))
    );
    assert_eq!(
        parse("a ? b : c ? d : e").unwrap(),
        Expr::Cond(
            id("a"),
            id("b"),
            Box::new(Expr::Cond(id("c"), id("d"), id("e")))
        )
    );
    assert_eq!(parse("-5").unwrap(), Expr::Lit(Lit::Int(-5)));
}

#[test]
fn macros_are_expanded() {
    assert_eq!(
        parse("has(self.a)").unwrap(),
        Expr::Has(id("self"), "a".into())
    );
    let Expr::Comprehension(c) = parse("self.map(x, x > 1, x * 2)").unwrap() else {
        panic!("not a comprehension");
    };
    assert_eq!((c.kind, c.var.as_str()), (Macro::Map, "x"));
    assert!(c.filter.is_some());
    assert_eq!(
        parse("self.size()").unwrap(),
        Expr::Call(Some(id("self")), "size".into(), vec![])
    );
}

#[test]
fn malformed_rules_are_syntax_errors() {
    for src in [
        "",
        "a +",
        "(a",
        "a b",
        "has(a)",
        "self.all(1, true)",
        "self.all(x)",
        "[1, 2",
        "{1: 2",
        "a.in",
        "if",
    ] {
        assert!(
            matches!(parse(src), Err(CelError::Syntax { .. })),
            "{src:?} parsed"
        );
    }
    assert!(parse(&"(".repeat(500)).is_err());
    assert!(parse(&format!("{}a", "!".repeat(500))).is_err());
    assert!(parse(&vec!["1"; 500].join(" + ")).is_err());
    assert!(parse(&vec!["a"; 500].join(" || ")).is_err());
    assert!(parse(&format!("a{}", ".b".repeat(500))).is_err());
    assert!(parse(&vec!["a"; 40].join(" || ")).is_ok());
    assert_eq!(
        parse("[1, 2,]").unwrap(),
        Expr::List(vec![*int(1), *int(2)])
    );
}
