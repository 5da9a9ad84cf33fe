//! Settings and SDK client construction: region, endpoint overrides, retry and timeouts.
//!
//! Retries use the SDK's standard mode (throttling, 5xx and transient network errors are
//! retried with bounded exponential backoff; validation errors are not). Every call has a
//! connect timeout, a per-attempt timeout and an overall operation timeout.

use std::time::Duration;

use aws_config::retry::RetryConfig;
use aws_config::timeout::TimeoutConfig;
use aws_config::{BehaviorVersion, Region, SdkConfig};

/// How the adapter talks to AWS.
#[derive(Clone, Debug, PartialEq)]
pub struct AwsSettings {
    pub region: String,
    /// Overrides every service endpoint (moto, a fault proxy).
    pub endpoint_url: Option<String>,
    /// Overrides the Pricing endpoint only (it lives in us-east-1 / ap-south-1 / eu-central-1).
    pub pricing_endpoint_url: Option<String>,
    /// Use static test credentials instead of the default provider chain.
    pub test_credentials: bool,
    pub max_attempts: u32,
    pub initial_backoff: Duration,
    pub max_backoff: Duration,
    pub connect_timeout: Duration,
    pub read_timeout: Duration,
    pub attempt_timeout: Duration,
    pub operation_timeout: Duration,
}

impl AwsSettings {
    /// Production defaults for `region`.
    pub fn new(region: &str) -> Self {
        AwsSettings {
            region: region.to_string(),
            endpoint_url: None,
            pricing_endpoint_url: None,
            test_credentials: false,
            max_attempts: 3,
            initial_backoff: Duration::from_millis(200),
            max_backoff: Duration::from_secs(5),
            connect_timeout: Duration::from_secs(3),
            read_timeout: Duration::from_secs(20),
            attempt_timeout: Duration::from_secs(25),
            operation_timeout: Duration::from_secs(60),
        }
    }

    /// Production defaults for `region`, with every endpoint (Pricing's too) overridden by
    /// `AWS_ENDPOINT_URL` when it is set (a local endpoint).
    pub fn from_env(region: &str) -> Self {
        let mut s = AwsSettings::new(region);
        if let Ok(url) = std::env::var("AWS_ENDPOINT_URL")
            && !url.is_empty()
        {
            s.endpoint_url = Some(url.clone());
            s.pricing_endpoint_url = Some(url);
        }
        s
    }

    /// Settings for a local endpoint (moto) with static credentials.
    pub fn local(region: &str, endpoint_url: &str) -> Self {
        AwsSettings {
            endpoint_url: Some(endpoint_url.to_string()),
            pricing_endpoint_url: Some(endpoint_url.to_string()),
            test_credentials: true,
            ..AwsSettings::new(region)
        }
    }

    pub fn retry_config(&self) -> RetryConfig {
        RetryConfig::standard()
            .with_max_attempts(self.max_attempts.max(1))
            .with_initial_backoff(self.initial_backoff)
            .with_max_backoff(self.max_backoff)
    }

    pub fn timeout_config(&self) -> TimeoutConfig {
        TimeoutConfig::builder()
            .connect_timeout(self.connect_timeout)
            .read_timeout(self.read_timeout)
            .operation_attempt_timeout(self.attempt_timeout)
            .operation_timeout(self.operation_timeout)
            .build()
    }

    /// The region of the Pricing API endpoint serving this region's prices.
    pub fn pricing_region(&self) -> &'static str {
        let r = self.region.as_str();
        if r.starts_with("ap-") {
            "ap-south-1"
        } else if r.starts_with("cn-") {
            "cn-northwest-1"
        } else if r.starts_with("eu-") {
            "eu-central-1"
        } else {
            "us-east-1"
        }
    }
}

/// Loads the shared SDK configuration (credentials, region, retry, timeouts, endpoint).
pub async fn load_sdk_config(s: &AwsSettings) -> SdkConfig {
    let mut loader = aws_config::defaults(BehaviorVersion::latest())
        .region(Region::new(s.region.clone()))
        .retry_config(s.retry_config())
        .timeout_config(s.timeout_config());
    if let Some(url) = &s.endpoint_url {
        loader = loader.endpoint_url(url.clone());
    }
    if s.test_credentials {
        loader = loader.test_credentials();
    }
    loader.load().await
}

/// One client per service, built once per Lambda container.
#[derive(Clone, Debug)]
pub struct Clients {
    pub ec2: aws_sdk_ec2::Client,
    pub sqs: aws_sdk_sqs::Client,
    pub ssm: aws_sdk_ssm::Client,
    pub pricing: aws_sdk_pricing::Client,
    pub events: aws_sdk_eventbridge::Client,
    pub eks: aws_sdk_eks::Client,
}

impl Clients {
    pub fn new(conf: &SdkConfig, s: &AwsSettings) -> Self {
        let mut pricing =
            aws_sdk_pricing::config::Builder::from(conf).region(Region::new(s.pricing_region()));
        if let Some(url) = s.pricing_endpoint_url.as_ref().or(s.endpoint_url.as_ref()) {
            pricing = pricing.endpoint_url(url.clone());
        }
        Clients {
            ec2: aws_sdk_ec2::Client::new(conf),
            sqs: aws_sdk_sqs::Client::new(conf),
            ssm: aws_sdk_ssm::Client::new(conf),
            pricing: aws_sdk_pricing::Client::from_conf(pricing.build()),
            events: aws_sdk_eventbridge::Client::new(conf),
            eks: aws_sdk_eks::Client::new(conf),
        }
    }

    /// Loads the configuration and builds every client.
    pub async fn load(s: &AwsSettings) -> Self {
        Clients::new(&load_sdk_config(s).await, s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pricing_region_follows_partition() {
        assert_eq!(AwsSettings::new("us-west-2").pricing_region(), "us-east-1");
        assert_eq!(
            AwsSettings::new("eu-west-1").pricing_region(),
            "eu-central-1"
        );
        assert_eq!(
            AwsSettings::new("ap-northeast-1").pricing_region(),
            "ap-south-1"
        );
    }

    #[test]
    fn retry_is_bounded() {
        let s = AwsSettings::new("us-west-2");
        assert_eq!(s.retry_config().max_attempts(), 3);
        assert_eq!(s.retry_config().max_backoff(), Duration::from_secs(5));
    }
}
