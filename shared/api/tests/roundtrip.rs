//! Every v1 manifest under tests/fixtures/v1 (our own, in the shapes of Karpenter's v1 docs
//! and examples) parses, keeps every field through a round trip, and gets Karpenter's
//! defaults; together they use every field those examples use.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

mod common;

use std::collections::BTreeSet;

use common::{check_v1, documents, fixture, fixture_files};
use kerf_api::v1::{
    AmiFamily, ConsolidationPolicy, EC2NodeClass, InstanceStorePolicy, NodeClaim, NodePool,
    Operator, TaintEffect,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Every document of every file in fixtures/v1, with its file name.
fn v1_documents() -> Vec<(String, Value)> {
    fixture_files("v1")
        .into_iter()
        .flat_map(|(name, text)| {
            documents(&text)
                .into_iter()
                .map(move |doc| (name.clone(), doc))
        })
        .collect()
}

#[test]
fn every_v1_fixture_round_trips_without_losing_a_field() {
    let docs = v1_documents();
    let files: BTreeSet<&str> = docs.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(files.len(), 5, "{files:?}");
    for (name, doc) in &docs {
        let out = std::panic::catch_unwind(|| check_v1(doc));
        assert!(out.is_ok(), "{name}: {}", doc["metadata"]["name"]);
    }
    let count = |kind: &str| docs.iter().filter(|(_, d)| d["kind"] == kind).count();
    assert_eq!(
        (count("NodePool"), count("EC2NodeClass"), count("NodeClaim")),
        (9, 13, 1)
    );
}

/// `Kind:path` of every leaf (list indices dropped), e.g.
/// `EC2NodeClass:spec.blockDeviceMappings.ebs.iops`.
fn field_paths(kind: &str, value: &Value, path: &str, out: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                field_paths(kind, v, &p, out);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for item in items {
                field_paths(kind, item, path, out);
            }
        }
        _ => {
            out.insert(format!("{kind}:{path}"));
        }
    }
}

/// The v1 fields Karpenter's docs examples use (AMIs by alias, id, name, tags and SSM; user data
/// per family; storage; IMDS; kubelet; capacity reservations; budgets; static pools; ...).
const DOCUMENTED_FIELDS: &[&str] = &[
    "NodePool:metadata.annotations.kubernetes.io/description",
    "NodePool:spec.template.metadata.labels.team",
    "NodePool:spec.template.metadata.annotations.example.com/cost-center",
    "NodePool:spec.template.spec.requirements.key",
    "NodePool:spec.template.spec.requirements.operator",
    "NodePool:spec.template.spec.requirements.values",
    "NodePool:spec.template.spec.requirements.minValues",
    "NodePool:spec.template.spec.taints.key",
    "NodePool:spec.template.spec.taints.value",
    "NodePool:spec.template.spec.taints.effect",
    "NodePool:spec.template.spec.startupTaints.key",
    "NodePool:spec.template.spec.startupTaints.effect",
    "NodePool:spec.template.spec.nodeClassRef.group",
    "NodePool:spec.template.spec.nodeClassRef.kind",
    "NodePool:spec.template.spec.nodeClassRef.name",
    "NodePool:spec.template.spec.expireAfter",
    "NodePool:spec.template.spec.terminationGracePeriod",
    "NodePool:spec.disruption.consolidationPolicy",
    "NodePool:spec.disruption.consolidateAfter",
    "NodePool:spec.disruption.budgets.nodes",
    "NodePool:spec.disruption.budgets.schedule",
    "NodePool:spec.disruption.budgets.duration",
    "NodePool:spec.disruption.budgets.reasons",
    "NodePool:spec.limits.cpu",
    "NodePool:spec.limits.memory",
    "NodePool:spec.limits.nvidia.com/gpu",
    "NodePool:spec.limits.nodes",
    "NodePool:spec.weight",
    "NodePool:spec.replicas",
    "EC2NodeClass:metadata.annotations.kubernetes.io/description",
    "EC2NodeClass:spec.role",
    "EC2NodeClass:spec.instanceProfile",
    "EC2NodeClass:spec.amiFamily",
    "EC2NodeClass:spec.amiSelectorTerms.alias",
    "EC2NodeClass:spec.amiSelectorTerms.id",
    "EC2NodeClass:spec.amiSelectorTerms.name",
    "EC2NodeClass:spec.amiSelectorTerms.owner",
    "EC2NodeClass:spec.amiSelectorTerms.ssmParameter",
    "EC2NodeClass:spec.amiSelectorTerms.tags.example.com/golden",
    "EC2NodeClass:spec.subnetSelectorTerms.tags.karpenter.sh/discovery",
    "EC2NodeClass:spec.subnetSelectorTerms.id",
    "EC2NodeClass:spec.securityGroupSelectorTerms.tags.karpenter.sh/discovery",
    "EC2NodeClass:spec.securityGroupSelectorTerms.id",
    "EC2NodeClass:spec.securityGroupSelectorTerms.name",
    "EC2NodeClass:spec.capacityReservationSelectorTerms.id",
    "EC2NodeClass:spec.capacityReservationSelectorTerms.ownerID",
    "EC2NodeClass:spec.capacityReservationSelectorTerms.instanceMatchCriteria",
    "EC2NodeClass:spec.capacityReservationSelectorTerms.tags.example.com/reservation",
    "EC2NodeClass:spec.placementGroupSelector.name",
    "EC2NodeClass:spec.placementGroupSelector.id",
    "EC2NodeClass:spec.userData",
    "EC2NodeClass:spec.tags.example.com/team",
    "EC2NodeClass:spec.blockDeviceMappings.deviceName",
    "EC2NodeClass:spec.blockDeviceMappings.rootVolume",
    "EC2NodeClass:spec.blockDeviceMappings.ebs.volumeSize",
    "EC2NodeClass:spec.blockDeviceMappings.ebs.volumeType",
    "EC2NodeClass:spec.blockDeviceMappings.ebs.iops",
    "EC2NodeClass:spec.blockDeviceMappings.ebs.throughput",
    "EC2NodeClass:spec.blockDeviceMappings.ebs.encrypted",
    "EC2NodeClass:spec.blockDeviceMappings.ebs.kmsKeyID",
    "EC2NodeClass:spec.blockDeviceMappings.ebs.deleteOnTermination",
    "EC2NodeClass:spec.blockDeviceMappings.ebs.snapshotID",
    "EC2NodeClass:spec.blockDeviceMappings.ebs.volumeInitializationRate",
    "EC2NodeClass:spec.instanceStorePolicy",
    "EC2NodeClass:spec.detailedMonitoring",
    "EC2NodeClass:spec.associatePublicIPAddress",
    "EC2NodeClass:spec.ipPrefixCount",
    "EC2NodeClass:spec.metadataOptions.httpEndpoint",
    "EC2NodeClass:spec.metadataOptions.httpProtocolIPv6",
    "EC2NodeClass:spec.metadataOptions.httpPutResponseHopLimit",
    "EC2NodeClass:spec.metadataOptions.httpTokens",
    "EC2NodeClass:spec.kubelet.maxPods",
    "EC2NodeClass:spec.kubelet.podsPerCore",
    "EC2NodeClass:spec.kubelet.systemReserved.cpu",
    "EC2NodeClass:spec.kubelet.kubeReserved.memory",
    "EC2NodeClass:spec.kubelet.evictionHard.memory.available",
    "EC2NodeClass:spec.kubelet.evictionSoft.memory.available",
    "EC2NodeClass:spec.kubelet.evictionSoftGracePeriod.memory.available",
    "EC2NodeClass:spec.kubelet.evictionMaxPodGracePeriod",
    "EC2NodeClass:spec.kubelet.imageGCHighThresholdPercent",
    "EC2NodeClass:spec.kubelet.imageGCLowThresholdPercent",
    "EC2NodeClass:spec.kubelet.cpuCFSQuota",
    "EC2NodeClass:spec.kubelet.clusterDNS",
    "EC2NodeClass:spec.networkInterfaces.interfaceType",
    "EC2NodeClass:spec.connectionTracking.tcpEstablishedTimeout",
    "EC2NodeClass:spec.cpuOptions.nestedVirtualization",
    "EC2NodeClass:spec.context",
];

/// The values of one field across all v1 fixtures.
fn values_of(
    docs: &[(String, Value)],
    kind: &str,
    pointer: &str,
    list: Option<&str>,
) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (_, doc) in docs.iter().filter(|(_, d)| d["kind"] == kind) {
        let found: Vec<&Value> = match list {
            None => doc.pointer(pointer).into_iter().collect(),
            Some(item) => doc
                .pointer(pointer)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|v| v.pointer(item))
                .collect(),
        };
        out.extend(found.into_iter().map(|v| v.as_str().unwrap().to_string()));
    }
    out
}

#[test]
fn the_fixtures_use_every_documented_field_and_value() {
    let docs = v1_documents();
    let mut paths = BTreeSet::new();
    for (_, doc) in &docs {
        field_paths(doc["kind"].as_str().unwrap(), doc, "", &mut paths);
    }
    let missing: Vec<_> = DOCUMENTED_FIELDS
        .iter()
        .filter(|f| !paths.contains(**f))
        .collect();
    assert!(missing.is_empty(), "no fixture uses {missing:#?}");

    let set = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
    let operators = values_of(
        &docs,
        "NodePool",
        "/spec/template/spec/requirements",
        Some("/operator"),
    );
    assert!(
        operators.is_superset(&set(&["In", "NotIn", "Exists", "Gt", "Lt"])),
        "{operators:?}"
    );
    let families = values_of(&docs, "EC2NodeClass", "/spec/amiFamily", None);
    assert!(
        families.is_superset(&set(&[
            "AL2",
            "AL2023",
            "Bottlerocket",
            "Custom",
            "Windows2022",
            "Windows2025"
        ])),
        "{families:?}"
    );
    let aliases: BTreeSet<String> = values_of(
        &docs,
        "EC2NodeClass",
        "/spec/amiSelectorTerms",
        Some("/alias"),
    )
    .into_iter()
    .map(|a| a.split('@').next().unwrap().to_string())
    .collect();
    assert_eq!(
        aliases,
        set(&[
            "al2",
            "al2023",
            "bottlerocket",
            "windows2019",
            "windows2022",
            "windows2025"
        ])
    );
    let policies = values_of(
        &docs,
        "NodePool",
        "/spec/disruption/consolidationPolicy",
        None,
    );
    assert_eq!(
        policies,
        set(&["Balanced", "WhenEmpty", "WhenEmptyOrUnderutilized"])
    );
    let lifetimes = values_of(&docs, "NodePool", "/spec/template/spec/expireAfter", None);
    assert!(
        lifetimes.contains("Never") && lifetimes.contains("168h"),
        "{lifetimes:?}"
    );
}

fn parse<T: DeserializeOwned>(path: &str, n: usize) -> T {
    serde_json::from_value(documents(&fixture(path))[n].clone()).unwrap()
}

#[test]
fn nodepool_defaults_are_karpenters() {
    let pool: NodePool = yaml_serde::from_str(
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
    let class: EC2NodeClass = parse("v1/docs_ec2nodeclasses.yaml", 10);
    assert_eq!(class.metadata.name.as_deref(), Some("minimal"));
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
        Some("al2@latest")
    );
    // A partial block gets the rest from the per-field defaults.
    let windows: EC2NodeClass = parse("v1/docs_ec2nodeclasses.yaml", 4);
    let m = windows.spec.metadata_options.unwrap();
    assert_eq!(m.http_endpoint.as_deref(), Some("enabled"));
    assert_eq!(m.http_put_response_hop_limit, Some(1));
    assert_eq!(windows.spec.ami_family, Some(AmiFamily::Windows2022));
    assert!(
        windows
            .spec
            .user_data
            .unwrap()
            .contains(r"'C:\kerf\node.txt'")
    );
}

#[test]
fn docs_nodepool_shapes_parse() {
    let spot: NodePool = parse("v1/docs_nodepools.yaml", 0);
    let reqs = &spot.spec.template.spec.requirements;
    assert_eq!(reqs[1].key, "capacity-spread");
    assert_eq!(reqs[1].values, ["2", "3", "4", "5"]);
    assert_eq!(
        (reqs[2].operator, reqs[2].min_values),
        (Operator::Exists, Some(5))
    );
    assert!(reqs[2].values.is_empty());
    assert_eq!(spot.spec.limits["cpu"].0, "200");
    let gpu: NodePool = parse("v1/docs_nodepools.yaml", 2);
    let t = &gpu.spec.template.spec;
    assert_eq!(t.expire_after, "Never");
    assert_eq!(t.termination_grace_period.as_deref(), Some("2h"));
    assert_eq!(t.taints[0].key, "nvidia.com/gpu");
    assert_eq!(t.startup_taints[0].effect, TaintEffect::NoExecute);
    assert_eq!(t.requirements[1].operator, Operator::Lt);
    assert_eq!(gpu.spec.limits["nvidia.com/gpu"].0, "16");
    assert_eq!(gpu.spec.disruption.budgets[0].reasons.len(), 2);
    let large: NodePool = parse("v1/docs_nodepools.yaml", 4);
    let budget = &large.spec.disruption.budgets[1];
    assert_eq!(budget.schedule.as_deref(), Some("0 9 * * mon-fri"));
    assert_eq!(budget.duration.as_deref(), Some("8h"));
    assert_eq!(large.spec.disruption.consolidate_after, "60s");
    let balanced: NodePool = parse("v1/docs_nodepools.yaml", 5);
    assert_eq!(
        balanced.spec.disruption.consolidation_policy,
        ConsolidationPolicy::Balanced
    );
}

#[test]
fn docs_ec2nodeclass_shapes_parse() {
    let store: EC2NodeClass = parse("v1/docs_ec2nodeclasses.yaml", 7);
    assert_eq!(
        store.spec.instance_store_policy,
        Some(InstanceStorePolicy::Raid0)
    );
    let ebs: EC2NodeClass = parse("v1/docs_ec2nodeclasses.yaml", 8);
    let volumes = &ebs.spec.block_device_mappings;
    assert!(volumes[0].root_volume);
    assert_eq!(
        volumes[1].ebs.as_ref().unwrap().delete_on_termination,
        Some(false)
    );
    assert_eq!(
        volumes[2].ebs.as_ref().unwrap().volume_initialization_rate,
        Some(300)
    );
    let tuned: EC2NodeClass = parse("v1/docs_ec2nodeclasses.yaml", 9);
    assert_eq!(tuned.spec.kubelet.as_ref().unwrap().max_pods, Some(110));
    assert_eq!(tuned.spec.associate_public_ip_address, Some(false));
    assert_eq!(tuned.spec.detailed_monitoring, Some(true));
    assert_eq!(
        tuned.spec.capacity_reservation_selector_terms[1]
            .owner_id
            .as_deref(),
        Some("111122223333")
    );
    assert_eq!(
        tuned.spec.metadata_options.unwrap().http_tokens.as_deref(),
        Some("optional")
    );
    let lookup: EC2NodeClass = parse("v1/docs_ec2nodeclasses.yaml", 3);
    let terms = &lookup.spec.ami_selector_terms;
    assert_eq!(terms[0].owner.as_deref(), Some("602401143452"));
    assert_eq!(
        terms[2].ssm_parameter.as_deref(),
        Some("/kerf/ami/al2/latest")
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
