//! Karpenter's label restrictions (CEL rules in the generated CRDs) enforced by the sim with
//! the real 422 Invalid shape, through a real kube::Client.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

mod common;

use common::*;
use kerf_api::v1::{NodeClaim, NodePool};
use serde_json::json;

#[tokio::test]
async fn restricted_labels_are_rejected_on_nodepools() {
    let (_sim, client) = start().await;
    let pools = dynamic::<NodePool>(&client);
    let mut doc = nodepool("restricted");
    doc["spec"]["template"]["spec"]["requirements"] = json!([{"key": "karpenter.sh/nodepool", "operator": "In", "values": ["x"]},
               {"key": "karpenter.k8s.aws/mine", "operator": "Exists"}]);
    doc["spec"]["template"]["metadata"] = json!({"labels": {"karpenter.k8s.aws/custom": "x"}});
    let e = status(create_dynamic(&pools, doc).await.unwrap_err());
    assert_eq!((e.code, e.reason.as_str()), (422, "Invalid"));
    let causes = e.details.unwrap().causes;
    let messages: Vec<(&str, &str)> = causes
        .iter()
        .map(|c| (c.field.as_str(), c.message.as_str()))
        .collect();
    let key = "spec.template.spec.requirements";
    for expected in [
        (
            format!("{key}[0].key"),
            "Invalid value: \"string\": label \"karpenter.sh/nodepool\" is restricted",
        ),
        (
            format!("{key}[1].key"),
            "Invalid value: \"string\": label domain \"karpenter.k8s.aws\" is restricted",
        ),
        (
            "spec.template.metadata.labels".to_string(),
            "Invalid value: \"object\": label domain \"karpenter.k8s.aws\" is restricted",
        ),
    ] {
        assert!(
            messages.contains(&(expected.0.as_str(), expected.1)),
            "{expected:?} not in {messages:?}"
        );
    }

    let mut ok = nodepool("well-known");
    ok["spec"]["template"]["spec"]["requirements"] =
        json!([{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m5"]}]);
    create_dynamic(&pools, ok).await.unwrap();
}

#[tokio::test]
async fn nodeclaims_may_require_their_nodepool() {
    let (_sim, client) = start().await;
    let claims = dynamic::<NodeClaim>(&client);
    let nc = json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "metadata": {"name": "c1"},
        "spec": {"requirements": [{"key": "karpenter.sh/nodepool", "operator": "In", "values": ["default"]}],
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}}});
    create_dynamic(&claims, nc).await.unwrap();
    let bad = json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "metadata": {"name": "c2"},
        "spec": {"requirements": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["h"]}],
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}}});
    let e = status(create_dynamic(&claims, bad).await.unwrap_err());
    assert_eq!(e.code, 422, "{}", e.message);
}
