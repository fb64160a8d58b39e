//! The runtime-free core of [wymcp](https://docs.rs/wymcp): action schemas and their
//! validation, the unknown-key gate, the value gate and bounded echo.
//!
//! This crate has no async runtime dependency, so the compile-time macro runs exactly the code
//! the runtime `build()` runs. Most users depend on `wymcp`, which re-exports what they need.

#![warn(missing_docs)]

mod action;
pub mod bound;
mod error;
mod example;
pub mod excerpt;
mod hint;
mod integers;
pub mod keyset;
pub mod pointer;
pub mod schema;
mod validate;
pub mod value_gate;

pub use action::{ACTION_SCHEMA_KEYS, ActionSchema, Actions};
pub use error::{Callback, ConfigurationError, Problem};
pub use hint::Hint;
pub use validate::{
    ValidatedAction, ValidatedActions, action_summaries, related_offence, validate_action,
    validate_actions, validate_scopes,
};
