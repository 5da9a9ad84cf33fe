//! The `plan` and `catalog` commands: read, decide, print. They return the text to print and
//! the warnings for stderr, so tests can run them without a process.

use std::sync::Arc;

use kerf_catalog::settings::NodeClassSettings;
use kerf_engine::{DisruptOptions, Plan};

use crate::args::{CatalogArgs, Mode, Output, PlanArgs};
use crate::error::{CliError, Locate};
use crate::snapshot::{BuildOptions, CatalogSource, build_with};
use crate::{input, region};

/// What a command prints.
#[derive(Debug, Default)]
pub struct Outcome {
    pub stdout: String,
    pub warnings: Vec<String>,
    /// What the user should know about the choices made for them (stderr, `note: `).
    pub notes: Vec<String>,
}

/// `kerf plan`.
pub fn plan(a: &PlanArgs, now_default: i64) -> Result<Outcome, CliError> {
    let now = match &a.now {
        Some(s) => parse_now(s)?,
        None => now_default,
    };
    let inputs = input::read(&a.inputs)?;
    let mut notes = Vec::new();
    let source = match &a.catalog {
        Some(f) => CatalogSource::File(Arc::new(load_catalog(f)?)),
        None => {
            let chosen = region::choose(a.region.as_deref(), &inputs.docs)?;
            kerf_catalog::bundled::bundled_zones(&chosen.region)
                .map_err(|e| CliError::Usage(e.to_string()))?;
            notes.extend(chosen.note);
            CatalogSource::Bundled {
                region: chosen.region,
            }
        }
    };
    let seed = inputs.seed();
    let gates = BuildOptions {
        node_overlay: gate_from_env("NodeOverlay")?,
    };
    let built = build_with(inputs.docs, &source, now, gates)?;
    let opts = DisruptOptions {
        seed,
        spot_to_spot: a.spot_to_spot,
        min_values_policy: min_values_policy(a.min_values_policy)?,
        ..DisruptOptions::default()
    };
    let plan = match a.mode {
        Mode::Provision => kerf_engine::provision(&built.snapshot, &opts.provisioning()),
        Mode::Disrupt => kerf_engine::disrupt(&built.snapshot, &opts),
        Mode::All => kerf_engine::plan_all(&built.snapshot, &opts),
    };
    Ok(Outcome {
        stdout: render(&plan, a.output)?,
        warnings: built.warnings,
        notes,
    })
}

/// Whether Karpenter's feature gate `name` is on in `KERF_FEATURE_GATES` (`Name=true,…`, as
/// the functions read it; off when absent).
fn gate_from_env(name: &str) -> Result<bool, CliError> {
    let text = std::env::var("KERF_FEATURE_GATES").unwrap_or_default();
    gate(&text, name)
}

/// Whether gate `name` is on in `Name=true|false,…`.
pub fn gate(text: &str, name: &str) -> Result<bool, CliError> {
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((k, v)) = part.split_once('=') else {
            return Err(CliError::Usage(format!(
                "KERF_FEATURE_GATES: {part:?} is not Name=true|false"
            )));
        };
        if k.trim() == name {
            return match v.trim() {
                "true" => Ok(true),
                "false" => Ok(false),
                other => Err(CliError::Usage(format!(
                    "KERF_FEATURE_GATES: {name}: {other:?} is not true or false"
                ))),
            };
        }
    }
    Ok(false)
}

/// `--min-values-policy`, else `MIN_VALUES_POLICY`, else Strict.
fn min_values_policy(
    flag: Option<crate::args::MinValuesPolicyArg>,
) -> Result<kerf_engine::model::MinValuesPolicy, CliError> {
    use kerf_engine::model::MinValuesPolicy;
    if let Some(f) = flag {
        return Ok(f.into());
    }
    match std::env::var("MIN_VALUES_POLICY") {
        Ok(v) if !v.trim().is_empty() => MinValuesPolicy::parse(v.trim()).ok_or_else(|| {
            CliError::Usage(format!("MIN_VALUES_POLICY {v:?}: not Strict or BestEffort"))
        }),
        _ => Ok(MinValuesPolicy::Strict),
    }
}

/// Renders a plan as JSON or tables.
pub fn render(plan: &Plan, output: Output) -> Result<String, CliError> {
    match output {
        Output::Json => serde_json::to_string_pretty(plan)
            .map(|s| s + "\n")
            .map_err(|e| CliError::Internal(e.to_string())),
        Output::Table => Ok(crate::table::plan(plan)),
    }
}

fn parse_now(s: &str) -> Result<i64, CliError> {
    s.parse::<jiff::Timestamp>()
        .map(|t| t.as_second())
        .map_err(|e| CliError::Usage(format!("--now {s:?}: not an RFC3339 time: {e}")))
}

fn load_catalog(f: &str) -> Result<kerf_catalog::Catalog, CliError> {
    let text = std::fs::read_to_string(f).map_err(|e| CliError::File {
        file: f.into(),
        message: e.to_string(),
    })?;
    kerf_catalog::file::from_json(&text).map_err(|e| CliError::File {
        file: f.into(),
        message: e.to_string(),
    })
}

/// `kerf catalog`.
pub fn catalog(a: &CatalogArgs) -> Result<Outcome, CliError> {
    let mut warnings = Vec::new();
    let settings = match &a.nodeclass {
        Some(f) => nodeclass_settings(f, &mut warnings)?,
        None => NodeClassSettings::default(),
    };
    let c = if a.from_aws {
        let (c, more) = from_aws(a, &settings)?;
        warnings.extend(more);
        c
    } else {
        let region = a.region.as_deref().unwrap_or(crate::region::DEFAULT);
        kerf_catalog::bundled::bundled(region, &settings)
            .map_err(|e| CliError::Usage(e.to_string()))?
    };
    let stdout = match a.output {
        Output::Json => kerf_catalog::file::to_json(&c) + "\n",
        Output::Table => kerf_catalog::table::render(&c),
    };
    Ok(Outcome {
        stdout,
        warnings,
        notes: Vec::new(),
    })
}

/// The region `--from-aws` reads: `--region`, else the one the AWS environment names.
fn aws_region(a: &CatalogArgs) -> Result<String, CliError> {
    let env = ["AWS_REGION", "AWS_DEFAULT_REGION"]
        .into_iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()));
    a.region.clone().or(env).ok_or_else(|| {
        CliError::Usage("--from-aws: which region? pass --region (or set AWS_REGION)".into())
    })
}

#[cfg(feature = "aws")]
fn from_aws(
    a: &CatalogArgs,
    settings: &NodeClassSettings,
) -> Result<(kerf_catalog::Catalog, Vec<String>), CliError> {
    let aws = kerf_aws::config::AwsSettings::from_env(&aws_region(a)?);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Internal(format!("starting the async runtime: {e}")))?;
    let f = rt.block_on(crate::from_aws::fetch(
        &aws,
        settings,
        jiff::Timestamp::now(),
    ))?;
    Ok((f.catalog, f.warnings))
}

#[cfg(not(feature = "aws"))]
fn from_aws(
    a: &CatalogArgs,
    _: &NodeClassSettings,
) -> Result<(kerf_catalog::Catalog, Vec<String>), CliError> {
    aws_region(a)?;
    Err(CliError::Usage(
        "--from-aws: this kerf was built without AWS access; install it with \
         `cargo install --path shared/cli --locked --features aws`"
            .into(),
    ))
}

fn nodeclass_settings(f: &str, warnings: &mut Vec<String>) -> Result<NodeClassSettings, CliError> {
    let inputs = input::read(&[f.to_string()])?;
    let doc = inputs
        .docs
        .iter()
        .find(|d| d.kind() == "EC2NodeClass")
        .ok_or_else(|| CliError::File {
            file: f.into(),
            message: "no EC2NodeClass in this file".into(),
        })?;
    if inputs.docs.len() > 1 {
        warnings.push(format!(
            "{f}: using the first EC2NodeClass, ignoring {} other documents",
            inputs.docs.len() - 1
        ));
    }
    let nc: kerf_api::v1::EC2NodeClass = crate::convert::typed(doc)?;
    crate::convert::cluster::settings(&nc).map_err(|e| e.at(&doc.at))
}
