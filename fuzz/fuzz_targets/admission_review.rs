//! What the webhook's Function URL receives: the Lambda event body (raw or base64), read as
//! an AdmissionReview, validated when it is one of Kerf's CRDs. Never a panic; a malformed
//! review is an error with a message, a CRD is allowed or denied with its reasons, and
//! anything else fails open (pods and nodes are never blocked by Kerf).
#![no_main]

use base64::Engine;
use kerf_control::handlers::events::FunctionUrlRequest;
use kerf_control::handlers::webhook::body;
use kerf_control::webhook::{self, Response, fails_open, validate};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

/// A Function URL request carrying `body`, base64-encoded when `base64`.
fn request(body: String, base64: bool) -> FunctionUrlRequest {
    let mut r = FunctionUrlRequest::default();
    r.body = Some(body);
    r.is_base64_encoded = base64;
    r
}

fuzz_target!(|data: &[u8]| {
    let encoded = base64::engine::general_purpose::STANDARD.encode(data);
    let event = request(encoded, true);
    assert_eq!(body(&event).ok().as_deref(), Some(data), "base64 body");
    if let Ok(text) = std::str::from_utf8(data) {
        let event = request(text.to_string(), false);
        assert_eq!(body(&event).ok().as_deref(), Some(data), "raw body");
    }
    let Ok(review) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let req = match webhook::parse(&review) {
        Ok(r) => r,
        Err(m) => {
            assert!(!m.to_string().is_empty(), "a refusal without a reason");
            return;
        }
    };
    let Some(kind) = validate::Kind::of(&req.group, &req.kind) else {
        assert!(fails_open(&req));
        return;
    };
    assert!(!fails_open(&req), "Kerf's CRDs fail closed");
    let errors = validate::validate(kind, &req.object, req.old_object.as_ref());
    assert!(errors.iter().all(|e| !e.is_empty()), "an empty reason");
    let resp = if errors.is_empty() {
        Response::allow()
    } else {
        Response::deny(errors.join("; "))
    };
    let out = webhook::review(&req.uid, &resp);
    assert_eq!(out["response"]["uid"], req.uid.as_str());
    assert_eq!(out["response"]["allowed"], errors.is_empty());
});
