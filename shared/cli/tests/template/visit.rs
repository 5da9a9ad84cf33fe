//! One function body: the calls it makes (resolved against the index), the AWS SDK operations
//! it starts (`client.op()` where `op` is an SDK operation's builder method) and the kube-rs
//! `Api` verbs it calls, with the Kubernetes type of each `Api` (concrete, or the caller's
//! when the function is generic over it). `if flag {…} else {…}` on a `bool` parameter the
//! caller passed as a literal only follows the branch taken.

use std::collections::BTreeMap;

use syn::visit::Visit;
use syn::{Expr, Member};

use crate::recv::{Recv, bool_literal, peel, single_ident, string_literal};
use crate::rust::{FnDef, Index, normalize};
use crate::ty::{Ty, ty};

/// A function as reached: which one, the Kubernetes types its generic `Api` parameters stand
/// for, and the `bool` parameters fixed by the caller.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Node {
    pub f: usize,
    pub api: Vec<String>,
    pub consts: Vec<(String, bool)>,
}

/// What one body does.
#[derive(Default)]
pub struct Effects {
    pub calls: Vec<Node>,
    pub aws: Vec<(String, String)>,
    pub kube: Vec<(String, String, String)>,
}

pub struct Visitor<'a> {
    pub index: &'a Index,
    sdk: &'a BTreeMap<String, Vec<String>>,
    pub f: &'a FnDef,
    pub node: &'a Node,
    pub locals: BTreeMap<String, Ty>,
    pub out: Effects,
}

/// kube-rs `Api` methods: (verb, subresource); `None` subresource: the first string argument.
fn kube_verb(method: &str) -> Option<(&'static str, Option<&'static str>)> {
    Some(match method {
        "get" | "get_opt" => ("get", Some("")),
        "get_status" => ("get", Some("status")),
        "list" => ("list", Some("")),
        "watch" => ("watch", Some("")),
        "create" => ("create", Some("")),
        "replace" => ("update", Some("")),
        "replace_status" => ("update", Some("status")),
        "patch" => ("patch", Some("")),
        "patch_status" => ("patch", Some("status")),
        "delete" => ("delete", Some("")),
        "delete_collection" => ("deletecollection", Some("")),
        "evict" => ("create", Some("eviction")),
        "create_subresource" => ("create", None),
        "patch_subresource" => ("patch", None),
        "replace_subresource" => ("update", None),
        "get_subresource" => ("get", None),
        _ => return None,
    })
}

impl<'a> Visitor<'a> {
    pub fn new(index: &'a Index, sdk: &'a BTreeMap<String, Vec<String>>, node: &'a Node) -> Self {
        let f = &index.fns[node.f];
        let mut v = Visitor {
            index,
            sdk,
            f,
            node,
            locals: f.params.iter().cloned().collect(),
            out: Effects::default(),
        };
        let mut locals = Locals {
            v: &v,
            found: Vec::new(),
        };
        locals.visit_block(&f.body);
        let found = locals.found;
        for (name, t) in found {
            v.locals.entry(name).or_insert(t);
        }
        v
    }

    pub fn run(mut self) -> Effects {
        let body = &self.f.body;
        self.visit_block(body);
        self.out
    }

    fn expand(&self, path: &[String]) -> Vec<String> {
        let scope = &self.index.scopes[self.f.scope];
        let first = path.first().map(String::as_str).unwrap_or_default();
        if first == "Self" {
            let mut p: Vec<String> = self.f.self_ty.iter().cloned().collect();
            p.extend(path[1..].iter().cloned());
            return p;
        }
        if let Some(full) = scope.uses.get(first) {
            let mut p = full.clone();
            p.extend(path[1..].iter().cloned());
            return p;
        }
        normalize(&scope.krate, &scope.module, path)
    }

    /// Functions a path names (`a::b::f`, or a bare `f` of this module or its imports).
    fn by_path(&self, segs: &[String]) -> Vec<usize> {
        let scope = &self.index.scopes[self.f.scope];
        let all = self.index.fns.iter().enumerate();
        if segs.len() == 1 && !scope.uses.contains_key(&segs[0]) {
            let here: Vec<String> = std::iter::once(scope.krate.clone())
                .chain(scope.module.iter().cloned())
                .collect();
            let mut homes = vec![here];
            homes.extend(scope.globs.iter().cloned());
            return all
                .filter(|(_, f)| {
                    f.name == segs[0]
                        && f.self_ty.is_none()
                        && f.trait_.is_none()
                        && homes.iter().any(|h| {
                            let mut p = vec![f.krate.clone()];
                            p.extend(f.module.iter().cloned());
                            p == *h
                        })
                })
                .map(|(i, _)| i)
                .collect();
        }
        let mut full = self.expand(segs);
        for _ in 0..4 {
            let found: Vec<usize> = self
                .index
                .fns
                .iter()
                .enumerate()
                .filter(|(_, f)| f.matches(&full))
                .map(|(i, _)| i)
                .collect();
            if !found.is_empty() {
                return found;
            }
            match self.index.through_reexport(&full) {
                Some(next) => full = next,
                None => break,
            }
        }
        Vec::new()
    }

    fn callee(&self, f: usize, args: &[&Expr], self_arg: bool) -> Node {
        let target = &self.index.fns[f];
        let mut api = Vec::new();
        let mut consts = Vec::new();
        for (i, a) in args.iter().enumerate() {
            if let Recv::Known(t) = self.recv(a)
                && t.name == "Api"
            {
                api.extend(self.api_types(&t));
            }
            let param = if self_arg { i.checked_sub(1) } else { Some(i) };
            if let (Some(b), Some(p)) = (bool_literal(a), param.and_then(|p| target.params.get(p)))
            {
                consts.push((p.0.clone(), b));
            }
        }
        api.sort();
        api.dedup();
        Node { f, api, consts }
    }

    /// `client.op()` where `op` is an SDK operation: (IAM service prefix, Operation).
    fn sdk_op(&self, m: &syn::ExprMethodCall) -> Option<(String, String)> {
        let name = m.method.to_string();
        let services = self.sdk.get(&name)?;
        let analyzed = matches!(self.recv(&m.receiver), Recv::Known(ref t) if self.index.types.contains(&t.name));
        if !m.args.is_empty() || analyzed {
            return None;
        }
        let service = if services.len() == 1 {
            services[0].clone()
        } else {
            let hint = match peel(&m.receiver) {
                Expr::Field(f) => match &f.member {
                    Member::Named(n) => n.to_string(),
                    Member::Unnamed(_) => String::new(),
                },
                other => single_ident(other).unwrap_or_default(),
            };
            assert!(
                services.contains(&hint),
                "{}: `{hint}.{name}()` may be any of {services:?}",
                self.f.label()
            );
            hint
        };
        Some((service, crate::metadata::pascal(&name)))
    }

    /// A kube-rs `Api` call: (type, verb, subresource) for each type the `Api` stands for.
    fn kube_call(&self, m: &syn::ExprMethodCall) -> Option<Vec<(String, String, String)>> {
        let Recv::Known(t) = self.recv(&m.receiver) else {
            return None;
        };
        if t.name != "Api" {
            return None;
        }
        let method = m.method.to_string();
        let (verb, sub) = kube_verb(&method)?;
        let sub = match sub {
            Some(s) => s.to_string(),
            None => m.args.first().and_then(string_literal).unwrap_or_default(),
        };
        let types = self.api_types(&t);
        assert!(
            !types.is_empty(),
            "{}: `{method}` on an Api of unknown type",
            self.f.label()
        );
        Some(
            types
                .into_iter()
                .map(|k| (k, verb.to_string(), sub.clone()))
                .collect(),
        )
    }

    fn push_calls(&mut self, targets: Vec<usize>, args: &[&Expr], self_arg: bool) {
        for f in targets {
            let n = self.callee(f, args, self_arg);
            self.out.calls.push(n);
        }
    }
}

fn segments(p: &syn::Path) -> Vec<String> {
    p.segments.iter().map(|s| s.ident.to_string()).collect()
}

impl<'ast> Visit<'ast> for Visitor<'_> {
    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        let args: Vec<&Expr> = c.args.iter().collect();
        if let Expr::Path(p) = &*c.func {
            let targets: Vec<usize> = self
                .by_path(&segments(&p.path))
                .into_iter()
                .filter(|&f| {
                    let d = &self.index.fns[f];
                    d.params.len() + usize::from(d.has_self) == args.len()
                })
                .collect();
            let self_arg = targets.first().is_some_and(|&f| self.index.fns[f].has_self);
            self.push_calls(targets, &args, self_arg);
        } else {
            self.visit_expr(&c.func);
        }
        for a in &c.args {
            self.visit_expr(a);
        }
    }

    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        if let Some(op) = self.sdk_op(m) {
            self.out.aws.push(op);
        } else if let Some(k) = self.kube_call(m) {
            self.out.kube.extend(k);
        } else {
            let r = self.recv(&m.receiver);
            let targets = self.methods(&r, &m.method.to_string(), m.args.len());
            let args: Vec<&Expr> = m.args.iter().collect();
            self.push_calls(targets, &args, false);
        }
        syn::visit::visit_expr_method_call(self, m);
    }

    /// A function used as a value (`.map(f)`) counts as called.
    fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
        let segs = segments(&p.path);
        if segs.len() == 1 && self.locals.contains_key(&segs[0]) {
            return;
        }
        let targets = self.by_path(&segs);
        self.push_calls(targets, &[], false);
    }

    fn visit_expr_if(&mut self, i: &'ast syn::ExprIf) {
        let (cond, negated) = match &*i.cond {
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Not(_)) => (&*u.expr, true),
            other => (other, false),
        };
        let fixed = single_ident(cond).and_then(|n| {
            self.node
                .consts
                .iter()
                .find(|(k, _)| *k == n)
                .map(|(_, v)| *v)
        });
        match fixed.map(|v| v != negated) {
            Some(true) => self.visit_block(&i.then_branch),
            Some(false) => {
                if let Some((_, e)) = &i.else_branch {
                    self.visit_expr(e);
                }
            }
            None => syn::visit::visit_expr_if(self, i),
        }
    }
}

/// The `let` bindings of a body whose type is written or evident from the initializer.
struct Locals<'v, 'a> {
    v: &'v Visitor<'a>,
    found: Vec<(String, Ty)>,
}

impl<'ast> Visit<'ast> for Locals<'_, '_> {
    fn visit_local(&mut self, l: &'ast syn::Local) {
        let (name, written) = match &l.pat {
            syn::Pat::Ident(i) => (i.ident.to_string(), None),
            syn::Pat::Type(t) => match &*t.pat {
                syn::Pat::Ident(i) => (i.ident.to_string(), Some(ty(&t.ty))),
                _ => (String::new(), None),
            },
            _ => (String::new(), None),
        };
        let inferred = l.init.as_ref().and_then(|i| self.v.infer(&i.expr));
        let t = match (written, inferred) {
            (Some(w), Some(i)) if w.name == "Api" && w.args.is_empty() => Some(i),
            (Some(w), _) => Some(w),
            (None, i) => i,
        };
        if let (false, Some(t)) = (name.is_empty(), t) {
            self.found.push((name, t));
        }
        syn::visit::visit_local(self, l);
    }
}
