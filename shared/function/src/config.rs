//! Function configuration from environment variables (SAM sets them from the template's
//! parameters and resources).
//!
//! | variable | meaning |
//! |---|---|
//! | `KERF_CLUSTER_NAME` | the EKS cluster (required) |
//! | `AWS_REGION` | the region (Lambda sets it) |
//! | `KERF_NAMESPACE` | namespace of Kerf's Lease and cache ConfigMap (default `kerf`) |
//! | `KERF_PROVISIONING_QUEUE_URL` | the provisioning queue (webhook, provisioner) |
//! | `KERF_TERMINATION_QUEUE_URL` | the termination queue (termination, disruption) |
//! | `KERF_DISRUPTION_QUEUE_URL` | the disruption function's timer queue (disruption, termination, webhook) |
//! | `KERF_EVENT_BUS` | EventBridge bus for decision events (default bus when unset) |
//! | `KERF_WEBHOOK_SECRET_PARAMETER` | SSM SecureString holding the webhook's path secret |
//! | `KERF_LOG_LEVEL` / `AWS_LAMBDA_LOG_LEVEL` | `debug`, `info` (default), `warn`, `error` |
//! | `KERF_SSM_ROOT` | root of the EKS AMI parameters (default `/aws/service`) |
//! | `KERF_KUBE_ENDPOINT`, `KERF_KUBE_CA_DATA`, `KERF_KUBE_TOKEN` | a fixed API server instead of EKS discovery (local runs) |
//! | `KERF_CLUSTER_ENDPOINT`, `KERF_CLUSTER_CA_DATA`, `KERF_KUBERNETES_VERSION` | the join facts instead of DescribeCluster |
//! | `KERF_INSTANCE_TYPES` | comma-separated types to restrict discovery to (tests) |
//! | `MIN_VALUES_POLICY` | Karpenter's `--min-values-policy`: `Strict` (default) or `BestEffort` |
//! | `KERF_FEATURE_GATES` | Karpenter's gates as `Name=true\|false,…`: `SpotToSpotConsolidation`, `RebalanceReplacement`, `NodeOverlay`, `NodeRepair` (all off by default) |

use std::collections::BTreeMap;

use kerf_control::log::Level;
use kerf_engine::model::MinValuesPolicy;

/// A configuration problem, naming the variable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("{0} is required")]
    Missing(&'static str),
    #[error("{name}: {message}")]
    Invalid { name: &'static str, message: String },
}

/// Where the Kubernetes API is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KubeSource {
    /// DescribeCluster and EKS tokens.
    Eks,
    /// A fixed endpoint (CA bundle base64, may be empty; bearer token, may be empty).
    Fixed {
        endpoint: String,
        ca_data: String,
        token: String,
    },
}

/// Karpenter's feature gates Kerf honours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeatureGates {
    /// Consolidate spot nodes onto cheaper spot nodes.
    pub spot_to_spot_consolidation: bool,
    /// Replace a spot node when EC2 recommends rebalancing.
    pub rebalance_replacement: bool,
    /// NodeOverlays change instance types' prices and extended resources.
    pub node_overlay: bool,
    /// Nodes unhealthy for longer than their condition's toleration are replaced.
    pub node_repair: bool,
    /// Static NodePools (`spec.replicas`) keep their replica count.
    pub static_capacity: bool,
    /// Capacity reservations are offered and launched into (on by default, as in Karpenter
    /// 1.6 and later).
    pub reserved_capacity: bool,
}

impl Default for FeatureGates {
    /// Karpenter's defaults: every gate off but `ReservedCapacity`.
    fn default() -> Self {
        FeatureGates {
            spot_to_spot_consolidation: false,
            rebalance_replacement: false,
            node_overlay: false,
            node_repair: false,
            static_capacity: false,
            reserved_capacity: true,
        }
    }
}

impl FeatureGates {
    /// Parses `Name=true,Name=false` (Karpenter's `--feature-gates` syntax).
    pub fn parse(text: &str) -> Result<FeatureGates, ConfigError> {
        let invalid = |message: String| ConfigError::Invalid {
            name: "KERF_FEATURE_GATES",
            message,
        };
        let mut gates = FeatureGates::default();
        for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (name, value) = item
                .split_once('=')
                .ok_or_else(|| invalid(format!("{item:?} is not Name=true|false")))?;
            let on = match value.trim() {
                "true" => true,
                "false" => false,
                v => return Err(invalid(format!("{name}: {v:?} is not true or false"))),
            };
            match name.trim() {
                "SpotToSpotConsolidation" => gates.spot_to_spot_consolidation = on,
                "RebalanceReplacement" => gates.rebalance_replacement = on,
                "NodeOverlay" => gates.node_overlay = on,
                "NodeRepair" => gates.node_repair = on,
                "StaticCapacity" => gates.static_capacity = on,
                "ReservedCapacity" => gates.reserved_capacity = on,
                other => {
                    return Err(invalid(format!(
                        "unknown gate {other:?} (known: SpotToSpotConsolidation, \
                         RebalanceReplacement, NodeOverlay, NodeRepair, StaticCapacity, \
                         ReservedCapacity)"
                    )));
                }
            }
        }
        Ok(gates)
    }
}

/// Everything read from the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub cluster_name: String,
    pub region: String,
    pub namespace: String,
    pub provisioning_queue_url: Option<String>,
    pub termination_queue_url: Option<String>,
    pub disruption_queue_url: Option<String>,
    pub event_bus: Option<String>,
    pub webhook_secret_parameter: Option<String>,
    pub log_level: Level,
    pub ssm_root: Option<String>,
    pub kube: KubeSource,
    /// (endpoint, CA data, Kubernetes version) when given instead of DescribeCluster.
    pub cluster_info: Option<(String, String, String)>,
    pub instance_types: Vec<String>,
    pub feature_gates: FeatureGates,
    pub min_values_policy: MinValuesPolicy,
}

impl Config {
    /// Reads the process environment.
    pub fn from_env() -> Result<Config, ConfigError> {
        Config::from_vars(&std::env::vars().collect())
    }

    /// Reads a set of variables.
    pub fn from_vars(v: &BTreeMap<String, String>) -> Result<Config, ConfigError> {
        let get = |k: &str| v.get(k).filter(|s| !s.is_empty()).cloned();
        let required = |k: &'static str| get(k).ok_or(ConfigError::Missing(k));
        let level_text = get("KERF_LOG_LEVEL").or_else(|| get("AWS_LAMBDA_LOG_LEVEL"));
        let log_level = match level_text {
            Some(l) => Level::parse(&l).ok_or_else(|| ConfigError::Invalid {
                name: "KERF_LOG_LEVEL",
                message: format!("{l:?} is not debug, info, warn or error"),
            })?,
            None => Level::Info,
        };
        let kube = match get("KERF_KUBE_ENDPOINT") {
            Some(endpoint) => KubeSource::Fixed {
                endpoint,
                ca_data: get("KERF_KUBE_CA_DATA").unwrap_or_default(),
                token: get("KERF_KUBE_TOKEN").unwrap_or_default(),
            },
            None => KubeSource::Eks,
        };
        let cluster_info = match (get("KERF_CLUSTER_ENDPOINT"), get("KERF_KUBERNETES_VERSION")) {
            (Some(e), Some(ver)) => Some((e, get("KERF_CLUSTER_CA_DATA").unwrap_or_default(), ver)),
            _ => None,
        };
        let feature_gates = match get("KERF_FEATURE_GATES") {
            Some(text) => FeatureGates::parse(&text)?,
            None => FeatureGates::default(),
        };
        let min_values_policy = match get("MIN_VALUES_POLICY") {
            Some(text) => {
                MinValuesPolicy::parse(text.trim()).ok_or_else(|| ConfigError::Invalid {
                    name: "MIN_VALUES_POLICY",
                    message: format!("{text:?} is not Strict or BestEffort"),
                })?
            }
            None => MinValuesPolicy::Strict,
        };
        Ok(Config {
            feature_gates,
            min_values_policy,
            cluster_name: required("KERF_CLUSTER_NAME")?,
            region: get("AWS_REGION")
                .or_else(|| get("AWS_DEFAULT_REGION"))
                .ok_or(ConfigError::Missing("AWS_REGION"))?,
            namespace: get("KERF_NAMESPACE").unwrap_or_else(|| "kerf".into()),
            provisioning_queue_url: get("KERF_PROVISIONING_QUEUE_URL"),
            termination_queue_url: get("KERF_TERMINATION_QUEUE_URL"),
            disruption_queue_url: get("KERF_DISRUPTION_QUEUE_URL"),
            event_bus: get("KERF_EVENT_BUS"),
            webhook_secret_parameter: get("KERF_WEBHOOK_SECRET_PARAMETER"),
            log_level,
            ssm_root: get("KERF_SSM_ROOT"),
            kube,
            cluster_info,
            instance_types: get("KERF_INSTANCE_TYPES")
                .map(|s| {
                    s.split(',')
                        .map(|t| t.trim().to_string())
                        .filter(|t| !t.is_empty())
                        .collect()
                })
                .unwrap_or_default(),
        })
    }

    /// The termination queue URL, required by the functions that send to it.
    pub fn termination_queue_url(&self) -> Result<&str, ConfigError> {
        self.termination_queue_url
            .as_deref()
            .ok_or(ConfigError::Missing("KERF_TERMINATION_QUEUE_URL"))
    }

    /// The disruption function's timer queue URL, required by the functions that send to it.
    pub fn disruption_queue_url(&self) -> Result<&str, ConfigError> {
        self.disruption_queue_url
            .as_deref()
            .ok_or(ConfigError::Missing("KERF_DISRUPTION_QUEUE_URL"))
    }

    /// The provisioning queue URL, required by the functions that send to it.
    pub fn queue_url(&self) -> Result<&str, ConfigError> {
        self.provisioning_queue_url
            .as_deref()
            .ok_or(ConfigError::Missing("KERF_PROVISIONING_QUEUE_URL"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn defaults_overrides_and_errors_name_the_variable() {
        let c = Config::from_vars(&vars(&[
            ("KERF_CLUSTER_NAME", "demo"),
            ("AWS_REGION", "us-west-2"),
        ]))
        .unwrap();
        assert_eq!(
            (c.namespace.as_str(), c.log_level, c.kube.clone()),
            ("kerf", Level::Info, KubeSource::Eks)
        );
        assert_eq!(
            c.queue_url(),
            Err(ConfigError::Missing("KERF_PROVISIONING_QUEUE_URL"))
        );
        let c = Config::from_vars(&vars(&[
            ("KERF_CLUSTER_NAME", "demo"),
            ("AWS_REGION", "us-west-2"),
            ("KERF_KUBE_ENDPOINT", "http://127.0.0.1:1"),
            ("AWS_LAMBDA_LOG_LEVEL", "DEBUG"),
            ("KERF_INSTANCE_TYPES", "m5.large, c5.large"),
        ]))
        .unwrap();
        assert!(
            matches!(c.kube, KubeSource::Fixed { ref endpoint, .. } if endpoint == "http://127.0.0.1:1")
        );
        assert_eq!(c.log_level, Level::Debug);
        assert_eq!(c.instance_types, ["m5.large", "c5.large"]);
        assert_eq!(
            Config::from_vars(&vars(&[("AWS_REGION", "x")])),
            Err(ConfigError::Missing("KERF_CLUSTER_NAME"))
        );
        let bad = Config::from_vars(&vars(&[
            ("KERF_CLUSTER_NAME", "d"),
            ("AWS_REGION", "r"),
            ("KERF_LOG_LEVEL", "loud"),
        ]));
        assert!(matches!(
            bad,
            Err(ConfigError::Invalid {
                name: "KERF_LOG_LEVEL",
                ..
            })
        ));
    }

    #[test]
    fn min_values_policy_is_strict_unless_best_effort_is_asked() {
        let base = [("KERF_CLUSTER_NAME", "demo"), ("AWS_REGION", "r")];
        let c = Config::from_vars(&vars(&base)).unwrap();
        assert_eq!(c.min_values_policy, MinValuesPolicy::Strict);
        let mut v = base.to_vec();
        v.push(("MIN_VALUES_POLICY", "BestEffort"));
        let c = Config::from_vars(&vars(&v)).unwrap();
        assert_eq!(c.min_values_policy, MinValuesPolicy::BestEffort);
        v.pop();
        v.push(("MIN_VALUES_POLICY", "bestEffort"));
        let e = Config::from_vars(&vars(&v)).unwrap_err().to_string();
        assert_eq!(
            e,
            "MIN_VALUES_POLICY: \"bestEffort\" is not Strict or BestEffort"
        );
    }

    #[test]
    fn feature_gates_parse_as_karpenter_writes_them() {
        let c = Config::from_vars(&vars(&[
            ("KERF_CLUSTER_NAME", "demo"),
            ("AWS_REGION", "us-west-2"),
            (
                "KERF_FEATURE_GATES",
                "SpotToSpotConsolidation=true,RebalanceReplacement=false",
            ),
        ]))
        .unwrap();
        assert_eq!(
            c.feature_gates,
            FeatureGates {
                spot_to_spot_consolidation: true,
                rebalance_replacement: false,
                node_overlay: false,
                node_repair: false,
                static_capacity: false,
                reserved_capacity: true,
            }
        );
        let reserved_off = FeatureGates::parse("ReservedCapacity=false").unwrap();
        assert!(!reserved_off.reserved_capacity && !reserved_off.node_repair);
        let overlay = FeatureGates::parse("NodeOverlay=true").unwrap();
        assert!(overlay.node_overlay && !overlay.spot_to_spot_consolidation);
        let repair = FeatureGates::parse("NodeRepair=true").unwrap();
        assert!(repair.node_repair && !repair.node_overlay);
        let fixed = FeatureGates::parse("StaticCapacity=true").unwrap();
        assert!(fixed.static_capacity && !fixed.node_repair);
        let off = FeatureGates::parse("").unwrap();
        assert_eq!(off, FeatureGates::default());
        let on = FeatureGates::parse(" RebalanceReplacement=true ").unwrap();
        assert!(on.rebalance_replacement && !on.spot_to_spot_consolidation);
        for (bad, part) in [
            (
                "SpotToSpotConsolidation=yes",
                "\"yes\" is not true or false",
            ),
            ("Drift=true", "unknown gate \"Drift\""),
            ("SpotToSpotConsolidation", "is not Name=true|false"),
        ] {
            let e = FeatureGates::parse(bad).unwrap_err().to_string();
            assert!(
                e.starts_with("KERF_FEATURE_GATES: ") && e.contains(part),
                "{e}"
            );
        }
    }
}
