//! `metadata.managedFields`: the entries' wire form, which fields are tracked, the field
//! manager of a request, and the bookkeeping of non-apply writes (`operation: Update`).
//!
//! As in the apiserver, an entry is identified by manager, operation and subresource (and
//! apiVersion for Update entries); entries are sorted Apply before Update, then by time and
//! manager. An update takes the fields it adds or changes from every other manager and
//! drops the fields it removes from everyone; its timestamp moves only when it changed
//! something. A write whose body carries `managedFields` replaces them (`[]` or `[{}]`
//! clears them); writes to `/status` always keep the stored ones.
//! Not modelled: the cap of ten Update entries (`ancient-changes`), and per-version
//! conversion of field sets.

use crate::diff::{self, Comparison};
use crate::fields::{FieldSet, Path};
use crate::meta;
use crate::registry::ResourceInfo;
use crate::shape::Shapes;
use serde_json::{Value, json};

/// `Apply` or `Update`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Operation {
    /// Server-side apply.
    Apply,
    /// Create, update or a non-apply patch.
    Update,
}

impl Operation {
    fn as_str(self) -> &'static str {
        match self {
            Self::Apply => "Apply",
            Self::Update => "Update",
        }
    }
}

/// Who an entry belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    /// `manager`.
    pub manager: String,
    /// `operation`.
    pub operation: Operation,
    /// `apiVersion` (not part of the identity of Apply entries).
    pub api_version: String,
    /// `subresource`, empty for the main resource.
    pub subresource: String,
}

impl Owner {
    /// The entry owner of a write at `scope`.
    pub fn new(manager: String, operation: Operation, api_version: String, scope: Scope) -> Self {
        Self {
            manager,
            operation,
            api_version,
            subresource: scope.subresource().to_string(),
        }
    }

    /// Whether both name the same entry (apiVersion matters for Update entries only).
    pub fn same(&self, o: &Owner) -> bool {
        self.manager == o.manager
            && self.operation == o.operation
            && self.subresource == o.subresource
            && (self.operation == Operation::Apply || self.api_version == o.api_version)
    }

    /// The apiserver's wording in conflict messages: `"m" with subresource "s" using v1`.
    pub fn describe(&self) -> String {
        let mut s = format!("{:?}", self.manager);
        if !self.subresource.is_empty() {
            s.push_str(&format!(" with subresource {:?}", self.subresource));
        }
        if self.operation == Operation::Update {
            s.push_str(&format!(" using {}", self.api_version));
        }
        s
    }
}

/// One `managedFields` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Whose fields these are.
    pub owner: Owner,
    /// `time`, RFC 3339.
    pub time: Option<String>,
    /// `fieldsV1`.
    pub fields: FieldSet,
}

/// All entries of one object.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Managed(pub Vec<Entry>);

impl Managed {
    /// The stored entries of an object (malformed entries are skipped).
    pub fn of(obj: &Value) -> Self {
        Self::decode(&obj["metadata"]["managedFields"]).unwrap_or_default()
    }

    /// Decodes a `managedFields` list; `None` if it is not a list.
    pub fn decode(list: &Value) -> Option<Self> {
        let entries = list.as_array()?.iter().filter_map(decode_entry).collect();
        Some(Self(entries))
    }

    /// The sorted wire form.
    pub fn encode(&self) -> Value {
        let mut entries: Vec<&Entry> = self.0.iter().filter(|e| !e.fields.is_empty()).collect();
        entries.sort_by(|a, b| sort_key(a).cmp(&sort_key(b)));
        Value::Array(entries.into_iter().map(encode_entry).collect())
    }

    /// The entry of `owner`, if any.
    pub fn get(&self, owner: &Owner) -> Option<&Entry> {
        self.0.iter().find(|e| e.owner.same(owner))
    }

    /// The entry of `owner`, added empty if missing.
    pub fn entry(&mut self, owner: &Owner) -> &mut Entry {
        let found = self.0.iter().position(|e| e.owner.same(owner));
        let pos = found.unwrap_or_else(|| {
            let fields = FieldSet::new();
            let owner = owner.clone();
            self.0.push(Entry {
                owner,
                time: None,
                fields,
            });
            self.0.len() - 1
        });
        &mut self.0[pos]
    }

    /// Every path anyone owns.
    pub fn all_owned(&self) -> FieldSet {
        self.0
            .iter()
            .fold(FieldSet::new(), |acc, e| acc.union(&e.fields))
    }

    /// Drops entries that own nothing.
    pub fn drop_empty(&mut self) {
        self.0.retain(|e| !e.fields.is_empty());
    }

    /// Writes the entries into `obj` (removing the key when there are none).
    pub fn store(&self, obj: &mut Value) {
        let list = self.encode();
        match obj.get_mut("metadata").and_then(Value::as_object_mut) {
            Some(m) if list.as_array().is_some_and(|l| l.is_empty()) => {
                m.remove("managedFields");
            }
            Some(m) => {
                m.insert("managedFields".into(), list);
            }
            None => {}
        }
    }
}

/// The apiserver's order: operation, time, manager, apiVersion, subresource.
fn sort_key(e: &Entry) -> (Operation, Option<&str>, &str, &str, &str) {
    let o = &e.owner;
    (
        o.operation,
        e.time.as_deref(),
        &o.manager,
        &o.api_version,
        &o.subresource,
    )
}

fn decode_entry(v: &Value) -> Option<Entry> {
    let s = |k: &str| v[k].as_str().unwrap_or_default().to_string();
    let operation = match v["operation"].as_str()? {
        "Apply" => Operation::Apply,
        "Update" => Operation::Update,
        _ => return None,
    };
    Some(Entry {
        owner: Owner {
            manager: s("manager"),
            operation,
            api_version: s("apiVersion"),
            subresource: s("subresource"),
        },
        time: v["time"].as_str().map(str::to_string),
        fields: FieldSet::from_fields_v1(&v["fieldsV1"]),
    })
}

fn encode_entry(e: &Entry) -> Value {
    let o = &e.owner;
    let mut v = json!({"operation": o.operation.as_str(), "apiVersion": o.api_version,
        "fieldsType": "FieldsV1", "fieldsV1": e.fields.to_fields_v1()});
    if !o.manager.is_empty() {
        v["manager"] = json!(o.manager);
    }
    if let Some(t) = &e.time {
        v["time"] = json!(t);
    }
    if !o.subresource.is_empty() {
        v["subresource"] = json!(o.subresource);
    }
    v
}

/// The field manager and apply options of one request.
#[derive(Debug, Clone, Default)]
pub struct Writer {
    /// `?fieldManager=`.
    pub field_manager: Option<String>,
    /// The `User-Agent` header.
    pub user_agent: Option<String>,
    /// `?force=true`.
    pub force: bool,
}

impl Writer {
    /// `fieldManager`, else the user agent up to its first `/` (the apiserver's default),
    /// printable characters only, at most 128 bytes. kube-rs sends no user agent by
    /// default, so its updates are recorded under an empty manager, as a real server does.
    pub fn manager(&self) -> String {
        if let Some(m) = self.field_manager.as_deref().filter(|m| !m.is_empty()) {
            return m.to_string();
        }
        let ua = self.user_agent.as_deref().unwrap_or_default();
        let mut out = String::new();
        for c in ua.split('/').next().unwrap_or_default().chars() {
            if c.is_control() {
                continue;
            }
            if out.len() + c.len_utf8() > 128 {
                break;
            }
            out.push(c);
        }
        out
    }
}

/// Which part of an object a write may own.
#[derive(Debug, Clone, Copy)]
pub struct Scope {
    /// The write goes to `/status`: only `.status` is tracked.
    pub status_sub: bool,
    /// The resource has a status subresource, so main-endpoint writes do not own `.status`.
    pub has_status: bool,
}

impl Scope {
    /// The scope of a write to `res` (at `/status` when `status_sub`).
    pub fn of(res: &ResourceInfo, status_sub: bool) -> Self {
        Self {
            status_sub,
            has_status: res.status_subresource,
        }
    }

    /// The subresource name recorded in entries.
    pub fn subresource(&self) -> &'static str {
        if self.status_sub { "status" } else { "" }
    }

    /// Whether ownership of `path` is recorded: never for apiVersion, kind, the server-set
    /// metadata fields or `metadata` itself; only `.status` on `/status`; never `.status`
    /// on the main endpoint of a resource with a status subresource.
    pub fn tracks(&self, path: &Path) -> bool {
        let first = path.first().map(String::as_str).unwrap_or_default();
        if self.status_sub {
            return first == "f:status";
        }
        match (first, path.get(1).map(String::as_str)) {
            ("f:apiVersion" | "f:kind", _) | ("f:metadata", None) => false,
            ("f:status", _) => !self.has_status,
            ("f:metadata", Some(f)) => !matches!(
                f,
                "f:name"
                    | "f:namespace"
                    | "f:uid"
                    | "f:resourceVersion"
                    | "f:generation"
                    | "f:creationTimestamp"
                    | "f:selfLink"
                    | "f:managedFields"
            ),
            _ => true,
        }
    }
}

/// The entries a write starts from: those in the written body when it carries any (an empty
/// list, or one empty entry, clears them), else the stored ones.
pub fn incoming(body_managed: Option<&Value>, stored: &Value, status_sub: bool) -> Managed {
    let stored = || Managed::of(stored);
    let Some(list) = body_managed.filter(|_| !status_sub) else {
        return stored();
    };
    let Some(items) = list.as_array() else {
        return stored();
    };
    let reset = items.is_empty() || (items.len() == 1 && items[0] == json!({}));
    match Managed::decode(list) {
        _ if reset => Managed::default(),
        Some(m) if !m.0.is_empty() => m,
        _ => stored(),
    }
}

/// Records an Update by `owner` that turned `old` into `new`.
pub fn record_update(
    mut managed: Managed,
    old: &Value,
    new: &Value,
    owner: &Owner,
    scope: Scope,
    shapes: &Shapes<'_>,
) -> Managed {
    let mut cmp: Comparison = diff::compare(old, new, shapes);
    cmp.retain(|p| scope.tracks(p));
    let changed = cmp.changed();
    let lost = changed.union(&cmp.removed);
    for e in &mut managed.0 {
        e.fields = e.fields.difference(&lost);
    }
    if !changed.is_empty() {
        let e = managed.entry(owner);
        e.fields = e.fields.union(&changed);
        e.time = Some(meta::now());
    }
    managed.drop_empty();
    managed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner(m: &str, op: Operation) -> Owner {
        Owner {
            manager: m.into(),
            operation: op,
            api_version: "v1".into(),
            subresource: String::new(),
        }
    }

    #[test]
    fn updates_take_fields_from_others() {
        let scope = Scope {
            status_sub: false,
            has_status: true,
        };
        let shapes = Shapes::new(None);
        let old = json!({"metadata": {"name": "n"}});
        let v1 = json!({"metadata": {"name": "n", "labels": {"a": "1", "b": "1"}}});
        let a = owner("a", Operation::Update);
        let m = record_update(Managed::default(), &old, &v1, &a, scope, &shapes);
        assert_eq!(
            m.encode()[0]["fieldsV1"],
            json!({"f:metadata": {"f:labels": {".": {}, "f:a": {}, "f:b": {}}}})
        );
        let v2 = json!({"metadata": {"name": "n", "labels": {"a": "2", "b": "1"}},
            "status": {"x": 1}});
        let b = owner("b", Operation::Update);
        let m = record_update(m, &v1, &v2, &b, scope, &shapes);
        let wire = m.encode();
        assert_eq!(wire[1]["manager"], "b");
        assert_eq!(
            wire[1]["fieldsV1"],
            json!({"f:metadata": {"f:labels": {"f:a": {}}}})
        );
        assert_eq!(
            wire[0]["fieldsV1"],
            json!({"f:metadata": {"f:labels": {".": {}, "f:b": {}}}})
        );
        assert_eq!(b.describe(), "\"b\" using v1");
    }

    #[test]
    fn body_entries_replace_or_reset() {
        let stored = json!({"metadata": {"managedFields": [{"manager": "a",
            "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {}}}]}});
        assert_eq!(incoming(None, &stored, false).0.len(), 1);
        assert!(incoming(Some(&json!([])), &stored, false).0.is_empty());
        assert!(incoming(Some(&json!([{}])), &stored, false).0.is_empty());
        assert_eq!(incoming(Some(&json!([])), &stored, true).0.len(), 1);
        let w = Writer {
            user_agent: Some("kubectl/v1.33 (linux/amd64)".into()),
            ..Writer::default()
        };
        assert_eq!(w.manager(), "kubectl");
    }
}
