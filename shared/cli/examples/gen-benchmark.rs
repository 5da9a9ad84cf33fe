//! Writes Karpenter's scheduling-benchmark shape as `kerf plan` inputs:
//! `cargo run -p kerf-cli --example gen-benchmark -- PODS DIR [SEED] [sets|ranges] [bare|dump]`
//! creates
//! DIR/pods.json (the NodePool and pods as one JSON list), DIR/pods.yaml (the same objects as
//! a multi-document YAML stream, like a cluster dump) and DIR/catalog.json (400 instance
//! types). Requests come from Karpenter's sets (default) or from whole ranges (`ranges`); the
//! pods carry only the fields the shape needs (`bare`, default) or everything a `kubectl get
//! -o yaml` dump shows (`dump`).

use std::path::PathBuf;

use kerf_cli::benchdata::{self, Requests};
use kerf_cli::benchdress::Fields;

const USAGE: &str = "usage: gen-benchmark PODS DIR [SEED] [sets|ranges] [bare|dump]";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let count: usize = args.get(1).ok_or(USAGE)?.parse()?;
    let dir = PathBuf::from(args.get(2).ok_or(USAGE)?);
    let seed: u64 = args.get(3).map_or(Ok(42), |s| s.parse())?;
    let requests = match args.get(4).map(String::as_str) {
        None | Some("sets") => Requests::Sets,
        Some("ranges") => Requests::Ranges,
        Some(other) => return Err(format!("{other}: not sets or ranges; {USAGE}").into()),
    };
    let fields = match args.get(5) {
        None => Fields::Bare,
        Some(s) => Fields::parse(s).ok_or(format!("{s}: not bare or dump; {USAGE}"))?,
    };
    std::fs::create_dir_all(&dir)?;
    std::fs::write(
        dir.join("pods.json"),
        serde_json::to_string(&benchdata::manifests_with(count, seed, requests, fields))?,
    )?;
    std::fs::write(
        dir.join("pods.yaml"),
        benchdata::manifests_yaml_with(count, seed, requests, fields)?,
    )?;
    std::fs::write(
        dir.join("catalog.json"),
        serde_json::to_string(&benchdata::catalog(400))?,
    )?;
    Ok(())
}
