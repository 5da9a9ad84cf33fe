//! What a request asks beyond its route: its JSON body, whether it is a dry run, whether its
//! fields are validated strictly, and the admission hooks a write passes through before it
//! is served.

use axum::http::Method;
use serde_json::Value;

use crate::admission;
use crate::error::ApiError;
use crate::query::Query;
use crate::route::{self, Route};
use crate::state::State;

/// `dryRun=All`, in the query or (as clients send a delete's options) in a delete's body.
pub(crate) fn dry_run(q: &Query, method: &Method, body: &[u8]) -> bool {
    q.dry_run
        || *method == Method::DELETE
            && serde_json::from_slice::<Value>(body).is_ok_and(|b| {
                b["dryRun"]
                    .as_array()
                    .is_some_and(|a| a.iter().any(|v| v == "All"))
            })
}

/// `fieldValidation=Strict`: a write whose body names a field its kind's schema does not
/// declare is refused, as kube-apiserver's strict decoding does: a custom resource's schema,
/// or kube-apiserver's for a built-in kind (the object itself or its status, not the
/// subresources that take another kind, as an eviction or a binding).
pub(crate) fn strict(
    state: &State,
    route: &Route,
    method: &Method,
    body: &[u8],
) -> Result<(), ApiError> {
    let (res, sub) = match route {
        Route::Collection { res, .. } => (res, None),
        Route::Object { res, sub, .. } => (res, sub.as_deref()),
        _ => return Ok(()),
    };
    let writes = matches!(*method, Method::POST | Method::PUT | Method::PATCH);
    let Some(info) = state.registry.get(*res).filter(|_| writes) else {
        return Ok(());
    };
    let unknown = match &info.schema {
        Some(schema) => kerf_schema::schema::unknown_fields(schema, &parse_body(body)?),
        None if matches!(sub, None | Some("status")) => {
            crate::openapi::unknown_fields(info, &parse_body(body)?).map_err(ApiError::internal)?
        }
        None => return Ok(()),
    };
    if unknown.is_empty() {
        return Ok(());
    }
    let fields: Vec<String> = unknown
        .iter()
        .map(|f| format!("unknown field \"{f}\""))
        .collect();
    Err(ApiError::bad_request(format!(
        "strict decoding error: {}",
        fields.join(", ")
    )))
}

/// Runs the admission hooks for a write; `Some` is the request to run instead (the mutated
/// object as a create, an apply that creates, or a conditional replace).
pub(crate) async fn admitted(
    state: &State,
    path: &str,
    (method, dry_run): (&Method, bool),
    ct: &str,
    body: &[u8],
) -> Result<Option<(Method, &'static str, Vec<u8>)>, ApiError> {
    let writes = matches!(*method, Method::POST | Method::PUT | Method::PATCH);
    if state.hooks.is_empty() || !(writes || *method == Method::DELETE) {
        return Ok(None);
    }
    let (res, ns, name, sub) = match route::resolve(&state.registry, path) {
        Ok(Route::Collection { res, ns }) if *method == Method::POST => {
            (res, ns.unwrap_or_default(), String::new(), None)
        }
        Ok(Route::Object { res, ns, name, sub }) if *method != Method::POST => (res, ns, name, sub),
        _ => return Ok(None),
    };
    if sub.as_deref().is_some_and(|s| s != "status") {
        return Ok(None);
    }
    let Some(info) = state.registry.get(res) else {
        return Ok(None);
    };
    let parsed = parse_body(body)?;
    let incoming = admission::Incoming {
        info,
        ns: &ns,
        name: &name,
        sub: sub.as_deref(),
        method,
        content_type: ct,
        body: &parsed,
        dry_run,
    };
    Ok(match admission::run(state, &incoming).await? {
        admission::Outcome::Unchanged => None,
        admission::Outcome::Replace { object, create } => {
            let bytes = object.to_string().into_bytes();
            Some(match (create, method.clone()) {
                (true, Method::PATCH) => (Method::PATCH, "application/apply-patch+yaml", bytes),
                (true, _) => (Method::POST, "application/json", bytes),
                (false, _) => (Method::PUT, "application/json", bytes),
            })
        }
    })
}

/// A request body as JSON (`null` when empty).
pub(crate) fn parse_body(body: &[u8]) -> Result<Value, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Null);
    }
    serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("malformed request body: {e}")))
}
