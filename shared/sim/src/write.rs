//! The write pipeline shared by create, update (PUT), every patch type and delete:
//! status-subresource filtering, immutable metadata, generation, schema defaulting and
//! validation, finalizers and deletionTimestamp, and field ownership (`managedFields`,
//! server-side apply through [`crate::apply`]).

use crate::apply::Apply;
use crate::error::{ApiError, Cause};
use crate::managed::{self, Managed, Operation, Owner, Scope, Writer};
use crate::meta::{self, deleting, finalizers, meta_remove, meta_str};
use crate::patch::{self, PatchKind};
use crate::registry::ResourceInfo;
use crate::schema;
use crate::shape::Shapes;
use crate::store::{Key, Store, key};
use serde_json::{Value, json};

/// How a write records field ownership.
#[derive(Debug)]
pub enum Ownership<'a> {
    /// An Update by this writer's manager.
    Update(&'a Writer),
    /// Entries a server-side apply already computed.
    Applied(Managed),
}

/// Stores the managedFields of `new`, the next state of `old` (`{}` on create).
fn record(
    res: &ResourceInfo,
    old: &Value,
    new: &mut Value,
    body_managed: Option<&Value>,
    own: Ownership<'_>,
    status_sub: bool,
) {
    let managed = match own {
        Ownership::Applied(m) => m,
        Ownership::Update(who) => {
            let scope = Scope::of(res, status_sub);
            let owner = Owner::new(who.manager(), Operation::Update, res.api_version(), scope);
            let base = managed::incoming(body_managed, old, status_sub);
            managed::record_update(base, old, new, &owner, scope, &Shapes::of(res))
        }
    };
    managed.store(new);
}

/// The storage key of a resource type (shared by all its versions).
pub fn res_key(res: &ResourceInfo) -> String {
    format!("{}/{}", res.group, res.plural)
}

pub(crate) fn obj_key(res: &ResourceInfo, ns: &str, name: &str) -> Key {
    key(&res_key(res), if res.namespaced { ns } else { "" }, name)
}

fn require_object(body: &Value) -> Result<(), ApiError> {
    if body.is_object() && (body["metadata"].is_null() || body["metadata"].is_object()) {
        Ok(())
    } else {
        Err(ApiError::bad_request(
            "the request body must be a JSON object",
        ))
    }
}

fn set_type_meta(res: &ResourceInfo, obj: &mut Value) {
    obj["apiVersion"] = json!(res.api_version());
    obj["kind"] = json!(res.kind);
}

/// What kube-apiserver sets on every Namespace: the `kubernetes.io/metadata.name` label
/// (selectors such as a pod affinity's `namespaceSelector` match it), the `kubernetes`
/// finalizer and phase `Active` (until the namespace is being deleted).
fn namespace_defaults(obj: &mut Value) {
    let name = meta_str(obj, "name").to_string();
    obj["metadata"]["labels"][kerf_labels::NAMESPACE_NAME] = json!(name);
    if obj["spec"]["finalizers"].is_null() {
        obj["spec"]["finalizers"] = json!(["kubernetes"]);
    }
    if obj["status"]["phase"].is_null() {
        obj["status"]["phase"] = json!("Active");
    }
}

/// Applies the built-in kinds' defaults, and schema defaults with validation for custom
/// resources; 422 on failure.
fn admit(res: &ResourceInfo, obj: &mut Value, old: Option<&Value>) -> Result<(), ApiError> {
    if res.group.is_empty() && res.plural == "namespaces" {
        namespace_defaults(obj);
    }
    // An empty list of finalizers is stored as none, as kube-apiserver's encoding omits it.
    if obj["metadata"]["finalizers"]
        .as_array()
        .is_some_and(Vec::is_empty)
    {
        meta_remove(obj, "finalizers");
    }
    // So is a budget's empty map of disrupted pods.
    if res.plural == "poddisruptionbudgets"
        && let Some(status) = obj["status"].as_object_mut()
        && status
            .get("disruptedPods")
            .and_then(Value::as_object)
            .is_some_and(|m| m.is_empty())
    {
        status.remove("disruptedPods");
    }
    let Some(s) = &res.schema else { return Ok(()) };
    schema::default_and_prune(s, obj);
    let causes = schema::validate(s, obj, old);
    if causes.is_empty() {
        return Ok(());
    }
    Err(ApiError::invalid(
        &res.kind,
        &res.group,
        meta_str(obj, "name"),
        &causes,
    ))
}

fn reset_status_on_create(res: &ResourceInfo, obj: &mut Value) {
    let m = obj.as_object_mut();
    match (res.group.as_str(), res.plural.as_str(), m) {
        ("", "pods", Some(m)) => {
            m.insert("status".into(), json!({"phase": "Pending"}));
        }
        // As kube-apiserver: a new budget's status is the zero status (its counts are not
        // optional), so it allows no disruption until the controller computes it.
        ("policy", "poddisruptionbudgets", Some(m)) => {
            let zero = json!({"disruptionsAllowed": 0, "currentHealthy": 0,
                "desiredHealthy": 0, "expectedPods": 0});
            m.insert("status".into(), zero);
        }
        ("", "nodes" | "namespaces" | "events" | "configmaps", _) => {}
        (_, _, Some(m)) if res.status_subresource => {
            m.remove("status");
        }
        _ => {}
    }
}

/// POST to a collection.
pub fn create(
    st: &mut Store,
    res: &ResourceInfo,
    ns: &str,
    mut body: Value,
    own: Ownership<'_>,
) -> Result<Value, ApiError> {
    require_object(&body)?;
    let body_managed = body["metadata"].get("managedFields").cloned();
    let body_ns = meta_str(&body, "namespace").to_string();
    if res.namespaced && !body_ns.is_empty() && body_ns != ns {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    let name = pick_name(st, res, ns, &body)?;
    if st.get(&obj_key(res, ns, &name)).is_some() {
        return Err(ApiError::already_exists(&res.res_name(), &name));
    }
    body["metadata"]["name"] = json!(name);
    if res.namespaced {
        body["metadata"]["namespace"] = json!(ns);
    } else {
        meta_remove(&mut body, "namespace");
    }
    for f in [
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "managedFields",
        "resourceVersion",
    ] {
        meta_remove(&mut body, f);
    }
    body["metadata"]["uid"] = json!(meta::uid_from(st.rv()));
    body["metadata"]["creationTimestamp"] = json!(st.now());
    if res.generation {
        body["metadata"]["generation"] = json!(1);
    }
    set_type_meta(res, &mut body);
    reset_status_on_create(res, &mut body);
    if res.group.is_empty() && res.plural == "persistentvolumeclaims" {
        crate::defaults::claim_on_create(st, &mut body);
    }
    admit(res, &mut body, None)?;
    record(
        res,
        &json!({}),
        &mut body,
        body_managed.as_ref(),
        own,
        false,
    );
    Ok((*st.put(obj_key(res, ns, &name), body)).clone())
}

fn pick_name(st: &Store, res: &ResourceInfo, ns: &str, body: &Value) -> Result<String, ApiError> {
    let name = meta_str(body, "name");
    if !name.is_empty() {
        return Ok(name.to_string());
    }
    let prefix = meta_str(body, "generateName");
    if prefix.is_empty() {
        let cause = Cause {
            reason: "FieldValueRequired",
            message: "Required value: name or generateName is required".into(),
            field: "metadata.name".into(),
        };
        return Err(ApiError::invalid(&res.kind, &res.group, "", &[cause]));
    }
    let seed = st.rv().wrapping_mul(16);
    let mut candidate = meta::generate_name(prefix, seed);
    for attempt in 1..=8 {
        if st.get(&obj_key(res, ns, &candidate)).is_none() {
            break;
        }
        candidate = meta::generate_name(prefix, seed + attempt);
    }
    Ok(candidate)
}

/// PUT on an object or its `/status`.
pub fn update(
    st: &mut Store,
    res: &ResourceInfo,
    ns: &str,
    name: &str,
    body: Value,
    status_sub: bool,
    who: &Writer,
) -> Result<Value, ApiError> {
    require_object(&body)?;
    let k = obj_key(res, ns, name);
    let old = st
        .get(&k)
        .ok_or_else(|| ApiError::not_found(&res.res_name(), name))?;
    let body_name = meta_str(&body, "name");
    if !body_name.is_empty() && body_name != name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({body_name}) does not match the name on the URL ({name})"
        )));
    }
    let rv = meta_str(&body, "resourceVersion");
    if rv.is_empty() && res.custom {
        let cause = Cause {
            reason: "FieldValueInvalid",
            message: "Invalid value: 0x0: must be specified for an update".into(),
            field: "metadata.resourceVersion".into(),
        };
        return Err(ApiError::invalid(&res.plural, &res.group, name, &[cause]));
    }
    if !rv.is_empty() && rv != meta_str(&old, "resourceVersion") {
        return Err(ApiError::conflict(&res.res_name(), name));
    }
    commit(st, res, k, &old, body, status_sub, Ownership::Update(who))
}

/// PATCH on an object or its `/status`; returns the HTTP code (201 when apply creates).
#[allow(clippy::too_many_arguments)]
pub fn patch(
    st: &mut Store,
    res: &ResourceInfo,
    ns: &str,
    name: &str,
    kind: PatchKind,
    body: Value,
    status_sub: bool,
    who: &Writer,
) -> Result<(u16, Value), ApiError> {
    patch::check_options(kind, who.field_manager.as_deref(), who.force)?;
    if kind == PatchKind::Apply {
        return apply(st, res, ns, name, body, status_sub, who);
    }
    let k = obj_key(res, ns, name);
    let old = st
        .get(&k)
        .ok_or_else(|| ApiError::not_found(&res.res_name(), name))?;
    let mut doc = (*old).clone();
    match kind {
        PatchKind::Merge | PatchKind::Apply => {
            require_object(&body)?;
            patch::merge(&mut doc, &body);
        }
        PatchKind::Json => patch::json_patch(&mut doc, &body)?,
        PatchKind::Strategic if res.custom => {
            return Err(ApiError::unsupported_media(
                "application/strategic-merge-patch+json",
            ));
        }
        PatchKind::Strategic => patch::strategic(&mut doc, &body),
    }
    check_unchanged_rv(res, name, &doc, &old)?;
    let v = commit(st, res, k, &old, doc, status_sub, Ownership::Update(who))?;
    Ok((200, v))
}

/// 409 when a patch carried a resourceVersion other than the stored one.
fn check_unchanged_rv(
    res: &ResourceInfo,
    name: &str,
    doc: &Value,
    old: &Value,
) -> Result<(), ApiError> {
    if meta_str(doc, "resourceVersion") != meta_str(old, "resourceVersion") {
        return Err(ApiError::conflict(&res.res_name(), name));
    }
    Ok(())
}

/// Server-side apply: creates the object if absent (201), else merges with ownership.
fn apply(
    st: &mut Store,
    res: &ResourceInfo,
    ns: &str,
    name: &str,
    body: Value,
    status_sub: bool,
    who: &Writer,
) -> Result<(u16, Value), ApiError> {
    require_object(&body)?;
    patch::check_apply_body(&res.api_version(), &body)?;
    let scope = Scope::of(res, status_sub);
    let owner = Owner::new(who.manager(), Operation::Apply, res.api_version(), scope);
    let a = Apply::new(owner, who.force, scope, Shapes::of(res));
    let k = obj_key(res, ns, name);
    let Some(old) = st.get(&k) else {
        if status_sub {
            return Err(ApiError::not_found(&res.res_name(), name));
        }
        let (mut obj, managed) = a.run(&json!({}), &body)?;
        obj["metadata"]["name"] = json!(name);
        return Ok((201, create(st, res, ns, obj, Ownership::Applied(managed))?));
    };
    let (doc, managed) = a.run(&old, &body)?;
    check_unchanged_rv(res, name, &doc, &old)?;
    let v = commit(
        st,
        res,
        k,
        &old,
        doc,
        status_sub,
        Ownership::Applied(managed),
    )?;
    Ok((200, v))
}

fn carry_over(res: &ResourceInfo, old: &Value, mut new: Value, status_sub: bool) -> Value {
    if status_sub {
        let mut merged = old.clone();
        merged["status"] = new.get("status").cloned().unwrap_or(Value::Null);
        new = merged;
    } else if res.status_subresource {
        new["status"] = old.get("status").cloned().unwrap_or(Value::Null);
    }
    if let Some(m) = new.as_object_mut()
        && m.get("status").is_some_and(Value::is_null)
    {
        m.remove("status");
    }
    for f in [
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "name",
        "namespace",
        "generation",
    ] {
        match old["metadata"].get(f) {
            Some(v) => new["metadata"][f] = v.clone(),
            None => meta_remove(&mut new, f),
        }
    }
    meta_remove(&mut new, "managedFields");
    new
}

fn check_finalizers(res: &ResourceInfo, old: &Value, new: &Value) -> Result<(), ApiError> {
    if !deleting(old) {
        return Ok(());
    }
    let before = finalizers(old);
    let added: Vec<String> = finalizers(new)
        .into_iter()
        .filter(|f| !before.contains(f))
        .collect();
    if added.is_empty() {
        return Ok(());
    }
    let cause = Cause {
        reason: "FieldValueForbidden",
        message: format!(
            "Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers {added:?}"
        ),
        field: "metadata.finalizers".into(),
    };
    Err(ApiError::invalid(
        &res.kind,
        &res.group,
        meta_str(old, "name"),
        &[cause],
    ))
}

/// Stores `new` as the next state of `old` (after carry-over, checks and admission).
fn commit(
    st: &mut Store,
    res: &ResourceInfo,
    k: Key,
    old: &Value,
    new: Value,
    status_sub: bool,
    own: Ownership<'_>,
) -> Result<Value, ApiError> {
    let body_managed = new["metadata"].get("managedFields").cloned();
    let mut new = carry_over(res, old, new, status_sub);
    check_finalizers(res, old, &new)?;
    set_type_meta(res, &mut new);
    if res.generation && !status_sub && meta::spec_changed(old, &new) {
        let g = old["metadata"]["generation"].as_i64().unwrap_or(0);
        new["metadata"]["generation"] = json!(g + 1);
    }
    admit(res, &mut new, Some(old))?;
    record(res, old, &mut new, body_managed.as_ref(), own, status_sub);
    new["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"].clone();
    if &new == old {
        return Ok(new);
    }
    if deleting(&new) && finalizers(&new).is_empty() {
        return Ok(st.remove(&k).map(|v| (*v).clone()).unwrap_or(new));
    }
    Ok((*st.put(k, new)).clone())
}
