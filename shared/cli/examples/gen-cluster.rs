//! Writes a large running cluster for measuring disruption planning:
//! `cargo run -p kerf-cli --example gen-cluster -- NODES PODS DIR [mixed|consolidation|full|pinned] [SEED] [bare|dump]`
//! creates DIR/cluster.json
//! (one JSON list) and DIR/cluster.yaml (a multi-document YAML dump); plan it with
//! `kerf plan DIR/cluster.yaml --mode disrupt --now 2026-06-01T12:00:00Z`. The mix:
//! `mixed` (default) empty, underutilized, full, drifted, expired and blocked nodes;
//! `consolidation` no empty or drifted node, so the pass reaches consolidation; `full` every
//! node full; `pinned` pods pinned to their nodes, so consolidation simulates every candidate
//! and finds nothing. `dump` gives every object what a `kubectl get -o yaml` dump shows
//! (`bare`, the default, only what the shape needs).

use std::path::PathBuf;

use kerf_cli::benchcluster::Mix;
use kerf_cli::benchdress::Fields;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let usage = "usage: gen-cluster NODES PODS DIR [MIX] [SEED] [bare|dump]";
    let args: Vec<String> = std::env::args().collect();
    let nodes: usize = args.get(1).ok_or(usage)?.parse()?;
    let pods: usize = args.get(2).ok_or(usage)?.parse()?;
    let dir = PathBuf::from(args.get(3).ok_or(usage)?);
    std::fs::create_dir_all(&dir)?;
    let mix = match args.get(4).map(String::as_str) {
        None | Some("mixed") => Mix::Mixed,
        Some("consolidation") => Mix::Consolidation,
        Some("full") => Mix::Full,
        Some("pinned") => Mix::Pinned,
        Some(other) => {
            return Err(
                format!("unknown mix {other:?}: mixed, consolidation, full or pinned").into(),
            );
        }
    };
    let seed: u64 = args.get(5).map_or(Ok(42), |s| s.parse())?;
    let fields = match args.get(6) {
        None => Fields::Bare,
        Some(s) => Fields::parse(s).ok_or(format!("{s}: not bare or dump; {usage}"))?,
    };
    let list = kerf_cli::benchcluster::cluster(nodes, pods, seed, mix, fields)?;
    std::fs::write(dir.join("cluster.json"), serde_json::to_string(&list)?)?;
    let mut yaml = String::new();
    for o in list["items"].as_array().into_iter().flatten() {
        yaml.push_str("---\n");
        yaml.push_str(&yaml_serde::to_string(o)?);
    }
    std::fs::write(dir.join("cluster.yaml"), yaml)?;
    Ok(())
}
