//! Migration of the docs-shaped v1alpha5 / v1alpha1 / v1beta1 manifests in
//! tests/fixtures/legacy to v1, field by field (the seed walkthroughs' manifests are in
//! seeds.rs).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

mod common;

use common::{check_v1, documents, fixture, fixture_files};
use kerf_api::migrate_documents;
use kerf_api::v1::{
    AmiFamily, ConsolidationPolicy, DisruptionReason, EC2NodeClass, InstanceStorePolicy, NodePool,
    Operator, TaintEffect,
};
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
    let c = class(&docs[1]);
    assert_eq!(c.spec.role.as_deref(), Some("KarpenterNodeRole-my-cluster"));
    assert!(
        c.spec.ami_family.is_none(),
        "AL2 without terms becomes an alias"
    );
    assert_eq!(
        c.spec
            .metadata_options
            .as_ref()
            .unwrap()
            .http_put_response_hop_limit,
        Some(2),
        "v1beta1 defaulted metadataOptions with hop limit 2"
    );
    assert_eq!(c.spec.tags["team"], "platform");
    let t = &batch.spec.template;
    assert_eq!(t.spec.taints[0].key, "example.com/batch");
    assert_eq!(t.spec.startup_taints[0].key, "example.com/warming");
    assert_eq!(t.metadata.annotations["example.com/queue"], "nightly");
    let budgets = &batch.spec.disruption.budgets;
    assert_eq!(budgets.len(), 2);
    assert_eq!(budgets[0].schedule.as_deref(), Some("0 22 * * *"));
    assert_eq!(budgets[0].duration.as_deref(), Some("8h"));
    assert_eq!(budgets[1].nodes, "2");
    assert_eq!(batch.spec.template.spec.node_class_ref.name, "custom");
    let custom = class(&docs[3]);
    assert_eq!(custom.spec.ami_family, Some(AmiFamily::Bottlerocket));
    let terms = &custom.spec.ami_selector_terms;
    assert_eq!(terms[0].id.as_deref(), Some("ami-0123456789abcdef0"));
    assert_eq!(
        (terms[1].name.as_deref(), terms[1].owner.as_deref()),
        (Some("bottlerocket-aws-k8s-1.29-x86_64-*"), Some("amazon"))
    );
    assert_eq!(terms[2].tags["example.com/golden"], "true");
    assert_eq!(
        custom.spec.instance_profile.as_deref(),
        Some("KarpenterNodeInstanceProfile-my-cluster")
    );
    assert!(
        custom
            .spec
            .user_data
            .as_deref()
            .unwrap()
            .contains("max-pods = 110")
    );
    let ebs = custom.spec.block_device_mappings[0].ebs.as_ref().unwrap();
    assert_eq!(
        (ebs.volume_size.as_deref(), ebs.throughput),
        (Some("100Gi"), Some(250))
    );
    assert_eq!(
        custom.spec.instance_store_policy,
        Some(InstanceStorePolicy::Raid0)
    );
    assert_eq!(custom.spec.detailed_monitoring, Some(true));
    assert_eq!(custom.spec.associate_public_ip_address, Some(false));
    let m = custom.spec.metadata_options.unwrap();
    assert_eq!(m.http_tokens.as_deref(), Some("optional"));
    assert_eq!(
        m.http_put_response_hop_limit,
        Some(2),
        "a partial v1beta1 block was defaulted field by field, the hop limit to 2"
    );
    assert_eq!(m.http_endpoint.as_deref(), Some("enabled"));
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].starts_with(
            "EC2NodeClass/default: spec.amiFamily AL2: Amazon Linux 2 reached end of support"
        ),
        "{warnings:?}"
    );
}

#[test]
fn v1alpha5_docs_provisioners_and_node_templates() {
    let (docs, warnings) = migrate("legacy/docs_v1alpha5.yaml");
    let kinds: Vec<String> = docs
        .iter()
        .map(|d| {
            format!(
                "{}/{}",
                d["kind"].as_str().unwrap(),
                d["metadata"]["name"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "NodePool/inline",
            "EC2NodeClass/inline",
            "NodePool/general",
            "EC2NodeClass/bottlerocket",
            "EC2NodeClass/named-ami"
        ]
    );

    // 1. Inline provider: its own node class; the launch template cannot follow.
    let inline = pool(&docs[0]);
    assert_eq!(inline.spec.template.spec.node_class_ref.name, "inline");
    assert_eq!(
        inline.spec.disruption.consolidation_policy,
        ConsolidationPolicy::WhenEmpty
    );
    assert_eq!(inline.spec.disruption.consolidate_after, "1m");
    let keys: Vec<&str> = inline
        .spec
        .template
        .spec
        .requirements
        .iter()
        .map(|r| r.key.as_str())
        .collect();
    assert_eq!(
        keys,
        [
            "node.kubernetes.io/instance-type",
            "kubernetes.io/os",
            "kubernetes.io/arch",
            "karpenter.sh/capacity-type"
        ],
        "an instance-type requirement keeps the category/generation defaults out"
    );
    let inline_class = class(&docs[1]);
    assert_eq!(
        inline_class.spec.instance_profile.as_deref(),
        Some("KarpenterNodeInstanceProfile-my-cluster")
    );
    assert_eq!(inline_class.spec.tags["environment"], "staging");
    assert_eq!(
        inline_class.spec.subnet_selector_terms[0].tags["karpenter.sh/discovery"],
        "my-cluster"
    );
    assert_eq!(
        inline_class.spec.ami_selector_terms[0].alias.as_deref(),
        Some("al2@latest")
    );

    // 2. Every other Provisioner field.
    let general = pool(&docs[2]);
    let t = &general.spec.template;
    assert_eq!(t.metadata.labels["billing-team"], "my-team");
    assert_eq!(t.metadata.annotations["example.com/owner"], "my-team");
    assert_eq!(t.spec.taints[0].value.as_deref(), Some("yes"));
    assert_eq!(t.spec.startup_taints[0].effect, TaintEffect::NoExecute);
    assert_eq!(t.spec.requirements.len(), 6, "nothing left to default");
    assert_eq!(t.spec.requirements[5].operator, Operator::NotIn);
    assert_eq!(
        t.spec.expire_after, "720h",
        "ttlSecondsUntilExpired 2592000"
    );
    assert_eq!(t.spec.node_class_ref.name, "bottlerocket");
    assert_eq!(general.spec.disruption.consolidate_after, "30s");
    assert_eq!(general.spec.limits["cpu"].0, "1000");
    assert_eq!(general.spec.limits["memory"].0, "1000Gi");
    assert_eq!(general.spec.weight, Some(10));

    // 3. Its kubelet settings moved to the node class it references.
    let br = class(&docs[3]);
    let k = br.spec.kubelet.as_ref().unwrap();
    assert_eq!((k.max_pods, k.pods_per_core), (Some(20), Some(2)));
    assert_eq!(k.cluster_dns, ["10.0.1.100"]);
    assert_eq!(k.system_reserved["ephemeral-storage"], "1Gi");
    assert_eq!(k.eviction_soft_grace_period["nodefs.available"], "1m30s");
    assert_eq!(k.eviction_max_pod_grace_period, Some(60));
    assert_eq!(k.cpu_cfs_quota, Some(true));
    assert_eq!(br.spec.ami_family, Some(AmiFamily::Bottlerocket));
    let ids: Vec<_> = br
        .spec
        .ami_selector_terms
        .iter()
        .map(|t| t.id.clone().unwrap())
        .collect();
    assert_eq!(ids, ["ami-0a1b2c3d4e5f60718", "ami-0f1e2d3c4b5a69788"]);
    assert_eq!(
        br.spec.subnet_selector_terms[0].id.as_deref(),
        Some("subnet-0aa11bb22cc33dd44")
    );
    assert!(
        br.spec
            .user_data
            .as_deref()
            .unwrap()
            .starts_with("[settings.kubernetes]")
    );
    assert_eq!(br.spec.block_device_mappings.len(), 2);
    assert_eq!(
        br.spec.block_device_mappings[1]
            .ebs
            .as_ref()
            .unwrap()
            .volume_size
            .as_deref(),
        Some("40Gi")
    );
    assert_eq!(br.spec.detailed_monitoring, Some(true));
    assert_eq!(
        br.spec
            .metadata_options
            .as_ref()
            .unwrap()
            .http_put_response_hop_limit,
        Some(2)
    );

    // 4. AMIs by name and owner; only the hop limit of IMDS was set.
    let named = class(&docs[4]);
    assert_eq!(named.spec.ami_family, Some(AmiFamily::Al2));
    let term = &named.spec.ami_selector_terms[0];
    assert_eq!(
        (term.name.as_deref(), term.owner.as_deref()),
        (Some("amazon-eks-node-1.27-*"), Some("amazon"))
    );
    let sg_ids: Vec<_> = named
        .spec
        .security_group_selector_terms
        .iter()
        .map(|t| t.id.clone().unwrap())
        .collect();
    assert_eq!(sg_ids, ["sg-0123abcd4567ef890", "sg-0fedcba987654321a"]);
    let m = named.spec.metadata_options.as_ref().unwrap();
    assert_eq!(m.http_put_response_hop_limit, Some(3));
    assert_eq!(m.http_tokens.as_deref(), Some("required"));

    let expected = [
        "Provisioner/inline: spec.provider moved to EC2NodeClass/inline",
        "Provisioner/inline: spec.provider.amiFamily AL2: Amazon Linux 2 reached end of support",
        "Provisioner/inline: spec.provider.launchTemplate (kerf-workers) has no v1 equivalent",
        "Provisioner/inline: spec.requirements: added what the v1alpha5 webhook defaulted and v1 does not: kubernetes.io/os In linux; kubernetes.io/arch In amd64; karpenter.sh/capacity-type In on-demand",
        "Provisioner/general: spec.kubeletConfiguration.containerRuntime (containerd) has no v1 equivalent",
        "AWSNodeTemplate/named-ami: spec.amiFamily AL2: Amazon Linux 2 reached end of support",
        "AWSNodeTemplate/named-ami: spec.metadataOptions.httpTokens was unset",
    ];
    assert_eq!(warnings.len(), expected.len(), "{warnings:#?}");
    for (w, e) in warnings.iter().zip(expected) {
        assert!(w.starts_with(e), "{w}\n  expected {e}");
    }
}

#[test]
fn disruption_reasons_survive_v1beta1_budgets() {
    let input = "apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata: {name: p}\nspec:\n  template:\n    spec:\n      requirements: []\n      nodeClassRef: {apiVersion: karpenter.k8s.aws/v1beta1, kind: EC2NodeClass, name: c}\n  disruption:\n    budgets:\n      - {nodes: \"1\", reasons: [Drifted]}\n";
    let out = migrate_documents(input).unwrap();
    let p = pool(&documents(&out.yaml)[0]);
    assert_eq!(
        p.spec.disruption.budgets[0].reasons,
        [DisruptionReason::Drifted]
    );
}

#[test]
fn v1_documents_pass_through() {
    let input = fixture("v1/docs_nodepool_full.yaml");
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
    let files = fixture_files("legacy");
    assert_eq!(files.len(), 2);
    for (name, text) in files {
        let out = migrate_documents(&text).unwrap();
        for doc in documents(&out.yaml) {
            match doc["kind"].as_str().unwrap() {
                "NodePool" | "EC2NodeClass" => drop(check_v1(&doc)),
                k => panic!("{name}: unexpected {k}"),
            }
        }
    }
}

#[test]
fn other_clouds_node_classes_are_rejected_naming_the_kind() {
    for (api_version, kind) in [
        ("karpenter.azure.com/v1beta1", "AKSNodeClass"),
        ("karpenter.k8s.gcp/v1alpha1", "GCENodeClass"),
    ] {
        let input =
            format!("apiVersion: {api_version}\nkind: {kind}\nmetadata: {{name: n}}\nspec: {{}}\n");
        let err = migrate_documents(&input).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!("{kind}/n: {api_version} {kind} is the node class of another cloud's Karpenter provider")),
            "{err}"
        );
    }
}

#[test]
fn non_karpenter_kinds_pass_through_with_a_warning() {
    let input = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n";
    let out = migrate_documents(input).unwrap();
    assert_eq!(documents(&out.yaml), documents(input));
    assert_eq!(
        out.warnings,
        [
            "ConfigMap/c: v1 ConfigMap is not a Karpenter API Kerf migrates; passed through unchanged"
        ]
    );
}

#[test]
fn a_v1beta1_pool_of_another_node_class_kind_is_a_warning() {
    let input = "apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata: {name: p}\nspec:\n  template:\n    spec:\n      requirements: []\n      nodeClassRef: {apiVersion: karpenter.azure.com/v1alpha2, kind: AKSNodeClass, name: default}\n";
    let out = migrate_documents(input).unwrap();
    assert_eq!(
        out.warnings,
        [
            "NodePool/p: spec.template.spec.nodeClassRef points at AKSNodeClass/default, not an EC2NodeClass; Kerf launches EC2 instances only"
        ]
    );
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
