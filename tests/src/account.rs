//! A moto account seeded as the getting-started cluster's: subnets and a security group
//! tagged for discovery, EKS AMI parameters, the webhook secret, the provisioning and
//! termination queues.

use aws_sdk_ec2::types::Tag;
use kerf_aws::{AwsSettings, Clients};

/// The getting-started example's cluster name (its selectors' `karpenter.sh/discovery`).
pub const CLUSTER: &str = "my-cluster";
/// The AMI parameter root the seeded account uses.
pub const SSM_ROOT: &str = "/kerf-test/aws/service";
/// The webhook secret in the example events' URLs.
pub const SECRET: &str = "kerf-example-secret";
/// Its SSM parameter.
pub const SECRET_PARAMETER: &str = "/kerf/webhook-secret";
/// An EKS image in moto's default set.
pub const EKS_AMI: &str = "ami-ekslinux";
/// The Kubernetes version of the seeded cluster.
pub const K8S: &str = "1.31";

/// What the seeding created.
#[derive(Debug, Clone)]
pub struct Account {
    pub clients: Clients,
    pub queue_url: String,
    pub termination_queue_url: String,
    /// The disruption function's timer queue.
    pub disruption_queue_url: String,
    pub endpoint: String,
}

/// Clients for moto at `url`.
pub async fn clients(url: &str) -> Clients {
    Clients::load(&AwsSettings::local("us-west-2", url)).await
}

async fn tag(c: &Clients, id: &str) {
    let t = Tag::builder()
        .key("karpenter.sh/discovery")
        .value(CLUSTER)
        .build();
    c.ec2
        .create_tags()
        .resources(id)
        .tags(t)
        .send()
        .await
        .expect("tag");
}

/// Seeds moto at `url`.
pub async fn seed(url: &str) -> Account {
    let c = clients(url).await;
    let subnets = c.ec2.describe_subnets().send().await.expect("subnets");
    for s in subnets.subnets() {
        if matches!(
            s.availability_zone(),
            Some("us-west-2a" | "us-west-2b" | "us-west-2c")
        ) {
            tag(&c, s.subnet_id().unwrap_or_default()).await;
        }
    }
    let sg = c
        .ec2
        .create_security_group()
        .group_name("my-cluster-nodes")
        .description("nodes")
        .send()
        .await
        .expect("security group");
    tag(&c, sg.group_id().unwrap_or_default()).await;
    let param = format!(
        "{SSM_ROOT}/eks/optimized-ami/{K8S}/amazon-linux-2023/x86_64/standard/recommended/image_id"
    );
    for (name, value, secure) in [
        (param.as_str(), EKS_AMI, false),
        (SECRET_PARAMETER, SECRET, true),
    ] {
        let t = if secure {
            aws_sdk_ssm::types::ParameterType::SecureString
        } else {
            aws_sdk_ssm::types::ParameterType::String
        };
        c.ssm
            .put_parameter()
            .name(name)
            .value(value)
            .r#type(t)
            .send()
            .await
            .expect("parameter");
    }
    let mut urls = Vec::new();
    for name in ["kerf-provisioning", "kerf-termination", "kerf-disruption"] {
        let q = c
            .sqs
            .create_queue()
            .queue_name(name)
            .send()
            .await
            .expect("queue");
        urls.push(q.queue_url().unwrap_or_default().to_string());
    }
    Account {
        disruption_queue_url: urls.pop().unwrap_or_default(),
        termination_queue_url: urls.pop().unwrap_or_default(),
        queue_url: urls.pop().unwrap_or_default(),
        clients: c,
        endpoint: url.to_string(),
    }
}

impl Account {
    /// The environment of a function binary against this account and the API server at
    /// `kube` (plain HTTP).
    pub fn env(&self, kube: &str) -> Vec<(&'static str, String)> {
        vec![
            ("KERF_CLUSTER_NAME", CLUSTER.into()),
            ("AWS_REGION", "us-west-2".into()),
            ("AWS_ACCESS_KEY_ID", "test".into()),
            ("AWS_SECRET_ACCESS_KEY", "test".into()),
            ("AWS_ENDPOINT_URL", self.endpoint.clone()),
            ("KERF_KUBE_ENDPOINT", kube.into()),
            ("KERF_PROVISIONING_QUEUE_URL", self.queue_url.clone()),
            (
                "KERF_TERMINATION_QUEUE_URL",
                self.termination_queue_url.clone(),
            ),
            (
                "KERF_DISRUPTION_QUEUE_URL",
                self.disruption_queue_url.clone(),
            ),
            ("KERF_WEBHOOK_SECRET_PARAMETER", SECRET_PARAMETER.into()),
            ("KERF_SSM_ROOT", SSM_ROOT.into()),
            (
                "KERF_CLUSTER_ENDPOINT",
                "https://0123456789ABCDEF.gr7.us-west-2.eks.amazonaws.com".into(),
            ),
            (
                "KERF_CLUSTER_CA_DATA",
                "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==".into(),
            ),
            ("KERF_KUBERNETES_VERSION", K8S.into()),
            (
                "KERF_INSTANCE_TYPES",
                "c6a.2xlarge,c5.2xlarge,m5.2xlarge,m6a.2xlarge,m5.large".into(),
            ),
        ]
    }

    /// Messages waiting on the provisioning queue.
    pub async fn queued(&self) -> usize {
        self.queued_on(&self.queue_url).await
    }

    /// Messages waiting on the queue at `url` (visible or delayed).
    pub async fn queued_on(&self, url: &str) -> usize {
        use aws_sdk_sqs::types::QueueAttributeName as A;
        let out = self
            .clients
            .sqs
            .get_queue_attributes()
            .queue_url(url)
            .attribute_names(A::ApproximateNumberOfMessages)
            .attribute_names(A::ApproximateNumberOfMessagesDelayed)
            .send()
            .await
            .expect("queue attributes");
        let n = |k: A| {
            out.attributes()
                .and_then(|a| a.get(&k))
                .and_then(|n| n.parse::<usize>().ok())
                .unwrap_or(0)
        };
        n(A::ApproximateNumberOfMessages) + n(A::ApproximateNumberOfMessagesDelayed)
    }
}
