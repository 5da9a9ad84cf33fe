//! Retries and timeouts through the fault proxy: throttling and 5xx are retried within the
//! attempt budget, validation errors are not, held connections surface as Transient.

use std::time::{Duration, Instant};

use kerf_aws::{AwsError, Clients, instances, network};

use crate::seed::discovery_term;
use crate::support::moto::fresh;
use crate::support::proxy::{Fault, Proxy};
use crate::support::settings;

#[tokio::test]
async fn throttling_and_server_errors_are_retried() {
    let (_g, moto) = fresh().await;
    let proxy = Proxy::start(&moto.url).await;
    let c = crate::support::clients(&proxy.url).await;
    proxy.error("DescribeSubnets", 400, "RequestLimitExceeded", 2);
    network::subnets(&c.ec2, &[discovery_term()]).await.unwrap();
    assert_eq!(proxy.count("DescribeSubnets"), 3);
    proxy.error("DescribeInstances", 503, "Unavailable", 1);
    instances::list_cluster(&c.ec2, "x").await.unwrap();
    assert_eq!(proxy.count("DescribeInstances"), 2);
    proxy.error("SendMessage", 400, "ThrottlingException", 1);
    let q = c
        .sqs
        .create_queue()
        .queue_name("retry")
        .send()
        .await
        .unwrap();
    let queue = kerf_aws::queue::SqsQueue::new(c.sqs.clone(), q.queue_url().unwrap());
    queue.send("{}", 0).await.unwrap();
    assert_eq!(proxy.count("SendMessage"), 2);
}

#[tokio::test]
async fn exhausted_retries_and_validation_errors_are_typed() {
    let (_g, moto) = fresh().await;
    let proxy = Proxy::start(&moto.url).await;
    let c = crate::support::clients(&proxy.url).await;
    proxy.error("DescribeSubnets", 400, "RequestLimitExceeded", 10);
    let e = network::subnets(&c.ec2, &[discovery_term()])
        .await
        .unwrap_err();
    assert!(
        matches!(e, AwsError::Throttled(_)) && e.is_retryable(),
        "{e:?}"
    );
    assert_eq!(
        proxy.count("DescribeSubnets"),
        3,
        "standard mode, 3 attempts"
    );
    proxy.error("DescribeInstances", 400, "InvalidParameterValue", 1);
    let e = instances::list_cluster(&c.ec2, "x").await.unwrap_err();
    assert!(
        matches!(e, AwsError::InvalidRequest(_)) && !e.is_retryable(),
        "{e:?}"
    );
    assert_eq!(
        proxy.count("DescribeInstances"),
        1,
        "validation errors are not retried"
    );
    proxy.error("DescribeSecurityGroups", 403, "UnauthorizedOperation", 1);
    let e = network::security_groups(&c.ec2, &[discovery_term()])
        .await
        .unwrap_err();
    assert!(
        matches!(e, AwsError::Unauthorized(_)) && !e.is_retryable(),
        "{e:?}"
    );
    assert_eq!(proxy.count("DescribeSecurityGroups"), 1);
}

#[tokio::test]
async fn timeouts_surface_as_transient() {
    let (_g, moto) = fresh().await;
    let proxy = Proxy::start(&moto.url).await;
    let s = kerf_aws::AwsSettings {
        max_attempts: 2,
        attempt_timeout: Duration::from_millis(500),
        read_timeout: Duration::from_millis(400),
        ..settings(&proxy.url)
    };
    let c = Clients::load(&s).await;
    proxy.inject("DescribeInstances", Fault::Hang, 10);
    let start = Instant::now();
    let e = instances::describe(&c.ec2, &["i-1".to_string()])
        .await
        .unwrap_err();
    assert!(
        matches!(e, AwsError::Transient(_)) && e.is_retryable(),
        "{e:?}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(
        proxy.count("DescribeInstances"),
        2,
        "the timed-out attempt was retried once"
    );
}
