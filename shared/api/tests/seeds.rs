//! The manifests `scripts/extract-seed-manifests.py` extracts from the seed walkthroughs into
//! tests/fixtures/seeds: every file is exercised (v1 kinds round-trip with Karpenter's defaults,
//! legacy kinds migrate with exactly the expected warnings, other clouds' node classes are
//! rejected naming their kind), and the committed files are what the script generates today.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{check_v1, documents, fixture, fixture_files};
use kerf_api::migrate_documents;
use kerf_api::v1::{ConsolidationPolicy, EC2NodeClass, NodePool, Operator, TaintEffect};
use serde_json::Value;

/// Each legacy seed manifest, migrated on its own, and the start of every warning it gives.
const EXPECTED_WARNINGS: &[(&str, &[&str])] = &[
    ("seed000_00_provisioner.yaml", &[]),
    (
        "seed000_01_awsnodetemplate.yaml",
        &[
            "AWSNodeTemplate/default: spec.amiFamily AL2: Amazon Linux 2 reached end of support",
            "AWSNodeTemplate/default: spec.instanceProfile is unset",
        ],
    ),
    (
        "seed002_00_provisioner.yaml",
        &[
            "Provisioner/default: spec.provider moved to EC2NodeClass/default",
            "Provisioner/default: spec.provider.amiFamily AL2: Amazon Linux 2 reached end of support",
            "Provisioner/default: spec.provider.instanceProfile is unset",
            "Provisioner/default: spec.requirements: added what the v1alpha5 webhook defaulted and v1 does not: kubernetes.io/os In linux; karpenter.k8s.aws/instance-category In c,m,r; karpenter.k8s.aws/instance-generation Gt 2",
        ],
    ),
    (
        "seed002_01_provisioner.yaml",
        &[
            "Provisioner/default: spec.provider moved to EC2NodeClass/default",
            "Provisioner/default: spec.provider.amiFamily AL2: Amazon Linux 2 reached end of support",
            "Provisioner/default: spec.provider.instanceProfile is unset",
            "Provisioner/default: spec.requirements: added what the v1alpha5 webhook defaulted and v1 does not: kubernetes.io/os In linux; karpenter.k8s.aws/instance-category In c,m,r; karpenter.k8s.aws/instance-generation Gt 2",
        ],
    ),
    (
        "seed003_00_provisioner.yaml",
        &[
            "Provisioner/test-network: spec.requirements: added what the v1alpha5 webhook defaulted and v1 does not: kubernetes.io/os In linux; kubernetes.io/arch In amd64",
        ],
    ),
    (
        "seed003_01_awsnodetemplate.yaml",
        &[
            "AWSNodeTemplate/enable-ipvs-test: spec.amiFamily AL2: Amazon Linux 2 reached end of support",
        ],
    ),
    (
        "seed004_00_nodepool.yaml",
        &["NodePool/general-purpose: spec.template.spec.nodeClassRef without apiVersion/kind"],
    ),
];

const LEGACY_API_VERSIONS: [&str; 4] = [
    "karpenter.sh/v1alpha5",
    "karpenter.k8s.aws/v1alpha1",
    "karpenter.sh/v1beta1",
    "karpenter.k8s.aws/v1beta1",
];

fn seed(name: &str) -> String {
    fixture(&format!("seeds/{name}"))
}

/// Several seed files as one stream, the way `kerf migrate a.yaml b.yaml` reads them.
fn seeds(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| seed(n))
        .collect::<Vec<_>>()
        .join("\n---\n")
}

fn migrate(text: &str) -> (Vec<Value>, Vec<String>) {
    let out = migrate_documents(text).unwrap();
    (documents(&out.yaml), out.warnings)
}

fn only_doc(name: &str) -> Value {
    let docs = documents(&seed(name));
    assert_eq!(docs.len(), 1, "{name}: one document per file");
    docs.into_iter().next().unwrap()
}

fn pool(doc: &Value) -> NodePool {
    assert_eq!(doc["apiVersion"], "karpenter.sh/v1");
    serde_json::from_value(doc.clone()).unwrap()
}

fn class(doc: &Value) -> EC2NodeClass {
    assert_eq!(doc["apiVersion"], "karpenter.k8s.aws/v1");
    serde_json::from_value(doc.clone()).unwrap()
}

fn assert_warnings(name: &str, warnings: &[String], expected: &[&str]) {
    let matches = warnings.len() == expected.len()
        && warnings.iter().zip(expected).all(|(w, e)| w.starts_with(e));
    assert!(
        matches,
        "{name}: warnings {warnings:#?}, expected {expected:#?}"
    );
}

#[test]
fn every_generated_fixture_is_exercised() {
    let files = fixture_files("seeds");
    let (mut v1, mut legacy, mut foreign) = (0, 0, 0);
    for (name, text) in &files {
        assert!(
            text.lines()
                .take(3)
                .any(|l| l.contains("python3 scripts/extract-seed-manifests.py")),
            "{name}: no generated-by header"
        );
        let doc = only_doc(name);
        let api_version = doc["apiVersion"].as_str().unwrap();
        let kind = doc["kind"].as_str().unwrap();
        if matches!(api_version, "karpenter.sh/v1" | "karpenter.k8s.aws/v1") {
            check_v1(&doc);
            v1 += 1;
        } else if LEGACY_API_VERSIONS.contains(&api_version) {
            let (_, expected) = EXPECTED_WARNINGS
                .iter()
                .find(|(file, _)| file == name)
                .unwrap_or_else(|| panic!("{name}: add its expected warnings"));
            let out = migrate_documents(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_warnings(name, &out.warnings, expected);
            let migrated = documents(&out.yaml);
            assert!(!migrated.is_empty(), "{name}");
            for doc in &migrated {
                check_v1(doc);
            }
            legacy += 1;
        } else {
            let err = migrate_documents(text).unwrap_err().to_string();
            let name_in_doc = doc["metadata"]["name"].as_str().unwrap();
            assert!(
                err.starts_with(&format!("{kind}/{name_in_doc}: {api_version} {kind} "))
                    && err.contains("Kerf launches EC2 instances only"),
                "{name}: {err}"
            );
            foreign += 1;
        }
    }
    assert_eq!(
        (v1, legacy, foreign),
        (6, 7, 2),
        "{:?}",
        files.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    assert_eq!(
        EXPECTED_WARNINGS.len(),
        legacy,
        "an expectation names no legacy file"
    );
}

#[test]
fn seed000_consolidation_expiry_and_node_template() {
    let (docs, warnings) = migrate(&seeds(&[
        "seed000_00_provisioner.yaml",
        "seed000_01_awsnodetemplate.yaml",
    ]));
    assert_eq!(docs.len(), 2);
    let p = pool(&docs[0]);
    assert_eq!(p.metadata.name.as_deref(), Some("default"));
    let d = &p.spec.disruption;
    assert_eq!(
        d.consolidation_policy,
        ConsolidationPolicy::WhenEmptyOrUnderutilized
    );
    assert_eq!(d.consolidate_after, "0s");
    assert_eq!(d.budgets.len(), 1);
    assert_eq!(d.budgets[0].nodes, "10%");
    let t = &p.spec.template.spec;
    assert_eq!(t.expire_after, "336h", "ttlSecondsUntilExpired 1209600");
    assert_eq!(t.requirements.len(), 6, "every defaulted key was given");
    assert_eq!(t.requirements[1].key, "karpenter.k8s.aws/instance-family");
    assert_eq!(t.requirements[2].values.len(), 6);
    assert_eq!(t.node_class_ref.name, "default");
    assert_eq!(t.node_class_ref.kind, "EC2NodeClass");
    assert_eq!(t.node_class_ref.group, "karpenter.k8s.aws");
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
        c.spec.security_group_selector_terms[0].tags["karpenter.sh/discovery"],
        "<YOUR_CLUSTER_NAME_HERE>"
    );
    let m = c.spec.metadata_options.unwrap();
    assert_eq!(m.http_put_response_hop_limit, Some(2), "the legacy default");
    assert_eq!(m.http_tokens.as_deref(), Some("required"));
    assert_eq!(c.metadata.labels.as_ref().unwrap()["version"], "v0.26.1");
    assert_warnings(
        "seed000",
        &warnings,
        &[
            "AWSNodeTemplate/default: spec.amiFamily AL2: Amazon Linux 2 reached end of support",
            "AWSNodeTemplate/default: spec.instanceProfile is unset",
        ],
    );
}

#[test]
fn seed001_v1_manifests_keep_their_placeholders() {
    let ec2 = class(&only_doc("seed001_01_ec2nodeclass.yaml"));
    assert_eq!(
        ec2.spec.role.as_deref(),
        Some("KarpenterNodeRole-${CLUSTER_NAME}")
    );
    assert_eq!(
        ec2.spec.ami_selector_terms[0].alias.as_deref(),
        Some("al2023@${ALIAS_VERSION}")
    );
    assert_eq!(
        ec2.spec.subnet_selector_terms[0].tags["karpenter.sh/discovery"],
        "${CLUSTER_NAME}"
    );
    // What the walkthrough's `envsubst` makes of it (it echoes ALIAS_VERSION=v20250228).
    let text = seed("seed001_01_ec2nodeclass.yaml")
        .replace("${CLUSTER_NAME}", "gasida-karpenter-demo")
        .replace("${ALIAS_VERSION}", "v20250228");
    let ec2 = class(&documents(&text)[0]);
    assert_eq!(
        ec2.spec.role.as_deref(),
        Some("KarpenterNodeRole-gasida-karpenter-demo")
    );
    assert_eq!(
        ec2.spec.ami_selector_terms[0].alias.as_deref(),
        Some("al2023@v20250228")
    );
    let m = ec2.spec.metadata_options.unwrap();
    assert_eq!(
        (m.http_put_response_hop_limit, m.http_tokens.as_deref()),
        (Some(1), Some("required"))
    );

    let pools: Vec<NodePool> = [
        "seed001_00_nodepool.yaml",
        "seed001_02_nodepool.yaml",
        "seed001_04_nodepool.yaml",
    ]
    .iter()
    .map(|n| pool(&only_doc(n)))
    .collect();
    let lifetimes: Vec<&str> = pools
        .iter()
        .map(|p| p.spec.template.spec.expire_after.as_str())
        .collect();
    assert_eq!(lifetimes, ["720h", "1h", "1h"]);
    let capacity: Vec<&str> = pools
        .iter()
        .map(|p| {
            let r = p.spec.template.spec.requirements.iter();
            r.clone()
                .find(|r| r.key == "karpenter.sh/capacity-type")
                .unwrap()
                .values[0]
                .as_str()
        })
        .collect();
    assert_eq!(capacity, ["on-demand", "on-demand", "spot"]);
    assert_eq!(pools[0].spec.limits["cpu"].0, "1000");
    assert_eq!(pools[2].spec.limits["memory"].0, "1000Gi");
    assert!(
        pools
            .iter()
            .all(|p| p.spec.disruption.consolidate_after == "1m")
    );
    assert_eq!(
        pools[0].spec.template.spec.requirements[4].operator,
        Operator::Gt
    );
    assert_eq!(
        pools[1].spec.template.spec.requirements[3].operator,
        Operator::NotIn
    );
    let bottlerocket = class(&only_doc("seed001_05_ec2nodeclass.yaml"));
    assert_eq!(
        bottlerocket.spec.ami_selector_terms[0].alias.as_deref(),
        Some("bottlerocket@latest")
    );
}

#[test]
fn seed001_v1_manifests_pass_through_migration() {
    let text = seeds(&["seed001_00_nodepool.yaml", "seed001_01_ec2nodeclass.yaml"]);
    let out = migrate_documents(&text).unwrap();
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    assert_eq!(documents(&out.yaml), documents(&text));
}

#[test]
fn seed002_inline_provider_becomes_a_node_class() {
    let (docs, _) = migrate(&seed("seed002_00_provisioner.yaml"));
    assert_eq!(docs.len(), 2);
    let p = pool(&docs[0]);
    assert_eq!(
        p.spec.disruption.consolidation_policy,
        ConsolidationPolicy::WhenEmpty
    );
    assert_eq!(
        p.spec.disruption.consolidate_after, "30s",
        "ttlSecondsAfterEmpty 30"
    );
    assert_eq!(
        p.spec.template.spec.expire_after, "Never",
        "no ttlSecondsUntilExpired"
    );
    assert_eq!(p.spec.limits["cpu"].0, "1000");
    let reqs = &p.spec.template.spec.requirements;
    let keys: Vec<&str> = reqs.iter().map(|r| r.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "karpenter.sh/capacity-type",
            "kubernetes.io/arch",
            "kubernetes.io/os",
            "karpenter.k8s.aws/instance-category",
            "karpenter.k8s.aws/instance-generation",
        ]
    );
    assert_eq!(reqs[0].values, ["spot", "on-demand"]);
    assert_eq!(reqs[3].values, ["c", "m", "r"]);
    assert_eq!(
        (reqs[4].operator, reqs[4].values.as_slice()),
        (Operator::Gt, &["2".to_string()][..])
    );
    assert_eq!(p.spec.template.spec.node_class_ref.name, "default");
    let c = class(&docs[1]);
    assert_eq!(c.metadata.name.as_deref(), Some("default"));
    assert_eq!(
        c.spec.subnet_selector_terms[0].tags["kubernetes.io/cluster/$CLUSTER_NAME"],
        "*"
    );
    assert_eq!(
        c.spec.security_group_selector_terms[0].tags["kubernetes.io/cluster/$CLUSTER_NAME"],
        "*"
    );
    assert_eq!(
        c.spec.ami_selector_terms[0].alias.as_deref(),
        Some("al2@latest")
    );
    // The later revision of the same Provisioner adds a 30-minute node lifetime.
    let (docs, _) = migrate(&seed("seed002_01_provisioner.yaml"));
    assert_eq!(
        pool(&docs[0]).spec.template.spec.expire_after,
        "30m",
        "ttlSecondsUntilExpired 1800"
    );
}

#[test]
fn seed003_taints_labels_user_data_and_block_devices() {
    let (docs, warnings) = migrate(&seeds(&[
        "seed003_00_provisioner.yaml",
        "seed003_01_awsnodetemplate.yaml",
    ]));
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings[1].starts_with("AWSNodeTemplate/enable-ipvs-test: spec.amiFamily AL2"),
        "{warnings:?}"
    );
    let p = pool(&docs[0]);
    let t = &p.spec.template;
    assert_eq!(t.metadata.labels["nodeType"], "network-node");
    assert_eq!(t.metadata.labels["phase"], "test");
    assert_eq!(t.spec.taints[0].key, "networkNode");
    assert_eq!(t.spec.taints[0].value.as_deref(), Some("true"));
    assert_eq!(t.spec.taints[0].effect, TaintEffect::NoSchedule);
    assert_eq!(t.spec.node_class_ref.name, "enable-ipvs-test");
    assert_eq!(t.spec.expire_after, "Never");
    assert_eq!(t.spec.requirements.len(), 5, "os and arch defaults added");
    assert_eq!(t.spec.requirements[4].values, ["amd64"]);
    assert_eq!(p.spec.disruption.consolidate_after, "30s");
    let c = class(&docs[1]);
    assert_eq!(
        c.spec.instance_profile.as_deref(),
        Some("KarpenterNodeInstanceProfile-test-cluster")
    );
    assert!(c.spec.role.is_none());
    assert!(
        c.spec
            .user_data
            .as_deref()
            .unwrap()
            .contains("sudo yum install -y ipvsadm")
    );
    let ebs = c.spec.block_device_mappings[0].ebs.as_ref().unwrap();
    assert_eq!(ebs.volume_size.as_deref(), Some("20Gi"));
    assert_eq!((ebs.iops, ebs.throughput), (Some(3000), Some(125)));
    assert_eq!(ebs.delete_on_termination, Some(true));
    assert_eq!(c.spec.tags["service"], "network");
    assert_eq!(
        c.spec.subnet_selector_terms[0].tags["karpenter.sh/discovery/test-cluster"],
        "*"
    );
    assert_eq!(
        c.spec.security_group_selector_terms[0].tags["aws:eks:cluster-name"],
        "test-cluster"
    );
}

#[test]
fn seed004_v1beta1_pool_migrates_and_the_aks_node_class_is_rejected() {
    let (docs, warnings) = migrate(&seed("seed004_00_nodepool.yaml"));
    let p = pool(&docs[0]);
    assert_eq!(
        p.spec.template.spec.expire_after, "Never",
        "disruption.expireAfter moved"
    );
    assert_eq!(
        p.spec.disruption.consolidation_policy,
        ConsolidationPolicy::WhenEmptyOrUnderutilized,
        "WhenUnderutilized"
    );
    assert_eq!(p.spec.disruption.consolidate_after, "0s");
    assert_eq!(p.spec.limits["cpu"].0, "100");
    assert_eq!(
        p.spec.template.spec.requirements[3].key,
        "karpenter.azure.com/sku-family"
    );
    assert_eq!(
        p.metadata.annotations.as_ref().unwrap()["kubernetes.io/description"],
        "General purpose NodePool for generic workloads"
    );
    assert!(
        warnings[0].contains("nodeClassRef without apiVersion/kind"),
        "{warnings:?}"
    );

    let both = seeds(&["seed004_00_nodepool.yaml", "seed004_01_aksnodeclass.yaml"]);
    let err = migrate_documents(&both).unwrap_err().to_string();
    assert!(
        err.starts_with("AKSNodeClass/default: karpenter.azure.com/v1alpha2 AKSNodeClass is the node class of another cloud's Karpenter provider"),
        "{err}"
    );
}

/// The seeds directory beside the project, as the script reads it by default.
fn seeds_dir() -> PathBuf {
    repo_root().join("../shared/seeds")
}

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn yaml_files(dir: &Path) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    out.sort();
    out
}

#[test]
fn generated_fixtures_are_up_to_date() {
    let seeds = seeds_dir();
    if !seeds.is_dir() {
        println!(
            "skipped: {} is absent, so the seed fixtures cannot be regenerated here",
            seeds.display()
        );
        return;
    }
    let out = std::env::temp_dir().join(format!("kerf-seed-fixtures-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let run = Command::new("python3")
        .current_dir(repo_root())
        .arg("scripts/extract-seed-manifests.py")
        .arg("--seeds")
        .arg(&seeds)
        .arg("--out")
        .arg(&out)
        .output()
        .expect("python3 runs scripts/extract-seed-manifests.py");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let fresh = yaml_files(&out);
    let _ = std::fs::remove_dir_all(&out);
    let committed = yaml_files(&repo_root().join("shared/api/tests/fixtures/seeds"));
    let names = |files: &[(String, String)]| files.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
    assert_eq!(
        names(&committed),
        names(&fresh),
        "run `make fixtures` and commit the result"
    );
    for ((name, old), (_, new)) in committed.iter().zip(&fresh) {
        assert!(
            old == new,
            "{name} is stale: run `make fixtures` and commit the result"
        );
    }
}

#[test]
fn a_default_that_would_rule_out_the_pods_instance_type_is_left_out() {
    // The walkthrough's Deployment asks for t4g.2xlarge: the v1alpha5 webhook's categories
    // c, m, r would leave it unschedulable on the migrated NodePool.
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: inflate}\nspec:\n  \
        template:\n    spec:\n      nodeSelector: {node.kubernetes.io/instance-type: t4g.2xlarge}\n      \
        containers: [{name: inflate, image: pause}]\n";
    let (docs, warnings) = migrate(&format!(
        "{}\n---\n{deployment}",
        seed("seed002_00_provisioner.yaml")
    ));
    let p = pool(&docs[0]);
    let keys: Vec<&str> = p
        .spec
        .template
        .spec
        .requirements
        .iter()
        .map(|r| r.key.as_str())
        .collect();
    assert!(
        !keys.contains(&"karpenter.k8s.aws/instance-category"),
        "{keys:?}"
    );
    assert!(keys.contains(&"kubernetes.io/os"), "{keys:?}");
    assert!(
        warnings.iter().any(|w| w.contains(
            "left out the v1alpha5 default on node.kubernetes.io/instance-type, karpenter.k8s.aws/instance-family, karpenter.k8s.aws/instance-category, karpenter.k8s.aws/instance-generation because it would rule out t4g.2xlarge"
        )),
        "{warnings:#?}"
    );
    // Without the pods, the default is written as the webhook wrote it.
    let (docs, _) = migrate(&seed("seed002_00_provisioner.yaml"));
    let p = pool(&docs[0]);
    assert!(
        p.spec
            .template
            .spec
            .requirements
            .iter()
            .any(|r| r.key == "karpenter.k8s.aws/instance-category")
    );
}

#[test]
fn a_node_class_without_a_role_gets_a_marked_placeholder_and_al2_is_flagged() {
    let (docs, warnings) = migrate(&seed("seed000_01_awsnodetemplate.yaml"));
    let c = class(&docs[0]);
    assert_eq!(
        c.spec.role.as_deref(),
        Some("REPLACE-ME-with-your-KarpenterNodeRole")
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("replace it with your node role's name")),
        "{warnings:#?}"
    );
    let al2 = migrate_documents(
        "apiVersion: karpenter.k8s.aws/v1alpha1\nkind: AWSNodeTemplate\nmetadata: {name: old}\nspec:\n  \
         amiFamily: AL2\n  instanceProfile: p\n  subnetSelector: {a: b}\n  securityGroupSelector: {a: b}\n",
    )
    .unwrap();
    assert!(
        al2.warnings
            .iter()
            .any(|w| w.contains("Amazon Linux 2 reached end of support")
                && w.contains("al2023@latest")),
        "{:#?}",
        al2.warnings
    );
}
