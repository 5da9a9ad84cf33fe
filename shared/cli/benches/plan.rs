//! Karpenter's scheduling benchmark shape through Kerf: end to end (parse the pod list as
//! JSON and as a multi-document YAML dump, build the snapshot, plan) and the engine alone,
//! for 1,000 and 20,000 pods.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use kerf_cli::benchdata;
use kerf_cli::input::{Inputs, parse_into};
use kerf_cli::snapshot::{CatalogSource, build};
use kerf_engine::{Options, provision};

fn source() -> CatalogSource {
    let text = benchdata::catalog(400).to_string();
    CatalogSource::File(Arc::new(kerf_catalog::file::from_json(&text).unwrap()))
}

fn end_to_end(file: &str, text: &str, source: &CatalogSource) -> usize {
    let mut inputs = Inputs::default();
    parse_into(&mut inputs, file, text).unwrap();
    let seed = inputs.seed();
    let built = build(inputs.docs, source, 0).unwrap();
    let plan = provision(
        &built.snapshot,
        &Options {
            seed,
            ..Options::default()
        },
    );
    serde_json::to_string(&plan).unwrap().len()
}

fn bench(c: &mut Criterion) {
    let source = source();
    for n in [1_000usize, 20_000] {
        let text = benchdata::manifests(n, 42).to_string();
        let mut g = c.benchmark_group(format!("karpenter-shape-{n}"));
        g.sample_size(10);
        g.bench_function("end-to-end-json", |b| {
            b.iter(|| end_to_end("pods.json", &text, &source))
        });
        let yaml = benchdata::manifests_yaml(n, 42).unwrap();
        g.bench_function("end-to-end-yaml", |b| {
            b.iter(|| end_to_end("pods.yaml", &yaml, &source))
        });
        let mut inputs = Inputs::default();
        parse_into(&mut inputs, "pods.json", &text).unwrap();
        let built = build(inputs.docs, &source, 0).unwrap();
        g.bench_function("engine", |b| {
            b.iter(|| {
                provision(&built.snapshot, &Options::default())
                    .launches
                    .len()
            })
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
