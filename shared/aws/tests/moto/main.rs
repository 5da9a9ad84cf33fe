//! Adapter tests against moto 5.2.1 in server mode: one server for this binary, reset and
//! serialised per test, with the fault proxy in front where a test injects failures.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../support/mod.rs"]
mod support;

mod discovery;
mod faults;
mod interfaces;
mod launching;
mod messaging;
mod network;
mod recovery;
mod reserved;
mod seed;
mod userdata;
