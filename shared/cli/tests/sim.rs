//! `kerf sim`: every scenario in `examples/` runs to the end with its assertions holding, the
//! embedded getting-started scenario runs without a file, a failed assertion exits non-zero
//! naming its step, and a malformed scenario is refused naming the step or field.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use kerf_cli::sim::simulate;
use kerf_sim::scenario::{Scenario, ScenarioError};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn examples() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(repo().join("examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    out.sort();
    out
}

fn run(s: &Scenario) -> (Result<kerf_sim::scenario::Outcome, String>, String) {
    let mut out = Vec::new();
    let r = simulate(s, &mut out, false).map_err(|e| e.to_string());
    (r, String::from_utf8(out).unwrap())
}

#[test]
fn every_example_scenario_holds() {
    let files = examples();
    let names: Vec<String> = files
        .iter()
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    for want in [
        "inflate",
        "consolidation",
        "spot-to-spot",
        "spot-interruption",
        "expire-under-pdb",
        "drift-ami",
        "tainted-nodepool",
        "weights-limits",
        "statefulset",
        "node-overlay",
        "static-capacity",
        "node-repair",
        "capacity-reservation",
    ] {
        assert!(
            names.iter().any(|n| n == want),
            "examples/{want}.yaml is missing"
        );
    }
    for f in &files {
        let s = Scenario::load(f).unwrap();
        let (r, out) = run(&s);
        let o = r.unwrap_or_else(|e| panic!("{}: {e}\n{out}", f.display()));
        assert!(out.contains("launched nodeclaim"), "{}: {out}", f.display());
        assert!(o.last.launched > 0 && o.simulated.as_secs() > 0);
        assert!(o.cost > 0.0, "{}: nodes cost money", f.display());
    }
}

#[test]
fn node_overlays_count_only_behind_their_gate() {
    let mut s = Scenario::load(&repo().join("examples/node-overlay.yaml")).unwrap();
    s.settings.feature_gates.clear();
    let (r, out) = run(&s);
    let e = r.expect_err("without the gate the list price decides");
    assert!(e.contains("instance types in [r7i.2xlarge]"), "{e}\n{out}");
}

#[test]
fn a_sick_node_is_repaired_only_behind_its_gate() {
    let mut s = Scenario::load(&repo().join("examples/node-repair.yaml")).unwrap();
    s.settings.feature_gates.clear();
    let (r, out) = run(&s);
    let e = r.expect_err("without the gate the sick node stays");
    assert!(
        e.contains("step 6") && e.contains("expected launched NodeClaims 2, found 1"),
        "{e}\n{out}"
    );
}

#[test]
fn a_static_pool_keeps_its_replicas_only_behind_its_gate() {
    let mut s = Scenario::load(&repo().join("examples/static-capacity.yaml")).unwrap();
    s.settings.feature_gates.clear();
    let (r, out) = run(&s);
    let e = r.expect_err("without the gate nothing keeps the replicas");
    assert!(e.contains("fixed"), "{e}\n{out}");
}

#[test]
fn the_embedded_scenario_is_the_inflate_walkthrough() {
    let s = Scenario::getting_started().unwrap();
    let (r, out) = run(&s);
    let o = r.unwrap_or_else(|e| panic!("{e}\n{out}"));
    assert_eq!(o.last.claims.len(), 0, "emptiness removed every node");
    assert!(o.last.reasons.contains_key("DisruptionTerminating"));
    assert!(out.contains("step 1/"), "{out}");
    assert!(out.contains("No NodeClaims at the end."), "{out}");
    let peak = o
        .samples
        .iter()
        .map(|s| s.nodes.values().sum::<usize>())
        .max();
    assert!(peak >= Some(2), "30 pods took more than one node: {peak:?}");
    let pending = o.samples.iter().map(|s| s.pending).max();
    // Of the 25 new pods, those that did not fit beside the first five waited for capacity.
    assert!(
        pending.is_some_and(|p| (20..=25).contains(&p)),
        "the new pods were pending at some point: {pending:?}"
    );
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn tmp(test: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(test)
}

const FAILING: &str = "name: failing
objects:
  - file: ../../../../examples/getting-started/nodepool.yaml
  - file: ../../../../examples/getting-started/inflate.yaml
steps:
  - until: {running: 5}
    within: 3m
  - name: wrong on purpose
    expect: {nodes: 7}
";

/// `kerf sim` on `text` written as `test/test.yaml`, its files pointed back at the repository
/// (a scenario's files are relative to it).
fn sim_on(test: &str, text: &str) -> std::process::Output {
    let text = text.replace(
        "../../../../examples",
        &repo().join("examples").display().to_string(),
    );
    let f = write(&tmp(test), &format!("{test}.yaml"), &text);
    Command::new(env!("CARGO_BIN_EXE_kerf"))
        .args(["sim", f.to_str().unwrap()])
        .output()
        .unwrap()
}

#[test]
fn a_failed_assertion_exits_non_zero_naming_the_step() {
    let out = sim_on("sim-failing", FAILING);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("step 2 \"wrong on purpose\": expected nodes 7, found 1"),
        "{err}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("launched nodeclaim"), "{stdout}");
}

const NO_CLASS: &str = "name: no-class
objects:
  - manifest: |
      apiVersion: karpenter.sh/v1
      kind: NodePool
      metadata: {name: default}
      spec:
        template:
          spec:
            requirements: []
            nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: missing}
  - file: ../../../../examples/getting-started/inflate.yaml
steps:
  - scale: {deployment: inflate, replicas: 2}
  - until: {running: 2}
    within: 3m
";

#[test]
fn a_failed_wait_says_why_the_pods_are_pending_and_which_nodepool_is_not_ready() {
    let out = sim_on("sim-no-class", NO_CLASS);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("step 2: expected running pods 2, found 0 after 3m"),
        "{err}"
    );
    // The provisioner's own reason, not `no nodepools are defined`.
    assert!(
        err.contains(
            "2 pods pending (inflate-"
        ) && err.contains(
            "Failed to schedule pod, nodepool \"default\": not ready: EC2NodeClass \"missing\" not found"
        ),
        "{err}"
    );
    assert!(
        err.contains("nodepool default not ready: NodeClassReady False (NodeClassNotFound"),
        "{err}"
    );
}

#[test]
fn a_scenario_runs_in_the_region_it_names() {
    let seoul = FAILING
        .replace(
            "name: failing",
            "name: seoul\nsettings:\n  region: ap-northeast-2",
        )
        .replace("  - name: wrong on purpose\n    expect: {nodes: 7}\n", "");
    let out = sim_on("region-seoul", &seoul);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("on-demand, ap-northeast-2"),
        "launched in one of the region's zones: {stdout}"
    );
    assert!(
        stdout.contains(".ap-northeast-2.compute.internal"),
        "its node is named in the region: {stdout}"
    );
    assert!(!stdout.contains("us-west-2"), "{stdout}");

    let mars = seoul.replace("ap-northeast-2", "mars-north-1");
    let out = sim_on("region-unknown", &mars);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("settings.region") && stderr.contains("unknown region \"mars-north-1\""),
        "{stderr}"
    );
}

#[test]
fn logs_go_to_the_file_as_json_lines_a_karpenter_user_can_jq() {
    let dir = tmp("sim-logs");
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("kerf.log");
    let out = Command::new(env!("CARGO_BIN_EXE_kerf"))
        .args(["sim", "--logs", log.to_str().unwrap()])
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Karpenter's shape: level, time, logger, message, and the objects named.
    let launched = lines
        .iter()
        .find(|l| l["message"] == "launched nodeclaim")
        .unwrap_or_else(|| panic!("no launch in {text}"));
    for key in ["level", "time", "logger", "NodeClaim"] {
        assert!(!launched[key].is_null(), "{key} missing: {launched}");
    }
    let bad = Command::new(env!("CARGO_BIN_EXE_kerf"))
        .args(["sim", "--logs", "/nonexistent/dir/kerf.log"])
        .current_dir(repo())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(2), "{err}");
    assert!(
        err.contains("/nonexistent/dir/kerf.log") && err.contains("cannot write the log file"),
        "{err}"
    );
}

#[test]
fn a_malformed_scenario_is_refused_naming_the_step_or_field() {
    let parse = |text: &str| Scenario::parse(text, "s.yaml", PathBuf::new()).unwrap_err();
    let e = parse("name: x\nsteps:\n  - advance: 5m\n    scale: {deployment: a, replicas: 1}\n");
    assert!(matches!(e, ScenarioError::Step { index: 1, .. }), "{e}");
    assert!(
        e.to_string()
            .contains("one action per step, found scale, advance"),
        "{e}"
    );
    let e = parse("name: x\nsteps:\n  - advance: soon\n");
    assert!(
        e.to_string()
            .contains("s.yaml: step 1: `soon` is not a duration"),
        "{e}"
    );
    let e = parse("name: x\nsteps:\n  - expect: {nodez: 1}\n");
    assert!(e.to_string().contains("steps[0].expect"), "{e}");
    assert!(e.to_string().contains("nodez"), "{e}");
    let e = parse("name: x\nsteps:\n  - {name: nothing}\n");
    assert!(
        e.to_string().contains("step 1 \"nothing\": no action"),
        "{e}"
    );
    let e = parse("name: x\nobjects:\n  - {}\nsteps: []\n");
    assert!(
        e.to_string()
            .contains("objects[0]: give exactly one of `file` or `manifest`"),
        "{e}"
    );
    let e = parse("name: x\nsteps:\n  - {advance: 1m, within: 2m}\n");
    assert!(e.to_string().contains("belongs to an `until` step"), "{e}");
    let e = parse("name: x\nsteps:\n  - spotPrice: {instanceType: m5.large, price: -1}\n");
    assert!(
        e.to_string()
            .contains("spotPrice.price must be a positive number"),
        "{e}"
    );
    // Exit code 2 from the binary, as for any bad input.
    let f = write(
        &tmp("sim-bad"),
        "bad.yaml",
        "name: x\nsteps:\n  - {name: nothing}\n",
    );
    let out = Command::new(env!("CARGO_BIN_EXE_kerf"))
        .args(["sim", f.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.yaml: step 1 \"nothing\": no action"),
        "{err}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_kerf"))
        .args(["sim", "no/such/scenario.yaml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no/such/scenario.yaml"));
}

#[test]
fn compare_runs_the_scenario_again_with_karpenters_first_fit_decisions() {
    use kerf_cli::sim::{simulate_with, table};
    use kerf_sim::scenario::Decisions;
    let s = Scenario::load(&repo().join("examples/weights-limits.yaml")).unwrap();
    let mut sink = Vec::new();
    let kerf = simulate_with(&s, Decisions::Kerf, &mut sink, false, true).unwrap();
    let karpenter = simulate_with(&s, Decisions::Karpenter, &mut sink, false, true).unwrap();
    // The same pods on the same pools: first-fit packs them onto fewer, larger nodes that
    // cost more per hour than Kerf's cost-optimised choice.
    assert_eq!(kerf.last.running, karpenter.last.running);
    assert_eq!(kerf.last.pending, 0);
    assert_eq!(karpenter.last.pending, 0);
    assert!(
        karpenter.last.cost_per_hour() > kerf.last.cost_per_hour() + 0.01,
        "Karpenter ${:.4}/h, Kerf ${:.4}/h",
        karpenter.last.cost_per_hour(),
        kerf.last.cost_per_hour()
    );
    let text = table::comparison(&[("Kerf", kerf.clone()), ("Karpenter", karpenter.clone())]);
    assert!(text.contains("Kerf's decisions cost $"), "{text}");
    assert!(text.contains(" less ("), "{text}");
    // Both runs are compared over the same span: the shorter one keeps its last nodes.
    let longer = kerf.simulated.max(karpenter.simulated);
    let (cost, _) = table::over(&kerf, longer + jiff::SignedDuration::from_hours(1));
    let want = table::over(&kerf, longer).0 + kerf.last.cost_per_hour();
    assert!((cost - want).abs() < 1e-9);
    // The report carries both runs and the comparison.
    let html = kerf_cli::sim::report::page(&s.name, &[("Kerf", &kerf), ("Karpenter", &karpenter)]);
    assert!(html.contains("id=\"comparison\""));
    assert!(html.contains("id=\"run-kerf\"") && html.contains("id=\"run-karpenter\""));
}

#[test]
fn a_scenario_run_twice_gives_the_same_timeline_and_cost() {
    let s = Scenario::load(&repo().join("examples/expire-under-pdb.yaml")).unwrap();
    let (a, _) = run(&s);
    let (b, _) = run(&s);
    let (a, b) = (a.unwrap(), b.unwrap());
    let lines = |o: &kerf_sim::scenario::Outcome| {
        o.timeline
            .iter()
            .map(|e| format!("{} {}", e.at, e.text))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        lines(&a),
        lines(&b),
        "the same NodeClaims, pods and moments"
    );
    assert_eq!(a.cost, b.cost);
    assert_eq!(a.node_hours, b.node_hours);
}

#[test]
fn a_build_without_tls_refuses_the_real_control_plane_options_before_running() {
    use clap::Parser;
    use kerf_cli::args::{Cli, Command};
    use kerf_cli::sim::reaches_tls;
    let args = |extra: &[&str]| {
        let cli = Cli::try_parse_from(["kerf", "sim"].iter().chain(extra)).unwrap();
        let Command::Sim(a) = cli.command else {
            panic!("not parsed as kerf sim");
        };
        a
    };
    let in_process = args(&[]);
    assert!(reaches_tls(&in_process, false).is_ok());
    for real in [
        &["--cluster", "kind.kubeconfig"][..],
        &[
            "--compare",
            "karpenter-real",
            "--karpenter-cluster",
            "k.kubeconfig",
        ][..],
    ] {
        let a = args(real);
        let err = reaches_tls(&a, false).unwrap_err().to_string();
        assert!(err.contains("--features tls"), "{err}");
        assert!(reaches_tls(&a, true).is_ok());
    }
}
