//! Each function role against what the function's code calls (both ways), and how the role
//! scopes it: EC2 mutations conditioned on the cluster tag as Karpenter's controller policy
//! does, `iam:PassRole` only for the node role, SQS only on the function's own queues, `*`
//! only where the action has no resource-level permission.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use crate::cfn::{self, Template};
use crate::table::{
    Function, IMPLIED, LOGGING, SECRET_ENV, SQS_TRIGGER, Trigger, UNTAGGED_LAUNCH_RESOURCES,
};
use crate::{derived, existing, template};

/// Every action the role must allow, with why.
fn needed(t: &Template, f: &Function) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for ((service, op), chain) in &derived(f.binary).aws {
        let action = format!("{service}:{op}");
        out.insert(action.clone(), chain.join(" > "));
        for (from, implied) in IMPLIED {
            if *from == action {
                for i in *implied {
                    out.insert(i.to_string(), format!("implied by {action}"));
                }
            }
        }
    }
    for a in LOGGING {
        out.insert(a.to_string(), "Lambda logging".into());
    }
    for trigger in f.triggers {
        if let Trigger::Queue(q) = trigger {
            for a in SQS_TRIGGER {
                out.insert(a.to_string(), format!("the SQS event source on {q}"));
            }
        }
    }
    if t.environment(f.logical_id).contains_key(SECRET_ENV.0) {
        out.insert(
            SECRET_ENV.1.to_string(),
            format!("{} names a secret", SECRET_ENV.0),
        );
    }
    out
}

fn actions(statement: &Value) -> Vec<String> {
    cfn::strings(&statement["Action"])
        .iter()
        .map(|a| a.as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn each_role_allows_exactly_the_actions_its_function_calls() {
    let t = template();
    for f in existing() {
        let role = t.role_of(f.logical_id);
        let have: BTreeSet<String> = t.statements(&role).iter().flat_map(actions).collect();
        let need = needed(&t, f);
        let missing: Vec<String> = need
            .iter()
            .filter(|(a, _)| !have.contains(*a))
            .map(|(a, why)| format!("{a} (called: {why})"))
            .collect();
        let extra: Vec<&String> = have.iter().filter(|a| !need.contains_key(*a)).collect();
        assert!(
            missing.is_empty(),
            "{role} lacks:\n  {}",
            missing.join("\n  ")
        );
        assert!(
            extra.is_empty(),
            "{role} allows actions no code of {} calls: {extra:?}",
            f.binary
        );
    }
}

#[test]
fn the_roles_that_resolve_node_classes_discover_their_placement_groups_and_reservations() {
    let t = template();
    let ec2 = |op: &str| ("ec2".to_string(), op.to_string());
    let mut resolvers = Vec::new();
    for f in existing() {
        let calls = &derived(f.binary).aws;
        let resolves = calls.contains_key(&ec2("DescribePlacementGroups"));
        assert_eq!(
            calls.contains_key(&ec2("DescribeCapacityReservations")),
            resolves,
            "{}: node classes' placement groups and capacity reservations go together",
            f.binary
        );
        let role = t.role_of(f.logical_id);
        let have: BTreeSet<String> = t.statements(&role).iter().flat_map(actions).collect();
        for a in [
            "ec2:DescribePlacementGroups",
            "ec2:DescribeCapacityReservations",
        ] {
            assert_eq!(have.contains(a), resolves, "{role}: {a}");
        }
        if resolves {
            resolvers.push(f.binary);
        }
    }
    assert_eq!(
        resolvers,
        ["kerf-provisioner", "kerf-interruption", "kerf-disruption"],
        "the functions that read node classes' catalogs or statuses"
    );
}

/// The resource type of an EC2 ARN (`…:subnet/*` → `subnet`).
fn arn_type(r: &Value) -> String {
    let text = match &r["Fn::Sub"] {
        Value::String(s) => s.clone(),
        _ => r.as_str().unwrap_or_default().to_string(),
    };
    let last = text.rsplit(':').next().unwrap_or_default();
    last.split('/').next().unwrap_or_default().to_string()
}

/// The queues a function reads (its triggers) or writes (its environment's queue URLs).
fn own_queues(t: &Template, f: &Function) -> Vec<Value> {
    let mut ids: BTreeSet<String> = f
        .triggers
        .iter()
        .filter_map(|t| match t {
            Trigger::Queue(q) => Some(q.to_string()),
            _ => None,
        })
        .collect();
    for (_, v) in t.environment(f.logical_id) {
        ids.extend(
            cfn::references(&v)
                .into_iter()
                .filter(|r| t.has_resource(r) && t.resource(r)["Type"] == "AWS::SQS::Queue"),
        );
    }
    ids.into_iter()
        .map(|q| json!({"Fn::GetAtt": [q, "Arn"]}))
        .collect()
}

fn check_statement(t: &Template, f: &Function, s: &Value) {
    let resources = cfn::strings(&s["Resource"]);
    let star = resources.iter().any(|r| r == "*");
    let condition = s["Condition"].to_string();
    for a in actions(s) {
        let (service, op) = a.split_once(':').unwrap_or_default();
        assert!(
            !service.is_empty() && op.chars().all(|c| c.is_ascii_alphanumeric()),
            "{}: action {a:?} is not one action",
            f.logical_id
        );
        let describe = service == "ec2" && op.starts_with("Describe");
        if describe {
            assert!(
                condition.contains("aws:RequestedRegion"),
                "{a}: not region-scoped"
            );
        } else if service == "ec2" {
            let untagged = resources
                .iter()
                .all(|r| UNTAGGED_LAUNCH_RESOURCES.contains(&arn_type(r).as_str()));
            assert!(
                untagged || condition.contains("kubernetes.io/cluster/${ClusterName}"),
                "{a} on {resources:?} is not conditioned on the cluster tag"
            );
        } else if a == "iam:PassRole" {
            assert_eq!(resources, [json!({"Fn::GetAtt": ["NodeRole", "Arn"]})]);
            assert!(
                condition.contains("iam:PassedToService"),
                "{a}: {condition}"
            );
        } else if a == "ssm:GetParameter" {
            let param = crate::secret_parameter(t, "WebhookSecret")["Fn::Sub"].clone();
            let arn = "arn:${AWS::Partition}:ssm:${AWS::Region}:${AWS::AccountId}:parameter";
            let text = format!("{arn}{}", param[0].as_str().unwrap_or_default());
            let expected = json!({"Fn::Sub": [text, param[1]]});
            assert_eq!(resources, [expected], "{a}: only the webhook secret");
        } else if a == "secretsmanager:GetSecretValue" {
            assert_eq!(resources, [json!({"Ref": "WebhookSecret"})], "{a}");
        } else if service == "sqs" {
            let own = own_queues(t, f);
            assert!(
                resources.iter().all(|r| own.contains(r)),
                "{a} on {resources:?}"
            );
        }
        assert!(
            !star || describe || a == "pricing:GetProducts",
            "{}: {a} on every resource",
            f.logical_id
        );
    }
}

#[test]
fn roles_scope_what_they_allow() {
    let t = template();
    for f in existing() {
        let role = t.role_of(f.logical_id);
        for s in t.statements(&role) {
            check_statement(&t, f, &s);
        }
        let r = &t.resource(&role)["Properties"];
        let principal = &r["AssumeRolePolicyDocument"]["Statement"][0]["Principal"]["Service"];
        assert_eq!(principal, "lambda.amazonaws.com", "{role}");
        for m in cfn::strings(&r["ManagedPolicyArns"]) {
            let [cond, _, otherwise] = m["Fn::If"].as_array().unwrap().as_slice() else {
                panic!("{role}: unconditional managed policy {m}");
            };
            assert!(cond == "InVpc" || cond == "TracingOn", "{role}: {m}");
            assert_eq!(otherwise["Ref"], "AWS::NoValue");
        }
    }
}

#[test]
fn the_node_role_joins_the_cluster_with_the_worker_policies() {
    let t = template();
    let role = &t.resource("NodeRole")["Properties"];
    let policies: BTreeSet<String> = cfn::strings(&role["ManagedPolicyArns"])
        .iter()
        .map(|p| {
            p["Fn::Sub"]
                .as_str()
                .unwrap()
                .rsplit('/')
                .next()
                .unwrap()
                .to_string()
        })
        .collect();
    let expected = [
        "AmazonEC2ContainerRegistryPullOnly",
        "AmazonEKSWorkerNodePolicy",
        "AmazonEKS_CNI_Policy",
        "AmazonSSMManagedInstanceCore",
    ];
    assert_eq!(policies, expected.iter().map(|s| s.to_string()).collect());
    let profile = &t.resource("NodeInstanceProfile")["Properties"];
    assert_eq!(profile["Roles"], json!([{"Ref": "NodeRole"}]));
    assert_eq!(profile["InstanceProfileName"], json!({"Ref": "NodeRole"}));
    let entry = &t.resource("NodeAccessEntry")["Properties"];
    assert_eq!(entry["Type"], "EC2_LINUX");
    assert_eq!(
        entry["PrincipalArn"],
        json!({"Fn::GetAtt": ["NodeRole", "Arn"]})
    );
}
