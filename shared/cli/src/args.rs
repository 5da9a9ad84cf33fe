//! Command-line arguments.

use clap::{Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "kerf",
    version,
    about = "Kerf: Karpenter's decisions, serverless. Dry-run planning and tools."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Plan what Kerf would launch for pending pods and disrupt (nothing is changed anywhere).
    Plan(PlanArgs),
    /// Print the instance catalog (types, allocatable, prices) for a region.
    Catalog(CatalogArgs),
    /// Convert legacy Karpenter manifests (v1alpha5, v1alpha1, v1beta1) to v1 YAML.
    Migrate(MigrateArgs),
    /// Print the CustomResourceDefinitions Kerf installs (as committed in infra/crds).
    Crds,
    /// Print the webhook configurations for a deployed stack (for `kubectl apply -f -`).
    Webhooks(WebhooksArgs),
    /// Run a scenario on a local simulated cluster with Kerf's real handlers (no AWS account):
    /// the embedded getting-started walkthrough, or a scenario file.
    Sim(SimArgs),
}

#[derive(Debug, clap::Args)]
pub struct SimArgs {
    /// A scenario file (see examples/*.yaml); the getting-started walkthrough when omitted.
    pub scenario: Option<String>,
    /// Write a self-contained HTML page with the run's charts to this file.
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<String>,
    /// Compare with Karpenter: `karpenter` runs the scenario a second time with a model of
    /// Karpenter's decisions (first-fit packing, its consolidation limits) on the simulated
    /// cluster; `karpenter-real` runs it at the same time on a second real control plane
    /// (--karpenter-cluster) with the real Karpenter (`scripts/karpenter.sh build`), Kerf on
    /// --cluster, and compares cost, latencies, disruptions and CPU and memory.
    #[arg(long, value_enum, conflicts_with = "serve")]
    pub compare: Option<Compare>,
    /// With --compare karpenter-real: the kubeconfig of the control plane the real Karpenter
    /// runs against (a fresh one, its KWOK started for Karpenter's Nodes: see the README).
    #[arg(long, value_name = "KUBECONFIG")]
    pub karpenter_cluster: Option<String>,
    /// Run on a real Kubernetes control plane (kube-apiserver, controllers, scheduler and
    /// KWOK) reached through this kubeconfig, in wall-clock time, instead of the in-process
    /// server: Kerf's CRDs, RBAC and webhook are installed into it. Use a fresh control plane
    /// per run (`scripts/cluster.sh up`).
    #[arg(long, value_name = "KUBECONFIG", conflicts_with = "serve")]
    pub cluster: Option<String>,
    /// Keep the simulated cluster running in real time, with its API server open to kubectl
    /// (a kubeconfig is printed and written), until Ctrl-C (then --report is written).
    #[arg(long)]
    pub serve: bool,
    /// Append Kerf's functions' JSON log lines (what CloudWatch Logs would hold) to this file
    /// as they are written, for `jq`.
    #[arg(long, value_name = "FILE")]
    pub logs: Option<String>,
    /// With --serve: the API server's port on 127.0.0.1 (0: any free port).
    #[arg(long, default_value_t = 0, requires = "serve")]
    pub port: u16,
    /// With --serve: simulated seconds per real second while the steps run (real time after
    /// them; simulated time starts back far enough never to pass the wall clock).
    #[arg(long, default_value_t = 1.0, requires = "serve", value_parser = speed)]
    pub speed: f64,
    /// With --serve: where to write the kubeconfig.
    #[arg(
        long,
        value_name = "FILE",
        default_value = "kerf-sim.kubeconfig",
        requires = "serve"
    )]
    pub kubeconfig: String,
}

fn speed(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 3600.0 => Ok(v),
        _ => Err(format!(
            "{s:?} is not a speed: give a number above 0 and at most 3600"
        )),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Compare {
    /// A model of Karpenter's decisions on the simulated cluster.
    Karpenter,
    /// The real Karpenter on a real control plane, beside Kerf on another.
    KarpenterReal,
}

#[derive(Debug, clap::Args)]
pub struct PlanArgs {
    /// YAML/JSON files, directories, or `-` for stdin.
    #[arg(required = true)]
    pub inputs: Vec<String>,
    /// A catalog file replacing the bundled catalog.
    #[arg(long)]
    pub catalog: Option<String>,
    /// Region of the bundled catalog (its offerings and zones; on-demand prices are the
    /// us-east-1 list prices in every region). Default: the region the input's nodes are
    /// labelled with, else us-west-2; the choice is said on stderr.
    #[arg(long)]
    pub region: Option<String>,
    /// Fix the clock (RFC3339), for reproducible expiry and consolidateAfter.
    #[arg(long)]
    pub now: Option<String>,
    /// What to plan: pending pods, disruption of existing NodeClaims, or both (provisioning
    /// first, disruption on the cluster as provisioning would leave it).
    #[arg(long, value_enum, default_value_t = Mode::Provision)]
    pub mode: Mode,
    /// Let consolidation replace spot nodes with cheaper spot nodes (Karpenter's
    /// SpotToSpotConsolidation feature gate).
    #[arg(long)]
    pub spot_to_spot: bool,
    /// What to do when a NodeClaim cannot meet a requirement's minValues: refuse it
    /// (Strict) or lower minValues to what it reaches and mark it (BestEffort), as
    /// Karpenter's --min-values-policy. Default: the MIN_VALUES_POLICY environment variable,
    /// else Strict.
    #[arg(long, value_enum)]
    pub min_values_policy: Option<MinValuesPolicyArg>,
    #[arg(long, short, value_enum, default_value_t = Output::Table)]
    pub output: Output,
}

/// Karpenter's `--min-values-policy` values, spelled as Karpenter spells them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MinValuesPolicyArg {
    #[value(name = "Strict")]
    Strict,
    #[value(name = "BestEffort")]
    BestEffort,
}

impl From<MinValuesPolicyArg> for kerf_engine::model::MinValuesPolicy {
    fn from(a: MinValuesPolicyArg) -> Self {
        match a {
            MinValuesPolicyArg::Strict => kerf_engine::model::MinValuesPolicy::Strict,
            MinValuesPolicyArg::BestEffort => kerf_engine::model::MinValuesPolicy::BestEffort,
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct CatalogArgs {
    /// The region (default: us-west-2; with `--from-aws`, AWS_REGION or AWS_DEFAULT_REGION).
    #[arg(long)]
    pub region: Option<String>,
    /// Read the region's instance types, zones and prices from AWS with your credentials
    /// (read-only calls) instead of the bundled catalog; `--output json` writes a file for
    /// `kerf plan --catalog`.
    #[arg(long)]
    pub from_aws: bool,
    /// An EC2NodeClass manifest whose kubelet and block device settings apply.
    #[arg(long)]
    pub nodeclass: Option<String>,
    #[arg(long, short, value_enum, default_value_t = Output::Table)]
    pub output: Output,
}

#[derive(Debug, clap::Args)]
pub struct MigrateArgs {
    /// YAML/JSON files, or `-` for stdin.
    #[arg(required = true)]
    pub inputs: Vec<String>,
}

#[derive(Debug, clap::Args)]
pub struct WebhooksArgs {
    /// The stack's outputs as JSON (`aws cloudformation describe-stacks --query
    /// 'Stacks[0].Outputs'`, or the whole describe-stacks document); `-` for stdin.
    #[arg(long, value_name = "FILE")]
    pub stack_outputs: String,
    /// A file holding the webhook's path secret (the WebhookSecretArn secret's value: one
    /// secret, or the current and the next one while it rotates); `-` for stdin.
    #[arg(long, value_name = "FILE")]
    pub secret_file: String,
    /// Point the configurations at the next secret: the secret's value holds the current and
    /// the next one (separated by a space) and the webhook accepts both.
    #[arg(long)]
    pub rotate: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    Provision,
    Disrupt,
    All,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Output {
    Json,
    Table,
}
