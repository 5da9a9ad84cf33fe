//! Tests of CRD validation at admission.

use super::*;
use serde_json::json;

fn pool(spec_extra: Value, template_extra: Value) -> Value {
    let mut v = json!({"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "default"},
        "spec": {"template": {"spec": {
            "requirements": [
                {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
                {"key": "karpenter.k8s.aws/instance-generation", "operator": "Gt", "values": ["2"]}],
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}}},
            "limits": {"cpu": "1000"}}});
    merge(&mut v["spec"], spec_extra);
    merge(&mut v["spec"]["template"]["spec"], template_extra);
    v
}

fn merge(a: &mut Value, b: Value) {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                merge(a.entry(k).or_insert(Value::Null), v);
            }
        }
        (a, b) => *a = b,
    }
}

fn class(extra: Value) -> Value {
    let mut v = json!({"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "default"},
        "spec": {"role": "KarpenterNodeRole-demo", "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}]}});
    merge(&mut v["spec"], extra);
    v
}

fn has(errors: &[String], needle: &str) -> bool {
    errors.iter().any(|e| e.contains(needle))
}

#[test]
fn the_getting_started_objects_are_valid() {
    assert_eq!(
        validate(Kind::NodePool, &pool(json!({}), json!({})), None),
        Vec::<String>::new()
    );
    assert_eq!(
        validate(Kind::EC2NodeClass, &class(json!({})), None),
        Vec::<String>::new()
    );
}

#[test]
fn schema_and_cel_rules_name_the_field() {
    let bad_op = pool(
        json!({}),
        json!({"requirements": [{"key": "a", "operator": "Near", "values": ["x"]}]}),
    );
    let e = validate(Kind::NodePool, &bad_op, None);
    assert!(
        has(&e, "spec.template.spec.requirements[0].operator"),
        "{e:?}"
    );
    let no_values = pool(
        json!({}),
        json!({"requirements": [{"key": "a", "operator": "In", "values": []}]}),
    );
    let e = validate(Kind::NodePool, &no_values, None);
    assert!(
        has(
            &e,
            "requirements with operator 'In' must have a value defined"
        ),
        "{e:?}"
    );
    let both = class(json!({"instanceProfile": "p"}));
    assert!(
        !validate(Kind::EC2NodeClass, &both, None).is_empty(),
        "role and instanceProfile together"
    );
}

#[test]
fn what_a_schema_cannot_say() {
    let ct = pool(
        json!({}),
        json!({"requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["cheap"]}]}),
    );
    assert!(has(
        &validate(Kind::NodePool, &ct, None),
        "no valid capacity type"
    ));
    let dup = pool(
        json!({}),
        json!({"taints": [{"key": "a", "effect": "NoSchedule"}],
        "startupTaints": [{"key": "a", "effect": "NoSchedule"}]}),
    );
    assert!(has(
        &validate(Kind::NodePool, &dup, None),
        "spec.template.spec.startupTaints[0]: duplicate taint"
    ));
    let cron = pool(
        json!({"disruption": {"budgets": [{"nodes": "10%", "schedule": "0 25 * * *", "duration": "1h"}]}}),
        json!({}),
    );
    let e = validate(Kind::NodePool, &cron, None);
    assert!(
        has(&e, "spec.disruption.budgets[0].schedule: invalid cron"),
        "{e:?}"
    );
    let other = pool(
        json!({}),
        json!({"nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "x"}}),
    );
    assert!(has(
        &validate(Kind::NodePool, &other, None),
        "nodeClassRef: Kerf launches with karpenter.k8s.aws/EC2NodeClass"
    ));
    let family = class(json!({"amiSelectorTerms": [{"alias": "plan9@latest"}]}));
    let e = validate(Kind::EC2NodeClass, &family, None);
    assert!(!e.is_empty(), "unknown AMI family");
}

#[test]
fn nodeclaim_spec_is_immutable() {
    let c = json!({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "metadata": {"name": "c"},
        "spec": {"requirements": [{"key": "a", "operator": "In", "values": ["x"]}],
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}}});
    assert!(validate(Kind::NodeClaim, &c, None).is_empty());
    let mut changed = c.clone();
    changed["spec"]["requirements"][0]["values"] = json!(["y"]);
    assert!(has(
        &validate(Kind::NodeClaim, &changed, Some(&c)),
        "spec is immutable"
    ));
}
