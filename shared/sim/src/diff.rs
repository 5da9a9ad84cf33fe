//! Field sets of objects: the set an applied configuration names (the apiserver's
//! `ToFieldSet`) and what one version of an object adds, modifies or removes relative to
//! another (`Compare`), both walking lists by their [`ListKind`](crate::shape::ListKind).
//!
//! As in structured-merge-diff, scalars, atomic lists and atomic objects are leaves; list
//! items are members themselves; a comparison also lists each object, list or item that
//! appears or disappears as a whole (the `.` markers of Update entries), and empty objects
//! or lists on both sides compare as leaves. `metadata.managedFields` is never walked.
//!
//! Simplification: built-in kinds get `.` markers the way custom resources do; the real
//! server omits some where its Go types always serialize a field (e.g. a Pod's `f:spec`).

use crate::fields::{FieldSet, Path};
use crate::shape::{ITEM, ListKind, Shapes, item_element};
use serde_json::{Map, Value};

/// What changed between two versions of an object.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Comparison {
    /// Paths only the new version has.
    pub added: FieldSet,
    /// Leaves both have, with different values.
    pub modified: FieldSet,
    /// Paths only the old version has.
    pub removed: FieldSet,
}

impl Comparison {
    /// Added or modified paths.
    pub fn changed(&self) -> FieldSet {
        self.added.union(&self.modified)
    }

    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.modified.is_empty() && self.removed.is_empty()
    }

    /// Keeps only the paths `keep` accepts in all three sets.
    pub fn retain(&mut self, keep: impl Fn(&Path) -> bool) {
        self.added.retain(&keep);
        self.modified.retain(&keep);
        self.removed.retain(&keep);
    }
}

/// Every leaf and list item `obj` names.
pub fn to_set(obj: &Value, shapes: &Shapes<'_>) -> FieldSet {
    let mut w = Walker::new(shapes);
    let mut out = FieldSet::new();
    w.collect(obj, &mut out);
    out
}

/// The changes from `old` to `new`.
pub fn compare(old: &Value, new: &Value, shapes: &Shapes<'_>) -> Comparison {
    let mut w = Walker::new(shapes);
    let mut c = Comparison::default();
    w.compare(Some(old), Some(new), &mut c);
    c
}

/// A value as the walk sees it.
enum Node<'v> {
    Leaf,
    Object(&'v Map<String, Value>),
    List(&'v [Value], ListKind),
}

impl Node<'_> {
    fn is_empty_container(&self) -> bool {
        match self {
            Node::Leaf => false,
            Node::Object(m) => m.is_empty(),
            Node::List(items, _) => items.is_empty(),
        }
    }
}

/// Which set a one-sided subtree goes to.
#[derive(Clone, Copy)]
enum Side {
    Added,
    Removed,
}

struct Walker<'s, 'v> {
    shapes: &'s Shapes<'s>,
    path: Path,
    steps: Vec<&'v str>,
}

impl<'s, 'v> Walker<'s, 'v> {
    fn new(shapes: &'s Shapes<'s>) -> Self {
        Self {
            shapes,
            path: Path::new(),
            steps: Vec::new(),
        }
    }

    fn classify(&self, v: &'v Value) -> Node<'v> {
        match v {
            Value::Object(m) if !self.shapes.atomic_object(&self.steps) => Node::Object(m),
            Value::Array(items) => match self.shapes.list(&self.steps) {
                ListKind::Atomic => Node::Leaf,
                kind => Node::List(items, kind),
            },
            _ => Node::Leaf,
        }
    }

    /// Whether `key` is skipped here: `metadata.managedFields` is never owned.
    fn skips(&self) -> impl Fn(&str) -> bool + use<> {
        let in_metadata = self.steps.len() == 1 && self.steps[0] == "metadata";
        move |key| in_metadata && key == "managedFields"
    }

    fn descend(&mut self, pe: String, step: &'v str) {
        self.path.push(pe);
        self.steps.push(step);
    }

    fn ascend(&mut self) {
        self.path.pop();
        self.steps.pop();
    }

    fn collect(&mut self, v: &'v Value, out: &mut FieldSet) {
        match self.classify(v) {
            Node::Leaf => out.insert(self.path.clone()),
            Node::Object(m) => {
                let skip = self.skips();
                for (k, child) in m.iter().filter(|(k, _)| !skip(k)) {
                    self.descend(format!("f:{k}"), k);
                    self.collect(child, out);
                    self.ascend();
                }
            }
            Node::List(items, kind) => {
                for (pe, item) in indexed(items, &kind) {
                    self.descend(pe, ITEM);
                    self.collect(item, out);
                    out.insert(self.path.clone());
                    self.ascend();
                }
            }
        }
    }

    fn compare(&mut self, l: Option<&'v Value>, r: Option<&'v Value>, c: &mut Comparison) {
        let ln = l.map(|v| self.classify(v));
        let rn = r.map(|v| self.classify(v));
        match (ln, rn) {
            (None, None) => {}
            (None, Some(n)) => self.one_side(n, Side::Added, c),
            (Some(n), None) => self.one_side(n, Side::Removed, c),
            (Some(a), Some(b)) if a.is_empty_container() && b.is_empty_container() => {
                if l != r {
                    c.modified.insert(self.path.clone());
                }
            }
            (Some(Node::Object(a)), Some(Node::Object(b))) => self.compare_objects(a, b, c),
            (Some(Node::List(a, kind)), Some(Node::List(b, _))) => {
                self.compare_lists(a, b, &kind, c);
            }
            (Some(Node::Leaf), Some(Node::Leaf)) => {
                if l != r {
                    c.modified.insert(self.path.clone());
                }
            }
            (Some(a), Some(b)) => {
                self.one_side(a, Side::Removed, c);
                self.one_side(b, Side::Added, c);
            }
        }
    }

    fn compare_objects(
        &mut self,
        a: &'v Map<String, Value>,
        b: &'v Map<String, Value>,
        c: &mut Comparison,
    ) {
        let mut keys: Vec<&'v String> = a.keys().chain(b.keys()).collect();
        keys.sort();
        keys.dedup();
        let skip = self.skips();
        for k in keys.into_iter().filter(|k| !skip(k)) {
            self.descend(format!("f:{k}"), k);
            self.compare(a.get(k), b.get(k), c);
            self.ascend();
        }
    }

    fn compare_lists(
        &mut self,
        a: &'v [Value],
        b: &'v [Value],
        kind: &ListKind,
        c: &mut Comparison,
    ) {
        let left = indexed(a, kind);
        let right = indexed(b, kind);
        let mut names: Vec<&String> = left.iter().chain(right.iter()).map(|(pe, _)| pe).collect();
        names.sort();
        names.dedup();
        for pe in names {
            let find =
                |side: &[(String, &'v Value)]| side.iter().find(|(p, _)| p == pe).map(|x| x.1);
            let (li, ri) = (find(&left), find(&right));
            self.descend(pe.clone(), ITEM);
            self.compare(li, ri, c);
            self.ascend();
        }
    }

    fn one_side(&mut self, n: Node<'v>, side: Side, c: &mut Comparison) {
        match n {
            Node::Leaf => {}
            Node::Object(m) => {
                let skip = self.skips();
                for (k, child) in m.iter().filter(|(k, _)| !skip(k)) {
                    self.descend(format!("f:{k}"), k);
                    let cn = self.classify(child);
                    self.one_side(cn, side, c);
                    self.ascend();
                }
            }
            Node::List(items, kind) => {
                for (pe, item) in indexed(items, &kind) {
                    self.descend(pe, ITEM);
                    let cn = self.classify(item);
                    self.one_side(cn, side, c);
                    self.ascend();
                }
            }
        }
        let set = match side {
            Side::Added => &mut c.added,
            Side::Removed => &mut c.removed,
        };
        set.insert(self.path.clone());
    }
}

/// Items of a non-atomic list with their path elements; repeated names keep the first.
fn indexed<'v>(items: &'v [Value], kind: &ListKind) -> Vec<(String, &'v Value)> {
    let mut out: Vec<(String, &'v Value)> = Vec::with_capacity(items.len());
    for item in items {
        let Some(pe) = item_element(kind, item) else {
            continue;
        };
        if !out.iter().any(|(p, _)| *p == pe) {
            out.push((pe, item));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fv1(set: &FieldSet) -> Value {
        set.to_fields_v1()
    }

    #[test]
    fn applied_set_has_no_object_markers() {
        let cfg = json!({"metadata": {"labels": {"a": "1"}, "finalizers": ["x"]},
            "spec": {"containers": [{"name": "c", "image": "i"}], "taints": [{"key": "k"}]}});
        let set = to_set(&cfg, &Shapes::new(None));
        assert_eq!(
            fv1(&set),
            json!({"f:metadata": {"f:labels": {"f:a": {}}, "f:finalizers": {"v:\"x\"": {}}},
                "f:spec": {"f:containers": {"k:{\"name\":\"c\"}": {".": {}, "f:image": {}, "f:name": {}}},
                    "f:taints": {}}})
        );
    }

    #[test]
    fn comparison_marks_new_containers() {
        let old = json!({"metadata": {"labels": {"a": "1"}}, "spec": {"x": 1}});
        let new = json!({"metadata": {"labels": {"a": "2"}, "annotations": {"n": "v"}},
            "spec": {"y": {"z": true}}});
        let c = compare(&old, &new, &Shapes::new(None));
        assert_eq!(
            fv1(&c.added),
            json!({"f:metadata": {"f:annotations": {".": {}, "f:n": {}}},
                "f:spec": {"f:y": {".": {}, "f:z": {}}}})
        );
        assert_eq!(
            fv1(&c.modified),
            json!({"f:metadata": {"f:labels": {"f:a": {}}}})
        );
        assert_eq!(fv1(&c.removed), json!({"f:spec": {"f:x": {}}}));
        assert!(compare(&new, &new, &Shapes::new(None)).is_empty());
    }

    #[test]
    fn keyed_items_compare_by_key() {
        let old = json!({"status": {"conditions": [{"type": "A", "status": "True"},
            {"type": "B", "status": "True"}]}});
        let new = json!({"status": {"conditions": [{"type": "B", "status": "False"}]}});
        let c = compare(&old, &new, &Shapes::new(None));
        let b = vec![
            "f:status".into(),
            "f:conditions".into(),
            "k:{\"type\":\"B\"}".into(),
        ];
        let mut status = b.clone();
        status.push("f:status".into());
        assert!(c.modified.contains(&status));
        assert_eq!(c.modified.len(), 1);
        let mut a = b;
        a[2] = "k:{\"type\":\"A\"}".into();
        assert!(c.removed.contains(&a));
        assert_eq!(c.removed.len(), 3);
    }
}
