//! Tests of taking a batch in: SNS notifications unwrapped, no-ops counted and kept quiet.

use std::sync::Arc;

use super::*;
use crate::log::{Level, MemorySink};
use crate::ports::ManualClock;

fn spot_warning(instance: &str) -> Value {
    json!({"version": "0", "id": "w-1", "detail-type": "EC2 Spot Instance Interruption Warning",
           "source": "aws.ec2", "time": "2027-01-01T00:05:00Z", "region": "us-west-2",
           "resources": [], "detail": {"instance-id": instance, "instance-action": "terminate"}})
}

/// An SNS notification carrying `message`, as SNS delivers it into SQS.
fn sns(message: &str) -> String {
    json!({"Type": "Notification", "MessageId": "5b2c", "TopicArn": "arn:aws:sns:us-west-2:123456789012:t",
           "Message": message, "Timestamp": "2027-01-01T00:05:01.000Z", "SignatureVersion": "1"})
    .to_string()
}

/// An Auto Scaling lifecycle hook's test notification.
fn asg_test() -> Value {
    json!({"AccountId": "123456789012", "RequestId": "9f3c", "AutoScalingGroupARN": "arn:aws:autoscaling:x",
           "AutoScalingGroupName": "my-asg", "Service": "AWS Auto Scaling",
           "Event": "autoscaling:TEST_NOTIFICATION", "Time": "2027-01-01T00:05:00.000Z"})
}

/// An Auto Scaling lifecycle hook's transition message.
fn asg_transition() -> Value {
    json!({"Origin": "AutoScalingGroup", "Destination": "EC2", "Service": "AWS Auto Scaling",
           "LifecycleHookName": "drain", "LifecycleTransition": "autoscaling:EC2_INSTANCE_TERMINATING",
           "EC2InstanceId": "i-1", "LifecycleActionToken": "71514b9d", "AutoScalingGroupName": "my-asg"})
}

#[test]
fn an_interruption_inside_an_sns_notification_is_unwrapped() {
    let i = read(&sns(&spot_warning("i-1").to_string())).unwrap();
    assert_eq!(
        i,
        Interruption::SpotInterrupted {
            instance_id: "i-1".into(),
            action: Some("terminate".into())
        }
    );
}

#[test]
fn messages_that_are_no_events_are_no_ops_unreadable_ones_errors() {
    let bodies = [
        ("an SNS notification of text", sns("hello")),
        (
            "an SNS notification of other JSON",
            sns(&asg_test().to_string()),
        ),
        (
            "an SNS subscription confirmation",
            json!({"Type": "SubscriptionConfirmation", "Message": "confirm"}).to_string(),
        ),
        ("a lifecycle hook test", asg_test().to_string()),
        ("a lifecycle hook transition", asg_transition().to_string()),
        ("an empty body", String::new()),
        ("an empty object", "{}".into()),
    ];
    for (what, body) in bodies {
        assert_eq!(read(&body), Ok(Interruption::NoOp), "{what}");
    }
    // What stays an error: a body that is no JSON object, an event missing its fields.
    assert!(read("not json").is_err());
    assert!(read("[1, 2]").is_err());
    let mut bad = spot_warning("i-1");
    bad["detail"] = json!({});
    assert!(
        read(&bad.to_string()).is_err(),
        "a spot warning naming no instance"
    );
    assert!(
        read(&sns(&bad.to_string())).is_err(),
        "also inside a notification"
    );
}

fn messages(bodies: &[(&str, String)]) -> Vec<Message> {
    bodies
        .iter()
        .map(|(id, body)| Message {
            id: (*id).into(),
            body: body.clone(),
            sent: None,
        })
        .collect()
}

/// The counts of `karpenter_interruption_received_messages_total` by `message_type`.
fn received(metrics: &Metrics) -> Vec<(String, f64)> {
    let now = "2027-01-01T00:06:00Z".parse().unwrap();
    let mut out: Vec<(String, f64)> = metrics
        .flush(now)
        .into_iter()
        .filter_map(|d| {
            let n = d.get(INTERRUPTION_RECEIVED)?.as_f64()?;
            Some((d["message_type"].as_str()?.to_string(), n))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn no_ops_are_dropped_counted_and_logged_at_debug_only() {
    let sink = Arc::new(MemorySink::default());
    let now = "2027-01-01T00:06:00Z".parse().unwrap();
    let log = Logger::new(sink.clone(), Arc::new(ManualClock::new(now)), Level::Debug);
    let metrics = Metrics::default();
    let batch = messages(&[
        ("sns-spot", sns(&spot_warning("i-1").to_string())),
        ("sns-text", sns("hello")),
        ("asg-test", asg_test().to_string()),
        ("asg-transition", asg_transition().to_string()),
        ("garbled", "{".into()),
    ]);
    let intake = triage(&log, &metrics, now, &batch);
    assert_eq!(
        intake.dropped, 4,
        "the no-ops and the garbled body are deleted"
    );
    let ids: Vec<&str> = intake.work.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids, ["sns-spot"], "the unwrapped warning is acted on");
    assert_eq!(
        received(&metrics),
        [
            ("no_op".to_string(), 3.0),
            ("spot_interrupted".to_string(), 1.0),
            ("unknown".to_string(), 1.0)
        ]
    );
    let entries = sink.entries();
    let warned: Vec<&Value> = entries.iter().filter(|e| e["level"] == "WARN").collect();
    assert_eq!(
        warned.len(),
        1,
        "only the garbled body is warned about: {warned:?}"
    );
    assert_eq!(warned[0]["message-id"], "garbled");
    let quiet: Vec<&Value> = entries
        .iter()
        .filter(|e| e["message"] == "ignoring no-op interruption message")
        .collect();
    assert_eq!(quiet.len(), 3);
    assert!(quiet.iter().all(|e| e["level"] == "DEBUG"));
}
