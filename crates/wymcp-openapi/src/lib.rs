//! A REST API described by [OpenAPI](https://spec.openapis.org/) 3.0 or 3.1 served by
//! [wymcp](https://docs.rs/wymcp) as **action-dispatched tools**: one tool per tag, one action
//! per operation. A model sees a handful of tools instead of one per operation, and wymcp's
//! gates check every call against the operation's own schema before a request leaves.
//!
//! ```no_run
//! use wymcp_openapi::{Auth, OpenApi};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let api = OpenApi::builder()
//!     .base_url("https://api.example.com/v1")
//!     .auth(Auth::bearer(std::env::var("EXAMPLE_TOKEN")?))
//!     .load_file("openapi.yaml")?;
//! for skipped in api.skipped() {
//!     eprintln!("not served: {}: {}", skipped.operation(), skipped.reason());
//! }
//! let server = api.register(wymcp::Server::builder().name("example-api")).build()?;
//! # let _ = server; Ok(()) }
//! ```
//!
//! How a call's `data` maps to the request: each parameter (path, query, header, cookie) is a
//! key of `data` under its own name; the JSON request body is the key `body`. The reply is
//! `{"status": 200, "body": ...}` for a JSON answer, `{"status", "content_type", "text"}`
//! otherwise; a non-2xx answer is an error result quoting the status and the start of the
//! body. The guide's page `docs/openapi.md` says more.

mod auth;
mod builder;
mod call;
mod document;
mod error;
mod operation;
mod schema;
mod tool;

pub use auth::Auth;
pub use builder::{
    DEFAULT_MAX_ANSWER_BYTES, DEFAULT_MAX_DOCUMENT_BYTES, DEFAULT_MAX_ERROR_BODY_CHARS,
    DEFAULT_MAX_OPERATIONS, DEFAULT_MAX_REF_DEPTH, DEFAULT_MAX_SCHEMA_BYTES, DEFAULT_TIMEOUT,
    OpenApiBuilder,
};
pub use error::LoadError;
pub use tool::OpenApiTool;

use wymcp::{ActionTool as _, ServerBuilder};

/// A loaded document: its tools, and the operations that could not become actions.
#[derive(Debug)]
pub struct OpenApi {
    tools: Vec<OpenApiTool>,
    skipped: Vec<Skipped>,
}

impl OpenApi {
    /// How to load a document: base URL, auth, limits.
    pub fn builder() -> OpenApiBuilder {
        OpenApiBuilder::default()
    }

    pub(crate) fn new(tools: Vec<OpenApiTool>, skipped: Vec<Skipped>) -> Self {
        Self { tools, skipped }
    }

    /// The tools' names: the document's `tags` list in its order, the other tags by name, the
    /// untagged operations' tool last.
    pub fn tool_names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.name()).collect()
    }

    /// The operations not served, each with why.
    pub fn skipped(&self) -> &[Skipped] {
        &self.skipped
    }

    /// The tools, to register one by one.
    pub fn into_tools(self) -> Vec<OpenApiTool> {
        self.tools
    }

    /// Registers every tool on `builder`.
    pub fn register(self, builder: ServerBuilder) -> ServerBuilder {
        self.tools.into_iter().fold(builder, ServerBuilder::tool)
    }
}

/// An operation of the document that is not served, and why (a required request body that is
/// not JSON, a parameter name used twice, an action name taken, a schema wymcp refuses).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    operation: String,
    reason: String,
}

impl Skipped {
    pub(crate) fn new(operation: String, reason: String) -> Self {
        Self { operation, reason }
    }

    /// The operation: its method and path (`POST /uploads`).
    pub fn operation(&self) -> &str {
        &self.operation
    }

    /// Why it is not served.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}
