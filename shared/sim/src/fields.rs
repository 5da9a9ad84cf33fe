//! FieldsV1 field sets: the paths a field manager owns, their wire form and display form.
//!
//! A path is the list of encoded path elements exactly as they appear as keys of
//! `metadata.managedFields[].fieldsV1`: `f:<field>` for object fields, `k:<json>` for items
//! of keyed lists (`x-kubernetes-list-type: map`, the keys as a sorted JSON object) and
//! `v:<json>` for items of set lists. A member of the set that also has members below it is
//! written with a `.: {}` marker; a member without any is written as `{}`.

use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::ops::Bound;

/// One path from the object root, as encoded path elements.
pub type Path = Vec<String>;

/// The `.` marker key of FieldsV1.
const SELF: &str = ".";

/// A set of paths (the apiserver's `fieldpath.Set`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSet(BTreeSet<Path>);

impl FieldSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a path.
    pub fn insert(&mut self, path: Path) {
        self.0.insert(path);
    }

    /// Whether `path` is a member.
    pub fn contains(&self, path: &[String]) -> bool {
        self.0.contains(path)
    }

    /// Whether the set has no members.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Members in order.
    pub fn iter(&self) -> impl Iterator<Item = &Path> {
        self.0.iter()
    }

    /// Members of either set.
    pub fn union(&self, other: &Self) -> Self {
        Self(self.0.union(&other.0).cloned().collect())
    }

    /// Members of `self` that are not in `other`.
    pub fn difference(&self, other: &Self) -> Self {
        Self(self.0.difference(&other.0).cloned().collect())
    }

    /// Members of both sets.
    pub fn intersection(&self, other: &Self) -> Self {
        Self(self.0.intersection(&other.0).cloned().collect())
    }

    /// Keeps the members `keep` accepts.
    pub fn retain(&mut self, keep: impl FnMut(&Path) -> bool) {
        self.0.retain(keep);
    }

    /// Whether some member lies strictly below `path`.
    ///
    /// Paths order element by element, so descendants of `path` directly follow it.
    pub fn has_below(&self, path: &[String]) -> bool {
        self.0
            .range::<Path, _>((Bound::Excluded(path.to_vec()), Bound::Unbounded))
            .next()
            .is_some_and(|p| p.starts_with(path))
    }

    /// Decodes a `fieldsV1` object; anything that is not an object is an empty set.
    pub fn from_fields_v1(v: &Value) -> Self {
        let mut set = Self::new();
        let mut path = Path::new();
        if let Some(m) = v.as_object() {
            decode_node(m, &mut path, &mut set);
        }
        set
    }

    /// Encodes the set as a `fieldsV1` object.
    pub fn to_fields_v1(&self) -> Value {
        let mut root = Map::new();
        for path in &self.0 {
            mark(&mut root, path);
        }
        fold_markers(&mut root);
        Value::Object(root)
    }
}

impl FromIterator<Path> for FieldSet {
    fn from_iter<I: IntoIterator<Item = Path>>(iter: I) -> Self {
        Self(iter.into_iter().collect())
    }
}

/// Adds the node of `path` below `node` and gives it the `.` marker.
fn mark(node: &mut Map<String, Value>, path: &[String]) {
    let Some((head, rest)) = path.split_first() else {
        node.insert(SELF.into(), Value::Object(Map::new()));
        return;
    };
    let child = node
        .entry(head.clone())
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(m) = child {
        mark(m, rest);
    }
}

fn decode_node(m: &Map<String, Value>, path: &mut Path, set: &mut FieldSet) {
    for (k, v) in m {
        if k == SELF {
            if !path.is_empty() {
                set.insert(path.clone());
            }
            continue;
        }
        path.push(k.clone());
        match v.as_object() {
            Some(children) if !children.is_empty() => decode_node(children, path, set),
            _ => set.insert(path.clone()),
        }
        path.pop();
    }
}

/// Turns nodes whose only key is the `.` marker into plain `{}` leaves.
fn fold_markers(node: &mut Map<String, Value>) {
    for child in node.values_mut() {
        let Value::Object(m) = child else { continue };
        if m.len() == 1 && m.contains_key(SELF) {
            m.clear();
        } else {
            fold_markers(m);
        }
    }
}

/// The apiserver's rendering of a path in conflict causes: `.spec.containers[name="c"].image`.
pub fn display(path: &[String]) -> String {
    path.iter().map(|pe| display_element(pe)).collect()
}

fn display_element(pe: &str) -> String {
    let (tag, rest) = pe.split_at(pe.find(':').map_or(0, |i| i + 1));
    match tag {
        "f:" => format!(".{rest}"),
        "v:" => format!("[={rest}]"),
        "i:" => format!("[{rest}]"),
        "k:" => {
            let keys: Map<String, Value> = serde_json::from_str(rest).unwrap_or_default();
            let parts: Vec<String> = keys.iter().map(|(k, v)| format!("{k}={v}")).collect();
            format!("[{}]", parts.join(","))
        }
        _ => pe.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn p(elems: &[&str]) -> Path {
        elems.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn round_trip_with_markers() {
        let v = json!({"f:metadata": {"f:labels": {".": {}, "f:a": {}}},
            "f:spec": {"f:containers": {"k:{\"name\":\"c\"}": {".": {}, "f:image": {}}}}});
        let set = FieldSet::from_fields_v1(&v);
        assert!(set.contains(&p(&["f:metadata", "f:labels"])));
        assert!(!set.contains(&p(&["f:metadata"])));
        assert_eq!(set.len(), 4);
        assert_eq!(set.to_fields_v1(), v);
    }

    #[test]
    fn below_and_display() {
        let set: FieldSet = [p(&["f:a", "f:b"]), p(&["f:ab"])].into_iter().collect();
        assert!(set.has_below(&p(&["f:a"])));
        assert!(!set.has_below(&p(&["f:a", "f:b"])));
        assert!(!set.has_below(&p(&["f:b"])));
        let path = p(&[
            "f:spec",
            "k:{\"effect\":\"NoSchedule\",\"key\":\"x\"}",
            "f:value",
        ]);
        assert_eq!(
            display(&path),
            ".spec[effect=\"NoSchedule\",key=\"x\"].value"
        );
        assert_eq!(
            display(&p(&["f:metadata", "f:finalizers", "v:\"a/b\""])),
            ".metadata.finalizers[=\"a/b\"]"
        );
    }
}
