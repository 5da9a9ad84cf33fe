//! Writes Karpenter's scheduling-benchmark shape as `kerf plan` inputs:
//! `cargo run -p kerf-cli --example gen-benchmark -- PODS DIR` creates DIR/pods.json (the
//! NodePool and pods as one JSON list), DIR/pods.yaml (the same objects as a multi-document
//! YAML stream, like a cluster dump) and DIR/catalog.json (400 instance types).

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let count: usize = args
        .get(1)
        .ok_or("usage: gen-benchmark PODS DIR")?
        .parse()?;
    let dir = PathBuf::from(args.get(2).ok_or("usage: gen-benchmark PODS DIR")?);
    std::fs::create_dir_all(&dir)?;
    std::fs::write(
        dir.join("pods.json"),
        serde_json::to_string(&kerf_cli::benchdata::manifests(count, 42))?,
    )?;
    std::fs::write(
        dir.join("pods.yaml"),
        kerf_cli::benchdata::manifests_yaml(count, 42)?,
    )?;
    std::fs::write(
        dir.join("catalog.json"),
        serde_json::to_string(&kerf_cli::benchdata::catalog(400))?,
    )?;
    Ok(())
}
