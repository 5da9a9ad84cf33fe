//! An SQS message body the interruption function reads (EventBridge events for spot
//! interruption warnings, rebalance recommendations, scheduled changes, state changes):
//! parsed or refused with a message, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|body: &str| {
    match kerf_control::interrupt::events::parse(body) {
        Ok(event) => {
            // A parsed event can be described for the logs.
            let _ = format!("{event:?}");
        }
        Err(e) => assert!(!e.to_string().is_empty(), "an error without a message"),
    }
});
