//! EKS token format and SigV4 signature, recomputed independently at a fixed time.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use aws_credential_types::Credentials;
use aws_lc_rs::{digest, hmac};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use kerf_kube::eks::token::{REFRESH_AFTER, TOKEN_PREFIX, token};
use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";

fn creds() -> Credentials {
    Credentials::new(
        "AKIDEXAMPLE",
        SECRET,
        Some("session/token+with=reserved".into()),
        None,
        "test",
    )
}

/// 2026-01-02T03:04:05Z.
fn at() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_767_323_045)
}

fn decode(v: &str) -> String {
    percent_encoding::percent_decode_str(v)
        .decode_utf8()
        .unwrap()
        .into_owned()
}

fn encode(v: &str) -> String {
    const SET: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'_')
        .remove(b'.')
        .remove(b'~');
    percent_encoding::utf8_percent_encode(v, SET).to_string()
}

fn query(url: &str) -> BTreeMap<String, String> {
    let (_, q) = url.split_once('?').unwrap();
    q.split('&')
        .map(|kv| kv.split_once('=').unwrap())
        .map(|(k, v)| (k.to_string(), decode(v)))
        .collect()
}

fn hmac(key: &[u8], msg: &str) -> Vec<u8> {
    hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, key), msg.as_bytes())
        .as_ref()
        .to_vec()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// SigV4 of the presigned URL, from the published algorithm.
fn expected_signature(q: &BTreeMap<String, String>, cluster: &str) -> String {
    let canonical_query: Vec<String> = q
        .iter()
        .filter(|(k, _)| *k != "X-Amz-Signature")
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect();
    let empty = hex(digest::digest(&digest::SHA256, b"").as_ref());
    let canonical = format!(
        "GET\n/\n{}\nhost:sts.us-east-1.amazonaws.com\nx-k8s-aws-id:{cluster}\n\nhost;x-k8s-aws-id\n{empty}",
        canonical_query.join("&")
    );
    let scope = "20260102/us-east-1/sts/aws4_request";
    let to_sign = format!(
        "AWS4-HMAC-SHA256\n20260102T030405Z\n{scope}\n{}",
        hex(digest::digest(&digest::SHA256, canonical.as_bytes()).as_ref())
    );
    let mut key = hmac(format!("AWS4{SECRET}").as_bytes(), "20260102");
    for part in ["us-east-1", "sts", "aws4_request"] {
        key = hmac(&key, part);
    }
    hex(&hmac(&key, &to_sign))
}

#[test]
fn token_is_a_presigned_get_caller_identity_url() {
    let t = token(&creds(), "us-east-1", "my-cluster", at()).unwrap();
    let b64 = t.token.strip_prefix(TOKEN_PREFIX).unwrap();
    assert!(
        !b64.contains('=') && !b64.contains('+') && !b64.contains('/'),
        "base64url without padding"
    );
    let url = String::from_utf8(URL_SAFE_NO_PAD.decode(b64).unwrap()).unwrap();
    assert!(url.starts_with(
        "https://sts.us-east-1.amazonaws.com/?Action=GetCallerIdentity&Version=2011-06-15&"
    ));
    let q = query(&url);
    assert_eq!(q["X-Amz-Algorithm"], "AWS4-HMAC-SHA256");
    assert_eq!(
        q["X-Amz-Credential"],
        "AKIDEXAMPLE/20260102/us-east-1/sts/aws4_request"
    );
    assert_eq!(q["X-Amz-Date"], "20260102T030405Z");
    assert_eq!(q["X-Amz-Expires"], "60");
    assert_eq!(q["X-Amz-SignedHeaders"], "host;x-k8s-aws-id");
    assert_eq!(q["X-Amz-Security-Token"], "session/token+with=reserved");
    assert_eq!(q["X-Amz-Signature"], expected_signature(&q, "my-cluster"));
}

#[test]
fn token_is_deterministic_and_bound_to_the_cluster() {
    let a = token(&creds(), "us-east-1", "my-cluster", at()).unwrap();
    let b = token(&creds(), "us-east-1", "my-cluster", at()).unwrap();
    let other = token(&creds(), "us-east-1", "other", at()).unwrap();
    assert_eq!(a, b);
    assert_ne!(a.token, other.token);
    assert!(
        !format!("{a:?}").contains(TOKEN_PREFIX),
        "Debug redacts the token"
    );
    assert!(!a.needs_refresh(at() + Duration::from_secs(599)));
    assert!(a.needs_refresh(at() + REFRESH_AFTER));
}
