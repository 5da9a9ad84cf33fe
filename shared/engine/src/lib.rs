//! Kerf engine.
