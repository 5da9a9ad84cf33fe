//! Kubernetes quantities: parsed or refused, never a panic; what parses prints back to the
//! same value in both of Kerf's formats.
#![no_main]

use kerf_catalog::quantity::{Format, format, parse};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|s: &str| {
    let Ok(v) = parse(s) else { return };
    for f in [Format::DecimalMilli, Format::Binary] {
        let printed = format(v, f);
        assert_eq!(
            parse(&printed).ok(),
            Some(v),
            "{s:?} printed as {printed:?}"
        );
    }
});
