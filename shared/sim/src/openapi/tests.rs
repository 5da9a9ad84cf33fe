//! The OpenAPI documents: what kubectl looks up in them, the v2 conversion, the protobuf
//! encoding (read back by a small decoder) and strict field detection. The built-in kinds'
//! documents are in `builtin_tests`.

use super::*;
use serde_json::json;

pub(super) fn registry() -> Registry {
    let mut reg = Registry::builtin();
    for crd in kerf_api::crds::all() {
        reg.add_crd(&serde_json::to_value(&crd).unwrap());
    }
    reg
}

#[test]
fn the_v3_root_lists_every_served_group_version() {
    let root = v3_root(&registry()).unwrap();
    let paths = root["paths"].as_object().unwrap();
    let mut keys: Vec<&String> = paths.keys().collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "api/v1",
            "apis/apps/v1",
            "apis/coordination.k8s.io/v1",
            "apis/events.k8s.io/v1",
            "apis/karpenter.k8s.aws/v1",
            "apis/karpenter.sh/v1",
            "apis/karpenter.sh/v1alpha1",
            "apis/policy/v1",
            "apis/storage.k8s.io/v1",
        ]
    );
    let url = paths["apis/karpenter.sh/v1"]["serverRelativeURL"]
        .as_str()
        .unwrap();
    assert!(
        url.starts_with("/openapi/v3/apis/karpenter.sh/v1?hash="),
        "{url}"
    );
    let core = paths["api/v1"]["serverRelativeURL"].as_str().unwrap();
    assert!(core.starts_with("/openapi/v3/api/v1?hash="), "{core}");
    assert!(v3(&registry(), "apis/batch/v1").unwrap().is_none());
}

#[test]
fn a_v3_document_tags_kinds_and_advertises_server_side_field_validation() {
    let doc = v3(&registry(), "apis/karpenter.sh/v1").unwrap().unwrap();
    let pool = &doc["components"]["schemas"]["sh.karpenter.v1.NodePool"];
    assert_eq!(
        pool["x-kubernetes-group-version-kind"],
        json!([{"group": "karpenter.sh", "version": "v1", "kind": "NodePool"}])
    );
    assert_eq!(
        pool["properties"]["metadata"]["allOf"][0]["$ref"],
        "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    );
    assert!(pool["properties"]["spec"]["properties"]["disruption"].is_object());
    let schemas = doc["components"]["schemas"].as_object().unwrap();
    assert!(schemas.contains_key(builtin::OBJECT_META));
    assert_eq!(
        unresolved(&doc, "#/components/schemas/"),
        Vec::<String>::new()
    );
    let patch = &doc["paths"]["/apis/karpenter.sh/v1/nodepools/{name}"]["patch"];
    assert_eq!(patch["x-kubernetes-group-version-kind"]["kind"], "NodePool");
    let params: Vec<&str> = patch["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert!(params.contains(&"fieldValidation"), "{params:?}");
}

#[test]
fn v2_drops_what_kubectl_cannot_read() {
    let v3 = json!({"type": "object", "properties": {
        "nullable": {"type": "string", "nullable": true, "description": "n"},
        "budget": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"},
            {"type": "string"}]},
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
            "properties": {"a": {"type": "string"}}},
        "list": {"type": "array", "items": {"type": "string", "maxLength": 63},
            "x-kubernetes-list-type": "set", "x-kubernetes-validations": [{"rule": "true"}]},
    }, "required": ["list"]});
    let v2 = v2::convert(&v3);
    assert_eq!(v2["properties"]["nullable"], json!({"description": "n"}));
    assert_eq!(v2["properties"]["budget"], json!({}));
    assert_eq!(v2["properties"]["free"], json!({"type": "object"}));
    assert_eq!(
        v2["properties"]["list"],
        json!({"type": "array", "items": {"type": "string", "maxLength": 63}})
    );
    assert_eq!(v2["required"], json!(["list"]));
}

/// The `$ref`s of a document (under `prefix`) that name no schema of the document.
pub(super) fn unresolved(doc: &Value, prefix: &str) -> Vec<String> {
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                if let Some(Value::String(r)) = m.get("$ref") {
                    out.push(r.clone());
                }
                m.values().for_each(|c| walk(c, out));
            }
            Value::Array(a) => a.iter().for_each(|c| walk(c, out)),
            _ => {}
        }
    }
    let mut refs = Vec::new();
    walk(doc, &mut refs);
    let defined = if prefix.starts_with("#/definitions/") {
        &doc["definitions"]
    } else {
        &doc["components"]["schemas"]
    };
    refs.retain(|r| {
        r.strip_prefix(prefix)
            .is_none_or(|name| defined.get(name).is_none())
    });
    refs.sort();
    refs.dedup();
    refs
}

/// A protobuf field: number and value (varint, or the bytes of a length-delimited one).
#[derive(Debug)]
pub(super) enum Field {
    Varint(u64),
    Bytes(Vec<u8>),
    Fixed64(u64),
}

fn varint(b: &[u8], i: &mut usize) -> u64 {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let byte = b[*i];
        *i += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return v;
        }
        shift += 7;
    }
}

pub(super) fn decode(b: &[u8]) -> Vec<(u64, Field)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let tag = varint(b, &mut i);
        let field = match tag & 7 {
            0 => Field::Varint(varint(b, &mut i)),
            1 => {
                let v = u64::from_le_bytes(b[i..i + 8].try_into().unwrap());
                i += 8;
                Field::Fixed64(v)
            }
            2 => {
                let n = varint(b, &mut i) as usize;
                i += n;
                Field::Bytes(b[i - n..i].to_vec())
            }
            w => panic!("wire type {w}"),
        };
        out.push((tag >> 3, field));
    }
    out
}

pub(super) fn bytes(fields: &[(u64, Field)], n: u64) -> Vec<&[u8]> {
    fields
        .iter()
        .filter_map(|(k, f)| match f {
            Field::Bytes(b) if *k == n => Some(b.as_slice()),
            _ => None,
        })
        .collect()
}

pub(super) fn text(fields: &[(u64, Field)], n: u64) -> String {
    String::from_utf8(bytes(fields, n)[0].to_vec()).unwrap()
}

#[test]
fn the_v2_protobuf_reads_back_as_the_json_document() {
    let doc = v2(&registry()).unwrap();
    let pb = proto::document(&doc);
    let top = decode(&pb);
    assert_eq!(text(&top, 1), "2.0");
    // definitions (9) → NamedSchema (1) → name (1), Schema (2).
    let defs = decode(bytes(&top, 9)[0]);
    let named: Vec<Vec<(u64, Field)>> = bytes(&defs, 1).into_iter().map(decode).collect();
    let names: Vec<String> = named.iter().map(|n| text(n, 1)).collect();
    assert_eq!(names.len(), doc["definitions"].as_object().unwrap().len());
    let pool = named
        .iter()
        .find(|n| text(n, 1) == "sh.karpenter.v1.NodePool")
        .unwrap();
    let schema = decode(bytes(pool, 2)[0]);
    // type (22) is a TypeItem holding "object"; properties (25) hold spec and metadata.
    assert_eq!(text(&decode(bytes(&schema, 22)[0]), 1), "object");
    let props = decode(bytes(&schema, 25)[0]);
    let prop_names: Vec<String> = bytes(&props, 1)
        .into_iter()
        .map(|p| text(&decode(p), 1))
        .collect();
    assert!(prop_names.contains(&"spec".to_string()), "{prop_names:?}");
    assert!(
        prop_names.contains(&"metadata".to_string()),
        "{prop_names:?}"
    );
    // The group-version-kind extension (31): NamedAny with its value as YAML (JSON text).
    let ext = decode(bytes(&schema, 31)[0]);
    assert_eq!(text(&ext, 1), "x-kubernetes-group-version-kind");
    let yaml = text(&decode(bytes(&ext, 2)[0]), 2);
    let gvk: serde_json::Value = serde_json::from_str(&yaml).unwrap();
    assert_eq!(gvk[0]["kind"], "NodePool");
}

#[test]
fn protobuf_numbers_encode_as_the_wire_format_says() {
    let doc = json!({"swagger": "2.0", "definitions": {"X": {"type": "integer",
        "minimum": 1.5, "maxLength": 300, "uniqueItems": true}}});
    let top = decode(&proto::document(&doc));
    let defs = decode(bytes(&top, 9)[0]);
    let schema = decode(bytes(&decode(bytes(&defs, 1)[0]), 2)[0]);
    let find = |n: u64| schema.iter().find(|(k, _)| *k == n).map(|(_, f)| f);
    assert!(matches!(find(9), Some(Field::Fixed64(v)) if f64::from_bits(*v) == 1.5));
    assert!(matches!(find(11), Some(Field::Varint(300))));
    assert!(matches!(find(16), Some(Field::Varint(1))));
}

#[test]
fn strict_validation_names_every_undeclared_field() {
    let schema = json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {
            "limits": {"type": "object", "additionalProperties": {"type": "string"}},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
            "items": {"type": "array", "items": {"type": "object",
                "properties": {"key": {"type": "string"}}}}}}}});
    let obj = json!({"apiVersion": "v1", "kind": "K", "metadata": {"name": "x"},
        "spec": {"limits": {"cpu": "1"}, "free": {"anything": 1}, "bogus": 1,
            "items": [{"key": "a"}, {"key": "b", "value": "c"}]}, "extra": {}});
    let mut found = crate::schema::unknown_fields(&schema, &obj);
    found.sort();
    assert_eq!(found, ["extra", "spec.bogus", "spec.items[1].value"]);
}
