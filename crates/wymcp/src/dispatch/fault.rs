//! A panic inside a tool's code, contained and rendered as the `tool_fault` body.

use std::any::Any;

use serde_json::{Value, json};
use wymcp_core::bound;

/// A contained panic.
pub(crate) struct Fault {
    message: String,
}

impl Fault {
    /// Reads a panic payload: a `&str` or `String` is the message, anything else is named.
    pub(crate) fn from_panic(payload: &(dyn Any + Send)) -> Self {
        let message = if let Some(s) = payload.downcast_ref::<&str>() {
            (*s).to_owned()
        } else if let Some(s) = payload.downcast_ref::<String>() {
            s.clone()
        } else {
            "non-string panic payload".to_owned()
        };
        Fault { message }
    }

    /// The message, bounded (what the caller reads and the `error` field of the event).
    pub(crate) fn bounded_message(&self) -> String {
        bound::echo(&self.message)
    }

    /// The message, whole (the event's `crash_reason`).
    pub(crate) fn whole_message(&self) -> &str {
        &self.message
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
