//! Data-driven scenarios: each `tests/scenarios/**/*.yaml` file holds Kubernetes manifests
//! and one `kind: Scenario` document saying which catalog to plan with and what the plan
//! must show (see `tests/scenarios/README.md`). The manifests go through the same path as
//! `kerf plan`.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

mod disrupt;
mod expect;
mod launch;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use kerf_cli::input::{Inputs, parse_into};
use kerf_cli::snapshot::{BuildOptions, CatalogSource, build_with};
use kerf_engine::{DisruptOptions, Plan, Snapshot};
use serde::Deserialize;
use serde_json::Value;

pub use expect::Expect;

/// What a scenario plans: `provision` (the default, `kerf plan`), `disrupt` or `all`
/// (`kerf plan --mode disrupt|all`), or `evacuate` (the replacements for the NodeClaims the
/// scenario's `evacuate` names, as for an interruption).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    #[default]
    Provision,
    Disrupt,
    All,
    Evacuate,
}

/// Disruption settings (`DisruptOptions`).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScenarioOptions {
    /// Karpenter's `SpotToSpotConsolidation` feature gate (`kerf plan --spot-to-spot`).
    #[serde(default)]
    pub spot_to_spot: bool,
    /// `MIN_VALUES_POLICY` (`kerf plan --min-values-policy`): `Strict` (default) or
    /// `BestEffort`.
    #[serde(default)]
    pub min_values_policy: Option<String>,
    /// Karpenter's `NodeOverlay` feature gate (`KERF_FEATURE_GATES=NodeOverlay=true`).
    #[serde(default)]
    pub node_overlay: bool,
}

/// The `kind: Scenario` document.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Scenario {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    /// What the scenario is about.
    #[serde(default)]
    pub description: String,
    /// `fake` (default: `tests/scenarios/fake-catalog.json`) or `bundled:<region>`.
    #[serde(default)]
    pub catalog: Option<String>,
    /// Offerings of the fake catalog to mark unavailable: `[type, zone, capacityType]`.
    #[serde(default)]
    pub unavailable: Vec<[String; 3]>,
    /// The placement group the fake catalog is built for, as the AWS adapter builds a
    /// class's catalog in the group its `placementGroupSelector` resolves to.
    #[serde(default)]
    pub placement_group: Option<ScenarioPlacementGroup>,
    /// Capacity reservations the node class selected: each a `reserved` offering of the fake
    /// catalog, as the AWS adapter offers them (`kerf_catalog::reservation::offer` at `now`).
    #[serde(default)]
    pub reservations: Vec<ScenarioReservation>,
    #[serde(default)]
    pub mode: Mode,
    /// The NodeClaims `mode: evacuate` replaces.
    #[serde(default)]
    pub evacuate: Vec<String>,
    /// The clock (`kerf plan --now`), RFC 3339; the Unix epoch when absent.
    #[serde(default)]
    pub now: Option<String>,
    #[serde(default)]
    pub options: ScenarioOptions,
    pub expect: Expect,
}

/// A scenario file read: its manifests as YAML text and its scenario document.
pub struct Case {
    pub file: PathBuf,
    pub manifests: String,
    pub scenario: Scenario,
}

pub fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios")
}

/// Every scenario file under `tests/scenarios`, in path order.
pub fn all() -> Vec<PathBuf> {
    let mut out = Vec::new();
    walk(&dir(), &mut out);
    out.sort();
    out
}

fn walk(d: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(d).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|x| x == "yaml") {
            out.push(p);
        }
    }
}

pub fn load(file: &Path) -> Case {
    let text = std::fs::read_to_string(file).unwrap();
    let mut manifests = Vec::new();
    let mut scenario = None;
    for de in yaml_serde::Deserializer::from_str(&text) {
        let v = Value::deserialize(de).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        if v.get("kind").and_then(Value::as_str) == Some("Scenario") {
            let s: Scenario = serde_json::from_value(v)
                .unwrap_or_else(|e| panic!("{}: scenario: {e}", file.display()));
            scenario = Some(s);
        } else if !v.is_null() {
            manifests.push(yaml_serde::to_string(&v).unwrap());
        }
    }
    Case {
        file: file.to_path_buf(),
        manifests: manifests.join("---\n"),
        scenario: scenario.unwrap_or_else(|| panic!("{}: no Scenario document", file.display())),
    }
}

/// A scenario's plan, the number of pending pods it was planned for (0 in disrupt mode,
/// which plans no pending pod) and the snapshot it was planned from.
pub struct Planned {
    pub plan: Plan,
    pub pending: usize,
    pub snapshot: Snapshot,
}

/// A resolved placement group (`strategy`: cluster, partition or spread).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScenarioPlacementGroup {
    pub id: String,
    pub strategy: kerf_catalog::placement::Strategy,
    #[serde(default)]
    pub partition_count: u32,
}

/// A capacity reservation (`kind`: default or capacity-block).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScenarioReservation {
    pub id: String,
    pub instance_type: String,
    pub zone: String,
    /// Instances it can still take.
    pub available: u32,
    #[serde(default = "default_kind")]
    pub kind: kerf_catalog::reservation::ReservationKind,
    #[serde(default)]
    pub interruptible: bool,
    /// When it ends, RFC 3339 (a capacity block's end).
    #[serde(default)]
    pub end_time: Option<String>,
}

fn default_kind() -> kerf_catalog::reservation::ReservationKind {
    kerf_catalog::reservation::ReservationKind::Default
}

impl ScenarioReservation {
    fn reservation(&self) -> kerf_catalog::reservation::Reservation {
        kerf_catalog::reservation::Reservation {
            id: self.id.clone(),
            instance_type: self.instance_type.clone(),
            zone: self.zone.clone(),
            owner_id: "123456789012".into(),
            match_criteria: kerf_catalog::reservation::MatchCriteria::Targeted,
            kind: self.kind,
            interruptible: self.interruptible,
            end_time: self.end_time.as_deref().map(|t| {
                t.parse()
                    .unwrap_or_else(|e| panic!("reservation {}: endTime {t:?}: {e}", self.id))
            }),
            available: self.available,
        }
    }
}

/// Plans a case as `kerf plan --mode <mode> --now <now>` would.
pub fn plan(case: &Case) -> Planned {
    let s = &case.scenario;
    let now = s.now.as_deref().map_or(0, |t| {
        kerf_engine::time::parse_rfc3339(t)
            .unwrap_or_else(|| panic!("{}: now {t:?} is not RFC 3339", case.file.display()))
    });
    let source = match s.catalog.as_deref() {
        Some(c) if c.starts_with("bundled:") => CatalogSource::Bundled {
            region: c.trim_start_matches("bundled:").into(),
        },
        Some(c) if c != "fake" => panic!("{}: unknown catalog {c}", case.file.display()),
        _ => CatalogSource::File(Arc::new(fake_catalog(s, now))),
    };
    let mut inputs = Inputs::default();
    parse_into(&mut inputs, "scenario.yaml", &case.manifests).unwrap();
    let seed = inputs.seed();
    let gates = BuildOptions {
        node_overlay: s.options.node_overlay,
    };
    let built = build_with(inputs.docs, &source, now, gates)
        .unwrap_or_else(|e| panic!("{}: {e}", case.file.display()));
    let opts = DisruptOptions {
        seed,
        spot_to_spot: s.options.spot_to_spot,
        min_values_policy: s.options.min_values_policy.as_deref().map_or(
            kerf_engine::model::MinValuesPolicy::Strict,
            |p| {
                kerf_engine::model::MinValuesPolicy::parse(p)
                    .unwrap_or_else(|| panic!("{}: minValuesPolicy {p:?}", case.file.display()))
            },
        ),
        ..DisruptOptions::default()
    };
    let pending = built
        .snapshot
        .pods
        .iter()
        .filter(|p| p.is_pending())
        .count();
    let snap = &built.snapshot;
    let (plan, pending) = match s.mode {
        Mode::Provision => (kerf_engine::provision(snap, &opts.provisioning()), pending),
        Mode::Disrupt => (kerf_engine::disrupt(snap, &opts), 0),
        Mode::All => (kerf_engine::plan_all(snap, &opts), pending),
        Mode::Evacuate => {
            let plan = kerf_engine::evacuate(snap, &s.evacuate, &opts);
            let moved = plan.summary.pending_pods;
            (plan, moved)
        }
    };
    Planned {
        plan,
        pending,
        snapshot: built.snapshot,
    }
}

/// The fake catalog with the scenario's placement group, reservations (offered at `now`,
/// seconds since the epoch) and unavailable offerings.
fn fake_catalog(s: &Scenario, now: i64) -> kerf_catalog::Catalog {
    let text = std::fs::read_to_string(dir().join("fake-catalog.json")).unwrap();
    let mut c = kerf_catalog::file::from_json(&text).unwrap();
    if !s.reservations.is_empty() {
        let found: Vec<_> = s.reservations.iter().map(|r| r.reservation()).collect();
        let at = jiff::Timestamp::from_second(now).unwrap();
        c = kerf_catalog::reservation::offer(c, &found, at);
    }
    if let Some(pg) = s.placement_group.as_ref() {
        let group = kerf_catalog::placement::PlacementGroup {
            id: pg.id.clone(),
            name: pg.id.clone(),
            strategy: pg.strategy,
            partition_count: pg.partition_count,
        };
        kerf_catalog::placement::apply(&mut c, &group, |_| None);
    }
    for [t, z, ct] in &s.unavailable {
        for it in c.instance_types.iter_mut().filter(|it| &it.name == t) {
            for o in it
                .offerings
                .iter_mut()
                .filter(|o| &o.zone == z && o.capacity_type.as_str() == ct)
            {
                o.available = false;
            }
        }
    }
    c
}

/// The cpu capacity (milli-cores) of a fake-catalog instance type.
pub fn cpu_capacity(name: &str) -> i64 {
    let text = std::fs::read_to_string(dir().join("fake-catalog.json")).unwrap();
    let c = kerf_catalog::file::from_json(&text).unwrap();
    c.instance_types
        .iter()
        .find(|t| t.name == name)
        .map(|t| t.capacity.get("cpu"))
        .unwrap_or_else(|| panic!("no instance type {name}"))
}
