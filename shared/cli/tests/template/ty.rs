//! Types as the call resolution sees them ([`Ty`]), and macro calls made visible: a macro
//! whose arguments parse as expressions (`try_join!(a(), b())`, `format!(…)`, `vec![…]`)
//! becomes an array of them, so the calls inside are followed like any other.

use syn::punctuated::Punctuated;
use syn::visit_mut::VisitMut;
use syn::{Expr, Stmt, Token, Type, TypeParamBound};

/// A type as far as the call resolution needs it: the last path segment after `&`, `Arc`,
/// `Box` and `Rc`, its type arguments, and the traits of `dyn`/`impl` types.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ty {
    pub name: String,
    pub args: Vec<Ty>,
    pub bounds: Vec<String>,
}

pub fn bound_names<'a>(bounds: impl Iterator<Item = &'a TypeParamBound>) -> Vec<String> {
    bounds
        .filter_map(|b| match b {
            TypeParamBound::Trait(t) => t.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        })
        .collect()
}

/// The simplified form of a syntax type.
pub fn ty(t: &Type) -> Ty {
    match t {
        Type::Reference(r) => ty(&r.elem),
        Type::Paren(p) => ty(&p.elem),
        Type::Group(g) => ty(&g.elem),
        Type::TraitObject(o) => Ty {
            bounds: bound_names(o.bounds.iter()),
            ..Ty::default()
        },
        Type::ImplTrait(i) => Ty {
            bounds: bound_names(i.bounds.iter()),
            ..Ty::default()
        },
        Type::Path(p) => {
            let Some(last) = p.path.segments.last() else {
                return Ty::default();
            };
            let args: Vec<Ty> = match &last.arguments {
                syn::PathArguments::AngleBracketed(a) => a
                    .args
                    .iter()
                    .filter_map(|g| match g {
                        syn::GenericArgument::Type(t) => Some(ty(t)),
                        _ => None,
                    })
                    .collect(),
                _ => Vec::new(),
            };
            let name = last.ident.to_string();
            if matches!(name.as_str(), "Arc" | "Box" | "Rc") && args.len() == 1 {
                return args[0].clone();
            }
            Ty {
                name,
                args,
                bounds: Vec::new(),
            }
        }
        _ => Ty::default(),
    }
}

/// Replaces macro calls whose arguments are expressions by an array of those expressions.
pub struct ExpandMacros;

fn expand(mac: &syn::Macro) -> Option<Expr> {
    let elems = mac
        .parse_body_with(Punctuated::<Expr, Token![,]>::parse_terminated)
        .ok()?;
    Some(Expr::Array(syn::ExprArray {
        attrs: Vec::new(),
        bracket_token: Default::default(),
        elems,
    }))
}

impl VisitMut for ExpandMacros {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if let Expr::Macro(m) = e
            && let Some(array) = expand(&m.mac)
        {
            *e = array;
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }

    fn visit_stmt_mut(&mut self, s: &mut Stmt) {
        if let Stmt::Macro(m) = s
            && let Some(array) = expand(&m.mac)
        {
            *s = Stmt::Expr(array, Some(Default::default()));
        }
        syn::visit_mut::visit_stmt_mut(self, s);
    }
}
