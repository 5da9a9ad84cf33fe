//! Interruption handling: the events AWS sends before it takes an instance away.

pub mod act;
pub mod events;
pub mod health;
pub mod intake;
pub mod notice;
pub mod plan;

pub use act::{BatchReport, InterruptOptions, handle_batch};
pub use intake::Message;
