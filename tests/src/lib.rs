//! Support for Kerf's end-to-end tests: the simulated world with the getting-started
//! objects, and readers of what it holds.

pub mod world;
