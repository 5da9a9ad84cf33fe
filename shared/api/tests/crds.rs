//! The CRD YAML committed under infra/crds/ must equal what the types generate.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use std::path::PathBuf;

use kerf_api::crds;

fn crd_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../infra/crds")
}

#[test]
fn committed_crds_match_the_types() {
    let update = std::env::var("KERF_UPDATE_CRDS").is_ok_and(|v| v == "1");
    let dir = crd_dir();
    let mut stale = Vec::new();
    for (name, yaml) in crds::files().unwrap() {
        let path = dir.join(&name);
        if update {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &yaml).unwrap();
            continue;
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        if committed != yaml {
            stale.push(name);
        }
    }
    assert!(
        stale.is_empty(),
        "infra/crds/{{{}}} differ from what the kerf-api types generate; \
         regenerate with `KERF_UPDATE_CRDS=1 cargo test -p kerf-api --test crds` and commit the result",
        stale.join(",")
    );
}

#[test]
fn crds_are_cluster_scoped_in_category_karpenter_with_status() {
    let all = crds::all();
    let kinds: Vec<(&str, &str)> = all
        .iter()
        .map(|c| (c.spec.names.kind.as_str(), c.spec.versions[0].name.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("NodePool", "v1"),
            ("NodeClaim", "v1"),
            ("EC2NodeClass", "v1"),
            ("NodeOverlay", "v1alpha1")
        ]
    );
    for crd in &all {
        assert_eq!(crd.spec.scope, "Cluster");
        assert_eq!(
            crd.spec.names.categories.as_deref(),
            Some(&["karpenter".to_string()][..])
        );
        let version = &crd.spec.versions[0];
        assert!(version.storage && version.served);
        assert!(version.subresources.as_ref().unwrap().status.is_some());
    }
}

fn columns(plural: &str) -> Vec<(String, String, i32)> {
    let crd = crds::all()
        .into_iter()
        .find(|c| c.spec.names.plural == plural)
        .unwrap();
    crd.spec.versions[0]
        .additional_printer_columns
        .clone()
        .unwrap_or_default()
        .into_iter()
        .map(|c| (c.name, c.json_path, c.priority.unwrap_or(0)))
        .collect()
}

#[test]
fn nodeclaim_printer_columns_match_karpenter() {
    let cols = columns("nodeclaims");
    let default: Vec<_> = cols
        .iter()
        .filter(|c| c.2 == 0)
        .map(|c| c.0.as_str())
        .collect();
    assert_eq!(
        default,
        ["Type", "Capacity", "Zone", "Node", "Ready", "Age"]
    );
    assert_eq!(
        cols[0].1,
        r".metadata.labels.node\.kubernetes\.io/instance-type"
    );
    assert_eq!(cols[1].1, r".metadata.labels.karpenter\.sh/capacity-type");
    assert_eq!(cols[2].1, r".metadata.labels.topology\.kubernetes\.io/zone");
    assert_eq!(cols[3].1, ".status.nodeName");
    assert_eq!(
        cols[4].1,
        r#".status.conditions[?(@.type=="Ready")].status"#
    );
}

#[test]
fn nodepool_and_ec2nodeclass_printer_columns_match_karpenter() {
    let names = |p: &str| {
        columns(p)
            .into_iter()
            .map(|c| (c.0, c.2))
            .collect::<Vec<_>>()
    };
    let s = |v: &[(&str, i32)]| {
        v.iter()
            .map(|(n, p)| (n.to_string(), *p))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        names("nodepools"),
        s(&[
            ("NodeClass", 0),
            ("Nodes", 0),
            ("Ready", 0),
            ("Age", 0),
            ("Weight", 1),
            ("CPU", 1),
            ("Memory", 1)
        ])
    );
    assert_eq!(
        names("ec2nodeclasses"),
        s(&[("Ready", 0), ("Age", 0), ("Role", 1)])
    );
}

#[test]
fn schemas_carry_karpenter_validations() {
    let yaml = crds::to_yaml().unwrap();
    for needle in [
        "self.all(x, has(x.schedule) == has(x.duration))",
        "nodeClassRef.group is immutable",
        "requirements with operator 'In' must have a value defined",
        "must specify exactly one of ['role', 'instanceProfile']",
        "spec is immutable",
        "default: 720h",
        "default: 10%",
        "WhenEmptyOrUnderutilized",
        "maxItems: 50",
        "x-kubernetes-int-or-string: true",
        "- ec2nc",
    ] {
        assert!(yaml.contains(needle), "generated CRDs lack {needle:?}");
    }
    assert!(!yaml.contains("nullable"));
}
