//! A panic inside a tool's code, contained and rendered as the `tool_fault` body.

use std::any::Any;

use serde_json::{Value, json};
use wymcp_core::bound;

/// Most characters of a panic message written to the log.
pub(crate) const LOGGED_CHARS: usize = 4_096;

/// A contained panic.
pub(crate) struct Fault {
    message: String,
}

impl Fault {
    /// Reads a panic payload: a `&str` or `String` is the message, anything else is named.
    pub(crate) fn from_panic(payload: &(dyn Any + Send)) -> Self {
        // Downcast, justified: a panic's payload is `dyn Any` by the standard library's design.
        let message = if let Some(s) = payload.downcast_ref::<&str>() {
            (*s).to_owned()
        } else if let Some(s) = payload.downcast_ref::<String>() {
            s.clone()
        } else {
            "non-string panic payload".to_owned()
        };
        Fault { message }
    }

    /// The message, bounded: what the caller reads, and (escaped) the `error` field of the event.
    pub(crate) fn bounded_message(&self) -> String {
        bound::echo(&self.message)
    }

    /// The message, whole (a hook's panic, logged by its transport).
    pub(crate) fn whole_message(&self) -> &str {
        &self.message
    }

    /// The message as the error event's `crash_reason` carries it: cut to
    /// [`LOGGED_CHARS`] characters and escaped (a newline is written `\n`), so a panic
    /// message can neither flood the log nor forge a log line.
    pub(crate) fn logged_message(&self) -> String {
        bound::echo_within(&self.message, LOGGED_CHARS)
            .escape_debug()
            .to_string()
    }

    /// The `tool_fault` body.
    pub(crate) fn body(&self, tool: &str) -> Value {
        json!({
            "errorType": "tool_fault",
            "tool": tool,
            "exception": "panic",
            "message": self.bounded_message(),
        })
    }
}
