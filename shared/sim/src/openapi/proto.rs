//! The OpenAPI v2 document in protobuf, the only encoding kubectl's `/openapi/v2` client
//! reads: the messages of gnostic's `openapi.v2` package (field numbers from its
//! OpenAPIv2.proto), written by hand for the parts the document uses. Vendor extensions,
//! defaults and enum values are `Any` messages carrying YAML (JSON text is YAML).

use serde_json::Value;

/// The media type of the reply. kubectl asks for `…spec.v2@v1.0+protobuf`, but Go's MIME
/// parser refuses the `@` in a Content-Type, so kube-apiserver answers with a dot.
pub const MEDIA_TYPE: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// A message being written.
#[derive(Default)]
struct Msg(Vec<u8>);

impl Msg {
    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }

    fn tag(&mut self, field: u32, wire: u8) {
        self.varint((u64::from(field) << 3) | u64::from(wire));
    }

    fn bytes(&mut self, field: u32, b: &[u8]) {
        self.tag(field, 2);
        self.varint(b.len() as u64);
        self.0.extend_from_slice(b);
    }

    fn string(&mut self, field: u32, s: &str) {
        if !s.is_empty() {
            self.bytes(field, s.as_bytes());
        }
    }

    fn message(&mut self, field: u32, m: Msg) {
        self.bytes(field, &m.0);
    }

    fn boolean(&mut self, field: u32, b: bool) {
        if b {
            self.tag(field, 0);
            self.varint(1);
        }
    }

    fn int64(&mut self, field: u32, v: Option<i64>) {
        if let Some(v) = v.filter(|v| *v != 0) {
            self.tag(field, 0);
            // Two's complement, as protobuf encodes negative int64.
            self.varint(v as u64);
        }
    }

    fn double(&mut self, field: u32, v: Option<f64>) {
        if let Some(v) = v {
            self.tag(field, 1);
            self.0.extend_from_slice(&v.to_le_bytes());
        }
    }

    /// `Any { yaml = 2 }`.
    fn any(&mut self, field: u32, v: &Value) {
        let mut a = Msg::default();
        a.string(2, &v.to_string());
        self.message(field, a);
    }

    /// `repeated NamedAny` of the `x-` keys of `obj`.
    fn extensions(&mut self, field: u32, obj: &Value) {
        for (k, v) in obj.as_object().into_iter().flatten() {
            if k.starts_with("x-") {
                let mut named = Msg::default();
                named.string(1, k);
                named.any(2, v);
                self.message(field, named);
            }
        }
    }
}

/// `openapi.v2.Document`.
pub fn document(doc: &Value) -> Vec<u8> {
    let mut m = Msg::default();
    m.string(1, doc["swagger"].as_str().unwrap_or("2.0"));
    let mut info = Msg::default();
    info.string(1, doc["info"]["title"].as_str().unwrap_or_default());
    info.string(2, doc["info"]["version"].as_str().unwrap_or_default());
    m.message(2, info);
    let mut paths = Msg::default();
    for (name, item) in doc["paths"].as_object().into_iter().flatten() {
        let mut named = Msg::default();
        named.string(1, name);
        named.message(2, path_item(item));
        paths.message(2, named);
    }
    m.message(8, paths);
    let mut defs = Msg::default();
    for (name, s) in doc["definitions"].as_object().into_iter().flatten() {
        defs.message(1, named_schema(name, s));
    }
    m.message(9, defs);
    m.0
}

fn named_schema(name: &str, s: &Value) -> Msg {
    let mut named = Msg::default();
    named.string(1, name);
    named.message(2, schema(s));
    named
}

fn int(s: &Value, k: &str) -> Option<i64> {
    s[k].as_i64()
}

/// `openapi.v2.Schema`.
fn schema(s: &Value) -> Msg {
    let mut m = Msg::default();
    let text = |k: &str| s[k].as_str().unwrap_or_default();
    m.string(1, text("$ref"));
    m.string(2, text("format"));
    m.string(3, text("title"));
    m.string(4, text("description"));
    if let Some(d) = s.get("default") {
        m.any(5, d);
    }
    m.double(6, s["multipleOf"].as_f64());
    m.double(7, s["maximum"].as_f64());
    m.boolean(8, s["exclusiveMaximum"] == true);
    m.double(9, s["minimum"].as_f64());
    m.boolean(10, s["exclusiveMinimum"] == true);
    m.int64(11, int(s, "maxLength"));
    m.int64(12, int(s, "minLength"));
    m.string(13, text("pattern"));
    m.int64(14, int(s, "maxItems"));
    m.int64(15, int(s, "minItems"));
    m.boolean(16, s["uniqueItems"] == true);
    m.int64(17, int(s, "maxProperties"));
    m.int64(18, int(s, "minProperties"));
    for r in s["required"].as_array().into_iter().flatten() {
        m.string(19, r.as_str().unwrap_or_default());
    }
    for e in s["enum"].as_array().into_iter().flatten() {
        m.any(20, e);
    }
    match &s["additionalProperties"] {
        Value::Bool(b) => {
            let mut a = Msg::default();
            a.tag(2, 0);
            a.varint(u64::from(*b));
            m.message(21, a);
        }
        v @ Value::Object(_) => {
            let mut a = Msg::default();
            a.message(1, schema(v));
            m.message(21, a);
        }
        _ => {}
    }
    if let Some(t) = s["type"].as_str() {
        let mut ty = Msg::default();
        ty.string(1, t);
        m.message(22, ty);
    }
    items(&mut m, &s["items"]);
    for a in s["allOf"].as_array().into_iter().flatten() {
        m.message(24, schema(a));
    }
    if let Some(props) = s["properties"].as_object() {
        let mut p = Msg::default();
        for (k, v) in props {
            p.message(1, named_schema(k, v));
        }
        m.message(25, p);
    }
    m.extensions(31, s);
    m
}

/// `ItemsItem { repeated Schema schema = 1 }` (one schema, or a tuple's).
fn items(m: &mut Msg, v: &Value) {
    let list: Vec<&Value> = match v {
        Value::Object(_) => vec![v],
        Value::Array(a) => a.iter().collect(),
        _ => return,
    };
    let mut it = Msg::default();
    for s in list {
        it.message(1, schema(s));
    }
    m.message(23, it);
}

/// `openapi.v2.PathItem`.
fn path_item(item: &Value) -> Msg {
    let mut m = Msg::default();
    for (field, verb) in [
        (2, "get"),
        (3, "put"),
        (4, "post"),
        (5, "delete"),
        (8, "patch"),
    ] {
        if let Some(op) = item.get(verb) {
            m.message(field, operation(op));
        }
    }
    m
}

/// `openapi.v2.Operation`: id, query parameters, responses and extensions.
fn operation(op: &Value) -> Msg {
    let mut m = Msg::default();
    m.string(5, op["operationId"].as_str().unwrap_or_default());
    for p in op["parameters"].as_array().into_iter().flatten() {
        // QueryParameterSubSchema in NonBodyParameter in Parameter in ParametersItem.
        let mut q = Msg::default();
        q.string(2, p["in"].as_str().unwrap_or("query"));
        q.string(4, p["name"].as_str().unwrap_or_default());
        q.string(6, p["type"].as_str().unwrap_or("string"));
        q.boolean(20, p["uniqueItems"] == true);
        let mut non_body = Msg::default();
        non_body.message(3, q);
        let mut param = Msg::default();
        param.message(2, non_body);
        let mut item = Msg::default();
        item.message(1, param);
        m.message(8, item);
    }
    let mut responses = Msg::default();
    for (code, r) in op["responses"].as_object().into_iter().flatten() {
        let mut resp = Msg::default();
        resp.string(1, r["description"].as_str().unwrap_or_default());
        let mut value = Msg::default();
        value.message(1, resp);
        let mut named = Msg::default();
        named.string(1, code);
        named.message(2, value);
        responses.message(1, named);
    }
    m.message(9, responses);
    m.extensions(13, op);
    m
}
