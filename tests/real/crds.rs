//! Kerf's CRDs on the real API server: they apply and become Established; every example
//! NodePool and EC2NodeClass of the repository is accepted; and every invalid object
//! Kerf's in-process API server is tested to reject is rejected by the real one too, the
//! real message naming each field path the in-process server names. Every difference in
//! the answers of the two servers is printed as a table.

use std::collections::BTreeSet;

use kerf_e2e::real::api::apply;
use kerf_e2e::real::cluster::ControlPlane;
use kerf_e2e::real::invalid::{Answer, Case, attempt, cases};

use crate::{setup, yaml};

/// One difference between the servers' answers: `(case, aspect, in-process, real)`.
type Row = (String, String, String, String);

/// The message without its causes.
fn skeleton(a: &Answer) -> String {
    let mut m = a.message.clone();
    for (f, c) in &a.causes {
        m = m.replacen(&format!("{f}: {c}"), "", 1);
    }
    m
}

fn differences(case: &Case, sim: &Answer, real: &Answer) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut row = |aspect: &str, a: String, b: String| {
        rows.push((case.name.to_string(), aspect.to_string(), a, b));
    };
    if (sim.code, &sim.reason) != (real.code, &real.reason) {
        row(
            "code",
            format!("{} {}", sim.code, sim.reason),
            format!("{} {}", real.code, real.reason),
        );
    }
    // The message lists the causes (the real server in no fixed order): beyond the causes,
    // compared one by one below, only its own words may differ.
    if skeleton(sim) != skeleton(real) {
        row("message", sim.message.clone(), real.message.clone());
    }
    let fields: BTreeSet<&str> = sim
        .causes
        .iter()
        .chain(&real.causes)
        .map(|(f, _)| f.as_str())
        .collect();
    for f in fields {
        let of = |a: &Answer| -> Vec<String> {
            a.causes
                .iter()
                .filter(|(g, _)| g == f)
                .map(|(_, m)| m.clone())
                .collect()
        };
        let (a, b) = (of(sim), of(real));
        if a != b {
            let show = |v: Vec<String>| {
                if v.is_empty() {
                    "(no cause)".to_string()
                } else {
                    v.join(" | ")
                }
            };
            row(&format!("cause {f}"), show(a), show(b));
        }
    }
    rows
}

/// What must hold: both reject; the real message names every field the in-process names.
fn failures(case: &Case, sim: &Answer, real: &Answer) -> Vec<String> {
    let mut out = Vec::new();
    if sim.accepted {
        out.push(format!(
            "{} ({}): the in-process server accepted it",
            case.name, case.from
        ));
    }
    if real.accepted {
        out.push(format!(
            "{} ({}): the real API server accepted it",
            case.name, case.from
        ));
    }
    for (who, a) in [("in-process", sim), ("real", real)] {
        if !a.accepted && !(400..500).contains(&a.code) {
            out.push(format!(
                "{}: the {who} server answered {} {}",
                case.name, a.code, a.message
            ));
        }
    }
    for (field, _) in &sim.causes {
        if !real.accepted && !real.message.contains(field.as_str()) {
            out.push(format!(
                "{}: the real message does not name {field}: {}",
                case.name, real.message
            ));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crds_examples_and_invalid_objects_on_the_real_api_server() {
    let cp = ControlPlane::up("crds").await;
    let admin = cp.admin().await;
    let names = setup::install_crds(&admin).await;
    eprintln!("[real] CRDs Established: {}", names.join(", "));

    // Every example NodePool and EC2NodeClass, validated as `kubectl apply --server-side
    // --dry-run=server` does (examples share names; a dry run keeps them apart).
    let mut examples = yaml::example_objects();
    let sources: BTreeSet<String> = examples.iter().map(|(f, _, _)| f.clone()).collect();
    for must in [
        "examples/getting-started/nodepool.yaml",
        "infra/examples/default.yaml",
        "infra/examples/spot.yaml",
        "examples/spot-interruption.yaml",
    ] {
        assert!(
            sources.contains(must),
            "no example objects found in {must}: {sources:?}"
        );
    }
    let mut seen = BTreeSet::new();
    examples.retain(|(_, _, d)| seen.insert(d.to_string()));
    let mut rejected = Vec::new();
    for (_, from, doc) in &examples {
        if let Err(e) = apply(&admin, doc, true).await {
            rejected.push(format!("{from}: {e}"));
        }
    }
    eprintln!(
        "[real] {} distinct example objects from {} files",
        examples.len(),
        sources.len()
    );
    assert!(
        rejected.is_empty(),
        "examples rejected by the real API server:\n{}",
        rejected.join("\n")
    );

    // The invalid objects, on both servers.
    let sim = kerf_sim::Sim::start().await.unwrap();
    let in_process = sim.client().unwrap();
    let (mut rows, mut failed) = (Vec::new(), Vec::new());
    let all = cases();
    for case in &all {
        let a = attempt(&in_process, case).await;
        let b = attempt(&admin, case).await;
        rows.extend(differences(case, &a, &b));
        failed.extend(failures(case, &a, &b));
    }
    eprintln!(
        "[real] {} invalid writes; {} differences between the in-process and the real API server:",
        all.len(),
        rows.len()
    );
    eprintln!(
        "| case | aspect | in-process (shared/sim) | real kube-apiserver |\n|---|---|---|---|"
    );
    for (case, aspect, a, b) in &rows {
        eprintln!(
            "| {case} | {aspect} | {} | {} |",
            a.replace('|', "\\|"),
            b.replace('|', "\\|")
        );
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
