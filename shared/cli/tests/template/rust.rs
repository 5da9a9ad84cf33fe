//! An index of the Rust sources of the crates one function links, parsed with `syn` from each
//! crate root along its `mod` declarations (leaving out `#[cfg(test)]` items): every function
//! and method with its module path, impl type and trait, parameters and generic bounds; struct
//! fields; type aliases; and each module's `use` imports, for resolving calls in `calls.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use syn::visit_mut::VisitMut;
use syn::{FnArg, GenericParam, ImplItem, Item, UseTree, WherePredicate};

use crate::ty::{ExpandMacros, Ty, bound_names, ty};

/// One function or method.
pub struct FnDef {
    pub krate: String,
    pub module: Vec<String>,
    pub name: String,
    pub self_ty: Option<String>,
    pub trait_: Option<String>,
    pub has_self: bool,
    pub params: Vec<(String, Ty)>,
    /// Generic parameters in scope (the impl's and the function's) and their trait bounds.
    pub generics: BTreeMap<String, Vec<String>>,
    pub body: syn::Block,
    pub scope: usize,
}

impl FnDef {
    /// `crate::module::Type::name` style, for messages.
    pub fn label(&self) -> String {
        let mut p = vec![self.krate.clone()];
        p.extend(self.module.iter().cloned());
        p.extend(self.self_ty.iter().cloned());
        p.push(self.name.clone());
        p.join("::")
    }

    /// Whether `path` (call path segments, already expanded) names this function.
    pub fn matches(&self, path: &[String]) -> bool {
        let mut full = vec![self.krate.clone()];
        full.extend(self.module.iter().cloned());
        let mut alt = full.clone();
        full.extend(self.self_ty.iter().cloned());
        alt.extend(self.trait_.iter().cloned());
        full.push(self.name.clone());
        alt.push(self.name.clone());
        full.ends_with(path) || (self.trait_.is_some() && alt.ends_with(path))
    }
}

/// A module's imports: local name → full path, and glob-imported modules.
#[derive(Default)]
pub struct Scope {
    pub krate: String,
    pub module: Vec<String>,
    pub uses: BTreeMap<String, Vec<String>>,
    pub globs: Vec<Vec<String>>,
}

/// A struct's generic parameters and field types.
#[derive(Default)]
pub struct StructDef {
    pub generics: Vec<String>,
    pub fields: BTreeMap<String, Ty>,
}

/// Everything indexed.
#[derive(Default)]
pub struct Index {
    pub fns: Vec<FnDef>,
    pub scopes: Vec<Scope>,
    pub structs: BTreeMap<String, StructDef>,
    pub aliases: BTreeMap<String, Ty>,
    pub types: BTreeSet<String>,
    /// Every module's imports by their path through it (`krate::module::name` → full path),
    /// so a call through a re-export (`pub use act::launch;`) finds its function.
    pub reexports: BTreeMap<Vec<String>, Vec<String>>,
}

fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && matches!(&a.meta, syn::Meta::List(l) if {
                let t = l.tokens.to_string();
                t.contains("test") && !t.contains("not")
            })
    })
}

fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|a| match &a.meta {
        syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}

fn generics_of(g: &syn::Generics, out: &mut BTreeMap<String, Vec<String>>) {
    for p in &g.params {
        if let GenericParam::Type(t) = p {
            out.entry(t.ident.to_string())
                .or_default()
                .extend(bound_names(t.bounds.iter()));
        }
    }
    for w in g.where_clause.iter().flat_map(|w| &w.predicates) {
        if let WherePredicate::Type(p) = w {
            let name = ty(&p.bounded_ty).name;
            out.entry(name)
                .or_default()
                .extend(bound_names(p.bounds.iter()));
        }
    }
}

struct Ctx<'a> {
    krate: &'a str,
    module: Vec<String>,
    scope: usize,
}

impl Index {
    /// Indexes a crate from its root file (`lib.rs` or `main.rs`).
    pub fn add_crate(&mut self, krate: &str, root: &Path) {
        self.add_file(krate, Vec::new(), root, true);
    }

    fn add_file(&mut self, krate: &str, module: Vec<String>, path: &Path, mod_rs: bool) {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        let file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let child_dir = if mod_rs {
            dir.clone()
        } else {
            dir.join(path.file_stem().unwrap_or_default())
        };
        self.add_items(krate, module, &dir, &child_dir, &file.items);
    }

    fn new_scope(&mut self, krate: &str, module: &[String]) -> usize {
        self.scopes.push(Scope {
            krate: krate.to_string(),
            module: module.to_vec(),
            ..Scope::default()
        });
        self.scopes.len() - 1
    }

    fn add_items(
        &mut self,
        krate: &str,
        module: Vec<String>,
        dir: &Path,
        child_dir: &Path,
        items: &[Item],
    ) {
        let scope = self.new_scope(krate, &module);
        let cx = Ctx {
            krate,
            module,
            scope,
        };
        for item in items {
            self.add_item(&cx, dir, child_dir, item);
        }
    }

    fn add_item(&mut self, cx: &Ctx<'_>, dir: &Path, child_dir: &Path, item: &Item) {
        match item {
            Item::Fn(f) if !is_test_only(&f.attrs) => {
                self.add_fn(cx, &f.sig, &f.block, None, None, &BTreeMap::new())
            }
            Item::Impl(i) if !is_test_only(&i.attrs) => self.add_impl(cx, i),
            Item::Trait(t) if !is_test_only(&t.attrs) => {
                let mut g = BTreeMap::new();
                generics_of(&t.generics, &mut g);
                for ti in &t.items {
                    if let syn::TraitItem::Fn(f) = ti
                        && let Some(body) = &f.default
                    {
                        let tr = Some(t.ident.to_string());
                        self.add_fn(cx, &f.sig, body, None, tr, &g);
                    }
                }
            }
            Item::Struct(s) => {
                let mut def = StructDef::default();
                for p in &s.generics.params {
                    if let GenericParam::Type(t) = p {
                        def.generics.push(t.ident.to_string());
                    }
                }
                for f in &s.fields {
                    if let Some(id) = &f.ident {
                        def.fields.insert(id.to_string(), ty(&f.ty));
                    }
                }
                self.types.insert(s.ident.to_string());
                self.structs.insert(s.ident.to_string(), def);
            }
            Item::Enum(e) => {
                self.types.insert(e.ident.to_string());
            }
            Item::Type(t) => {
                self.aliases.insert(t.ident.to_string(), ty(&t.ty));
            }
            Item::Use(u) => {
                let prefix = Vec::new();
                self.add_use(cx, &prefix, &u.tree);
            }
            Item::Mod(m) if !is_test_only(&m.attrs) => self.add_mod(cx, dir, child_dir, m),
            _ => {}
        }
    }

    fn add_mod(&mut self, cx: &Ctx<'_>, dir: &Path, child_dir: &Path, m: &syn::ItemMod) {
        let name = m.ident.to_string();
        let mut module = cx.module.clone();
        module.push(name.clone());
        if let Some((_, items)) = &m.content {
            let sub = child_dir.join(&name);
            self.add_items(cx.krate, module, child_dir, &sub, items);
            return;
        }
        let (path, mod_rs) = match path_attr(&m.attrs) {
            Some(p) => (dir.join(p), false),
            None => {
                let flat = child_dir.join(format!("{name}.rs"));
                if flat.exists() {
                    (flat, false)
                } else {
                    (child_dir.join(&name).join("mod.rs"), true)
                }
            }
        };
        self.add_file(cx.krate, module, &path, mod_rs);
    }

    /// Methods of an impl; impls for `Arc<T>`, `Box<T>` and `Rc<T>` only forward to `T`'s,
    /// which calls reach directly, and are left out.
    fn add_impl(&mut self, cx: &Ctx<'_>, i: &syn::ItemImpl) {
        if let syn::Type::Path(p) = &*i.self_ty
            && p.path
                .segments
                .last()
                .is_some_and(|s| matches!(s.ident.to_string().as_str(), "Arc" | "Box" | "Rc"))
        {
            return;
        }
        let self_ty = ty(&i.self_ty).name;
        let trait_ = i
            .trait_
            .as_ref()
            .and_then(|(_, p, _)| p.segments.last().map(|s| s.ident.to_string()));
        let mut g = BTreeMap::new();
        generics_of(&i.generics, &mut g);
        for item in &i.items {
            if let ImplItem::Fn(f) = item
                && !is_test_only(&f.attrs)
            {
                let st = Some(self_ty.clone());
                self.add_fn(cx, &f.sig, &f.block, st, trait_.clone(), &g);
            }
        }
    }

    fn add_fn(
        &mut self,
        cx: &Ctx<'_>,
        sig: &syn::Signature,
        body: &syn::Block,
        self_ty: Option<String>,
        trait_: Option<String>,
        outer: &BTreeMap<String, Vec<String>>,
    ) {
        let mut generics = outer.clone();
        generics_of(&sig.generics, &mut generics);
        let mut has_self = false;
        let mut params = Vec::new();
        for input in &sig.inputs {
            match input {
                FnArg::Receiver(_) => has_self = true,
                FnArg::Typed(p) => {
                    let name = match &*p.pat {
                        syn::Pat::Ident(i) => i.ident.to_string(),
                        _ => String::new(),
                    };
                    params.push((name, ty(&p.ty)));
                }
            }
        }
        let mut body = body.clone();
        ExpandMacros.visit_block_mut(&mut body);
        self.fns.push(FnDef {
            krate: cx.krate.to_string(),
            module: cx.module.clone(),
            name: sig.ident.to_string(),
            self_ty,
            trait_,
            has_self,
            params,
            generics,
            body,
            scope: cx.scope,
        });
    }

    fn add_use(&mut self, cx: &Ctx<'_>, prefix: &[String], tree: &UseTree) {
        let join = |last: &str| {
            let mut p = prefix.to_vec();
            p.push(last.to_string());
            self.normalize(cx, &p)
        };
        match tree {
            UseTree::Path(p) => {
                let mut next = prefix.to_vec();
                next.push(p.ident.to_string());
                self.add_use(cx, &next, &p.tree);
            }
            UseTree::Name(n) if n.ident == "self" => {
                let full = self.normalize(cx, prefix);
                let local = prefix.last().cloned().unwrap_or_default();
                self.scopes[cx.scope].uses.insert(local, full);
            }
            UseTree::Name(n) => {
                let full = join(&n.ident.to_string());
                self.reexport(cx, &n.ident.to_string(), &full);
                self.scopes[cx.scope].uses.insert(n.ident.to_string(), full);
            }
            UseTree::Rename(r) => {
                let full = join(&r.ident.to_string());
                self.reexport(cx, &r.rename.to_string(), &full);
                self.scopes[cx.scope]
                    .uses
                    .insert(r.rename.to_string(), full);
            }
            UseTree::Glob(_) => {
                let full = self.normalize(cx, prefix);
                self.scopes[cx.scope].globs.push(full);
            }
            UseTree::Group(g) => {
                for t in &g.items {
                    self.add_use(cx, prefix, t);
                }
            }
        }
    }

    fn reexport(&mut self, cx: &Ctx<'_>, local: &str, full: &[String]) {
        let mut through: Vec<String> = std::iter::once(cx.krate.to_string())
            .chain(cx.module.iter().cloned())
            .collect();
        through.push(local.to_string());
        self.reexports.insert(through, full.to_vec());
    }

    /// `full` with a leading re-exported path replaced by what it re-exports (once per
    /// re-export followed), or `None` when no prefix of it is one.
    pub fn through_reexport(&self, full: &[String]) -> Option<Vec<String>> {
        (1..=full.len()).rev().find_map(|n| {
            let target = self.reexports.get(&full[..n])?;
            let mut out = target.clone();
            out.extend(full[n..].iter().cloned());
            (out != full).then_some(out)
        })
    }

    /// `crate::`, `super::` and `self::` made absolute.
    fn normalize(&self, cx: &Ctx<'_>, path: &[String]) -> Vec<String> {
        normalize(cx.krate, &cx.module, path)
    }
}

/// `crate::`, `super::` and `self::` made absolute for code in `krate::module`.
pub fn normalize(krate: &str, module: &[String], path: &[String]) -> Vec<String> {
    let mut base: Vec<String> = std::iter::once(krate.to_string())
        .chain(module.iter().cloned())
        .collect();
    let mut rest = path;
    match path.first().map(String::as_str) {
        Some("crate") => {
            base.truncate(1);
            rest = &path[1..];
        }
        Some("self") => rest = &path[1..],
        Some("super") => {
            while rest.first().map(String::as_str) == Some("super") {
                base.pop();
                rest = &rest[1..];
            }
        }
        _ => return path.to_vec(),
    }
    base.extend(rest.iter().cloned());
    base
}
