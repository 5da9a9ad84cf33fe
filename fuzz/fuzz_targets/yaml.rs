//! The fast YAML reader `kerf plan` uses for dumps: whatever it reads, it reads as the full
//! YAML reader does, and it reads nothing the full reader refuses.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Err(e) = kerf_cli::fastyaml::check::contract(text) {
        panic!("{e}");
    }
});
