//! `kerf sim SCENARIO --compare karpenter-real --cluster KC --karpenter-cluster KC2`: the
//! scenario on two real control planes at once, Kerf on one (its handlers, timers and
//! simulated EC2, as `--cluster` runs them) and the real Karpenter on the other (its KWOK
//! provider, with an instance-types file generated from Kerf's catalog), both starting their
//! steps at the same moment and following the wall clock; then the two side by side.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use kerf_sim::karpenter::Launch;
use kerf_sim::scenario::boxed;
use kerf_sim::scenario::{Decisions, Outcome, RunOn, Scenario};
use kerf_sim::world::WorldOptions;

use kerf_sim::scenario::{Kind, quantile};
use kerf_sim::table::age;

use super::table::{over, span};
use super::{error, live};
use crate::args::SimArgs;
use crate::error::CliError;
use crate::table::columns;

/// The feature gates Karpenter knows; a scenario's others are Kerf's alone.
const KARPENTER_GATES: [&str; 9] = [
    "NodeRepair",
    "ReservedCapacity",
    "SpotToSpotConsolidation",
    "NodeOverlay",
    "StaticCapacity",
    "CapacityBuffer",
    "TerminateFirstDrift",
    "TerminateFirstRepair",
    "PodDeletionCostManagement",
];

/// Where `scripts/karpenter.sh build` put Karpenter (`KERF_KARPENTER_DIR` overrides).
fn karpenter_dir() -> PathBuf {
    std::env::var_os("KERF_KARPENTER_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target/karpenter"))
}

/// The scenario's gates Karpenter knows, as its `FEATURE_GATES`.
fn gates(s: &Scenario) -> String {
    s.settings
        .feature_gates
        .iter()
        .filter(|(k, _)| KARPENTER_GATES.iter().any(|g| g.eq_ignore_ascii_case(k)))
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Both sides' kubeconfigs and Karpenter's launch, or a usage error naming what is missing.
fn launch(a: &SimArgs, s: &Scenario) -> Result<(PathBuf, Launch, PathBuf), CliError> {
    let need = |v: &Option<String>, flag: &str| {
        v.clone().map(PathBuf::from).ok_or_else(|| {
            CliError::Usage(format!(
                "--compare karpenter-real needs {flag} KUBECONFIG (see the README)"
            ))
        })
    };
    let kerf = need(&a.cluster, "--cluster")?;
    let karpenter = need(&a.karpenter_cluster, "--karpenter-cluster")?;
    let dir = karpenter_dir();
    let (bin, crds) = (dir.join("bin/karpenter"), dir.join("crds"));
    if !bin.exists() || !crds.is_dir() {
        return Err(CliError::Usage(format!(
            "{}: the real Karpenter is not built (run scripts/karpenter.sh build)",
            bin.display()
        )));
    }
    let run = dir
        .join("run")
        .join(format!("{}-{}", s.name, std::process::id()));
    let launch = Launch {
        bin,
        kubeconfig: karpenter,
        dir: run,
        feature_gates: gates(s),
    };
    Ok((kerf, launch, crds))
}

/// Tells the other side this one is ready (or not) and waits for its word.
fn meet(tx: &mpsc::Sender<bool>, rx: &mpsc::Receiver<bool>, ready: bool) -> bool {
    let _ = tx.send(ready);
    ready && rx.recv().unwrap_or(false)
}

fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    // One thread per side, so that a side's CPU time is the time of its thread.
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Internal(format!("starting the runtime: {e}")))
}

/// The real Karpenter's run, on a thread of its own.
fn karpenter_side(
    s: Scenario,
    launch: Launch,
    crds: PathBuf,
    (region, boot): (String, jiff::SignedDuration),
    tx: mpsc::Sender<bool>,
    rx: mpsc::Receiver<bool>,
) -> Result<(Outcome, PathBuf), String> {
    let rt = runtime().map_err(|e| e.to_string())?;
    rt.block_on(async {
        let cluster = boxed::karpenter(launch, &crds, &region, boot).await;
        if !meet(&tx, &rx, cluster.is_ok()) {
            return Err(match cluster {
                Err(e) => format!("karpenter's control plane: {e}"),
                Ok(_) => "kerf's side did not start".to_string(),
            });
        }
        let cluster = cluster.map_err(|e| e.to_string())?;
        let log = cluster.log();
        let how = RunOn {
            tolerate: true,
            settle: true,
        };
        let outcome = boxed::run_on_karpenter(&s, cluster, how, &mut live::Quiet)
            .await
            .map_err(|e| e.to_string())?;
        Ok((outcome, log))
    })
}

/// Runs both sides; returns Kerf's outcome and Karpenter's.
pub fn beside(
    a: &SimArgs,
    s: &Scenario,
    out: &mut dyn Write,
    terminal: bool,
) -> Result<Vec<(&'static str, Outcome)>, CliError> {
    let (kerf_kc, launch, crds) = launch(a, s)?;
    let options = s.in_region(WorldOptions {
        cluster: Some(kerf_kc.clone()),
        logs: a.logs.as_ref().map(PathBuf::from),
        ..Decisions::Kerf.options()
    });
    let (to_karpenter, from_kerf) = mpsc::channel();
    let (to_kerf, from_karpenter) = mpsc::channel();
    // Karpenter's nodes become Ready as long after launch as Kerf's simulated instances do.
    let boot = options.boot_delay + options.ready_delay;
    let (sk, region) = (s.clone(), (options.region.clone(), boot));
    let log_dir = launch.dir.clone();
    let other =
        std::thread::spawn(move || karpenter_side(sk, launch, crds, region, to_kerf, from_kerf));
    let _ = writeln!(out, "{}", super::heading(s));
    let _ = writeln!(
        out,
        "Kerf on {}, the real Karpenter ({}) on {} at the same time (wall-clock time)",
        kerf_kc.display(),
        karpenter_version(),
        a.karpenter_cluster.as_deref().unwrap_or_default()
    );
    let rt = runtime()?;
    let started = std::time::Instant::now();
    let kerf = rt.block_on(async {
        let world = boxed::world(s, options).await;
        if !meet(&to_karpenter, &from_karpenter, world.is_ok()) {
            return Err(match world {
                Err(e) => error(e),
                Ok(_) => CliError::Internal("the real Karpenter did not start".into()),
            });
        }
        let world = world.map_err(error)?;
        let mut progress = live::Live::new(out, terminal);
        let how = RunOn {
            tolerate: false,
            settle: true,
        };
        let r = boxed::run_on_world(s, world, how, &mut progress).await;
        progress.finish();
        r.map_err(error)
    });
    let karpenter = other
        .join()
        .map_err(|_| CliError::Internal("the real Karpenter's side panicked".into()))?;
    let (k, log) = karpenter
        .map_err(|e| CliError::Internal(format!("{e} (its files: {})", log_dir.display())))?;
    let kerf = kerf?;
    let _ = writeln!(out, "\nthe real Karpenter (log: {}):", log.display());
    for line in notes(&k) {
        let _ = writeln!(out, "  {line}");
    }
    let runs = vec![("Kerf", kerf), ("Karpenter", k)];
    for (label, o) in &runs {
        let line = super::table::summary(o, started.elapsed());
        let line = line.trim_start();
        // Karpenter's side is not audited: its instances are KWOK Nodes, not EC2's.
        let line = match *label {
            "Kerf" => line,
            _ => line.lines().next().unwrap_or_default(),
        };
        let _ = writeln!(out, "\n{label}: {}", line.trim_end());
    }
    let _ = out.write_all(side_by_side(&runs).as_bytes());
    // Kerf's invariants must hold (Karpenter's side is not audited: its instances are Nodes).
    if let Some(first) = runs[0].1.violations.first() {
        return Err(CliError::Internal(format!(
            "{}: an invariant did not hold: {first}",
            s.path
        )));
    }
    Ok(runs)
}

/// The Karpenter version `scripts/karpenter.sh build` wrote beside the binary.
fn karpenter_version() -> String {
    let f = karpenter_dir().join("bin/VERSION");
    std::fs::read_to_string(Path::new(&f))
        .map(|v| format!("sigs.k8s.io/karpenter {}", v.trim()))
        .unwrap_or_else(|_| "sigs.k8s.io/karpenter".into())
}

/// What happened on a side its own way (cloud changes it applies differently), and the
/// assertions that did not hold there.
fn notes(o: &Outcome) -> Vec<String> {
    let applied = o
        .timeline
        .iter()
        .filter(|l| l.kind == Kind::Other && l.text.contains("Karpenter"))
        .map(|l| l.text.clone());
    let failed = o.failures.iter().map(|f| format!("assertion: {f}"));
    applied.chain(failed).collect()
}

/// `p50 / p99` of seconds, with the count.
fn latency(v: &[f64]) -> String {
    match (quantile(v, 0.5), quantile(v, 0.99)) {
        (Some(a), Some(b)) => format!("{a:.0} s / {b:.0} s ({})", v.len()),
        _ => "none".into(),
    }
}

/// The disruptions by reason, `Underutilized 3, Empty 1`.
fn reasons(o: &Outcome) -> String {
    let d = &o.measures.disruptions;
    if d.is_empty() {
        return "0".into();
    }
    d.iter()
        .map(|(r, n)| format!("{r} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn usage(o: &Outcome, f: impl Fn(&kerf_sim::scenario::UsageSeen) -> String) -> String {
    o.measures.usage.as_ref().map_or_else(|| "n/a".into(), f)
}

/// Both runs, figure by figure, over the same span of time.
pub fn side_by_side(runs: &[(&str, Outcome)]) -> String {
    let end = span(runs);
    type Row = (&'static str, fn(&Outcome, jiff::SignedDuration) -> String);
    let figures: [Row; 15] = [
        ("cost over the span", |o, end| {
            format!("${:.4}", over(o, end).0)
        }),
        ("node-hours", |o, end| format!("{:.2}", over(o, end).1)),
        ("$/h at the end", |o, _| {
            format!("${:.4}", o.last.billed_per_hour)
        }),
        ("NodeClaims launched", |o, _| o.last.launched.to_string()),
        ("disruptions", |o, _| reasons(o)),
        ("pod created → running p50 / p99", |o, _| {
            latency(&o.measures.pod_start)
        }),
        ("pod created → its NodeClaim p50 / p99", |o, _| {
            latency(&o.measures.to_launch)
        }),
        ("NodeClaim created → initialized p50 / p99", |o, _| {
            latency(&o.measures.to_initialized)
        }),
        ("disruptable → removed p50 / p99", |o, _| {
            latency(&o.measures.to_removal)
        }),
        ("pods evicted", |o, _| o.measures.evicted.to_string()),
        ("pods lost with their instance", |o, _| {
            o.measures.lost.len().to_string()
        }),
        ("CPU (decisions)", |o, _| {
            usage(o, |u| format!("{:.1} s", u.cpu_seconds))
        }),
        ("peak CPU (10 s)", |o, _| {
            usage(o, |u| format!("{:.2} cores", u.peak_cores))
        }),
        ("peak memory", |o, _| {
            usage(o, |u| format!("{:.0} MiB", u.peak_rss as f64 / 1048576.0))
        }),
        ("assertions failed", |o, _| o.failures.len().to_string()),
    ];
    let mut rows = vec![
        std::iter::once("FIGURE".to_string())
            .chain(runs.iter().map(|(l, _)| l.to_uppercase()))
            .collect::<Vec<_>>(),
    ];
    for (name, f) in figures {
        let mut row = vec![name.to_string()];
        row.extend(runs.iter().map(|(_, o)| f(o, end)));
        rows.push(row);
    }
    format!(
        "\nside by side over {} (wall-clock):\n{}CPU and memory: Kerf's are the thread running its \
         handlers with the simulated EC2 and kubelets (an upper bound) and the whole process's \
         peak; Karpenter's are its process's.\n",
        age(end.as_secs()),
        columns(&rows)
    )
}
