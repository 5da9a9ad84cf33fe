//! The interruption queue's EventBridge rules against the event parser in
//! `shared/control/src/interrupt/events.rs`: one rule per (source, detail-type) that
//! `classify` handles and none for anything else, the state-change rule limited to the states `state_change` acts
//! on, the health rule to the `service` and `eventTypeCategory` that `health` accepts; every
//! rule targets the queue, which EventBridge may write to.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};
use syn::visit::Visit;

use crate::{root, template};

fn function<'a>(file: &'a syn::File, name: &str) -> &'a syn::ItemFn {
    file.items
        .iter()
        .find_map(|i| match i {
            syn::Item::Fn(f) if f.sig.ident == name => Some(f),
            _ => None,
        })
        .unwrap_or_else(|| panic!("events.rs has no fn {name}"))
}

fn lit_str(p: &syn::Pat) -> Option<String> {
    match p {
        syn::Pat::Lit(syn::PatLit {
            lit: syn::Lit::Str(s),
            ..
        }) => Some(s.value()),
        _ => None,
    }
}

/// Match arms: tuple patterns of string literals, and or-patterns of string literals whose
/// body is not `NoOp`.
#[derive(Default)]
struct Arms {
    pairs: BTreeSet<(String, String)>,
    states: BTreeSet<String>,
}

impl<'ast> Visit<'ast> for Arms {
    fn visit_arm(&mut self, arm: &'ast syn::Arm) {
        let body = quote_free(&arm.body);
        match &arm.pat {
            syn::Pat::Tuple(t) => {
                let lits: Vec<String> = t.elems.iter().filter_map(lit_str).collect();
                if let [a, b] = lits.as_slice() {
                    self.pairs.insert((a.clone(), b.clone()));
                }
            }
            syn::Pat::Or(o) if !body.contains("NoOp") => {
                self.states.extend(o.cases.iter().filter_map(lit_str));
            }
            _ => {}
        }
        syn::visit::visit_arm(self, arm);
    }
}

/// The identifiers of an expression, joined (enough to tell a `NoOp` arm).
fn quote_free(e: &syn::Expr) -> String {
    #[derive(Default)]
    struct Idents(Vec<String>);
    impl<'ast> Visit<'ast> for Idents {
        fn visit_ident(&mut self, i: &'ast syn::Ident) {
            self.0.push(i.to_string());
        }
    }
    let mut v = Idents::default();
    v.visit_expr(e);
    v.0.join(" ")
}

/// `d.get("key")… == Some("value")` comparisons.
#[derive(Default)]
struct Equals(BTreeMap<String, String>);

impl<'ast> Visit<'ast> for Equals {
    fn visit_expr_binary(&mut self, b: &'ast syn::ExprBinary) {
        let key = string_args(&b.left, "get");
        let value = string_args(&b.right, "Some");
        if let (Some(k), Some(v)) = (key, value) {
            self.0.insert(k, v);
        }
        syn::visit::visit_expr_binary(self, b);
    }
}

/// The first string literal passed to a call or method named `name` within `e`.
fn string_args(e: &syn::Expr, name: &str) -> Option<String> {
    struct Find<'n>(&'n str, Option<String>);
    impl<'ast> Visit<'ast> for Find<'_> {
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            if m.method == self.0 {
                self.1 = self.1.take().or_else(|| first_lit(m.args.iter()));
            }
            syn::visit::visit_expr_method_call(self, m);
        }
        fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
            if matches!(&*c.func, syn::Expr::Path(p) if p.path.is_ident(self.0)) {
                self.1 = self.1.take().or_else(|| first_lit(c.args.iter()));
            }
            syn::visit::visit_expr_call(self, c);
        }
    }
    let mut f = Find(name, None);
    f.visit_expr(e);
    f.1
}

fn first_lit<'a>(mut args: impl Iterator<Item = &'a syn::Expr>) -> Option<String> {
    match args.next()? {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => Some(s.value()),
        _ => None,
    }
}

#[test]
fn interruption_rules_cover_exactly_the_events_the_parser_handles() {
    let path = root().join("shared/control/src/interrupt/events.rs");
    let file = syn::parse_file(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut arms = Arms::default();
    arms.visit_item_fn(function(&file, "classify"));
    let mut states = Arms::default();
    states.visit_item_fn(function(&file, "state_change"));
    let mut health = Equals::default();
    health.visit_item_fn(function(&file, "health"));
    assert!(arms.pairs.len() >= 5, "{:?}", arms.pairs);

    let t = template();
    let mut ruled = BTreeSet::new();
    for id in t.of_type("AWS::Events::Rule") {
        let p = &t.resource(&id)["Properties"];
        let targets = p["Targets"].as_array().unwrap();
        assert_eq!(targets.len(), 1, "{id}");
        assert_eq!(
            targets[0]["Arn"],
            json!({"Fn::GetAtt": ["InterruptionQueue", "Arn"]})
        );
        let pattern = &p["EventPattern"];
        let one = |v: &Value| {
            let a = v.as_array().unwrap();
            assert_eq!(a.len(), 1, "{id}: {v}");
            a[0].as_str().unwrap().to_string()
        };
        let pair = (one(&pattern["source"]), one(&pattern["detail-type"]));
        let detail = pattern["detail"].as_object().cloned().unwrap_or_default();
        let filtered: BTreeMap<String, Value> = detail.into_iter().collect();
        match pair.1.as_str() {
            "EC2 Instance State-change Notification" => {
                let expected: Vec<Value> = ["stopping", "stopped", "shutting-down", "terminated"]
                    .iter()
                    .filter(|s| states.states.contains(**s))
                    .map(|s| json!(s))
                    .collect();
                assert_eq!(states.states.len(), expected.len(), "{:?}", states.states);
                assert_eq!(
                    filtered,
                    BTreeMap::from([("state".into(), json!(expected))])
                );
            }
            "AWS Health Event" => {
                let expected: BTreeMap<String, Value> = health
                    .0
                    .iter()
                    .map(|(k, v)| (k.clone(), json!([v])))
                    .collect();
                assert_eq!(expected.len(), 2, "{:?}", health.0);
                assert_eq!(filtered, expected, "{id}");
            }
            _ => assert!(filtered.is_empty(), "{id}: {filtered:?}"),
        }
        assert!(ruled.insert(pair), "{id} repeats a rule");
    }
    assert_eq!(ruled, arms.pairs);

    let policy = &t.resource("InterruptionQueuePolicy")["Properties"]["PolicyDocument"];
    let allow = &policy["Statement"][0];
    assert_eq!(allow["Action"], "sqs:SendMessage");
    assert!(
        allow["Principal"]["Service"]
            .to_string()
            .contains("events.amazonaws.com")
    );
    let q = &t.resource("InterruptionQueue")["Properties"];
    assert_eq!(q["MessageRetentionPeriod"], 300);
    assert_eq!(q["SqsManagedSseEnabled"], true);
}

#[test]
fn only_the_interruption_rules_may_send_to_the_queue() {
    let t = template();
    let policies = t.of_type("AWS::SQS::QueuePolicy");
    assert_eq!(policies.len(), 1, "{policies:?}");
    let doc = &t.resource(&policies[0])["Properties"]["PolicyDocument"];
    let allows: Vec<&Value> = doc["Statement"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["Effect"] == "Allow")
        .collect();
    assert_eq!(allows.len(), 1, "{allows:?}");
    let allow = allows[0];
    assert_eq!(
        allow["Principal"],
        json!({"Service": "events.amazonaws.com"}),
        "EventBridge alone, no sqs.amazonaws.com"
    );
    assert_eq!(allow["Action"], "sqs:SendMessage");
    let sources: BTreeSet<String> = allow["Condition"]["ArnEquals"]["aws:SourceArn"]
        .as_array()
        .expect("aws:SourceArn lists the rules")
        .iter()
        .map(Value::to_string)
        .collect();
    let rules: BTreeSet<String> = t
        .of_type("AWS::Events::Rule")
        .into_iter()
        .map(|id| json!({"Fn::GetAtt": [id, "Arn"]}).to_string())
        .collect();
    assert_eq!(sources, rules, "every rule, and only the rules");
}

#[test]
fn every_alarm_notifies_the_required_topic() {
    let t = template();
    let p = &t.doc["Parameters"]["AlarmTopicArn"];
    assert!(p.get("Default").is_none(), "the topic is required: {p}");
    assert!(p["AllowedPattern"].as_str().unwrap().contains(":sns:"));
    let alarms = t.of_type("AWS::CloudWatch::Alarm");
    assert!(!alarms.is_empty());
    for id in alarms {
        assert_eq!(
            t.resource(&id)["Properties"]["AlarmActions"],
            json!([{"Ref": "AlarmTopicArn"}]),
            "{id}"
        );
    }
}
