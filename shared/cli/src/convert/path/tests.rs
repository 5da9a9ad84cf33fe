//! The field read from the error's position is the one a path-tracking deserializer reports,
//! for documents broken in every way a manifest can be.

use super::*;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use proptest::prelude::*;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// The field `serde_path_to_error` names for `text`, and the one read from the position;
/// `None` when `text` deserializes.
fn both<T: DeserializeOwned>(text: &str) -> Option<(String, String)> {
    let e = serde_json::from_str::<T>(text).err()?;
    let mut de = serde_json::Deserializer::from_str(text);
    let tracked = match serde_path_to_error::deserialize::<_, T>(&mut de) {
        Err(t) => t.path().to_string(),
        Ok(_) => "deserialized".into(),
    };
    Some((tracked, of_error(text, &e).to_string()))
}

fn pod() -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
        "spec": {
            "containers": [
                {"name": "a", "image": "nginx",
                 "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
                 "ports": [{"containerPort": 80}]},
                {"name": "b", "image": "busybox", "args": ["sleep", "1"]}
            ],
            "tolerations": [{"key": "k", "operator": "Exists"}],
            "nodeSelector": {"kubernetes.io/arch": "amd64"},
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [
                    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}
                ]}]
            }}},
            "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                "whenUnsatisfiable": "DoNotSchedule"}]
        }
    })
}

#[test]
fn the_named_fields_of_hand_broken_pods() {
    let cases = [
        (
            "/spec/containers/0/ports/0/containerPort",
            json!("eighty"),
            "spec.containers[0].ports[0].containerPort",
        ),
        (
            "/spec/containers/1/args",
            json!("sleep"),
            "spec.containers[1].args",
        ),
        (
            "/spec/containers/1/args/1",
            json!(1),
            "spec.containers[1].args[1]",
        ),
        ("/spec/containers/0", json!("x"), "spec.containers[0]"),
        (
            "/spec/containers/0/resources",
            json!([1]),
            "spec.containers[0].resources",
        ),
        ("/metadata/labels/app", json!(3), "metadata.labels.app"),
        (
            "/spec/topologySpreadConstraints/0/maxSkew",
            json!(true),
            "spec.topologySpreadConstraints[0].maxSkew",
        ),
        ("/spec", json!([]), "spec"),
    ];
    for (pointer, bad, want) in cases {
        let mut p = pod();
        *p.pointer_mut(pointer).unwrap() = bad;
        for text in [p.to_string(), serde_json::to_string_pretty(&p).unwrap()] {
            let (tracked, read) = both::<Pod>(&text).expect("broken");
            assert_eq!(tracked, want, "{pointer}");
            assert_eq!(read, want, "{pointer} in {text}");
        }
    }
}

/// A kind with required fields (the Kubernetes types default every missing one).
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Strict {
    #[allow(dead_code)]
    name: String,
    #[allow(dead_code)]
    items: Vec<Item>,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Item {
    #[allow(dead_code)]
    size: u32,
}

#[test]
fn a_missing_field_names_its_object_and_a_refused_key_itself() {
    let cases = [
        (r#"{"name":"a","items":[{"size":1},{}]}"#, "items[1]"),
        (r#"{"items":[]}"#, "."),
        (
            r#"{"name":"a","items":[{"size":1,"colour":2}]}"#,
            "items[0].colour",
        ),
        (
            r#"{ "name" : "a" , "items" : [ { "size" : 1 } , { "size" : 2 , "x" : 1 } ] }"#,
            "items[1].x",
        ),
        (r#"{"name":"a","items":{"size":1}}"#, "items"),
    ];
    for (text, want) in cases {
        assert_eq!(
            both::<Strict>(text).unwrap(),
            (want.into(), want.into()),
            "{text}"
        );
    }
}

#[test]
fn a_duplicated_key_is_named_itself_where_the_tracker_names_its_object() {
    let text = r#"{"spec":{"name":"a","name":"b","items":[]}}"#;
    #[derive(Debug, serde::Deserialize)]
    struct Outer {
        #[allow(dead_code)]
        spec: Strict,
    }
    assert_eq!(
        both::<Outer>(text).unwrap(),
        ("spec".into(), "spec.name".into())
    );
}

#[test]
fn a_broken_root_is_the_root() {
    assert_eq!(both::<Pod>("[]").unwrap(), (".".into(), ".".into()));
    assert_eq!(
        both::<Pod>("  {\"spec\": 4}  ").unwrap(),
        ("spec".into(), "spec".into())
    );
}

#[test]
fn keys_with_escapes_and_dots_are_named_as_written() {
    let text = r#"{"metadata":{"labels":{"a\"b.c/d":1}}}"#;
    let (tracked, read) = both::<Pod>(text).unwrap();
    assert_eq!(read, tracked);
    assert_eq!(read, "metadata.labels.a\"b.c/d");
}

/// Every path to a value in `v`, as JSON pointers.
fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => m.iter().for_each(|(k, c)| {
            pointers(
                c,
                format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                out,
            )
        }),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, c)| pointers(c, format!("{at}/{i}"), out)),
        _ => {}
    }
    out.push(at);
}

fn breakage() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!(7)),
        Just(json!(-1.5)),
        Just(json!("x")),
        Just(json!(true)),
        Just(json!(null)),
        Just(json!([1, "a"])),
        Just(json!({"name": 1})),
        Just(json!({})),
    ]
}

fn deployment() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
           "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}}, "spec": pod()["spec"].clone()}}})
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// One value replaced or one member removed anywhere in a Pod or a Deployment, written
    /// compact or indented: both ways name the same field.
    #[test]
    fn the_field_read_from_the_position_is_the_tracked_one(
        pick in any::<prop::sample::Index>(),
        bad in breakage(),
        remove in any::<bool>(),
        pretty in any::<bool>(),
        which in any::<bool>(),
    ) {
        let mut doc = if which { pod() } else { deployment() };
        let mut all = Vec::new();
        pointers(&doc, String::new(), &mut all);
        // Documents are read as the kind they name: apiVersion and kind always match.
        all.retain(|p| p != "/apiVersion" && p != "/kind");
        let at = pick.get(&all).clone();
        if remove && let Some((parent, key)) = at.rsplit_once('/')
            && let Some(Value::Object(m)) = doc.pointer_mut(parent) {
            m.remove(&key.replace("~1", "/").replace("~0", "~"));
        } else if let Some(v) = doc.pointer_mut(&at) {
            *v = bad;
        }
        let text = if pretty { serde_json::to_string_pretty(&doc).unwrap() } else { doc.to_string() };
        let got = if which { both::<Pod>(&text) } else { both::<Deployment>(&text) };
        if let Some((tracked, read)) = got {
            prop_assert_eq!(read, tracked, "{}", text);
        }
    }
}
