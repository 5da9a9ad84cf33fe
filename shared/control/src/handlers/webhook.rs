//! The webhook function's HTTP layer (a Lambda Function URL, payload v2): the secret path
//! segment checked in constant time (wrong or missing: 401, nothing else happens), bodies
//! over 1 MiB refused (413), POST only, then the AdmissionReview answered by
//! [`crate::webhook`]. An unreadable review is a 400: the API server then applies the
//! webhook's failurePolicy (Ignore for pods and nodes, Fail for Kerf's CRDs).

use base64::Engine;
use serde_json::{Value, json};

use super::flush_metrics;
use crate::ctx::Ctx;
use crate::log::controllers::WEBHOOK;
use crate::ports::{Cloud, Cluster, Publisher, Queue};
use crate::webhook::{self, Response};

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

/// Compares equal-length inputs without an early exit, so timing does not reveal how much
/// of a guess matched (only whether its length is right).
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Whether `path`'s first segment is the secret.
pub fn authorized(path: &str, secret: &str) -> bool {
    let first = path
        .trim_start_matches('/')
        .split('/')
        .next()
        .unwrap_or_default();
    !secret.is_empty() && constant_time_eq(first.as_bytes(), secret.as_bytes())
}

/// The request body of a Function URL event (decoding base64 when flagged).
pub fn body(event: &Value) -> Result<Vec<u8>, String> {
    let raw = event["body"].as_str().unwrap_or_default();
    if event["isBase64Encoded"].as_bool().unwrap_or(false) {
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
    event: &Value,
) -> HttpResponse {
    let path = event["rawPath"].as_str().unwrap_or_default();
    if !authorized(path, secret) {
        ctx.log.warn(
            WEBHOOK,
            "rejected an unauthenticated request",
            json!({"sourceIp": event["requestContext"]["http"]["sourceIp"]}),
        );
        return answer(401, json!({"message": "unauthorized"}));
    }
    let method = event["requestContext"]["http"]["method"]
        .as_str()
        .unwrap_or("POST");
    if method != "POST" {
        return answer(405, json!({"message": "only POST is accepted"}));
    }
    let declared = event["headers"]["content-length"]
        .as_str()
        .and_then(|l| l.parse::<usize>().ok());
    let bytes = match body(event) {
        Ok(b) => b,
        Err(e) => return answer(400, json!({"message": e})),
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
        Err(e) => return answer(400, json!({"message": e})),
    };
    let resp = webhook::admit(ctx, queue, disruption, &req).await;
    flush_metrics(ctx);
    answer(200, webhook::review(&req.uid, &resp))
}

/// The answer when the deadline passes before [`handle`] finishes: allow pods and nodes
/// (Kerf never blocks a workload), deny Kerf's CRDs (they are retried by the client).
pub fn timed_out(event: &Value) -> HttpResponse {
    let review = body(event)
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok());
    let Some(req) = review.as_ref().and_then(|r| webhook::parse(r).ok()) else {
        return answer(400, json!({"message": "unreadable AdmissionReview"}));
    };
    let resp = if webhook::fails_open(&req) {
        Response::allow()
    } else {
        Response::deny("Kerf could not validate this object in time; retry")
    };
    answer(200, webhook::review(&req.uid, &resp))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_path_is_checked_whole() {
        assert!(authorized("/s3cret/validate", "s3cret"));
        assert!(authorized("s3cret", "s3cret"));
        assert!(!authorized("/s3cre/validate", "s3cret"));
        assert!(!authorized("/s3crett/validate", "s3cret"));
        assert!(!authorized("/", "s3cret"));
        assert!(!authorized("/x", ""));
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"", b"a"));
        assert!(!constant_time_eq(b"ab", b"abab"));
    }

    #[test]
    fn bodies_decode_and_timeouts_fail_open_for_workloads_only() {
        let b64 = base64::engine::general_purpose::STANDARD.encode("{}");
        assert_eq!(
            body(&json!({"body": b64, "isBase64Encoded": true})).unwrap(),
            b"{}"
        );
        assert!(body(&json!({"body": "%%", "isBase64Encoded": true})).is_err());
        let review = |group: &str, kind: &str| {
            json!({"body": json!({"kind": "AdmissionReview", "request": {"uid": "u",
                "kind": {"group": group, "kind": kind}}}).to_string()})
        };
        let pod = timed_out(&review("", "Pod"));
        assert_eq!(pod.body["response"]["allowed"], true);
        let np = timed_out(&review("karpenter.sh", "NodePool"));
        assert_eq!(np.body["response"]["allowed"], false);
        assert_eq!(timed_out(&json!({"body": "nope"})).status, 400);
    }
}
