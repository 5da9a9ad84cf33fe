//! Scenarios: a simulated cluster's starting objects, then timed steps (apply or delete
//! manifests, scale a Deployment, let time pass, interrupt nodes, take capacity away, release
//! an AMI, move spot prices, create and cancel capacity reservations) and assertions on what
//! happened. `kerf sim` runs them; the file
//! format is documented in the README.
//!
//! ```yaml
//! name: inflate
//! objects:
//!   - file: getting-started/nodepool.yaml     # relative to the scenario file
//! steps:
//!   - scale: {deployment: inflate, replicas: 5}
//!   - until: {nodes: 1, pending: 0}
//!     within: 5m
//! ```

mod act;
mod cluster;
mod expect;
pub mod invariants;
mod measure;
mod observe;
mod pace;
mod run;
mod step;
mod why;

pub mod boxed;

pub use cluster::{CloudChange, Cluster, Snapshot, stranded};
pub use expect::{Count, Expect, Failure, Money};
pub use measure::{Measures, UsageSeen, quantile};
pub use observe::{ClaimRow, Kind, Observation, TimelineEvent};
pub use pace::{Pace, serve};
pub use run::{Decisions, Outcome, Progress, RunOn, Sample, run, run_on, run_with, world_for};
pub use step::{Action, ObjectRef, Reserve, Scale, Select, SpotPrice, Step};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::world::{WorldError, WorldOptions};

/// Why a scenario cannot run.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The file cannot be read.
    #[error("{path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    /// The YAML does not describe a scenario.
    #[error("{path}: {message}")]
    Parse { path: String, message: String },
    /// A step is malformed.
    #[error("{path}: step {index}{name}: {message}")]
    Step {
        path: String,
        index: usize,
        name: String,
        message: String,
    },
    /// The simulated world failed.
    #[error("{path}: step {index}{name}: {message}")]
    World {
        path: String,
        index: usize,
        name: String,
        message: String,
    },
    /// The API server refused one of the scenario's objects: `origin` is the manifest file,
    /// or the scenario file and the entry that holds the inline manifest.
    #[error("{origin}: {object}: {message}")]
    Rejected {
        origin: String,
        object: String,
        message: String,
    },
    /// An assertion did not hold.
    #[error("{path}: step {index}{name}: {failure}")]
    Assertion {
        path: String,
        index: usize,
        name: String,
        failure: Box<Failure>,
    },
}

/// Manifests: a file (relative to the scenario) or inline YAML.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// What it is, for readers of the scenario.
    pub name: Option<String>,
    pub file: Option<String>,
    pub manifest: Option<String>,
}

/// World knobs a scenario may set.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Settings {
    /// Karpenter's feature gates: `SpotToSpotConsolidation`, `RebalanceReplacement`,
    /// `NodeOverlay`, `NodeRepair`.
    #[serde(default)]
    pub feature_gates: BTreeMap<String, bool>,
    /// Simulated time per tick (default `1s`).
    pub tick: Option<String>,
    /// The AWS region the cluster runs in (default `us-west-2`): its zones and the instance
    /// types offered there, from the bundled catalog.
    pub region: Option<String>,
}

/// A scenario file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Scenario {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub settings: Settings,
    /// Applied before time starts.
    #[serde(default)]
    pub objects: Vec<Source>,
    /// None: the objects only (a cluster to watch with `kerf sim --serve`).
    #[serde(default)]
    pub steps: Vec<Step>,
    /// Where it was read from (for relative files and messages).
    #[serde(skip)]
    pub path: String,
    #[serde(skip)]
    pub dir: PathBuf,
}

impl Scenario {
    /// `options` with the scenario's region, when it names one.
    pub fn in_region(&self, mut options: WorldOptions) -> WorldOptions {
        if let Some(r) = &self.settings.region {
            options.region = r.clone();
        }
        options
    }

    /// The most simulated time the steps can take: their waits and the limits of their
    /// `until`s.
    pub fn span(&self) -> jiff::SignedDuration {
        self.steps
            .iter()
            .filter_map(|st| match st.action() {
                Ok(Action::Advance(d) | Action::Until(_, d)) => Some(d),
                _ => None,
            })
            .sum()
    }

    /// Reads a scenario file.
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        if path.is_dir() {
            return Err(ScenarioError::Parse {
                path: path.display().to_string(),
                message: directory(path),
            });
        }
        let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Read {
            path: path.display().to_string(),
            source,
        })?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Scenario::parse(&text, &path.display().to_string(), dir)
    }

    /// Parses scenario YAML; `path` names it in errors, `dir` resolves its `file:` entries.
    pub fn parse(text: &str, path: &str, dir: PathBuf) -> Result<Scenario, ScenarioError> {
        let de = yaml_serde::Deserializer::from_str(text);
        let mut s: Scenario =
            serde_path_to_error::deserialize(de).map_err(|e| ScenarioError::Parse {
                path: path.into(),
                message: manifest_kind(text).map_or_else(
                    || format!("{}: {}", e.path(), e.inner()),
                    |kind| not_a_scenario(path, &kind),
                ),
            })?;
        s.path = path.into();
        s.dir = dir;
        s.validate()?;
        Ok(s)
    }

    fn validate(&self) -> Result<(), ScenarioError> {
        for (i, src) in self.objects.iter().enumerate() {
            self.text(src).map_err(|message| ScenarioError::Parse {
                path: self.path.clone(),
                message: format!("objects[{i}]: {message}"),
            })?;
        }
        if let Some(t) = &self.settings.tick {
            duration(t).map_err(|message| ScenarioError::Parse {
                path: self.path.clone(),
                message: format!("settings.tick: {message}"),
            })?;
        }
        if let Some(r) = &self.settings.region {
            kerf_catalog::bundled::bundled_zones(r).map_err(|e| ScenarioError::Parse {
                path: self.path.clone(),
                message: format!("settings.region: {e}"),
            })?;
        }
        for (i, step) in self.steps.iter().enumerate() {
            step.action()
                .map_err(|message| self.step_error(i, message))?;
            if let Action::Apply(src) = step.action().map_err(|m| self.step_error(i, m))? {
                self.text(src).map_err(|m| self.step_error(i, m))?;
            }
        }
        Ok(())
    }

    pub(crate) fn step_error(&self, index: usize, message: String) -> ScenarioError {
        ScenarioError::Step {
            path: self.path.clone(),
            index: index + 1,
            name: self.step_name(index),
            message,
        }
    }

    /// ` "name"` for a named step, empty otherwise.
    pub(crate) fn step_name(&self, index: usize) -> String {
        self.steps
            .get(index)
            .and_then(|s| s.name.as_deref())
            .map(|n| format!(" \"{n}\""))
            .unwrap_or_default()
    }

    /// The error of importing `src` (the scenario's `entry`, such as `objects[0]`): a
    /// rejection names the object and where it came from; anything else is `other`'s.
    pub(crate) fn import_error(
        &self,
        src: &Source,
        entry: &str,
        e: WorldError,
        other: impl FnOnce(String) -> ScenarioError,
    ) -> ScenarioError {
        match e {
            WorldError::Rejected { object, message } => ScenarioError::Rejected {
                origin: match &src.file {
                    Some(f) if self.path != EMBEDDED => self.dir.join(f).display().to_string(),
                    Some(f) => f.clone(),
                    None => format!("{}: {entry}", self.path),
                },
                object,
                message,
            },
            e => other(e.to_string()),
        }
    }

    /// The manifest text of a source.
    pub fn text(&self, src: &Source) -> Result<String, String> {
        match (&src.file, &src.manifest) {
            (Some(f), None) if self.path == EMBEDDED => EMBEDDED_FILES
                .iter()
                .find(|(name, _)| name == f)
                .map(|(_, text)| text.to_string())
                .ok_or_else(|| format!("file {f}: not embedded")),
            (Some(f), None) => {
                let p = self.dir.join(f);
                std::fs::read_to_string(&p).map_err(|e| format!("file {}: {e}", p.display()))
            }
            (None, Some(m)) => Ok(m.clone()),
            _ => Err("give exactly one of `file` or `manifest`".into()),
        }
    }
}

/// Why a directory is not a scenario, and the scenarios in it.
fn directory(dir: &Path) -> String {
    let mut found: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
                .map(|p| p.display().to_string())
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    let mut m = "is a directory; kerf sim runs one scenario file".to_string();
    if !found.is_empty() {
        let shown = found.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
        let more = found.len().saturating_sub(5);
        m.push_str(&format!(", such as {shown}"));
        if more > 0 {
            m.push_str(&format!(" (and {more} more)"));
        }
    }
    m
}

/// The kind of the first Kubernetes object in `text` when it reads as manifests (a top-level
/// `apiVersion` and `kind`) rather than a scenario.
fn manifest_kind(text: &str) -> Option<String> {
    let top = |key: &str| {
        text.lines().find_map(|l| {
            l.strip_prefix(key)
                .map(|v| v.trim().trim_matches('"').to_string())
        })
    };
    top("apiVersion:")?;
    top("kind:")
}

/// What to do with manifests given to `kerf sim`: wrap them in a scenario.
fn not_a_scenario(path: &str, kind: &str) -> String {
    let file = Path::new(path)
        .file_name()
        .map_or_else(|| path.to_string(), |f| f.to_string_lossy().into_owned());
    format!(
        "this is a Kubernetes manifest ({kind}), not a scenario; kerf sim runs a scenario, \
         which wraps manifests like this one (save it beside {file}):\n\n\
         name: my-scenario\n\
         objects:\n  - file: {file}\n\
         steps:\n  - advance: 10m\n\n\
         (kerf plan {path} plans for the manifests as they are)"
    )
}

/// Parses `90s`, `5m`, `1h30m`, `2h`.
pub fn duration(s: &str) -> Result<jiff::SignedDuration, String> {
    let d: jiff::SignedDuration = s
        .parse()
        .map_err(|e| format!("`{s}` is not a duration like 90s, 5m or 1h30m ({e})"))?;
    if d.is_negative() {
        return Err(format!("`{s}` is negative"));
    }
    Ok(d)
}

/// The name the embedded getting-started scenario goes by.
pub const EMBEDDED: &str = "<embedded getting-started scenario>";

/// The getting-started scenario `kerf sim` runs without a file, and the files it names.
pub const GETTING_STARTED: &str = include_str!("../../../../examples/inflate.yaml");
const EMBEDDED_FILES: [(&str, &str); 2] = [
    (
        "getting-started/nodepool.yaml",
        include_str!("../../../../examples/getting-started/nodepool.yaml"),
    ),
    (
        "getting-started/inflate.yaml",
        include_str!("../../../../examples/getting-started/inflate.yaml"),
    ),
];

impl Scenario {
    /// The embedded getting-started scenario.
    pub fn getting_started() -> Result<Scenario, ScenarioError> {
        Scenario::parse(GETTING_STARTED, EMBEDDED, PathBuf::new())
    }
}
