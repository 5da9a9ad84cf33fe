//! Kerf's control layer: the reconcilers the Lambda functions (and `kerf sim`) run.
//!
//! Every reconciler is an async function over the [`ports`] this crate defines: the cluster
//! (Kubernetes API), the cloud (EC2), a queue (SQS), a publisher (EventBridge) and a clock.
//! It depends on no adapter: `kerf-kube` and `kerf-aws` implement the ports for production,
//! `kerf-sim` in memory. Decisions come from the pure engine; this crate turns them into
//! writes, in an order that makes every step idempotent and resumable.

pub mod ports;

pub mod claim;
pub mod class_status;
pub mod ctx;
pub mod disrupt;
pub mod error;
pub mod events;
pub mod finalize;
pub mod gc;
pub mod handlers;
pub mod initialize;
pub mod instances;
pub mod interrupt;
pub mod launch;
pub mod lease;
pub mod liveness;
pub mod log;
pub mod metrics;
pub mod names;
pub mod nodeclass;
pub mod nodepool;
pub mod overlays;
pub mod provision;
pub mod redact;
pub mod register;
pub mod registration;
pub mod repair;
pub mod reservations;
pub mod retire;
pub mod statics;
pub mod teardown;
pub mod terminate;
pub mod timers;
pub mod view;
pub mod volumes;
pub mod webhook;
