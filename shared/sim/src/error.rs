//! Kubernetes `Status` error bodies, shaped exactly like the real API server's.

use serde_json::{Value, json};

/// Names a resource in error messages: the plural plus, for group resources, the group.
#[derive(Debug, Clone)]
pub struct ResName {
    /// Resource plural, e.g. `nodeclaims`.
    pub plural: String,
    /// API group, empty for core.
    pub group: String,
}

impl ResName {
    /// `plural` for core resources, `plural.group` otherwise (the apiserver's qualified name).
    pub fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    fn details(&self, name: &str) -> Value {
        let mut d = json!({ "name": name, "kind": self.plural });
        if !self.group.is_empty() {
            d["group"] = json!(self.group);
        }
        d
    }
}

pub use kerf_schema::Cause;

/// An API error: HTTP code plus the Status body.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// HTTP status code (also `code` in the body).
    pub code: u16,
    /// The full Status body.
    pub body: Value,
    /// Optional `Retry-After` header value in seconds.
    pub retry_after: Option<u64>,
}

impl ApiError {
    /// A Failure Status with the given code, reason, message and details.
    pub fn new(code: u16, reason: &str, message: String, details: Option<Value>) -> Self {
        let mut body = json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "code": code,
        });
        if let Some(d) = details {
            body["details"] = d;
        }
        Self {
            code,
            body,
            retry_after: None,
        }
    }

    /// 404 for a missing object.
    pub fn not_found(res: &ResName, name: &str) -> Self {
        let msg = format!("{} \"{name}\" not found", res.qualified());
        Self::new(404, "NotFound", msg, Some(res.details(name)))
    }

    /// 404 for a path the server does not serve.
    pub fn no_route() -> Self {
        let msg = "the server could not find the requested resource".to_string();
        Self::new(404, "NotFound", msg, Some(json!({})))
    }

    /// 409 AlreadyExists on create.
    pub fn already_exists(res: &ResName, name: &str) -> Self {
        let msg = format!("{} \"{name}\" already exists", res.qualified());
        Self::new(409, "AlreadyExists", msg, Some(res.details(name)))
    }

    /// 409 Conflict for a stale resourceVersion.
    pub fn conflict(res: &ResName, name: &str) -> Self {
        let msg = format!(
            "Operation cannot be fulfilled on {} \"{name}\": the object has been modified; \
             please apply your changes to the latest version and try again",
            res.qualified()
        );
        Self::new(409, "Conflict", msg, Some(res.details(name)))
    }

    /// 409 Conflict for a failed delete/eviction precondition.
    pub fn precondition(res: &ResName, name: &str, what: &str) -> Self {
        let msg = format!(
            "Operation cannot be fulfilled on {} \"{name}\": Precondition failed: {what}",
            res.qualified()
        );
        Self::new(409, "Conflict", msg, Some(res.details(name)))
    }

    /// 409 Conflict for a server-side apply that would change fields other managers own.
    pub fn apply_conflict(message: String, causes: &[Cause]) -> Self {
        let causes: Vec<Value> = causes
            .iter()
            .map(|c| json!({"reason": c.reason, "message": c.message, "field": c.field}))
            .collect();
        Self::new(409, "Conflict", message, Some(json!({ "causes": causes })))
    }

    /// 422 Invalid with field causes (`kind` is the Kind here, not the plural).
    pub fn invalid(kind: &str, group: &str, name: &str, causes: &[Cause]) -> Self {
        let qualified = if group.is_empty() {
            kind.to_string()
        } else {
            format!("{kind}.{group}")
        };
        let parts: Vec<String> = causes
            .iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect();
        let joined = if parts.len() == 1 {
            parts[0].clone()
        } else {
            format!("[{}]", parts.join(", "))
        };
        let msg = format!("{qualified} \"{name}\" is invalid: {joined}");
        let causes: Vec<Value> = causes
            .iter()
            .map(|c| json!({"reason": c.reason, "message": c.message, "field": c.field}))
            .collect();
        let mut details = json!({ "name": name, "kind": kind, "causes": causes });
        if !group.is_empty() {
            details["group"] = json!(group);
        }
        Self::new(422, "Invalid", msg, Some(details))
    }

    /// 422 for a JSON patch whose `test` failed or whose path is bad.
    pub fn patch_rejected() -> Self {
        let msg = "the server rejected our request due to an error in our request".to_string();
        Self::new(422, "Invalid", msg, None)
    }

    /// 400 BadRequest.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message.into(), None)
    }

    /// 410 Expired (stale continue token or resourceVersion).
    pub fn expired(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message.into(), None)
    }

    /// 415 for strategic-merge on custom resources, or unknown patch types.
    pub fn unsupported_media(content_type: &str) -> Self {
        let msg = format!(
            "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml (got {content_type})"
        );
        Self::new(415, "UnsupportedMediaType", msg, None)
    }

    /// 405 MethodNotAllowed.
    pub fn method_not_allowed() -> Self {
        let msg = "the server does not allow this method on the requested resource".to_string();
        Self::new(405, "MethodNotAllowed", msg, Some(json!({})))
    }

    /// 500 InternalError with a message used verbatim.
    pub fn internal_plain(message: &str) -> Self {
        Self::new(500, "InternalError", message.to_string(), None)
    }

    /// 500 InternalError.
    pub fn internal(message: impl std::fmt::Display) -> Self {
        Self::new(
            500,
            "InternalError",
            format!("Internal error occurred: {message}"),
            None,
        )
    }
}

/// The `{"kind":"Status",...,"status":"Success"}` body for deletes and evictions.
pub fn success_status(code: u16, details: Option<Value>) -> Value {
    let mut body =
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"});
    if code != 200 {
        body["code"] = json!(code);
    }
    if let Some(d) = details {
        body["details"] = d;
    }
    body
}
