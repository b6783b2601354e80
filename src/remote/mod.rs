//! Talking to a target: the HTTP client, its adaptive throttle, and reading the target's
//! capabilities and current state.

pub mod client;
pub mod state;
pub mod throttle;
