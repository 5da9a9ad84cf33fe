//! Server-side apply with field ownership, after structured-merge-diff's `Updater.Apply`.
//!
//! The applied configuration is merged into the live object (objects field by field, keyed
//! lists item by item, set lists by value, atomic lists and scalars replaced) and its
//! fields become the applier's, replacing what it applied before. Fields it applied before
//! and omits now are removed unless another manager owns them (then they are only
//! disowned), and objects or lists left empty by that removal go too. A change to a field
//! another manager owns is a conflict (409 with `FieldManagerConflict` causes) unless the
//! apply is forced, which moves the field to the applier; applying the value already there
//! makes the applier a co-owner. An object without managedFields first gets a
//! `before-first-apply` Update entry owning everything it has.
//!
//! Simplifications: `null` in a configuration means "not applied"; items new to a keyed
//! list are appended after the live items instead of following the configuration's order;
//! a keyed list item without its keys is named by the keys it has.

use crate::diff;
use crate::error::{ApiError, Cause};
use crate::fields::{self, FieldSet, Path};
use crate::managed::{self, Managed, Operation, Owner, Scope};
use crate::meta;
use crate::shape::{ITEM, ListKind, Shapes, item_element};
use serde_json::{Map, Value, json};

/// One apply request.
#[derive(Debug, Clone)]
pub struct Apply<'a> {
    /// The applier (operation Apply).
    pub owner: Owner,
    /// `force=true`.
    pub force: bool,
    /// Which fields the endpoint may own.
    pub scope: Scope,
    /// List and object shapes of the resource.
    pub shapes: Shapes<'a>,
}

impl<'a> Apply<'a> {
    /// An apply by `owner` (operation Apply, subresource from `scope`).
    pub fn new(owner: Owner, force: bool, scope: Scope, shapes: Shapes<'a>) -> Self {
        Self {
            owner,
            force,
            scope,
            shapes,
        }
    }

    /// Applies `config` to `live` (`{}` when creating); returns the new object and entries.
    pub fn run(&self, live: &Value, config: &Value) -> Result<(Value, Managed), ApiError> {
        let config = strip_nulls(config);
        let mut managed = self.starting_entries(live);
        let mut applied = diff::to_set(&config, &self.shapes);
        applied.retain(|p| self.scope.tracks(p));
        let previous = managed.get(&self.owner).cloned();
        let last = previous
            .as_ref()
            .map(|e| e.fields.clone())
            .unwrap_or_default();
        managed.entry(&self.owner).fields = applied;

        let mut merged = live.clone();
        let mut steps = Vec::new();
        merge(&mut merged, &config, &self.shapes, &mut steps);
        self.prune(&mut merged, &last, &managed);

        let mut cmp = diff::compare(live, &merged, &self.shapes);
        cmp.retain(|p| self.scope.tracks(p));
        self.take_over(&mut managed, &cmp.changed(), &cmp.removed)?;
        let entry = managed.entry(&self.owner);
        entry.time = match previous {
            Some(prev) if cmp.is_empty() => prev.time,
            _ => Some(meta::now()),
        };
        managed.drop_empty();
        Ok((merged, managed))
    }

    /// The stored entries, or a `before-first-apply` entry for an unmanaged live object.
    fn starting_entries(&self, live: &Value) -> Managed {
        let managed = Managed::of(live);
        let empty = live.as_object().is_none_or(Map::is_empty);
        if !managed.0.is_empty() || empty {
            return managed;
        }
        let owner = Owner {
            manager: "before-first-apply".into(),
            operation: Operation::Update,
            ..self.owner.clone()
        };
        managed::record_update(managed, &json!({}), live, &owner, self.scope, &self.shapes)
    }

    /// Removes what the applier owned before, omits now and nobody else owns.
    fn prune(&self, obj: &mut Value, last: &FieldSet, managed: &Managed) {
        let owned = managed.all_owned();
        let gone: Vec<&Path> = last
            .iter()
            .filter(|p| !owned.contains(p) && !owned.has_below(p))
            .collect();
        for path in gone {
            let mut steps = Vec::new();
            remove(obj, path, &self.shapes, &mut steps);
        }
    }

    /// Moves changed fields to the applier (409 on conflicts unless forced) and drops
    /// removed fields from every other manager.
    fn take_over(
        &self,
        managed: &mut Managed,
        changed: &FieldSet,
        removed: &FieldSet,
    ) -> Result<(), ApiError> {
        let mut conflicts: Vec<(String, Path)> = Vec::new();
        for e in managed.0.iter_mut().filter(|e| !e.owner.same(&self.owner)) {
            let clash = e.fields.intersection(changed);
            let who = e.owner.describe();
            conflicts.extend(clash.iter().map(|p| (who.clone(), p.clone())));
            e.fields = e.fields.difference(&clash).difference(removed);
        }
        if conflicts.is_empty() || self.force {
            return Ok(());
        }
        Err(conflict_error(conflicts))
    }
}

/// The apiserver's 409 for apply conflicts.
fn conflict_error(mut conflicts: Vec<(String, Path)>) -> ApiError {
    conflicts.sort();
    let causes: Vec<Cause> = conflicts
        .iter()
        .map(|(who, p)| Cause {
            reason: "FieldManagerConflict",
            message: format!("conflict with {who}"),
            field: fields::display(p),
        })
        .collect();
    let message = match conflicts.as_slice() {
        [(who, p)] => format!(
            "Apply failed with 1 conflict: conflict with {who}: {}",
            fields::display(p)
        ),
        _ => {
            let mut lines: Vec<String> = Vec::new();
            for (i, (who, p)) in conflicts.iter().enumerate() {
                if i == 0 || conflicts[i - 1].0 != *who {
                    lines.push(format!("conflicts with {who}:"));
                }
                lines.push(format!("- {}", fields::display(p)));
            }
            format!(
                "Apply failed with {} conflicts: {}",
                conflicts.len(),
                lines.join("\n")
            )
        }
    };
    ApiError::apply_conflict(message, &causes)
}

/// A copy of `v` without `null` object members.
fn strip_nulls(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, x)| !x.is_null())
                .map(|(k, x)| (k.clone(), strip_nulls(x)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(strip_nulls).collect()),
        other => other.clone(),
    }
}

/// Merges an applied configuration into a live value.
fn merge<'c>(live: &mut Value, cfg: &'c Value, shapes: &Shapes<'_>, steps: &mut Vec<&'c str>) {
    match (&mut *live, cfg) {
        (Value::Object(l), Value::Object(c)) if !shapes.atomic_object(steps) => {
            for (k, cv) in c {
                steps.push(k);
                match l.get_mut(k) {
                    Some(lv) => merge(lv, cv, shapes, steps),
                    None => {
                        l.insert(k.clone(), cv.clone());
                    }
                }
                steps.pop();
            }
        }
        (Value::Array(l), Value::Array(c)) => match shapes.list(steps) {
            ListKind::Atomic => *live = cfg.clone(),
            kind => merge_items(l, c, &kind, shapes, steps),
        },
        _ => *live = cfg.clone(),
    }
}

fn merge_items<'c>(
    live: &mut Vec<Value>,
    cfg: &'c [Value],
    kind: &ListKind,
    shapes: &Shapes<'_>,
    steps: &mut Vec<&'c str>,
) {
    for item in cfg {
        let name = item_element(kind, item);
        let pos = live.iter().position(|x| item_element(kind, x) == name);
        match pos {
            Some(i) => {
                steps.push(ITEM);
                merge(&mut live[i], item, shapes, steps);
                steps.pop();
            }
            None => live.push(item.clone()),
        }
    }
}

/// Removes the value at `path`, then any object or list the removal left empty.
fn remove<'p>(v: &mut Value, path: &'p [String], shapes: &Shapes<'_>, steps: &mut Vec<&'p str>) {
    let Some((head, rest)) = path.split_first() else {
        return;
    };
    if let Some(field) = head.strip_prefix("f:") {
        let Some(m) = v.as_object_mut() else { return };
        if !rest.is_empty()
            && let Some(child) = m.get_mut(field)
        {
            steps.push(field);
            remove(child, rest, shapes, steps);
            steps.pop();
        }
        if rest.is_empty() || m.get(field).is_some_and(is_empty_container) {
            m.remove(field);
        }
        return;
    }
    let kind = shapes.list(steps);
    let Some(items) = v.as_array_mut() else {
        return;
    };
    let Some(i) = items
        .iter()
        .position(|x| item_element(&kind, x).as_ref() == Some(head))
    else {
        return;
    };
    if !rest.is_empty() {
        steps.push(ITEM);
        remove(&mut items[i], rest, shapes, steps);
        steps.pop();
    }
    if rest.is_empty() || is_empty_container(&items[i]) {
        items.remove(i);
    }
}

fn is_empty_container(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(manager: &str, force: bool) -> Apply<'static> {
        let scope = Scope {
            status_sub: false,
            has_status: true,
        };
        let owner = Owner::new(manager.into(), Operation::Apply, "v1".into(), scope);
        Apply::new(owner, force, scope, Shapes::new(None))
    }

    fn store(obj: &mut Value, m: &Managed) {
        m.store(obj);
    }

    #[test]
    fn apply_owns_prunes_and_conflicts() {
        let cfg = json!({"metadata": {"name": "n", "labels": {"a": "1", "b": "1"}}});
        let (mut obj, m) = apply("x", false).run(&json!({}), &cfg).unwrap();
        store(&mut obj, &m);
        assert_eq!(
            obj["metadata"]["managedFields"][0]["fieldsV1"],
            json!({"f:metadata": {"f:labels": {"f:a": {}, "f:b": {}}}})
        );
        let cfg2 = json!({"metadata": {"name": "n", "labels": {"a": "1"}}});
        let (mut obj2, m2) = apply("x", false).run(&obj, &cfg2).unwrap();
        store(&mut obj2, &m2);
        assert_eq!(obj2["metadata"]["labels"], json!({"a": "1"}));
        let e = apply("y", false)
            .run(&obj2, &json!({"metadata": {"labels": {"a": "2"}}}))
            .unwrap_err();
        assert_eq!(e.code, 409);
        assert_eq!(
            e.body["details"]["causes"][0]["field"],
            ".metadata.labels.a"
        );
        assert_eq!(
            e.body["details"]["causes"][0]["message"],
            "conflict with \"x\""
        );
        let (obj3, m3) = apply("y", true)
            .run(&obj2, &json!({"metadata": {"labels": {"a": "2"}}}))
            .unwrap();
        assert_eq!(obj3["metadata"]["labels"]["a"], "2");
        assert_eq!(m3.0.len(), 1);
        assert_eq!(m3.0[0].owner.manager, "y");
    }

    #[test]
    fn keyed_lists_merge_and_prune_by_key() {
        let live = json!({"spec": {"containers": [{"name": "a", "image": "1"}]}});
        let cfg = json!({"spec": {"containers": [{"name": "b", "image": "2"}]}});
        let mut merged = live.clone();
        merge(&mut merged, &cfg, &Shapes::new(None), &mut Vec::new());
        assert_eq!(
            merged["spec"]["containers"].as_array().map(Vec::len),
            Some(2)
        );
        let path: Path = vec![
            "f:spec".into(),
            "f:containers".into(),
            "k:{\"name\":\"a\"}".into(),
        ];
        remove(&mut merged, &path, &Shapes::new(None), &mut Vec::new());
        assert_eq!(
            merged["spec"]["containers"],
            json!([{"name": "b", "image": "2"}])
        );
        let path_b: Path = vec![
            "f:spec".into(),
            "f:containers".into(),
            "k:{\"name\":\"b\"}".into(),
        ];
        remove(&mut merged, &path_b, &Shapes::new(None), &mut Vec::new());
        assert_eq!(merged, json!({}));
    }

    #[test]
    fn unmanaged_objects_get_before_first_apply() {
        let live = json!({"metadata": {"name": "n", "labels": {"a": "1"}}});
        let e = apply("x", false)
            .run(&live, &json!({"metadata": {"labels": {"a": "2"}}}))
            .unwrap_err();
        assert_eq!(
            e.body["details"]["causes"][0]["message"],
            "conflict with \"before-first-apply\" using v1"
        );
    }
}
