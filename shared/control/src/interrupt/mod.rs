//! Interruption handling: the events AWS sends before it takes an instance away.

pub mod act;
pub mod events;
pub mod health;

pub use act::{BatchReport, InterruptOptions, Message, handle_batch};
