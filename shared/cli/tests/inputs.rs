//! `kerf plan` input handling and the JSON contract: bad input naming file, document and
//! field, determinism, the contract's field names (workload expansion and the other plan
//! scenarios are files under `tests/scenarios/inputs`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::json;
use support::*;

#[test]
fn a_bad_quantity_names_file_document_and_field() {
    let text = yaml(&[pool("default"), pod("p", "1x", "1Gi")]);
    let e = plan_err(&text);
    assert!(
        e.contains("scenario.yaml") && e.contains("document 2") && e.contains("Pod/default/p"),
        "{e}"
    );
    assert!(
        e.contains("spec.containers[0].resources.requests.cpu") && e.contains("1x"),
        "{e}"
    );
}

#[test]
fn negative_and_padded_quantities_are_rejected_as_the_api_server_does() {
    for (cpu, why) in [
        ("-1", "must be greater than or equal to 0"),
        (" 1 ", "invalid quantity"),
        ("1 ", "invalid quantity"),
    ] {
        let e = plan_err(&yaml(&[pool("default"), pod("p", cpu, "1Gi")]));
        assert!(
            e.contains("spec.containers[0].resources.requests.cpu") && e.contains(why),
            "{cpu:?}: {e}"
        );
    }
}

#[test]
fn an_unknown_operator_names_the_field() {
    let pd = required_terms(
        pod("p", "1", "1Gi"),
        &[vec![req("kubernetes.io/arch", "Like", &["amd64"])]],
    );
    let e = plan_err(&yaml(&[pd]));
    assert!(
        e.contains("matchExpressions[0].operator") && e.contains("Like"),
        "{e}"
    );
}

#[test]
fn an_unknown_nodepool_operator_names_the_field() {
    let np = pool_req(
        pool("default"),
        req("kubernetes.io/arch", "Near", &["amd64"]),
    );
    let e = plan_err(&yaml(&[np]));
    assert!(
        e.contains("NodePool/default") && e.contains("requirements") && e.contains("Near"),
        "{e}"
    );
}

#[test]
fn bad_storage_objects_name_file_object_and_field() {
    let class = json!({
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": "gp3"}, "provisioner": "ebs.csi.aws.com",
        "volumeBindingMode": "Eventually",
    });
    let e = plan_err(&yaml(&[pool("default"), class]));
    assert!(
        e.contains("scenario.yaml") && e.contains("StorageClass/gp3"),
        "{e}"
    );
    assert!(
        e.contains("volumeBindingMode") && e.contains("Eventually"),
        "{e}"
    );
    let volume = json!({
        "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-1"},
        "spec": {"nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "topology.kubernetes.io/zone", "operator": "Near", "values": ["a"]}
        ]}]}}},
    });
    let e = plan_err(&yaml(&[volume]));
    assert!(
        e.contains("PersistentVolume/pv-1")
            && e.contains("spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0]")
            && e.contains("Near"),
        "{e}"
    );
    let csinode = json!({
        "apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "n1"},
        "spec": {"drivers": [{"name": "ebs.csi.aws.com", "nodeID": "i-1",
            "allocatable": {"count": -2}}]},
    });
    let e = plan_err(&yaml(&[csinode]));
    assert!(
        e.contains("CSINode/n1") && e.contains("spec.drivers[0].allocatable.count"),
        "{e}"
    );
}

#[test]
fn a_wrongly_typed_field_names_its_path() {
    let mut pd = pod("p", "1", "1Gi");
    pd["spec"]["containers"] = json!("not-a-list");
    let e = plan_err(&yaml(&[pd]));
    assert!(e.contains("spec.containers"), "{e}");
}

#[test]
fn malformed_yaml_is_an_input_error() {
    let e = plan_err("kind: Pod\nmetadata: [\n");
    assert!(
        e.contains("scenario.yaml") && e.contains("invalid YAML"),
        "{e}"
    );
}

#[test]
fn plans_are_deterministic() {
    let mut docs = vec![pool("default")];
    for i in 0..30 {
        docs.push(spread(
            labels(pod(&format!("p{i}"), "300m", "300Mi"), &[("app", "w")]),
            "topology.kubernetes.io/zone",
            1,
            "DoNotSchedule",
            "w",
        ));
    }
    let a = serde_json::to_string(&plan(&docs)).unwrap();
    let b = serde_json::to_string(&plan(&docs)).unwrap();
    assert_eq!(a, b);
}

#[test]
fn node_claim_names_depend_on_the_input() {
    let a = plan(&[pool("default"), pod("p", "1", "1Gi")]);
    let b = plan(&[pool("default"), pod("q", "1", "1Gi")]);
    assert_ne!(a.launches[0].node_claim, b.launches[0].node_claim);
}

#[test]
fn json_output_has_the_contract_fields() {
    let p = plan(&[
        pool("default"),
        pod("p", "1", "1Gi"),
        pod("huge", "999", "1Gi"),
    ]);
    let v = serde_json::to_value(&p).unwrap();
    assert_eq!(v["apiVersion"], "kerf.dev/v1alpha1");
    assert_eq!(v["kind"], "Plan");
    for f in [
        "nodeClaim",
        "nodePool",
        "instanceType",
        "capacityType",
        "zone",
        "price",
        "instanceTypeOptions",
        "requirements",
        "pods",
    ] {
        assert!(v["launches"][0].get(f).is_some(), "launches[].{f}");
    }
    assert!(
        v["unschedulable"][0].get("pod").is_some() && v["unschedulable"][0].get("reason").is_some()
    );
    for f in [
        "pendingPods",
        "scheduledPods",
        "unschedulablePods",
        "newNodeClaims",
        "newHourlyCost",
    ] {
        assert!(v["summary"].get(f).is_some(), "summary.{f}");
    }
    assert!(v["nominations"].is_array() && v["disruptions"].is_array());
    // Enums in the model keep the contract's strings.
    assert_eq!(v["launches"][0]["capacityType"], "spot");
    assert_eq!(v["unschedulable"][0]["kind"], "noNodePoolFits");
    assert_eq!(
        v["summary"]["newHourlyCost"].as_f64().unwrap(),
        p.launches.iter().map(|l| l.price).sum::<f64>()
    );
}

#[test]
fn the_getting_started_example_plans_five_pods() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/getting-started"
    );
    let inputs = kerf_cli::input::read(&[dir.to_string()]).unwrap();
    let source = kerf_cli::snapshot::CatalogSource::Bundled {
        region: "us-west-2".into(),
    };
    let built = kerf_cli::snapshot::build(inputs.docs, &source, 0).unwrap();
    assert!(built.warnings.is_empty(), "{:?}", built.warnings);
    let p = kerf_engine::provision(&built.snapshot, &kerf_engine::Options::default());
    assert_eq!(p.summary.scheduled_pods, 5);
    assert!(p.launches.iter().all(|l| l.capacity_type == "on-demand"));
    for l in &p.launches {
        let cat = l
            .requirements
            .iter()
            .find(|r| r.key == "karpenter.k8s.aws/instance-category")
            .unwrap();
        assert!(
            cat.values
                .iter()
                .all(|c| ["c", "m", "r"].contains(&c.as_str()))
        );
        assert!(
            ["c", "m", "r"]
                .iter()
                .any(|c| l.instance_type.starts_with(c)),
            "{}",
            l.instance_type
        );
    }
}

#[test]
fn a_plan_without_launches_costs_zero_not_negative_zero() {
    let p = plan(&[pool("default")]);
    assert!(p.launches.is_empty());
    assert!(
        p.summary.new_hourly_cost.is_sign_positive(),
        "{}",
        p.summary.new_hourly_cost
    );
    let table = kerf_cli::table::plan(&p);
    assert!(table.contains("costing $0.0000/hour"), "{table}");
    assert!(!table.contains("-0.0000"), "{table}");
    let json = serde_json::to_string(&p).unwrap();
    assert!(json.contains("\"newHourlyCost\":0.0"), "{json}");
}

fn budgeted(value: &str) -> serde_json::Value {
    let mut np = pool("default");
    np["metadata"]["annotations"] = json!({"kerf.dev/max-cost-per-hour": value});
    np
}

#[test]
fn a_bad_dollar_limit_names_the_nodepool_the_annotation_and_the_problem() {
    for (value, why) in [("25,00", "is not a number"), ("-1", "is negative")] {
        let e = plan_err(&yaml(&[budgeted(value), pod("p", "1", "1Gi")]));
        assert!(
            e.contains("scenario.yaml")
                && e.contains("NodePool/default")
                && e.contains("kerf.dev/max-cost-per-hour")
                && e.contains(&format!("{value:?}"))
                && e.contains(why),
            "{value}: {e}"
        );
    }
}

#[test]
fn a_dollar_limited_pool_is_shown_in_the_table_and_the_json() {
    let p = plan(&[budgeted("25.00"), pod("p", "1", "1Gi")]);
    assert_eq!(p.cost_limits.len(), 1);
    let table = kerf_cli::table::plan(&p);
    assert!(
        table.contains("NODEPOOL") && table.contains("MAX $/HOUR") && table.contains("25.0000"),
        "{table}"
    );
    let v = serde_json::to_value(&p).unwrap();
    let c = &v["costLimits"][0];
    assert_eq!(c["nodePool"], "default");
    assert_eq!(c["maxCostPerHour"], 25.0);
    for f in [
        "currentCostPerHour",
        "plannedCostPerHour",
        "remainingPerHour",
    ] {
        assert!(c[f].is_number(), "costLimits[].{f}: {c}");
    }
    // Without the annotation the field is left out, so existing output is unchanged.
    let plain = serde_json::to_value(plan(&[pool("default"), pod("p", "1", "1Gi")])).unwrap();
    assert!(plain.get("costLimits").is_none());
    assert!(!kerf_cli::table::plan(&plan(&[pool("default")])).contains("MAX $/HOUR"));
}

fn built_with_overlay(gate: bool) -> kerf_cli::snapshot::Built {
    let overlay = json!({
        "apiVersion": "karpenter.sh/v1alpha1", "kind": "NodeOverlay",
        "metadata": {"name": "everything-free"}, "spec": {"price": "0"}
    });
    let mut inputs = kerf_cli::input::Inputs::default();
    kerf_cli::input::parse_into(
        &mut inputs,
        "scenario.yaml",
        &yaml(&[pool("default"), overlay]),
    )
    .unwrap();
    let cat = kerf_catalog::file::from_json(&catalog_json(&[])).unwrap();
    let source = kerf_cli::snapshot::CatalogSource::File(std::sync::Arc::new(cat));
    let gates = kerf_cli::snapshot::BuildOptions { node_overlay: gate };
    kerf_cli::snapshot::build_with(inputs.docs, &source, 0, gates).unwrap()
}

#[test]
fn node_overlays_apply_only_with_their_feature_gate() {
    let prices = |b: &kerf_cli::snapshot::Built| -> Vec<f64> {
        b.snapshot.node_pools[0]
            .catalog
            .instance_types
            .iter()
            .flat_map(|t| t.offerings.iter().map(|o| o.price))
            .collect()
    };
    let off = built_with_overlay(false);
    assert!(prices(&off).iter().all(|p| *p > 0.0));
    assert!(
        off.warnings
            .iter()
            .any(|w| w.contains("NodeOverlay(s) skipped") && w.contains("NodeOverlay=true")),
        "{:?}",
        off.warnings
    );
    let on = built_with_overlay(true);
    assert!(prices(&on).iter().all(|p| *p == 0.0));
    assert!(on.warnings.is_empty(), "{:?}", on.warnings);
}

#[test]
fn feature_gates_read_as_the_functions_read_them() {
    use kerf_cli::commands::gate;
    assert!(
        gate(
            "SpotToSpotConsolidation=false,NodeOverlay=true",
            "NodeOverlay"
        )
        .unwrap()
    );
    assert!(!gate("", "NodeOverlay").unwrap());
    assert!(!gate("NodeOverlay=false", "NodeOverlay").unwrap());
    assert!(gate("NodeOverlay=yes", "NodeOverlay").is_err());
    assert!(gate("NodeOverlay", "NodeOverlay").is_err());
}
