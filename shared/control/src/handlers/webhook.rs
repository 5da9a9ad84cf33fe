//! The webhook function's HTTP layer (a Lambda Function URL, payload v2): the secret path
//! segment checked in constant time (wrong or missing: 401, counted in
//! `kerf_webhook_unauthorized_total`, nothing else happens), bodies over 1 MiB refused (413),
//! POST only, then the AdmissionReview answered by [`crate::webhook`]. An unreadable review
//! is a 400: the API server then applies the webhook's failurePolicy.
//!
//! The secret value holds one secret, or two separated by whitespace while it rotates (the
//! current one and the next): a path carrying either is accepted, so configurations can move
//! from one to the next with no request refused in between.

use base64::Engine;
use jiff::Timestamp;
use serde_json::{Value, json};
use subtle::ConstantTimeEq;

use super::events::FunctionUrlRequest;
use super::flush_metrics;
use crate::ctx::Ctx;
use crate::log::Logger;
use crate::log::controllers::WEBHOOK;
use crate::metrics::{Metrics, names};
use crate::ports::{Cloud, Cluster, Publisher, Queue};
use crate::webhook;

/// The largest body accepted.
pub const MAX_BODY: usize = 1 << 20;

/// An HTTP answer.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpResponse {
    pub status: u16,
    pub body: Value,
}

fn answer(status: u16, body: Value) -> HttpResponse {
    HttpResponse { status, body }
}

/// Whether `path`'s first segment is one of the secrets in `secret` (whitespace-separated:
/// the current one, and the next one while it rotates). Every secret is compared, each in
/// constant time ([`subtle`]), so timing reveals neither how much of a guess matched nor which
/// secret did.
pub fn authorized(path: &str, secret: &str) -> bool {
    let first = path
        .trim_start_matches('/')
        .split('/')
        .next()
        .unwrap_or_default();
    secret
        .split_whitespace()
        .fold(subtle::Choice::from(0), |ok, s| {
            ok | first.as_bytes().ct_eq(s.as_bytes())
        })
        .into()
}

/// The answer to a request without the secret: a warning, one count of
/// [`names::WEBHOOK_UNAUTHORIZED`] written at once (the request does nothing else), a 401.
pub fn unauthorized(log: &Logger, now: Timestamp, request: &FunctionUrlRequest) -> HttpResponse {
    log.warn(
        WEBHOOK,
        "rejected an unauthenticated request",
        json!({"sourceIp": request.request_context.http.source_ip}),
    );
    let metrics = Metrics::default();
    metrics.count(names::WEBHOOK_UNAUTHORIZED, &[], 1.0);
    for doc in metrics.flush(now) {
        log.raw(&doc);
    }
    answer(401, json!({"message": "unauthorized"}))
}

/// The request body of a Function URL request (decoding base64 when flagged).
pub fn body(request: &FunctionUrlRequest) -> Result<Vec<u8>, String> {
    let raw = request.body.as_deref().unwrap_or_default();
    if request.is_base64_encoded {
        base64::engine::general_purpose::STANDARD
            .decode(raw)
            .map_err(|e| format!("body is not valid base64: {e}"))
    } else {
        Ok(raw.as_bytes().to_vec())
    }
}

/// Answers one Function URL request; `queue` takes provisioning hints, `disruption` the
/// disruption function's timers (pod events).
pub async fn handle<C: Cluster, K: Cloud, P: Publisher, Q: Queue>(
    ctx: &Ctx<C, K, P>,
    queue: &Q,
    disruption: &Q,
    secret: &str,
    request: &FunctionUrlRequest,
) -> HttpResponse {
    let path = request.raw_path.as_deref().unwrap_or_default();
    if !authorized(path, secret) {
        return unauthorized(&ctx.log, ctx.now(), request);
    }
    let method = request.request_context.http.method.as_deref();
    if method.unwrap_or("POST") != "POST" {
        return answer(405, json!({"message": "only POST is accepted"}));
    }
    let declared = request
        .headers
        .get("content-length")
        .and_then(|l| l.to_str().ok())
        .and_then(|l| l.parse::<usize>().ok());
    let bytes = match body(request) {
        Ok(b) => b,
        Err(e) => return answer(400, json!({"message": e.to_string()})),
    };
    if bytes.len() > MAX_BODY || declared.is_some_and(|l| l > MAX_BODY) {
        return answer(
            413,
            json!({"message": format!("body larger than {MAX_BODY} bytes")}),
        );
    }
    let review: Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(e) => return answer(400, json!({"message": format!("body is not JSON: {e}")})),
    };
    let req = match webhook::parse(&review) {
        Ok(r) => r,
        Err(e) => return answer(400, json!({"message": e.to_string()})),
    };
    let resp = webhook::admit(ctx, queue, disruption, &req).await;
    flush_metrics(ctx);
    answer(200, webhook::review(&req.uid, &resp))
}

/// The answer when Kerf cannot act on the request (the deadline passed before [`handle`]
/// finished, or no Kubernetes client could be built): Kerf's CRDs validated from the object
/// alone, pods and nodes allowed ([`webhook::offline`]). Validation never needs a client.
pub fn timed_out(request: &FunctionUrlRequest) -> HttpResponse {
    let review = body(request)
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok());
    let Some(req) = review.as_ref().and_then(|r| webhook::parse(r).ok()) else {
        return answer(400, json!({"message": "unreadable AdmissionReview"}));
    };
    answer(200, webhook::review(&req.uid, &webhook::offline(&req)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Function URL request carrying `body`, base64-encoded when `base64`.
    fn request(body: &str, base64: bool) -> FunctionUrlRequest {
        let mut r = FunctionUrlRequest::default();
        r.body = Some(body.to_string());
        r.is_base64_encoded = base64;
        r
    }

    #[test]
    fn secret_path_is_checked_whole() {
        assert!(authorized("/s3cret/validate", "s3cret"));
        assert!(authorized("s3cret", "s3cret"));
        assert!(!authorized("/s3cre/validate", "s3cret"));
        assert!(!authorized("/s3crett/validate", "s3cret"));
        assert!(!authorized("/", "s3cret"));
        assert!(!authorized("/x", ""));
        assert!(!authorized("/", ""));
        assert!(!authorized("//x", "  "));
    }

    #[test]
    fn both_secrets_are_accepted_while_one_rotates() {
        let rotating = "0ld-secret\nn3w-secret";
        assert!(authorized("/0ld-secret/admit", rotating));
        assert!(authorized("/n3w-secret/admit", rotating));
        assert!(!authorized("/0ld-secret\nn3w-secret/admit", rotating));
        assert!(!authorized("/n3w/admit", rotating));
        assert!(!authorized("/n3w-secret/admit", "0ld-secret"));
        assert!(!authorized("/admit", rotating));
    }

    #[test]
    fn a_refused_request_is_counted() {
        use std::sync::Arc;

        use crate::log::{Level, MemorySink};
        use crate::ports::ManualClock;

        let sink = Arc::new(MemorySink::default());
        let now: Timestamp = "2026-03-08T13:42:09Z".parse().unwrap();
        let log = Logger::new(sink.clone(), Arc::new(ManualClock::new(now)), Level::Info);
        let mut ev = FunctionUrlRequest::default();
        ev.raw_path = Some("/guess/admit".into());
        ev.request_context.http.source_ip = Some("192.0.2.1".into());
        assert_eq!(unauthorized(&log, now, &ev).status, 401);
        let entries = sink.entries();
        assert_eq!(entries.len(), 2, "{entries:?}");
        assert_eq!(entries[0]["sourceIp"], "192.0.2.1");
        assert_eq!(entries[1][names::WEBHOOK_UNAUTHORIZED], 1.0);
        let defs = &entries[1]["_aws"]["CloudWatchMetrics"][0];
        assert_eq!(defs["Namespace"], "Kerf");
        assert_eq!(defs["Metrics"][0]["Name"], names::WEBHOOK_UNAUTHORIZED);
    }

    #[test]
    fn bodies_decode_and_timeouts_fail_open_for_workloads_only() {
        let b64 = base64::engine::general_purpose::STANDARD.encode("{}");
        assert_eq!(body(&request(&b64, true)).unwrap(), b"{}");
        assert!(body(&request("%%", true)).is_err());
        let review = |group: &str, kind: &str| {
            let review = json!({"kind": "AdmissionReview", "request": {"uid": "u",
                "kind": {"group": group, "kind": kind}}});
            request(&review.to_string(), false)
        };
        let pod = timed_out(&review("", "Pod"));
        assert_eq!(pod.body["response"]["allowed"], true);
        let np = timed_out(&review("karpenter.sh", "NodePool"));
        assert_eq!(np.body["response"]["allowed"], false);
        let message = np.body["response"]["status"]["message"].as_str().unwrap();
        assert!(message.contains("is invalid"), "{message}");
        assert_eq!(timed_out(&request("nope", false)).status, 400);
    }
}
