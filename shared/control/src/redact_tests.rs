use serde_json::json;

use super::*;

/// The error the API server returns when a fail-closed webhook call fails.
const API_SERVER_ERROR: &str = r#"Internal error occurred: failed calling webhook "validate.kerf.sh": failed to call webhook: Post "https://abc123.lambda-url.us-east-1.on.aws/s3cretPathSegment/validate?timeout=10s": context deadline exceeded"#;

#[test]
fn the_webhook_url_loses_its_secret_and_keeps_its_host() {
    let out = scrub(API_SERVER_ERROR);
    assert!(!out.contains("s3cretPathSegment"), "{out}");
    assert!(!out.contains("timeout=10s"), "{out}");
    assert!(
        out.contains(r#"Post "https://abc123.lambda-url.us-east-1.on.aws/<redacted>": context deadline exceeded"#),
        "{out}"
    );
}

#[test]
fn text_without_a_url_path_is_borrowed_unchanged() {
    for t in [
        "no url here",
        "https://host.example",
        "see https://host.example:443 now",
        "a :// with no scheme /secret",
        "aws:///us-east-1a/i-0123456789abcdef0",
    ] {
        assert!(matches!(scrub(t), Cow::Borrowed(s) if s == t), "{t}");
    }
}

#[test]
fn every_url_in_a_text_is_scrubbed() {
    let t = "first http://a/x1 then 'https://b:8443/x2?y=1' and <wss://c/x3>";
    assert_eq!(
        scrub(t),
        "first http://a/<redacted> then 'https://b:8443/<redacted>' and <wss://c/<redacted>>"
    );
}

#[test]
fn strings_nested_in_json_are_scrubbed() {
    let mut v = json!({"count": 1, "pods": [{"pod": "ns/p", "reason": API_SERVER_ERROR}],
        "https://k/x": "kept key"});
    scrub_value(&mut v);
    let text = v.to_string();
    assert!(!text.contains("s3cretPathSegment"), "{text}");
    assert_eq!(v["count"], 1);
    assert_eq!(v["pods"][0]["pod"], "ns/p");
    assert_eq!(v["https://k/x"], "kept key");
}
