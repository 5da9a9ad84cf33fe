//! Migration of the seeds' and docs' v1alpha5 / v1alpha1 / v1beta1 manifests to v1.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

mod common;

use common::{documents, fixture};
use kerf_api::migrate_documents;
use kerf_api::v1::{AmiFamily, ConsolidationPolicy, EC2NodeClass, NodePool};
use serde_json::Value;

fn migrate(path: &str) -> (Vec<Value>, Vec<String>) {
    let out = migrate_documents(&fixture(path)).unwrap();
    (documents(&out.yaml), out.warnings)
}

fn pool(doc: &Value) -> NodePool {
    assert_eq!(doc["apiVersion"], "karpenter.sh/v1");
    serde_json::from_value(doc.clone()).unwrap()
}

fn class(doc: &Value) -> EC2NodeClass {
    assert_eq!(doc["apiVersion"], "karpenter.k8s.aws/v1");
    serde_json::from_value(doc.clone()).unwrap()
}

#[test]
fn seed000_consolidation_and_expiry() {
    let (docs, warnings) = migrate("legacy/seed000.yaml");
    assert_eq!(docs.len(), 2);
    let p = pool(&docs[0]);
    assert_eq!(
        p.spec.disruption.consolidation_policy,
        ConsolidationPolicy::WhenEmptyOrUnderutilized
    );
    assert_eq!(p.spec.disruption.consolidate_after, "0s");
    assert_eq!(p.spec.template.spec.expire_after, "336h");
    assert_eq!(p.spec.template.spec.requirements.len(), 6);
    assert_eq!(p.spec.template.spec.node_class_ref.name, "default");
    assert_eq!(p.spec.template.spec.node_class_ref.kind, "EC2NodeClass");
    assert_eq!(
        p.metadata.labels.as_ref().unwrap()["maintainer"],
        "younsung.lee"
    );
    let c = class(&docs[1]);
    assert_eq!(
        c.spec.ami_selector_terms[0].alias.as_deref(),
        Some("al2@latest")
    );
    assert!(c.spec.ami_family.is_none());
    assert_eq!(
        c.spec.subnet_selector_terms[0].tags["karpenter.sh/discovery"],
        "<YOUR_CLUSTER_NAME_HERE>"
    );
    assert_eq!(
        c.spec.metadata_options.unwrap().http_put_response_hop_limit,
        Some(2)
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("AWSNodeTemplate/default: spec.instanceProfile")),
        "{warnings:?}"
    );
}

#[test]
fn seed002_inline_provider_becomes_a_node_class() {
    let (docs, warnings) = migrate("legacy/seed002.yaml");
    assert_eq!(docs.len(), 2);
    let p = pool(&docs[0]);
    assert_eq!(
        p.spec.disruption.consolidation_policy,
        ConsolidationPolicy::WhenEmpty
    );
    assert_eq!(p.spec.disruption.consolidate_after, "30s");
    assert_eq!(p.spec.template.spec.expire_after, "30m");
    assert_eq!(p.spec.limits["cpu"].0, "1000");
    let c = class(&docs[1]);
    assert_eq!(c.metadata.name.as_deref(), Some("default"));
    assert_eq!(
        c.spec.subnet_selector_terms[0].tags["kubernetes.io/cluster/my-cluster"],
        "*"
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("spec.provider moved to EC2NodeClass/default"))
    );
}

#[test]
fn seed003_taints_labels_user_data_and_block_devices() {
    let (docs, _) = migrate("legacy/seed003.yaml");
    let p = pool(&docs[0]);
    let t = &p.spec.template;
    assert_eq!(t.metadata.labels["nodeType"], "network-node");
    assert_eq!(t.spec.taints[0].key, "networkNode");
    assert_eq!(t.spec.node_class_ref.name, "enable-ipvs-test");
    assert_eq!(t.spec.expire_after, "Never");
    assert_eq!(p.spec.disruption.consolidate_after, "30s");
    let c = class(&docs[1]);
    assert_eq!(
        c.spec.instance_profile.as_deref(),
        Some("KarpenterNodeInstanceProfile-test-cluster")
    );
    assert!(c.spec.user_data.as_deref().unwrap().contains("ipvsadm"));
    assert_eq!(
        c.spec.block_device_mappings[0].ebs.as_ref().unwrap().iops,
        Some(3000)
    );
    assert_eq!(c.spec.tags["service"], "network");
    assert_eq!(
        c.spec.security_group_selector_terms[0].tags["aws:eks:cluster-name"],
        "test-cluster"
    );
}

#[test]
fn seed004_v1beta1_pool_and_foreign_kind() {
    let (docs, warnings) = migrate("legacy/seed004.yaml");
    assert_eq!(docs.len(), 2);
    let p = pool(&docs[0]);
    assert_eq!(p.spec.template.spec.expire_after, "Never");
    assert_eq!(
        p.spec.disruption.consolidation_policy,
        ConsolidationPolicy::WhenEmptyOrUnderutilized
    );
    assert_eq!(p.spec.disruption.consolidate_after, "0s");
    assert_eq!(p.spec.limits["cpu"].0, "100");
    assert_eq!(docs[1]["kind"], "AKSNodeClass");
    assert_eq!(docs[1]["spec"]["imageFamily"], "Ubuntu2204");
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("AKSNodeClass/default:") && w.contains("passed through"))
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("NodePool/general-purpose:") && w.contains("nodeClassRef"))
    );
}

#[test]
fn v1beta1_docs_kubelet_moves_to_node_class() {
    let (docs, warnings) = migrate("legacy/docs_v1beta1.yaml");
    assert_eq!(docs.len(), 4);
    let p = pool(&docs[0]);
    assert_eq!(p.spec.template.spec.expire_after, "720h");
    assert_eq!(
        p.spec.template.spec.node_class_ref.group,
        "karpenter.k8s.aws"
    );
    assert_eq!(p.spec.disruption.budgets[0].nodes, "20%");
    assert_eq!(p.spec.template.spec.requirements[2].min_values, Some(2));
    assert_eq!(p.spec.weight, Some(50));
    let c = class(&docs[1]);
    assert_eq!(c.spec.kubelet.as_ref().unwrap().max_pods, Some(110));
    assert_eq!(
        c.spec.ami_selector_terms[0].alias.as_deref(),
        Some("al2@latest")
    );
    let batch = pool(&docs[2]);
    assert_eq!(
        batch.spec.disruption.consolidation_policy,
        ConsolidationPolicy::WhenEmpty
    );
    assert_eq!(batch.spec.disruption.consolidate_after, "30s");
    assert_eq!(batch.spec.template.spec.expire_after, "Never");
    let custom = class(&docs[3]);
    assert_eq!(custom.spec.ami_family, Some(AmiFamily::Bottlerocket));
    assert_eq!(
        custom.spec.ami_selector_terms[0].id.as_deref(),
        Some("ami-0123456789abcdef0")
    );
    assert!(warnings.is_empty(), "{warnings:?}");
}

#[test]
fn v1_documents_pass_through() {
    let input = fixture("v1/seed001_getting_started.yaml");
    let out = migrate_documents(&input).unwrap();
    assert!(out.warnings.is_empty());
    assert_eq!(documents(&out.yaml), documents(&input));
}

#[test]
fn comma_separated_ids_and_unsupported_fields() {
    let input = r#"
apiVersion: karpenter.sh/v1alpha5
kind: Provisioner
metadata: {name: p}
spec:
  providerRef: {name: t}
  kubeletConfiguration:
    containerRuntime: dockerd
    maxPods: 58
  requirements:
    - {key: kubernetes.io/arch, operator: In, values: [amd64]}
  limits: {resources: {cpu: "64"}}
  weight: 5
---
apiVersion: karpenter.k8s.aws/v1alpha1
kind: AWSNodeTemplate
metadata: {name: t}
spec:
  amiFamily: Ubuntu
  instanceProfile: prof
  launchTemplate: my-lt
  subnetSelector: {aws-ids: "subnet-1, subnet-2"}
  securityGroupSelector: {Name: "a,b", team: x}
"#;
    let out = migrate_documents(input).unwrap();
    let docs = documents(&out.yaml);
    let p = pool(&docs[0]);
    assert_eq!(p.spec.weight, Some(5));
    assert_eq!(p.spec.disruption.consolidate_after, "Never");
    let c = class(&docs[1]);
    let ids: Vec<_> = c
        .spec
        .subnet_selector_terms
        .iter()
        .map(|t| t.id.clone().unwrap())
        .collect();
    assert_eq!(ids, ["subnet-1", "subnet-2"]);
    assert_eq!(c.spec.security_group_selector_terms.len(), 2);
    assert_eq!(c.spec.kubelet.as_ref().unwrap().max_pods, Some(58));
    assert_eq!(c.spec.ami_family, Some(AmiFamily::Custom));
    let w = out.warnings.join("\n");
    assert!(
        w.contains("Provisioner/p: spec.kubeletConfiguration.containerRuntime"),
        "{w}"
    );
    assert!(w.contains("AWSNodeTemplate/t: spec.launchTemplate"), "{w}");
    assert!(
        w.contains("AWSNodeTemplate/t: spec.amiFamily Ubuntu"),
        "{w}"
    );
}

#[test]
fn kubelet_for_a_missing_node_class_is_a_warning() {
    let input = "apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata: {name: p}\nspec:\n  providerRef: {name: elsewhere}\n  kubeletConfiguration: {maxPods: 10}\n";
    let out = migrate_documents(input).unwrap();
    assert!(
        out.warnings
            .iter()
            .any(|w| w.contains("EC2NodeClass/elsewhere, which is not in the input"))
    );
}

#[test]
fn migrated_output_round_trips_through_v1_types() {
    for path in [
        "legacy/seed000.yaml",
        "legacy/seed002.yaml",
        "legacy/seed003.yaml",
        "legacy/docs_v1beta1.yaml",
    ] {
        let (docs, _) = migrate(path);
        for doc in docs {
            match doc["kind"].as_str().unwrap() {
                "NodePool" => drop(pool(&doc)),
                "EC2NodeClass" => drop(class(&doc)),
                k => panic!("{path}: unexpected {k}"),
            }
        }
    }
}

#[test]
fn invalid_yaml_is_an_error() {
    assert!(migrate_documents("a: [unclosed").is_err());
}

#[test]
fn lists_are_migrated_item_by_item() {
    let input = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: karpenter.sh/v1alpha5\n  kind: Provisioner\n  metadata: {name: p}\n  spec: {ttlSecondsAfterEmpty: 30}\n";
    let out = migrate_documents(input).unwrap();
    let docs = documents(&out.yaml);
    assert_eq!(docs.len(), 1);
    assert_eq!(pool(&docs[0]).spec.disruption.consolidate_after, "30s");
}
