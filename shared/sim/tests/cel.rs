//! The CRDs' CEL rules (`x-kubernetes-validations`) enforced by the sim through a real
//! kube::Client: each rule rejects a violating object with the apiserver's 422 shape and
//! accepts a conforming one.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

mod common;

use common::*;
use kerf_api::v1::{EC2NodeClass, NodeClaim, NodePool};
use kube::api::{Patch, PatchParams};
use serde_json::json;

const REQS: &str = "spec.template.spec.requirements";

#[tokio::test]
async fn budget_schedule_needs_a_duration() {
    let (_sim, client) = start().await;
    let pools = dynamic::<NodePool>(&client);
    let mut doc = nodepool("no-duration");
    doc["spec"]["disruption"] = json!({"budgets": [{"nodes": "0", "schedule": "0 9 * * mon-fri"}]});
    let msg = "Invalid value: \"array\": 'schedule' must be set with 'duration'";
    rejected(&pools, doc.clone(), "spec.disruption.budgets", msg).await;
    doc["spec"]["disruption"]["budgets"][0]["duration"] = json!("8h");
    create_dynamic(&pools, doc).await.unwrap();
}

#[tokio::test]
async fn gt_and_lt_need_one_non_negative_integer() {
    let (_sim, client) = start().await;
    let pools = dynamic::<NodePool>(&client);
    let rule = "requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value";
    let req = |op: &str, values: serde_json::Value| {
        let mut doc = nodepool(&format!("gen-{}", op.to_lowercase()));
        doc["spec"]["template"]["spec"]["requirements"] = json!([{"key": "karpenter.k8s.aws/instance-generation", "operator": op, "values": values}]);
        doc
    };
    let not_int = format!(
        "Invalid value: \"array\": strconv.ParseInt: parsing \"abc\": invalid syntax evaluating rule: {rule}"
    );
    rejected(&pools, req("Gt", json!(["abc"])), REQS, &not_int).await;
    let causes = rejected(
        &pools,
        req("Lt", json!(["-4"])),
        REQS,
        &format!("Invalid value: \"array\": {rule}"),
    )
    .await;
    assert!(
        causes
            .iter()
            .any(|c| c.field == format!("{REQS}[0].values[0]")),
        "the pattern of values rejects it too: {causes:?}"
    );
    rejected(
        &pools,
        req("Gte", json!(["1", "2"])),
        REQS,
        &format!("Invalid value: \"array\": {rule}"),
    )
    .await;
    create_dynamic(&pools, req("Gt", json!(["4"])))
        .await
        .unwrap();
    create_dynamic(&pools, req("Lte", json!(["0"])))
        .await
        .unwrap();
}

#[tokio::test]
async fn min_values_cannot_exceed_the_in_values() {
    let (_sim, client) = start().await;
    let pools = dynamic::<NodePool>(&client);
    let mut doc = nodepool("flexible");
    doc["spec"]["template"]["spec"]["requirements"] = json!([{"key": "node.kubernetes.io/instance-type",
        "operator": "In", "values": ["m5.large"], "minValues": 2}]);
    let msg = "Invalid value: \"array\": requirements with 'minValues' must have at least that many values specified in the 'values' field";
    rejected(&pools, doc.clone(), REQS, msg).await;
    doc["spec"]["template"]["spec"]["requirements"][0]["values"] = json!(["m5.large", "m6i.large"]);
    create_dynamic(&pools, doc).await.unwrap();
}

#[tokio::test]
async fn nodeclass_needs_exactly_one_of_role_and_instance_profile() {
    let (_sim, client) = start().await;
    let classes = dynamic::<EC2NodeClass>(&client);
    let msg = "Invalid value: \"object\": must specify exactly one of ['role', 'instanceProfile']";
    let mut both = ec2nodeclass("both");
    both["spec"]["instanceProfile"] = json!("KarpenterProfile");
    rejected(&classes, both, "spec", msg).await;
    let mut neither = ec2nodeclass("neither");
    neither["spec"].as_object_mut().unwrap().remove("role");
    rejected(&classes, neither.clone(), "spec", msg).await;
    neither["spec"]["instanceProfile"] = json!("KarpenterProfile");
    create_dynamic(&classes, neither).await.unwrap();
    create_dynamic(&classes, ec2nodeclass("role-only"))
        .await
        .unwrap();
}

#[tokio::test]
async fn ami_alias_excludes_other_terms_and_fields() {
    let (_sim, client) = start().await;
    let classes = dynamic::<EC2NodeClass>(&client);
    let field = "spec.amiSelectorTerms";
    let mut two = ec2nodeclass("two-terms");
    two["spec"]["amiSelectorTerms"] = json!([{"alias": "al2023@latest"}, {"id": "ami-0abc"}]);
    let msg = "Invalid value: \"array\": 'alias' is mutually exclusive, cannot be set with a combination of other amiSelectorTerms";
    rejected(&classes, two, field, msg).await;
    let mut mixed = ec2nodeclass("alias-and-tags");
    mixed["spec"]["amiSelectorTerms"] = json!([{"alias": "al2023@latest", "tags": {"team": "a"}}]);
    let msg = "Invalid value: \"array\": 'alias' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms";
    rejected(&classes, mixed, field, msg).await;
    let mut ids = ec2nodeclass("ids-without-family");
    ids["spec"]["amiSelectorTerms"] = json!([{"id": "ami-0abc"}, {"tags": {"team": "a"}}]);
    let msg = "Invalid value: \"object\": must specify amiFamily if amiSelectorTerms does not contain an alias";
    rejected(&classes, ids.clone(), "spec", msg).await;
    ids["spec"]["amiFamily"] = json!("AL2023");
    create_dynamic(&classes, ids).await.unwrap();
    create_dynamic(&classes, ec2nodeclass("alias-only"))
        .await
        .unwrap();
}

#[tokio::test]
async fn ami_alias_family_and_windows_version() {
    let (_sim, client) = start().await;
    let classes = dynamic::<EC2NodeClass>(&client);
    let alias = |name: &str, a: &str| {
        let mut doc = ec2nodeclass(name);
        doc["spec"]["amiSelectorTerms"] = json!([{"alias": a}]);
        doc
    };
    let field = "spec.amiSelectorTerms[0].alias";
    let msg = "Invalid value: \"string\": family is not supported, must be one of the following: 'al2', 'al2023', 'bottlerocket', 'windows2019', 'windows2022', 'windows2025'";
    rejected(&classes, alias("ubuntu", "ubuntu@latest"), field, msg).await;
    let msg = "Invalid value: \"string\": windows families may only specify version 'latest'";
    rejected(&classes, alias("win-pinned", "windows2022@v1"), field, msg).await;
    let msg = "Invalid value: \"string\": 'alias' is improperly formatted, must match the format 'family@version'";
    rejected(&classes, alias("no-version", "al2023"), field, msg).await;
    create_dynamic(&classes, alias("win", "windows2022@latest"))
        .await
        .unwrap();
    create_dynamic(&classes, alias("br", "bottlerocket@v1.20.0"))
        .await
        .unwrap();
    let mut family = alias("br-family", "bottlerocket@latest");
    family["spec"]["amiFamily"] = json!("AL2023");
    let msg = "Invalid value: \"object\": if set, amiFamily must be 'Bottlerocket' or 'Custom' when using a Bottlerocket alias";
    rejected(&classes, family.clone(), "spec", msg).await;
    family["spec"]["amiFamily"] = json!("Custom");
    create_dynamic(&classes, family).await.unwrap();
}

#[tokio::test]
async fn static_nodepools_take_no_weight() {
    let (_sim, client) = start().await;
    let pools = dynamic::<NodePool>(&client);
    let mut doc = nodepool("static");
    doc["spec"]["replicas"] = json!(3);
    doc["spec"]["weight"] = json!(10);
    let msg = "Invalid value: \"object\": 'weight' is not supported on static NodePools";
    rejected(&pools, doc.clone(), "spec", msg).await;
    doc["spec"].as_object_mut().unwrap().remove("weight");
    doc["spec"]["limits"] = json!({"cpu": "10"});
    let msg = "Invalid value: \"object\": only 'limits.nodes' is supported on static NodePools";
    rejected(&pools, doc.clone(), "spec", msg).await;
    doc["spec"]["limits"] = json!({"nodes": 5});
    create_dynamic(&pools, doc).await.unwrap();
}

#[tokio::test]
async fn soft_eviction_needs_a_grace_period() {
    let (_sim, client) = start().await;
    let classes = dynamic::<EC2NodeClass>(&client);
    let msg = "evictionSoft OwnerKey does not have a matching evictionSoftGracePeriod";
    let mut doc = ec2nodeclass("soft");
    doc["spec"]["kubelet"] = json!({"evictionSoft": {"memory.available": "5%"}});
    let missing = format!(
        "Invalid value: \"object\": no such key: evictionSoftGracePeriod evaluating rule: {msg}"
    );
    rejected(&classes, doc.clone(), "spec.kubelet", &missing).await;
    doc["spec"]["kubelet"]["evictionSoftGracePeriod"] = json!({"nodefs.available": "1m"});
    rejected(
        &classes,
        doc.clone(),
        "spec.kubelet",
        &format!("Invalid value: \"object\": {msg}"),
    )
    .await;
    doc["spec"]["kubelet"]["evictionSoftGracePeriod"] = json!({"memory.available": "1m"});
    create_dynamic(&classes, doc).await.unwrap();
}

#[tokio::test]
async fn image_gc_high_threshold_must_exceed_low() {
    let (_sim, client) = start().await;
    let classes = dynamic::<EC2NodeClass>(&client);
    let mut doc = ec2nodeclass("gc");
    doc["spec"]["kubelet"] =
        json!({"imageGCHighThresholdPercent": 50, "imageGCLowThresholdPercent": 50});
    let msg = "Invalid value: \"object\": imageGCHighThresholdPercent must be greater than imageGCLowThresholdPercent";
    rejected(&classes, doc.clone(), "spec.kubelet", msg).await;
    doc["spec"]["kubelet"]["imageGCHighThresholdPercent"] = json!(85);
    create_dynamic(&classes, doc).await.unwrap();
}

#[tokio::test]
async fn restricted_tags_are_rejected() {
    let (_sim, client) = start().await;
    let classes = dynamic::<EC2NodeClass>(&client);
    let mut doc = ec2nodeclass("tags");
    doc["spec"]["tags"] = json!({"kubernetes.io/cluster/prod": "owned"});
    let msg =
        "Invalid value: \"object\": tag contains a restricted tag matching kubernetes.io/cluster/";
    rejected(&classes, doc.clone(), "spec.tags", msg).await;
    doc["spec"]["tags"] = json!({"karpenter.sh/nodepool": "x"});
    let msg =
        "Invalid value: \"object\": tag contains a restricted tag matching karpenter.sh/nodepool";
    rejected(&classes, doc.clone(), "spec.tags", msg).await;
    doc["spec"]["tags"] = json!({"team": "a", "kubernetes.io/name": "x"});
    create_dynamic(&classes, doc).await.unwrap();
}

#[tokio::test]
async fn only_one_root_volume() {
    let (_sim, client) = start().await;
    let classes = dynamic::<EC2NodeClass>(&client);
    let bdm = |name: &str, root: bool| json!({"deviceName": name, "rootVolume": root, "ebs": {"volumeSize": "20Gi"}});
    let mut doc = ec2nodeclass("bdm");
    doc["spec"]["blockDeviceMappings"] = json!([bdm("/dev/xvda", true), bdm("/dev/xvdb", true)]);
    let msg = "Invalid value: \"array\": must have only one blockDeviceMappings with rootVolume";
    rejected(&classes, doc.clone(), "spec.blockDeviceMappings", msg).await;
    doc["spec"]["blockDeviceMappings"][1] =
        json!({"deviceName": "/dev/xvdb", "ebs": {"encrypted": true}});
    let msg = "Invalid value: \"object\": snapshotID or volumeSize must be defined";
    rejected(
        &classes,
        doc.clone(),
        "spec.blockDeviceMappings[1].ebs",
        msg,
    )
    .await;
    doc["spec"]["blockDeviceMappings"][1] = bdm("/dev/xvdb", false);
    create_dynamic(&classes, doc).await.unwrap();
}

#[tokio::test]
async fn network_interfaces_need_a_primary_and_one_interface_per_slot() {
    let (_sim, client) = start().await;
    let classes = dynamic::<EC2NodeClass>(&client);
    let nic = |card: u32, device: u32, t: &str| json!({"networkCardIndex": card, "deviceIndex": device, "interfaceType": t});
    let field = "spec.networkInterfaces";
    let primary = "Invalid value: \"array\": networkInterfaces must include a primary interface with interfaceType='interface'";
    let unique = "Invalid value: \"array\": networkInterfaces must not have duplicate networkCardIndex and deviceIndex pairs, and can have at most one efa device per network card";
    let mut doc = ec2nodeclass("efa");
    doc["spec"]["networkInterfaces"] = json!([nic(0, 1, "interface"), nic(1, 0, "efa-only")]);
    rejected(&classes, doc.clone(), field, primary).await;
    doc["spec"]["networkInterfaces"] = json!([nic(0, 0, "efa-only")]);
    rejected(&classes, doc.clone(), field, primary).await;
    let p = nic(0, 0, "interface");
    doc["spec"]["networkInterfaces"] = json!([p, nic(0, 0, "efa-only")]);
    rejected(&classes, doc.clone(), field, unique).await;
    doc["spec"]["networkInterfaces"] = json!([p, nic(1, 0, "efa-only"), nic(1, 1, "efa-only")]);
    rejected(&classes, doc.clone(), field, unique).await;
    let (e0, e1, i1) = (
        nic(0, 1, "efa-only"),
        nic(1, 0, "efa-only"),
        nic(1, 1, "interface"),
    );
    doc["spec"]["networkInterfaces"] = json!([p, e0, e1, i1]);
    create_dynamic(&classes, doc).await.unwrap();
}

#[tokio::test]
async fn connection_tracking_needs_one_timeout_within_bounds() {
    let (_sim, client) = start().await;
    let classes = dynamic::<EC2NodeClass>(&client);
    let field = "spec.connectionTracking";
    let mut doc = ec2nodeclass("tracked");
    doc["spec"]["connectionTracking"] = json!({});
    let msg = "Invalid value: \"object\": at least one of tcpEstablishedTimeout, udpStreamTimeout, or udpTimeout must be set";
    rejected(&classes, doc.clone(), field, msg).await;
    for (key, low, high) in [
        ("tcpEstablishedTimeout", 60, 432000),
        ("udpStreamTimeout", 60, 180),
        ("udpTimeout", 30, 60),
    ] {
        let at = format!("{field}.{key}");
        doc["spec"]["connectionTracking"] = json!({key: low - 1});
        let msg = format!(
            "Invalid value: {}: {at} in body should be greater than or equal to {low}",
            low - 1
        );
        rejected(&classes, doc.clone(), &at, &msg).await;
        doc["spec"]["connectionTracking"] = json!({key: high + 1});
        let msg = format!(
            "Invalid value: {}: {at} in body should be less than or equal to {high}",
            high + 1
        );
        rejected(&classes, doc.clone(), &at, &msg).await;
    }
    doc["spec"]["connectionTracking"] =
        json!({"tcpEstablishedTimeout": 432000, "udpStreamTimeout": 60, "udpTimeout": 30});
    create_dynamic(&classes, doc).await.unwrap();
}

#[tokio::test]
async fn transition_rules_run_on_updates_only() {
    let (_sim, client) = start().await;
    let pp = PatchParams::default();
    let claims = dynamic::<NodeClaim>(&client);
    let nc = json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "metadata": {"name": "c1"},
        "spec": {"requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}],
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}}});
    create_dynamic(&claims, nc).await.unwrap();
    let change = json!({"spec": {"nodeClassRef": {"kind": "OtherClass"}}});
    let e = status(
        claims
            .patch("c1", &pp, &Patch::Merge(change))
            .await
            .unwrap_err(),
    );
    let fields: Vec<(&str, &str)> = e
        .details
        .as_ref()
        .unwrap()
        .causes
        .iter()
        .map(|c| (c.field.as_str(), c.message.as_str()))
        .collect();
    assert!(
        fields.contains(&("spec", "Invalid value: \"object\": spec is immutable")),
        "{fields:?}"
    );
    assert!(
        fields.contains(&(
            "spec.nodeClassRef",
            "Invalid value: \"object\": nodeClassRef.kind is immutable"
        )),
        "{fields:?}"
    );
    let same = json!({"metadata": {"labels": {"a": "b"}}, "spec": {"nodeClassRef": {"kind": "EC2NodeClass"}}});
    claims.patch("c1", &pp, &Patch::Merge(same)).await.unwrap();

    let pools = dynamic::<NodePool>(&client);
    create_dynamic(&pools, nodepool("dynamic")).await.unwrap();
    let to_static = json!({"spec": {"replicas": 2}});
    let e = status(
        pools
            .patch("dynamic", &pp, &Patch::Merge(to_static))
            .await
            .unwrap_err(),
    );
    let cause = &e.details.unwrap().causes[0];
    assert_eq!(
        (cause.field.as_str(), cause.message.as_str()),
        (
            "spec",
            "Invalid value: \"object\": Cannot transition NodePool between static (replicas set) and dynamic (replicas unset) provisioning modes"
        )
    );
    let mut born_static = nodepool("static");
    born_static["spec"]["replicas"] = json!(2);
    create_dynamic(&pools, born_static).await.unwrap();
    let scale = json!({"spec": {"replicas": 4}});
    pools
        .patch("static", &pp, &Patch::Merge(scale))
        .await
        .unwrap();
}

#[tokio::test]
async fn blocking_schema_errors_skip_the_rules() {
    let (_sim, client) = start().await;
    let pools = dynamic::<NodePool>(&client);
    let mut doc = nodepool("blocked");
    doc["spec"]["replicas"] = json!(3);
    doc["spec"]["weight"] = json!(10);
    doc["spec"]["template"]["spec"]["requirements"][0]["operator"] = json!("Sometimes");
    let e = status(create_dynamic(&pools, doc).await.unwrap_err());
    let causes = e.details.unwrap().causes;
    let fields: Vec<&str> = causes.iter().map(|c| c.field.as_str()).collect();
    assert_eq!(
        fields,
        [format!("{REQS}[0].operator").as_str(), "<nil>"],
        "{causes:?}"
    );
    assert_eq!(
        causes[1].message,
        "Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"
    );
    assert!(
        e.message
            .ends_with("correct the existing errors to complete validation]"),
        "{}",
        e.message
    );
}
