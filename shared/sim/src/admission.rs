//! Admission webhooks: a hook registered with [`crate::SimBuilder::admission`] is called, as
//! the API server calls a webhook, for the requests its rules match, with an
//! AdmissionReview v1 built from the request; a denial fails the request with the hook's
//! message, a JSONPatch mutates the object before it is stored.
//!
//! The hook runs before the write, outside the store lock (it may call the server back). A
//! mutated write is stored conditional on the resourceVersion the hook saw (409 if the
//! object changed meanwhile). A hook that errors is skipped when it fails open.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use axum::http::Method;
use base64::Engine;
use serde_json::{Value, json};

use crate::error::ApiError;
use crate::meta::uid;
use crate::patch::{self, PatchKind};
use crate::read;
use crate::registry::ResourceInfo;
use crate::state::State;

/// The future a hook returns: the AdmissionReview answer, or an error text.
pub type HookFuture = Pin<Box<dyn Future<Output = Result<Value, String>> + Send>>;

/// Which requests a hook sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// API group, "" for core.
    pub group: String,
    /// `nodes`, `pods/status`, ...
    pub resource: String,
    /// `CREATE`, `UPDATE`.
    pub operations: Vec<String>,
}

impl Rule {
    pub fn new(group: &str, resource: &str, operations: &[&str]) -> Self {
        Rule {
            group: group.into(),
            resource: resource.into(),
            operations: operations.iter().map(|o| o.to_string()).collect(),
        }
    }
}

/// A registered webhook.
#[derive(Clone)]
pub struct Hook {
    pub name: String,
    pub rules: Vec<Rule>,
    /// Let the request through when the hook errors (`failurePolicy: Ignore`).
    pub fail_open: bool,
    pub call: Arc<dyn Fn(Value) -> HookFuture + Send + Sync>,
}

impl std::fmt::Debug for Hook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hook")
            .field("name", &self.name)
            .field("rules", &self.rules)
            .finish()
    }
}

/// The request as admission sees it.
pub struct Incoming<'a> {
    pub info: &'a ResourceInfo,
    pub ns: &'a str,
    pub name: &'a str,
    pub sub: Option<&'a str>,
    pub method: &'a Method,
    pub content_type: &'a str,
    pub body: &'a Value,
    /// `dryRun=All`: the hooks are told, and must not act on it.
    pub dry_run: bool,
}

/// What the write should store instead of the request body, if a hook mutated it.
#[derive(Debug)]
pub enum Outcome {
    /// Proceed with the request as sent.
    Unchanged,
    /// Store this object: a create, or an update conditional on its resourceVersion.
    Replace { object: Value, create: bool },
}

fn operation(method: &Method) -> Option<&'static str> {
    match *method {
        Method::POST => Some("CREATE"),
        Method::PUT | Method::PATCH => Some("UPDATE"),
        Method::DELETE => Some("DELETE"),
        _ => None,
    }
}

/// Runs the hooks matching `r`.
pub async fn run(state: &State, r: &Incoming<'_>) -> Result<Outcome, ApiError> {
    if operation(r.method).is_none() {
        return Ok(Outcome::Unchanged);
    }
    let resource = match r.sub {
        Some(s) => format!("{}/{s}", r.info.plural),
        None => r.info.plural.clone(),
    };
    let matching = |op: &str| -> Vec<Hook> {
        state
            .hooks
            .iter()
            .filter(|h| {
                h.rules.iter().any(|x| {
                    x.group == r.info.group
                        && x.resource == resource
                        && x.operations.iter().any(|o| o == op)
                })
            })
            .cloned()
            .collect()
    };
    if *r.method == Method::DELETE {
        return deleting(state, r, matching("DELETE")).await;
    }
    if matching("CREATE").is_empty() && matching("UPDATE").is_empty() {
        return Ok(Outcome::Unchanged);
    }
    let (old, mut object) = candidate(state, r)?;
    let op = if old.is_some() { "UPDATE" } else { "CREATE" };
    let hooks = matching(op);
    let mut mutated = false;
    for h in hooks {
        let review = review(r, op, &object, old.as_ref());
        let answer = match (h.call)(review).await {
            Ok(a) => a,
            Err(e) if h.fail_open => {
                tracing::warn!(hook = %h.name, error = %e, "admission hook failed; ignored");
                continue;
            }
            Err(e) => return Err(failed(&h.name, &e)),
        };
        let resp = &answer["response"];
        denied(&h.name, resp)?;
        if let Some(p) = resp["patch"].as_str() {
            let ops = base64::engine::general_purpose::STANDARD
                .decode(p)
                .ok()
                .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
                .ok_or_else(|| failed(&h.name, "the patch is not base64 JSON"))?;
            patch::json_patch(&mut object, &ops)?;
            mutated = true;
        }
    }
    Ok(if mutated {
        Outcome::Replace {
            object,
            create: old.is_none(),
        }
    } else {
        Outcome::Unchanged
    })
}

/// A DELETE: each hook sees the stored object as `oldObject` (`object` is null) and may only
/// allow or deny; a missing object is left to the delete to report.
async fn deleting(state: &State, r: &Incoming<'_>, hooks: Vec<Hook>) -> Result<Outcome, ApiError> {
    if hooks.is_empty() {
        return Ok(Outcome::Unchanged);
    }
    let Ok(stored) = read::get(&state.store(), r.info, r.ns, r.name) else {
        return Ok(Outcome::Unchanged);
    };
    for h in hooks {
        let review = review(r, "DELETE", &Value::Null, Some(&stored));
        let answer = match (h.call)(review).await {
            Ok(a) => a,
            Err(e) if h.fail_open => {
                tracing::warn!(hook = %h.name, error = %e, "admission hook failed; ignored");
                continue;
            }
            Err(e) => return Err(failed(&h.name, &e)),
        };
        denied(&h.name, &answer["response"])?;
    }
    Ok(Outcome::Unchanged)
}

/// The error of a hook that denied the request.
fn denied(name: &str, resp: &Value) -> Result<(), ApiError> {
    if resp["allowed"] == true {
        return Ok(());
    }
    let msg = resp["status"]["message"].as_str().unwrap_or("denied");
    Err(ApiError::new(
        resp["status"]["code"].as_u64().unwrap_or(403) as u16,
        "Forbidden",
        format!("admission webhook \"{name}\" denied the request: {msg}"),
        None,
    ))
}

fn failed(name: &str, e: &str) -> ApiError {
    ApiError::new(
        500,
        "InternalError",
        format!("failed calling webhook \"{name}\": {e}"),
        None,
    )
}

/// The stored object (for updates) and the object the request would store.
fn candidate(state: &State, r: &Incoming<'_>) -> Result<(Option<Value>, Value), ApiError> {
    if *r.method == Method::POST {
        let mut obj = r.body.clone();
        if r.info.namespaced {
            obj["metadata"]["namespace"] = json!(r.ns);
        }
        return Ok((None, obj));
    }
    let stored = read::get(&state.store(), r.info, r.ns, r.name);
    let kind = PatchKind::from_content_type(r.content_type);
    let old = match stored {
        Ok(o) => (*o).clone(),
        // Server-side apply creates what does not exist yet.
        Err(e)
            if e.code == 404
                && *r.method == Method::PATCH
                && matches!(kind, Ok(PatchKind::Apply)) =>
        {
            let mut obj = r.body.clone();
            if r.info.namespaced {
                obj["metadata"]["namespace"] = json!(r.ns);
            }
            return Ok((None, obj));
        }
        Err(e) => return Err(e),
    };
    let mut doc = old.clone();
    if *r.method == Method::PUT {
        doc = r.body.clone();
    } else {
        match kind? {
            PatchKind::Json => patch::json_patch(&mut doc, r.body)?,
            PatchKind::Strategic => patch::strategic(&mut doc, r.body),
            PatchKind::Merge | PatchKind::Apply => patch::merge(&mut doc, r.body),
        }
    }
    doc["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"].clone();
    Ok((Some(old), doc))
}

fn review(r: &Incoming<'_>, op: &str, object: &Value, old: Option<&Value>) -> Value {
    let gvk = json!({"group": r.info.group, "version": r.info.version, "kind": r.info.kind});
    let gvr = json!({"group": r.info.group, "version": r.info.version, "resource": r.info.plural});
    let name = if r.name.is_empty() {
        object["metadata"]["name"].clone()
    } else {
        json!(r.name)
    };
    let mut req = json!({"uid": uid(), "kind": gvk, "resource": gvr, "requestKind": gvk,
        "requestResource": gvr, "name": name, "namespace": r.ns, "operation": op,
        "userInfo": {"username": "kerf-sim"}, "object": object, "dryRun": r.dry_run});
    if let Some(s) = r.sub {
        req["subResource"] = json!(s);
    }
    if let Some(o) = old {
        req["oldObject"] = o.clone();
    }
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": req})
}
