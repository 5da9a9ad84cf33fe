//! Alarms and outputs: every dead-letter queue and every function's errors raise an alarm, the
//! age of the oldest interruption message too, and the outputs carry what the cluster side
//! needs (`kerf webhooks` reads the webhook URL and cluster name; the secret, the roles and the
//! node role are for the install steps).

use serde_json::json;

use crate::cfn;
use crate::{existing, template};

fn alarmed(t: &cfn::Template, namespace: &str, metric: &str, resource: &str) -> bool {
    t.of_type("AWS::CloudWatch::Alarm").iter().any(|a| {
        let p = &t.resource(a)["Properties"];
        p["Namespace"] == namespace
            && p["MetricName"] == metric
            && cfn::references(&p["Dimensions"]).contains(resource)
    })
}

#[test]
fn dead_letters_errors_and_late_interruptions_raise_alarms() {
    let t = template();
    for q in t.of_type("AWS::SQS::Queue") {
        let target = &t.resource(&q)["Properties"]["RedrivePolicy"]["deadLetterTargetArn"];
        for dlq in cfn::references(target) {
            let m = "ApproximateNumberOfMessagesVisible";
            assert!(alarmed(&t, "AWS/SQS", m, &dlq), "no alarm on {dlq}");
        }
    }
    for f in existing() {
        assert!(
            alarmed(&t, "AWS/Lambda", "Errors", f.logical_id),
            "{}",
            f.logical_id
        );
    }
    let age = "ApproximateAgeOfOldestMessage";
    assert!(alarmed(&t, "AWS/SQS", age, "InterruptionQueue"));
}

#[test]
fn the_webhooks_cost_is_bounded_and_abuse_raises_alarms() {
    let t = template();
    assert!(alarmed(&t, "AWS/Lambda", "Throttles", "WebhookFunction"));
    let unauthorized = t.of_type("AWS::CloudWatch::Alarm").into_iter().find(|a| {
        let p = &t.resource(a)["Properties"];
        p["Namespace"] == kerf_control::metrics::NAMESPACE
            && p["MetricName"] == kerf_control::metrics::names::WEBHOOK_UNAUTHORIZED
    });
    assert!(
        unauthorized.is_some(),
        "no alarm on refused webhook requests"
    );
    let reserved = &t.resource("WebhookFunction")["Properties"]["ReservedConcurrentExecutions"];
    assert_eq!(reserved, &json!({"Ref": "WebhookConcurrency"}));
    let p = &t.doc["Parameters"]["WebhookConcurrency"];
    let max = p["MaxValue"].as_u64().unwrap();
    assert!(
        max <= 100,
        "a flood may take {max} of the account's 1000 executions"
    );
    assert!(p["Default"].as_u64().unwrap() <= max);
}

#[test]
fn outputs_carry_what_the_cluster_side_needs() {
    let t = template();
    let out = &t.doc["Outputs"];
    let value = |k: &str| out[k]["Value"].clone();
    assert_eq!(
        value(kerf_cli::webhooks::CLUSTER_NAME),
        json!({"Ref": "ClusterName"})
    );
    assert!(value(kerf_cli::webhooks::WEBHOOK_URL).is_object());
    assert_eq!(value("WebhookSecretArn"), json!({"Ref": "WebhookSecret"}));
    assert_eq!(value("NodeRoleName"), json!({"Ref": "NodeRole"}));
    assert_eq!(
        value("NodeRoleArn"),
        json!({"Fn::GetAtt": ["NodeRole", "Arn"]})
    );
    for f in existing() {
        let role = t.role_of(f.logical_id);
        let key = format!("{role}Arn");
        assert_eq!(value(&key), json!({"Fn::GetAtt": [role, "Arn"]}), "{key}");
    }
    for q in [
        "ProvisioningQueue",
        "InterruptionQueue",
        "TerminationQueue",
        "DisruptionQueue",
    ] {
        assert_eq!(
            value(&format!("{q}Name")),
            json!({"Fn::GetAtt": [q, "QueueName"]})
        );
        assert_eq!(value(&format!("{q}Arn")), json!({"Fn::GetAtt": [q, "Arn"]}));
    }
}
