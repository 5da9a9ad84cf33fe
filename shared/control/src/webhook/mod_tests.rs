//! Tests of AdmissionReview parsing and answers.

use super::*;

#[test]
fn parses_a_review_and_answers_with_a_patch() {
    let review_in = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"uid": "u-1", "kind": {"group": "", "version": "v1", "kind": "Node"},
            "resource": {"group": "", "version": "v1", "resource": "nodes"},
            "operation": "CREATE", "name": "n1", "object": {"metadata": {"name": "n1"}}, "dryRun": false}});
    let req = parse(&review_in).unwrap();
    assert_eq!(
        (
            req.resource.as_str(),
            req.operation.as_str(),
            req.uid.as_str()
        ),
        ("nodes", "CREATE", "u-1")
    );
    assert!(fails_open(&req));
    let patch = json!([{"op": "add", "path": "/metadata/labels", "value": {"a": "b"}}]);
    let out = review(
        "u-1",
        &Response {
            allowed: true,
            patch: Some(patch.clone()),
            ..Response::default()
        },
    );
    assert_eq!(out["response"]["uid"], "u-1");
    assert_eq!(out["response"]["patchType"], "JSONPatch");
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(out["response"]["patch"].as_str().unwrap())
        .unwrap();
    assert_eq!(serde_json::from_slice::<Value>(&decoded).unwrap(), patch);
}

#[test]
fn denials_carry_the_message_and_malformed_reviews_are_errors() {
    let out = review("u", &Response::deny("NodePool \"x\" is invalid: spec: bad"));
    assert_eq!(out["response"]["allowed"], false);
    assert_eq!(out["response"]["status"]["code"], 403);
    assert_eq!(
        out["response"]["status"]["message"],
        "NodePool \"x\" is invalid: spec: bad"
    );
    assert!(parse(&json!({"kind": "Pod"})).is_err());
    assert!(parse(&json!({"kind": "AdmissionReview"})).is_err());
    assert!(parse(&json!({"kind": "AdmissionReview", "request": {"uid": ""}})).is_err());
    let crd = parse(&json!({"kind": "AdmissionReview", "request": {"uid": "u",
        "kind": {"group": "karpenter.sh", "kind": "NodePool"}}}))
    .unwrap();
    assert!(!fails_open(&crd));
}
