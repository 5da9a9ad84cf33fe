//! What every Kerf Lambda function shares: its configuration from the environment
//! ([`Config`]), the adapters built once per container ([`Runtime`]) and a fresh control
//! context per invocation (a Kubernetes client whose EKS token is never older than ten
//! minutes, the invocation's own metrics). Each function's `main.rs` is then a few lines.

pub mod config;
pub mod runtime;
pub mod tracing;

pub use config::{Config, ConfigError};
pub use runtime::{FnCtx, Runtime};
