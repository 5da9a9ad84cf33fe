//! Times the phases of `kerf plan` on a benchmark input and compares the plan's cost with
//! Karpenter-style first-fit packing: `phases PODS_FILE CATALOG_FILE`.

use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let t0 = Instant::now();
    let inputs = kerf_cli::input::read(&[args[1].clone()])?;
    let t1 = Instant::now();
    let cat = kerf_catalog::file::from_json(&std::fs::read_to_string(&args[2])?)?;
    let source = kerf_cli::snapshot::CatalogSource::File(std::sync::Arc::new(cat));
    let seed = inputs.seed();
    let built = kerf_cli::snapshot::build(inputs.docs, &source, 0)?;
    let t2 = Instant::now();
    let plan = kerf_engine::provision(
        &built.snapshot,
        &kerf_engine::Options {
            seed,
            ..Default::default()
        },
    );
    let t3 = Instant::now();
    let out = serde_json::to_string_pretty(&plan)?;
    let t4 = Instant::now();
    let first_fit = kerf_engine::provision(
        &built.snapshot,
        &kerf_engine::Options {
            seed,
            optimize_cost: false,
            ..Default::default()
        },
    );
    eprintln!(
        "cost {:.4}/h ({} nodeclaims), first-fit {:.4}/h ({} nodeclaims): {:.2}% saved",
        plan.cost(),
        plan.launches.len(),
        first_fit.cost(),
        first_fit.launches.len(),
        100.0 * (1.0 - plan.cost() / first_fit.cost())
    );
    eprintln!(
        "read+parse {:?} convert {:?} provision {:?} render {:?} ({} bytes)",
        t1 - t0,
        t2 - t1,
        t3 - t2,
        t4 - t3,
        out.len()
    );
    Ok(())
}
