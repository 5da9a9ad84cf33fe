//! The built-in kinds' schemas in the documents: every served kind is described, each
//! document holds everything its kinds reference, and kubectl finds the kinds, their fields'
//! descriptions and their paths.

use serde_json::{Value, json};

use super::tests::{bytes, decode, registry, text, unresolved};
use super::*;

#[test]
fn every_built_in_kind_served_has_kube_apiservers_schema() {
    let b = builtin::data().unwrap();
    assert!(b.version.starts_with("v1."), "{}", b.version);
    let reg = registry();
    let builtins: Vec<&ResourceInfo> = reg.all().iter().filter(|r| !r.custom).collect();
    assert!(builtins.len() >= 10, "{}", builtins.len());
    // And no kind the server does not serve.
    let kinds = b
        .v2_definitions()
        .values()
        .filter(|d| d.get("x-kubernetes-group-version-kind").is_some())
        .count();
    assert_eq!(kinds, builtins.len());
    for r in builtins {
        assert!(b.describes(r), "{} {}", r.api_version(), r.kind);
        let doc = v3(&reg, &group_version(r)).unwrap().unwrap();
        let tagged = doc["components"]["schemas"]
            .as_object()
            .unwrap()
            .values()
            .any(|s| s["x-kubernetes-group-version-kind"][0] == gvk(r));
        assert!(tagged, "{} {} untagged", r.api_version(), r.kind);
    }
}

#[test]
fn the_core_v3_document_describes_pods_as_kube_apiserver_does() {
    let doc = v3(&registry(), "api/v1").unwrap().unwrap();
    assert_eq!(
        unresolved(&doc, "#/components/schemas/"),
        Vec::<String>::new()
    );
    let schemas = &doc["components"]["schemas"];
    let pod = &schemas["io.k8s.api.core.v1.Pod"];
    assert_eq!(
        pod["x-kubernetes-group-version-kind"],
        json!([{"group": "", "version": "v1", "kind": "Pod"}])
    );
    assert_eq!(
        pod["properties"]["spec"]["allOf"][0]["$ref"],
        "#/components/schemas/io.k8s.api.core.v1.PodSpec"
    );
    let limits = &schemas["io.k8s.api.core.v1.ResourceRequirements"]["properties"]["limits"];
    let text = limits["description"].as_str().unwrap();
    assert!(
        text.starts_with("Limits describes the maximum amount"),
        "{text}"
    );
    let node_spec = &schemas["io.k8s.api.core.v1.NodeSpec"]["properties"];
    assert!(node_spec["providerID"]["description"].is_string());
    // Only what the core kinds reference: no Service, no PersistentVolume.
    assert!(schemas.get("io.k8s.api.core.v1.Service").is_none());
    let patch = &doc["paths"]["/api/v1/namespaces/{namespace}/pods/{name}"]["patch"];
    assert_eq!(patch["x-kubernetes-group-version-kind"]["kind"], "Pod");
    assert_eq!(patch["operationId"], "patchCoreV1NamespacedPod");
    assert!(doc["paths"]["/api/v1/nodes/{name}"]["patch"].is_object());
}

#[test]
fn the_apps_v3_document_holds_its_kinds_and_the_pod_template() {
    let doc = v3(&registry(), "apis/apps/v1").unwrap().unwrap();
    assert_eq!(
        unresolved(&doc, "#/components/schemas/"),
        Vec::<String>::new()
    );
    let schemas = &doc["components"]["schemas"];
    let replicas = &schemas["io.k8s.api.apps.v1.DeploymentSpec"]["properties"]["replicas"];
    assert_eq!(replicas["type"], "integer");
    assert!(
        replicas["description"]
            .as_str()
            .unwrap()
            .contains("desired pods")
    );
    assert!(schemas["io.k8s.api.core.v1.PodSpec"].is_object());
    assert!(schemas.get("io.k8s.api.core.v1.Pod").is_none());
    let paths = doc["paths"].as_object().unwrap();
    assert!(paths.contains_key("/apis/apps/v1/namespaces/{namespace}/deployments/{name}"));
    assert!(
        paths.keys().all(|p| p.starts_with("/apis/apps/v1/")),
        "{paths:?}"
    );
}

#[test]
fn v2_holds_built_in_and_custom_kinds_with_every_reference_defined() {
    let doc = v2(&registry()).unwrap();
    assert_eq!(unresolved(&doc, "#/definitions/"), Vec::<String>::new());
    let defs = &doc["definitions"];
    let containers = &defs["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"];
    assert_eq!(
        containers["items"]["$ref"],
        "#/definitions/io.k8s.api.core.v1.Container"
    );
    assert_eq!(containers["x-kubernetes-patch-merge-key"], "name");
    assert_eq!(
        defs["io.k8s.api.apps.v1.Deployment"]["x-kubernetes-group-version-kind"],
        json!([{"group": "apps", "version": "v1", "kind": "Deployment"}])
    );
    assert!(defs["sh.karpenter.v1.NodePool"].is_object());
    let meta = &defs[builtin::OBJECT_META]["properties"]["managedFields"]["items"]["$ref"];
    assert_eq!(
        meta,
        "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry"
    );
    let patch = &doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"];
    assert_eq!(
        patch["x-kubernetes-group-version-kind"]["kind"],
        "Deployment"
    );
    assert_eq!(doc["info"]["version"], builtin::data().unwrap().version);
}

#[test]
fn operation_ids_are_unique_per_resource() {
    let reg = registry();
    let mut ids: Vec<String> = reg.all().iter().map(operation_id).collect();
    assert!(
        ids.contains(&"CoreV1NamespacedEvent".to_string()),
        "{ids:?}"
    );
    assert!(
        ids.contains(&"EventsK8sIoV1NamespacedEvent".to_string()),
        "{ids:?}"
    );
    assert!(
        ids.contains(&"KarpenterShV1NodePool".to_string()),
        "{ids:?}"
    );
    let n = ids.len();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), n);
}

/// The schema of a named definition in the protobuf document.
fn proto_definition(pb: &[u8], name: &str) -> Vec<(u64, super::tests::Field)> {
    let top = decode(pb);
    let defs = decode(bytes(&top, 9)[0]);
    let named = bytes(&defs, 1)
        .into_iter()
        .map(decode)
        .find(|n| text(n, 1) == name)
        .unwrap_or_else(|| panic!("no {name}"));
    decode(bytes(&named, 2)[0])
}

#[test]
fn the_v2_protobuf_carries_the_built_in_definitions() {
    let pb = proto::document(&v2(&registry()).unwrap());
    let spec = proto_definition(&pb, "io.k8s.api.core.v1.ResourceRequirements");
    assert!(text(&spec, 4).starts_with("ResourceRequirements describes"));
    let props = decode(bytes(&spec, 25)[0]);
    let limits = bytes(&props, 1)
        .into_iter()
        .map(decode)
        .find(|p| text(p, 1) == "limits")
        .unwrap();
    let limits = decode(bytes(&limits, 2)[0]);
    // additionalProperties (21) → schema (1) → $ref (1).
    let value = decode(bytes(&decode(bytes(&limits, 21)[0]), 1)[0]);
    assert_eq!(
        text(&value, 1),
        "#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity"
    );
    let pod = proto_definition(&pb, "io.k8s.api.core.v1.Pod");
    let ext = decode(bytes(&pod, 31)[0]);
    assert_eq!(text(&ext, 1), "x-kubernetes-group-version-kind");
    let yaml = text(&decode(bytes(&ext, 2)[0]), 2);
    let gvk: Value = serde_json::from_str(&yaml).unwrap();
    assert_eq!(gvk, json!([{"group": "", "kind": "Pod", "version": "v1"}]));
}

fn builtin(group: &str, kind: &str) -> ResourceInfo {
    let reg = registry();
    reg.all()
        .iter()
        .find(|r| !r.custom && r.group == group && r.kind == kind)
        .unwrap()
        .clone()
}

#[test]
fn strict_validation_of_built_in_kinds_follows_their_schemas_references() {
    let deploy = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}, "bogus": 1,
            "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {"f:replicas": {}}}}]},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "extra": true,
            "strategy": {"rollingUpdate": {"maxSurge": "25%"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
                {"name": "web", "image": "nginx", "resources": {"requests": {"cpu": 1}}},
                {"name": "side", "image": "busybox", "imagePullPolicy": "Always", "typo": "x",
                    "ports": [{"containerPort": 80, "hostPorts": 80}]}]}}}});
    let mut found = unknown_fields(&builtin("apps", "Deployment"), &deploy).unwrap();
    found.sort();
    assert_eq!(
        found,
        [
            "metadata.bogus",
            "spec.extra",
            "spec.template.spec.containers[1].ports[0].hostPorts",
            "spec.template.spec.containers[1].typo",
        ]
    );
}

#[test]
fn strict_validation_skips_patch_directives_and_checks_every_built_in_kind() {
    let patch = json!({"spec": {"template": {"spec": {
        "$setElementOrder/containers": [{"name": "web"}],
        "containers": [{"name": "web", "image": "nginx:2"}, {"name": "old", "$patch": "delete"}]}}}});
    let deploy = builtin("apps", "Deployment");
    assert_eq!(
        unknown_fields(&deploy, &patch).unwrap(),
        Vec::<String>::new()
    );
    let node = json!({"spec": {"providerID": "aws:///us-east-1a/i-1", "providerId": "x"}});
    assert_eq!(
        unknown_fields(&builtin("", "Node"), &node).unwrap(),
        ["spec.providerId"]
    );
    for r in registry().all().iter().filter(|r| !r.custom) {
        let bad = json!({"apiVersion": r.api_version(), "kind": r.kind, "bogus": 1});
        assert_eq!(unknown_fields(r, &bad).unwrap(), ["bogus"], "{}", r.kind);
    }
}
