//! Kerf's end-to-end suites, one module each, built as one test binary.

mod capacity;
mod crash;
mod delivery;
mod disruption;
mod emptiness;
mod flaky;
mod handlers;
mod health;
mod interruption;
mod pdb;
mod provisioning;
mod termination;
mod timers;
