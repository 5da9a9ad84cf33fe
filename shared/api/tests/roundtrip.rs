//! Every v1 manifest from the docs and the seed walkthroughs parses, keeps every field through
//! a round trip, and gets Karpenter's defaults.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

mod common;

use common::{documents, fixture, lost};
use kerf_api::v1::{ConsolidationPolicy, EC2NodeClass, NodeClaim, NodePool, Operator, TaintEffect};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

const V1_FIXTURES: [&str; 5] = [
    "v1/seed001_getting_started.yaml",
    "v1/seed001_spot_bottlerocket.yaml",
    "v1/docs_nodepool_full.yaml",
    "v1/docs_ec2nodeclass_full.yaml",
    "v1/docs_nodeclaim.yaml",
];

fn roundtrip<T: DeserializeOwned + Serialize + PartialEq + std::fmt::Debug>(doc: &Value) -> Value {
    let parsed: T = serde_json::from_value(doc.clone()).unwrap();
    let out = serde_json::to_value(&parsed).unwrap();
    let missing = lost(doc, &out, "");
    assert!(missing.is_empty(), "lost in round trip: {missing:#?}");
    let again: T = serde_json::from_value(out.clone()).unwrap();
    assert_eq!(again, parsed, "second round trip differs");
    assert_eq!(serde_json::to_value(&again).unwrap(), out);
    out
}

fn check_doc(doc: &Value) -> Value {
    match doc["kind"].as_str().unwrap() {
        "NodePool" => roundtrip::<NodePool>(doc),
        "NodeClaim" => roundtrip::<NodeClaim>(doc),
        "EC2NodeClass" => roundtrip::<EC2NodeClass>(doc),
        other => panic!("unexpected kind {other}"),
    }
}

#[test]
fn every_v1_fixture_round_trips_without_losing_a_field() {
    let mut count = 0;
    for path in V1_FIXTURES {
        for doc in documents(&fixture(path)) {
            check_doc(&doc);
            count += 1;
        }
    }
    assert_eq!(count, 9);
}

fn parse<T: DeserializeOwned>(path: &str, n: usize) -> T {
    serde_json::from_value(documents(&fixture(path))[n].clone()).unwrap()
}

#[test]
fn nodepool_defaults_are_karpenters() {
    let pool: NodePool = serde_yaml::from_str(
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: p}\nspec:\n  template:\n    spec:\n      requirements: []\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n",
    )
    .unwrap();
    let d = &pool.spec.disruption;
    assert_eq!(
        d.consolidation_policy,
        ConsolidationPolicy::WhenEmptyOrUnderutilized
    );
    assert_eq!(d.consolidate_after, "0s");
    assert_eq!(d.budgets.len(), 1);
    assert_eq!(d.budgets[0].nodes, "10%");
    assert_eq!(pool.spec.template.spec.expire_after, "720h");
    assert!(pool.spec.weight.is_none() && pool.spec.limits.is_empty());
    let json = serde_json::to_value(&pool).unwrap();
    assert!(
        json["spec"].get("limits").is_none(),
        "empty limits must not be emitted"
    );
    assert!(json["spec"]["template"].get("metadata").is_none());
}

#[test]
fn ec2nodeclass_defaults_metadata_options() {
    let class: EC2NodeClass = parse("v1/seed001_getting_started.yaml", 1);
    let m = class.spec.metadata_options.unwrap();
    assert_eq!(m.http_endpoint.as_deref(), Some("enabled"));
    assert_eq!(m.http_protocol_ipv6.as_deref(), Some("disabled"));
    assert_eq!(m.http_put_response_hop_limit, Some(1));
    assert_eq!(m.http_tokens.as_deref(), Some("required"));
    assert_eq!(
        class.spec.role.as_deref(),
        Some("KarpenterNodeRole-my-cluster")
    );
    assert_eq!(
        class.spec.ami_selector_terms[0].alias.as_deref(),
        Some("al2023@v20250228")
    );
}

#[test]
fn full_nodepool_fields_parse() {
    let pool: NodePool = parse("v1/docs_nodepool_full.yaml", 0);
    let t = &pool.spec.template;
    assert_eq!(t.metadata.labels["billing-team"], "my-team");
    assert_eq!(t.spec.taints[0].effect, TaintEffect::NoSchedule);
    assert_eq!(t.spec.startup_taints[0].key, "example.com/another-taint");
    assert_eq!(t.spec.termination_grace_period.as_deref(), Some("48h"));
    assert_eq!(t.spec.requirements[0].min_values, Some(2));
    assert_eq!(t.spec.requirements[4].operator, Operator::Gt);
    assert_eq!(
        pool.spec.disruption.budgets[2].schedule.as_deref(),
        Some("@daily")
    );
    assert_eq!(pool.spec.weight, Some(10));
    assert_eq!(pool.spec.limits["memory"].0, "1000Gi");
    assert_eq!(pool.status.unwrap().nodes, Some(2));
    let static_pool: NodePool = parse("v1/docs_nodepool_full.yaml", 1);
    assert_eq!(static_pool.spec.replicas, Some(3));
    assert_eq!(static_pool.spec.disruption.consolidate_after, "Never");
}

#[test]
fn nodeclaim_status_fields_parse() {
    let claim: NodeClaim = parse("v1/docs_nodeclaim.yaml", 0);
    let status = claim.status.unwrap();
    assert_eq!(
        status.provider_id.as_deref(),
        Some("aws:///us-west-2b/i-0ef3a6e7a1f2b3c4d")
    );
    assert_eq!(status.image_id.as_deref(), Some("ami-08946d4d49fc3f27b"));
    assert_eq!(status.capacity["cpu"].0, "2");
    assert!(kerf_api::v1::common::is_condition_true(
        &status.conditions,
        "Ready"
    ));
    assert_eq!(claim.spec.resources.requests["cpu"].0, "1150m");
}

#[test]
fn full_ec2nodeclass_fields_parse() {
    let class: EC2NodeClass = parse("v1/docs_ec2nodeclass_full.yaml", 0);
    let k = class.spec.kubelet.as_ref().unwrap();
    assert_eq!(k.max_pods, Some(20));
    assert_eq!(k.eviction_soft_grace_period["nodefs.available"], "1m30s");
    assert_eq!(k.cluster_dns, ["10.0.1.100"]);
    assert_eq!(
        class.spec.block_device_mappings[0]
            .ebs
            .as_ref()
            .unwrap()
            .volume_size
            .as_deref(),
        Some("100Gi")
    );
    assert!(class.spec.block_device_mappings[0].root_volume);
    assert_eq!(class.spec.ip_prefix_count, Some(2));
    let status = class.status.unwrap();
    assert_eq!(status.subnets[0].zone_id.as_deref(), Some("use2-az2"));
    assert!(status.amis[1].deprecated);
}

#[test]
fn unknown_fields_are_not_emitted_as_null() {
    let class: EC2NodeClass = parse("v1/docs_ec2nodeclass_full.yaml", 1);
    let text = serde_json::to_string(&class).unwrap();
    assert!(!text.contains("null"), "{text}");
}
