//! `kerf migrate` on the seed walkthroughs' manifests (generated into
//! shared/api/tests/fixtures/seeds) and the docs' legacy manifests, and `kerf crds` against the
//! CRDs committed in infra/crds: output, warnings, and bad input naming its file with exit
//! code 2.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::Command;

use clap::Parser;
use kerf_cli::args::Cli;
use kerf_cli::commands::Outcome;
use kerf_cli::error::CliError;
use serde::Deserialize;
use serde_json::Value;

fn repo(path: &str) -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.join(path).display().to_string()
}

fn legacy(name: &str) -> String {
    repo(&format!("shared/api/tests/fixtures/legacy/{name}"))
}

/// A manifest extracted from the seed walkthroughs by scripts/extract-seed-manifests.py.
fn seed(name: &str) -> String {
    repo(&format!("shared/api/tests/fixtures/seeds/{name}"))
}

fn kerf(args: &[&str]) -> Result<Outcome, CliError> {
    let cli = Cli::try_parse_from(std::iter::once("kerf").chain(args.iter().copied())).unwrap();
    kerf_cli::run(&cli, 0)
}

fn documents(yaml: &str) -> Vec<Value> {
    yaml_serde::Deserializer::from_str(yaml)
        .map(|d| yaml_serde::Value::deserialize(d).unwrap())
        .filter(|v| !v.is_null())
        .map(|v| serde_json::to_value(v).unwrap())
        .collect()
}

fn kinds(docs: &[Value]) -> Vec<String> {
    docs.iter()
        .map(|d| {
            format!(
                "{} {}",
                d["apiVersion"].as_str().unwrap(),
                d["kind"].as_str().unwrap()
            )
        })
        .collect()
}

/// A file in a fresh temporary directory, unique per test.
fn temp_file(test: &str, name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("kerf-cli-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn a_provisioner_and_node_template_become_a_node_pool_and_node_class() {
    let out = kerf(&[
        "migrate",
        &seed("seed000_00_provisioner.yaml"),
        &seed("seed000_01_awsnodetemplate.yaml"),
    ])
    .unwrap();
    let docs = documents(&out.stdout);
    assert_eq!(
        kinds(&docs),
        [
            "karpenter.sh/v1 NodePool",
            "karpenter.k8s.aws/v1 EC2NodeClass"
        ]
    );
    let pool = &docs[0]["spec"];
    assert_eq!(
        pool["disruption"]["consolidationPolicy"],
        "WhenEmptyOrUnderutilized"
    );
    assert_eq!(pool["template"]["spec"]["expireAfter"], "336h");
    assert_eq!(
        docs[1]["spec"]["amiSelectorTerms"][0]["alias"],
        "al2@latest"
    );
    assert!(
        out.warnings
            .iter()
            .any(|w| w.starts_with("AWSNodeTemplate/default: spec.instanceProfile")),
        "{:?}",
        out.warnings
    );
}

#[test]
fn several_files_are_converted_in_order() {
    let out = kerf(&[
        "migrate",
        &seed("seed003_00_provisioner.yaml"),
        &seed("seed003_01_awsnodetemplate.yaml"),
        &legacy("docs_v1beta1.yaml"),
    ])
    .unwrap();
    let docs = documents(&out.stdout);
    assert_eq!(docs.len(), 6, "{}", out.stdout);
    assert_eq!(docs[0]["metadata"]["name"], "test-network");
    assert_eq!(docs[0]["spec"]["disruption"]["consolidateAfter"], "30s");
    assert!(
        kinds(&docs).iter().all(|k| k.contains("/v1 ")),
        "{:?}",
        kinds(&docs)
    );
}

#[test]
fn kubelet_settings_follow_the_node_template_across_files() {
    let p = "apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata: {name: p}\nspec:\n  providerRef: {name: t}\n  kubeletConfiguration: {maxPods: 42}\n";
    let t = "apiVersion: karpenter.k8s.aws/v1alpha1\nkind: AWSNodeTemplate\nmetadata: {name: t}\nspec:\n  subnetSelector: {karpenter.sh/discovery: c}\n  securityGroupSelector: {karpenter.sh/discovery: c}\n";
    let a = temp_file("kubelet", "provisioner.yaml", p);
    let b = temp_file("kubelet", "template.yaml", t);
    let out = kerf(&["migrate", &a, &b]).unwrap();
    let docs = documents(&out.stdout);
    assert_eq!(docs[1]["spec"]["kubelet"]["maxPods"], 42);
    assert!(
        !out.warnings.iter().any(|w| w.contains("not in the input")),
        "{:?}",
        out.warnings
    );
}

#[test]
fn other_kinds_pass_through_with_a_warning() {
    let text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: b}\n";
    let other = temp_file("other-kinds", "configmap.yaml", text);
    let out = kerf(&["migrate", &seed("seed004_00_nodepool.yaml"), &other]).unwrap();
    let docs = documents(&out.stdout);
    assert_eq!(kinds(&docs), ["karpenter.sh/v1 NodePool", "v1 ConfigMap"]);
    assert!(
        out.warnings
            .iter()
            .any(|w| w.starts_with("ConfigMap/settings:") && w.contains("passed through")),
        "{:?}",
        out.warnings
    );
}

#[test]
fn another_clouds_node_class_names_the_file_and_kind_and_exits_2() {
    let aks = seed("seed004_01_aksnodeclass.yaml");
    let e = kerf(&["migrate", &seed("seed004_00_nodepool.yaml"), &aks]).unwrap_err();
    assert_eq!(e.exit_code(), 2);
    let message = e.to_string();
    assert!(
        message.starts_with(&format!(
            "{aks}: AKSNodeClass/default: karpenter.azure.com/v1alpha2 AKSNodeClass is the node class of another cloud's Karpenter provider"
        )),
        "{message}"
    );
}

#[test]
fn the_seed_fixture_directory_stops_at_the_aks_node_class() {
    let dir = repo("shared/api/tests/fixtures/seeds");
    let e = kerf(&["migrate", &dir]).unwrap_err();
    assert_eq!(e.exit_code(), 2);
    assert!(
        e.to_string()
            .contains("seed004_01_aksnodeclass.yaml: AKSNodeClass/default"),
        "{e}"
    );
}

#[test]
fn malformed_yaml_names_the_file_and_exits_2() {
    let bad = temp_file(
        "malformed",
        "bad.yaml",
        "kind: Provisioner\nspec: [unclosed\n",
    );
    let e = kerf(&["migrate", &seed("seed000_00_provisioner.yaml"), &bad]).unwrap_err();
    assert_eq!(e.exit_code(), 2);
    assert!(e.to_string().starts_with(&format!("{bad}: ")), "{e}");
}

#[test]
fn a_field_of_the_wrong_type_names_the_file_and_exits_2() {
    let text = "apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata: {name: p}\nspec: {ttlSecondsAfterEmpty: soon}\n";
    let bad = temp_file("wrong-type", "p.yaml", text);
    let e = kerf(&["migrate", &bad]).unwrap_err();
    assert_eq!(e.exit_code(), 2);
    assert!(e.to_string().contains("p.yaml"), "{e}");
}

#[test]
fn a_missing_file_exits_2() {
    let e = kerf(&["migrate", "/nonexistent/kerf.yaml"]).unwrap_err();
    assert_eq!(e.exit_code(), 2);
    assert!(e.to_string().contains("/nonexistent/kerf.yaml"), "{e}");
}

#[test]
fn migrate_needs_a_file() {
    assert!(Cli::try_parse_from(["kerf", "migrate"]).is_err());
}

#[test]
fn crds_are_what_infra_holds() {
    let out = kerf(&["crds"]).unwrap();
    let committed: String = [
        "karpenter.sh_nodepools.yaml",
        "karpenter.sh_nodeclaims.yaml",
        "karpenter.k8s.aws_ec2nodeclasses.yaml",
        "karpenter.sh_nodeoverlays.yaml",
    ]
    .iter()
    .map(|f| std::fs::read_to_string(repo(&format!("infra/crds/{f}"))).unwrap())
    .collect();
    assert_eq!(out.stdout, committed);
    assert!(out.warnings.is_empty());
    let names: Vec<_> = documents(&out.stdout)
        .iter()
        .map(|d| d["metadata"]["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        names,
        [
            "nodepools.karpenter.sh",
            "nodeclaims.karpenter.sh",
            "ec2nodeclasses.karpenter.k8s.aws",
            "nodeoverlays.karpenter.sh"
        ]
    );
}

#[test]
fn the_binary_prints_warnings_on_stderr_and_exits_2_on_bad_input() {
    let bin = env!("CARGO_BIN_EXE_kerf");
    let ok = Command::new(bin)
        .args([
            "migrate",
            &seed("seed000_00_provisioner.yaml"),
            &seed("seed000_01_awsnodetemplate.yaml"),
        ])
        .output()
        .unwrap();
    assert!(ok.status.success());
    let stderr = String::from_utf8(ok.stderr).unwrap();
    assert!(
        stderr.lines().all(|l| l.starts_with("warning: ")),
        "{stderr}"
    );
    assert!(
        stderr.contains("warning: AWSNodeTemplate/default: spec.instanceProfile"),
        "{stderr}"
    );
    assert!(
        String::from_utf8(ok.stdout)
            .unwrap()
            .contains("kind: NodePool")
    );
    let bad = temp_file("binary", "bad.yaml", "a: [unclosed\n");
    let failed = Command::new(bin).args(["migrate", &bad]).output().unwrap();
    assert_eq!(failed.status.code(), Some(2));
    let stderr = String::from_utf8(failed.stderr).unwrap();
    assert!(stderr.starts_with(&format!("error: {bad}: ")), "{stderr}");
}
