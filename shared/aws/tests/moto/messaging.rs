//! SQS and EventBridge against moto: send with delay, receive, delete; a rule delivering an
//! interruption event to the queue, parsed into a typed message.

use kerf_aws::events::{self, Interruption};
use kerf_aws::queue::SqsQueue;
use serde_json::json;

use crate::support::clients;
use crate::support::moto::fresh;

#[tokio::test]
async fn sqs_send_receive_delete_with_delay() {
    let (_g, moto) = fresh().await;
    let c = clients(&moto.url).await;
    c.sqs
        .create_queue()
        .queue_name("kerf-work")
        .send()
        .await
        .unwrap();
    let q = SqsQueue::by_name(c.sqs.clone(), "kerf-work").await.unwrap();
    q.send("later", 60).await.unwrap();
    assert!(
        q.receive(10, 0, None).await.unwrap().is_empty(),
        "delayed message is not visible yet"
    );
    q.send("now", 0).await.unwrap();
    let got = q.receive(10, 0, None).await.unwrap();
    assert_eq!(
        got.iter().map(|m| m.body.as_str()).collect::<Vec<_>>(),
        vec!["now"]
    );
    assert_eq!(got[0].receive_count, Some(1));
    assert!(got[0].sent_timestamp_ms.is_some());
    q.delete(&got[0].receipt_handle).await.unwrap();
    assert!(
        SqsQueue::by_name(c.sqs.clone(), "missing")
            .await
            .unwrap_err()
            .is_not_found()
    );
}

#[tokio::test]
async fn eventbridge_rule_delivers_a_parseable_spot_warning() {
    let (_g, moto) = fresh().await;
    let c = clients(&moto.url).await;
    c.sqs
        .create_queue()
        .queue_name("kerf-interruption")
        .send()
        .await
        .unwrap();
    let q = SqsQueue::by_name(c.sqs.clone(), "kerf-interruption")
        .await
        .unwrap();
    let pattern =
        json!({"source": ["aws.ec2"], "detail-type": ["EC2 Spot Instance Interruption Warning"]});
    c.events
        .put_rule()
        .name("spot")
        .event_pattern(pattern.to_string())
        .send()
        .await
        .unwrap();
    let target = aws_sdk_eventbridge::types::Target::builder()
        .id("1")
        .arn("arn:aws:sqs:us-west-2:123456789012:kerf-interruption")
        .build()
        .unwrap();
    c.events
        .put_targets()
        .rule("spot")
        .targets(target)
        .send()
        .await
        .unwrap();
    let detail = json!({"instance-id": "i-0abc", "instance-action": "terminate"});
    let arn = vec!["arn:aws:ec2:us-west-2:123456789012:instance/i-0abc".to_string()];
    events::put_event(
        &c.events,
        "aws.ec2",
        "EC2 Spot Instance Interruption Warning",
        &detail,
        &arn,
    )
    .await
    .unwrap();
    events::put_event(&c.events, "my.app", "Other", &json!({}), &[])
        .await
        .unwrap();
    let msgs = q.receive(10, 1, None).await.unwrap();
    assert_eq!(msgs.len(), 1, "only the matching event is delivered");
    let e = events::parse(&msgs[0].body).unwrap();
    assert_eq!(e.envelope.account, None, "moto omits account");
    assert_eq!(
        e.interruption,
        Interruption::SpotInterrupted {
            instance_id: "i-0abc".into(),
            action: Some("terminate".into())
        }
    );
}
