//! The adapters of one Lambda container, built once ([`Runtime::from_env`]), and the control
//! context of one invocation ([`Runtime::ctx`]).

use std::sync::Arc;

use kerf_aws::cluster::Cluster;
use kerf_aws::userdata::ClusterInfo;
use kerf_aws::{AwsSettings, Clients, CloudSettings, Ec2Cloud, EventBridgePublisher};
use kerf_control::ctx::{Ctx, Settings};
use kerf_control::log::{Logger, StdoutSink};
use kerf_control::ports::{Clock, ClusterError, SystemClock};
use kerf_kube::KubeCluster;
use kerf_kube::eks::provider::EksClientProvider;
use serde_json::json;

use crate::config::{Config, ConfigError, KubeSource};

/// The context every invocation runs with.
pub type FnCtx = Ctx<KubeCluster, Arc<Ec2Cloud>, EventBridgePublisher>;

/// A failure starting the container.
#[derive(thiserror::Error)]
pub enum StartError {
    #[error("configuration: {0}")]
    Config(#[from] ConfigError),
    #[error("kubernetes client: {0}")]
    Kube(String),
    #[error("webhook secret: {0}")]
    Secret(String),
}

/// Start-up errors end the process, which prints them with `Debug`: print the message.
impl std::fmt::Debug for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

enum Kube {
    Eks(Box<EksClientProvider>),
    Fixed(kube::Client),
}

/// Adapters built once per container.
pub struct Runtime {
    pub config: Config,
    pub clients: Clients,
    kube: Kube,
    cloud: Arc<Ec2Cloud>,
    publisher: EventBridgePublisher,
    clock: Arc<dyn Clock>,
    log: Logger,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

fn aws_settings(c: &Config) -> AwsSettings {
    AwsSettings::from_env(&c.region)
}

impl Runtime {
    /// Reads the environment and builds every client (no network call yet).
    pub async fn from_env() -> Result<Runtime, StartError> {
        Runtime::new(Config::from_env()?).await
    }

    /// Builds every client for `config`.
    pub async fn new(config: Config) -> Result<Runtime, StartError> {
        let settings = aws_settings(&config);
        let sdk = kerf_aws::config::load_sdk_config(&settings).await;
        let clients = Clients::new(&sdk, &settings);
        let kube = match &config.kube {
            KubeSource::Eks => Kube::Eks(Box::new(
                EksClientProvider::new(&sdk, &config.cluster_name)
                    .map_err(|e| StartError::Kube(e.to_string()))?,
            )),
            KubeSource::Fixed {
                endpoint,
                ca_data,
                token,
            } => Kube::Fixed(
                kerf_kube::client_for(endpoint, ca_data, token)
                    .map_err(|e| StartError::Kube(e.to_string()))?,
            ),
        };
        let mut cs = CloudSettings::new(&config.cluster_name, &config.region);
        if let Some(root) = &config.ssm_root {
            cs.ssm_root = root.clone();
        }
        cs.instance_types = config.instance_types.clone();
        cs.reserved_capacity = config.feature_gates.reserved_capacity;
        cs.cluster_info = config
            .cluster_info
            .as_ref()
            .map(|(endpoint, ca, version)| Cluster {
                info: ClusterInfo {
                    name: config.cluster_name.clone(),
                    endpoint: endpoint.clone(),
                    certificate_authority: ca.clone(),
                    service_cidr: None,
                },
                version: version.clone(),
            });
        let clock: Arc<dyn Clock> = Arc::new(SystemClock);
        let log = Logger::new(Arc::new(StdoutSink), clock.clone(), config.log_level);
        Ok(Runtime {
            cloud: Arc::new(Ec2Cloud::new(clients.clone(), cs)),
            publisher: EventBridgePublisher::new(clients.events.clone(), config.event_bus.clone()),
            clients,
            kube,
            clock,
            log,
            config,
        })
    }

    /// The context of one invocation: a Kubernetes client with a fresh enough token and
    /// empty metrics.
    pub async fn ctx(&self) -> Result<FnCtx, ClusterError> {
        let client = match &self.kube {
            Kube::Eks(p) => p.client().await?,
            Kube::Fixed(c) => c.clone(),
        };
        Ok(Ctx {
            cluster: KubeCluster::new(client, &self.config.namespace),
            cloud: self.cloud.clone(),
            publisher: self.publisher.clone(),
            clock: self.clock.clone(),
            log: self.log.clone(),
            metrics: Arc::default(),
            settings: Settings {
                min_values_policy: self.config.min_values_policy,
                node_overlay: self.config.feature_gates.node_overlay,
                node_repair: self.config.feature_gates.node_repair,
                static_capacity: self.config.feature_gates.static_capacity,
                reserved_capacity: self.config.feature_gates.reserved_capacity,
                ..Settings::new(&self.config.cluster_name, &self.config.namespace)
            },
        })
    }

    /// The context of one invocation, or, when no Kubernetes client can be built, the error
    /// logged under `controller` and `fallback`'s answer (given the error): every function
    /// answers then without touching the cluster (a batch comes back whole to be retried, a
    /// review is answered from the object alone).
    pub async fn ctx_or<T>(
        &self,
        controller: &str,
        fallback: impl FnOnce(String) -> T,
    ) -> Result<FnCtx, T> {
        self.ctx().await.map_err(|e| {
            let e = e.to_string();
            self.log
                .error(controller, "no kubernetes client", json!({"error": e}));
            fallback(e)
        })
    }

    /// The logger (for start-up failures and refused requests).
    pub fn log(&self) -> &Logger {
        &self.log
    }

    /// The container's clock.
    pub fn now(&self) -> jiff::Timestamp {
        self.clock.now()
    }

    /// The provisioning queue.
    pub fn queue(&self) -> Result<kerf_aws::queue::SqsQueue, ConfigError> {
        Ok(kerf_aws::queue::SqsQueue::new(
            self.clients.sqs.clone(),
            self.config.queue_url()?,
        ))
    }

    /// The termination queue.
    pub fn termination_queue(&self) -> Result<kerf_aws::queue::SqsQueue, ConfigError> {
        Ok(kerf_aws::queue::SqsQueue::new(
            self.clients.sqs.clone(),
            self.config.termination_queue_url()?,
        ))
    }

    /// The disruption function's timer queue.
    pub fn disruption_queue(&self) -> Result<kerf_aws::queue::SqsQueue, ConfigError> {
        Ok(kerf_aws::queue::SqsQueue::new(
            self.clients.sqs.clone(),
            self.config.disruption_queue_url()?,
        ))
    }

    /// The webhook's path secret, read from SSM (decrypted) once per container.
    pub async fn webhook_secret(&self) -> Result<String, StartError> {
        let name = self
            .config
            .webhook_secret_parameter
            .as_deref()
            .ok_or(StartError::Config(ConfigError::Missing(
                "KERF_WEBHOOK_SECRET_PARAMETER",
            )))?;
        let out = self
            .clients
            .ssm
            .get_parameter()
            .name(name)
            .with_decryption(true)
            .send()
            .await
            .map_err(|e| {
                StartError::Secret(kerf_aws::error::from_sdk("GetParameter", e).to_string())
            })?;
        out.parameter()
            .and_then(|p| p.value())
            .filter(|v| !v.is_empty())
            .map(str::to_string)
            .ok_or_else(|| StartError::Secret(format!("parameter {name} is empty")))
    }
}
