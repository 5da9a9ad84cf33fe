//! How long `kerf plan` spends loading a region's bundled catalog: the one-time parse of
//! the embedded JSON, then building every instance type for the nodeclass settings.

use criterion::{Criterion, criterion_group, criterion_main};
use kerf_catalog::{NodeClassSettings, bundled};

fn load(c: &mut Criterion) {
    let settings = NodeClassSettings::default();
    // The first call also parses the embedded data (once per process); report it apart.
    let start = std::time::Instant::now();
    let first = bundled("us-west-2", &settings).map(|c| c.instance_types.len());
    println!(
        "first bundled(us-west-2), incl. parse: {:?} ({first:?} types)",
        start.elapsed()
    );
    c.bench_function("bundled us-west-2 (data parsed)", |b| {
        b.iter_with_large_drop(|| bundled(std::hint::black_box("us-west-2"), &settings))
    });
}

criterion_group!(benches, load);
criterion_main!(benches);
