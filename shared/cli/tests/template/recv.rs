//! Receiver types for method calls: from parameters, `let` bindings, struct fields (with the
//! struct's type parameters substituted) and generic bounds; and the methods a call can reach
//! given its receiver's type (by name and arity among all indexed methods when it is unknown).

use syn::{Expr, Member};

use crate::rust::FnDef;
use crate::ty::{Ty, ty};
use crate::visit::Visitor;

pub enum Recv {
    Known(Ty),
    External,
    Unknown,
}

pub fn peel(e: &Expr) -> &Expr {
    match e {
        Expr::Paren(p) => peel(&p.expr),
        Expr::Reference(r) => peel(&r.expr),
        Expr::Try(t) => peel(&t.expr),
        Expr::Await(a) => peel(&a.base),
        Expr::Group(g) => peel(&g.expr),
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => peel(&u.expr),
        Expr::MethodCall(m) if m.method == "clone" && m.args.is_empty() => peel(&m.receiver),
        other => other,
    }
}

pub fn single_ident(e: &Expr) -> Option<String> {
    match e {
        Expr::Path(p) if p.path.segments.len() == 1 => Some(p.path.segments[0].ident.to_string()),
        _ => None,
    }
}

/// `Api::<T>::…(…)`: `Api<T>`.
pub fn inline_api(e: &Expr) -> Option<Ty> {
    let Expr::Call(c) = e else { return None };
    let Expr::Path(p) = &*c.func else { return None };
    let seg = p.path.segments.iter().find(|s| s.ident == "Api")?;
    let mut t = Ty {
        name: "Api".into(),
        ..Ty::default()
    };
    if let syn::PathArguments::AngleBracketed(a) = &seg.arguments {
        for g in &a.args {
            if let syn::GenericArgument::Type(x) = g {
                t.args.push(ty(x));
            }
        }
    }
    Some(t)
}

pub fn string_literal(e: &Expr) -> Option<String> {
    match peel(e) {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => Some(s.value()),
        _ => None,
    }
}

pub fn bool_literal(e: &Expr) -> Option<bool> {
    match e {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Bool(b),
            ..
        }) => Some(b.value),
        _ => None,
    }
}

impl Visitor<'_> {
    pub fn resolve_alias(&self, t: &Ty) -> Ty {
        match self.index.aliases.get(&t.name) {
            Some(a) if t.args.is_empty() => a.clone(),
            _ => t.clone(),
        }
    }

    pub fn is_generic(&self, name: &str) -> bool {
        self.f.generics.contains_key(name)
    }

    pub fn infer(&self, e: &Expr) -> Option<Ty> {
        let e = peel(e);
        if let Some(t) = inline_api(e) {
            return Some(t);
        }
        match e {
            Expr::Call(c) => {
                let Expr::Path(p) = &*c.func else { return None };
                let n = p.path.segments.len();
                let q = (n >= 2).then(|| p.path.segments[n - 2].ident.to_string())?;
                self.index.types.contains(&q).then(|| Ty {
                    name: q,
                    ..Ty::default()
                })
            }
            Expr::Struct(s) => s.path.segments.last().map(|l| Ty {
                name: l.ident.to_string(),
                ..Ty::default()
            }),
            _ => single_ident(e).and_then(|i| self.locals.get(&i).cloned()),
        }
    }

    pub fn field(&self, t: &Ty, member: &str) -> Recv {
        let t = self.resolve_alias(t);
        let Some(def) = self.index.structs.get(&t.name) else {
            return if t.name.is_empty() || self.is_generic(&t.name) {
                Recv::Unknown
            } else {
                Recv::External
            };
        };
        let Some(ft) = def.fields.get(member) else {
            return Recv::Unknown;
        };
        let pos = def.generics.iter().position(|g| *g == ft.name);
        match pos.and_then(|i| t.args.get(i)) {
            Some(a) if ft.args.is_empty() => Recv::Known(a.clone()),
            _ => Recv::Known(ft.clone()),
        }
    }

    pub fn recv(&self, e: &Expr) -> Recv {
        let e = peel(e);
        if let Some(t) = inline_api(e) {
            return Recv::Known(t);
        }
        match e {
            Expr::Path(_) => match single_ident(e).as_deref() {
                Some("self") => match &self.f.self_ty {
                    Some(s) => Recv::Known(Ty {
                        name: s.clone(),
                        ..Ty::default()
                    }),
                    None => Recv::Unknown,
                },
                Some(x) => self
                    .locals
                    .get(x)
                    .map_or(Recv::Unknown, |t| Recv::Known(t.clone())),
                None => Recv::Unknown,
            },
            Expr::Field(f) => match (self.recv(&f.base), &f.member) {
                (Recv::Known(t), Member::Named(m)) => self.field(&t, &m.to_string()),
                (Recv::External, _) => Recv::External,
                _ => Recv::Unknown,
            },
            _ => Recv::Unknown,
        }
    }

    /// The Kubernetes types an `Api<T>` stands for here.
    pub fn api_types(&self, api: &Ty) -> Vec<String> {
        match api.args.first() {
            Some(t) if !t.name.is_empty() && !self.is_generic(&t.name) => vec![t.name.clone()],
            _ => self.node.api.clone(),
        }
    }

    pub fn methods(&self, r: &Recv, name: &str, arity: usize) -> Vec<usize> {
        let fits = |f: &FnDef| f.name == name && f.has_self && f.params.len() == arity;
        let all = self.index.fns.iter().enumerate();
        match r {
            Recv::External => Vec::new(),
            Recv::Unknown => all.filter(|(_, f)| fits(f)).map(|(i, _)| i).collect(),
            Recv::Known(t) => {
                let t = self.resolve_alias(t);
                let bounds = match self.f.generics.get(&t.name) {
                    Some(b) if t.bounds.is_empty() => b.clone(),
                    _ => t.bounds.clone(),
                };
                if !bounds.is_empty() {
                    all.filter(|(_, f)| {
                        fits(f) && f.trait_.as_ref().is_some_and(|tr| bounds.contains(tr))
                    })
                    .map(|(i, _)| i)
                    .collect()
                } else if self.index.types.contains(&t.name) {
                    all.filter(|(_, f)| fits(f) && f.self_ty.as_deref() == Some(t.name.as_str()))
                        .map(|(i, _)| i)
                        .collect()
                } else if self.is_generic(&t.name) {
                    self.methods(&Recv::Unknown, name, arity)
                } else {
                    Vec::new()
                }
            }
        }
    }
}
