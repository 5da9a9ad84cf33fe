//! The manifests `kerf plan` and `kerf migrate` read: one file's text, parsed into documents,
//! built into the engine's snapshot and planned (`kerf plan`), and migrated (`kerf migrate`).
//! Each either works or ends in an error naming the file, never a panic.
#![no_main]

use kerf_cli::args::Output;
use kerf_cli::commands::render;
use kerf_cli::error::CliError;
use kerf_cli::input::{Inputs, parse_into};
use kerf_cli::snapshot::{CatalogSource, build};
use libfuzzer_sys::fuzz_target;

/// The error names the file it is about.
fn named(e: &CliError) {
    let text = e.to_string();
    assert!(text.contains("fuzz.yaml"), "{text}");
}

fuzz_target!(|text: &str| {
    let _ = kerf_api::migrate_documents(text);
    let mut inputs = Inputs::default();
    if let Err(e) = parse_into(&mut inputs, "fuzz.yaml", text) {
        named(&e);
        return;
    }
    let source = CatalogSource::Bundled {
        region: "us-west-2".into(),
    };
    match build(inputs.docs, &source, 1_798_761_600) {
        Ok(built) => {
            let opts = kerf_engine::DisruptOptions::default();
            let plan = kerf_engine::provision(&built.snapshot, &opts.provisioning());
            let rendered = render(&plan, Output::Json);
            assert!(rendered.is_ok(), "{rendered:?}");
        }
        Err(e) => named(&e),
    }
});
