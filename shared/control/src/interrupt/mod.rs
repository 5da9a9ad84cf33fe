//! Interruption handling: the events AWS sends before it takes an instance away.

pub mod events;
