//! Recorded EC2 responses (`tests/fixtures/aws/`) served through the fault proxy, for the calls
//! moto does not answer as EC2 does.

use super::proxy::{Fault, Proxy};
use super::repo_root;

/// The recorded response `name`.
pub fn fixture(name: &str) -> String {
    let p = repo_root().join("tests/fixtures/aws").join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Answers the next `times` calls of `action` with the recorded XML response `name`.
pub fn serve(proxy: &Proxy, action: &str, name: &str, times: usize) {
    let fault = Fault::Respond {
        status: 200,
        content_type: "text/xml".into(),
        body: fixture(name),
    };
    proxy.inject(action, fault, times);
}
