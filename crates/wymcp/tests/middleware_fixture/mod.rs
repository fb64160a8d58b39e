//! The operation-middleware tests' tool and helpers, shared by `middleware.rs` and
//! `middleware_builtins.rs` (a directory module, so not a test target).

// Used by `middleware_builtins.rs` and `middleware_methods.rs`, not by `middleware.rs`.
#[allow(dead_code)]
pub(crate) mod spans;

use std::time::Duration;

use serde_json::{Value, json};
use wymcp::{ServerBuilder, ToolPolicy};

use crate::matrix_kit::{NAME, Path, VERSION};

/// Every path a call takes: HTTP and stdio, each in both eras.
pub(crate) const PATHS: [Path; 4] = [
    Path::HttpSession,
    Path::HttpStateless,
    Path::StdioSession,
    Path::StdioStateless,
];

/// Short notes, a slow action and a large one.
pub(crate) struct Notes;

/// Keep short notes
#[wymcp::tool]
impl Notes {
    /// Add a note
    async fn add(
        &self,
        /// What to remember
        text: String,
    ) -> Value {
        json!({"added": text})
    }

    /// List the notes
    async fn list(&self) -> Value {
        json!({"notes": []})
    }

    /// Wait a while, then answer
    async fn slow(
        &self,
        /// How long to wait, in milliseconds
        ms: u64,
    ) -> Value {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        json!({"waited": ms})
    }

    /// Answer a large text
    async fn big(
        &self,
        /// How many characters
        size: usize,
    ) -> Value {
        json!({"text": "x".repeat(size)})
    }
}

/// A builder with the matrix's identity (its era checks compare it) and [`Notes`].
#[allow(dead_code)] // Not every test binary that shares the fixture uses it.
pub(crate) fn builder() -> ServerBuilder {
    builder_with(ToolPolicy::new())
}

/// [`builder`], `notes` registered with `policy` (its layers and its actions').
pub(crate) fn builder_with(policy: ToolPolicy) -> ServerBuilder {
    wymcp::Server::builder()
        .name(NAME)
        .version(VERSION)
        .tool_with(Notes, policy)
}

/// `{"action": action, "data": data}`.
pub(crate) fn action(action: &str, data: Value) -> Value {
    json!({"action": action, "data": data})
}
