//! A `kerf sim` scenario file: parsed, or refused naming the field or step, never a panic;
//! every step of a parsed scenario is checked the way a run checks it.
#![no_main]

use kerf_sim::scenario::{Scenario, ScenarioError};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    match Scenario::parse(text, "fuzz.yaml", std::path::PathBuf::from("/nonexistent")) {
        Ok(s) => {
            for (i, step) in s.steps.iter().enumerate() {
                if let Err(m) = step.action() {
                    assert!(!m.is_empty(), "step {i}: an error without a message");
                }
            }
        }
        Err(e @ (ScenarioError::Parse { .. } | ScenarioError::Step { .. })) => {
            assert!(e.to_string().starts_with("fuzz.yaml: "), "{e}");
        }
        Err(e) => panic!("parsing cannot fail this way: {e}"),
    }
});
