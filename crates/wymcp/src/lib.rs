//! # wymcp
//!
//! Build MCP (Model Context Protocol) servers whose tools a model uses correctly, cheaply and
//! safely.
//!
//! | Feature | What you get |
//! |---|---|
//! | [`ActionTool`] | one tool name exposing many actions: fifty operations cost the model five tool definitions |
//! | Dispatch gates | every call checked (unknown arguments, types, action, required, required_one_of, unknown keys at any depth, JSON Schema values); each refusal tells the model exactly what to fix and points at `help` |
//! | `help` | injected into every server: an index, a tool, or one action in full |
//! | Validated before served | a malformed schema fails [`ServerBuilder::build`], never a request |
//! | [`PlainTool`] | a tool with its own input schema, first-class, with the same gates |
//! | [`Context`] | while a tool runs: progress, log messages, sampling, elicitation and roots requests ([`session::Sampling`], [`session::Elicitation`], [`session::ListRoots`]) in both eras ([`mrtr`]: multi round-trip requests in the stateless one), runtime tools on the live session ([`session::SessionHandle`]) |
//! | [`transport`] | Streamable HTTP ([`transport::http`]) and stdio ([`transport::stdio::serve`]) |
//! | [`resource`], [`prompt`], [`completion`] | static and templated resources (RFC 6570) with subscriptions, prompts with checked arguments, completion providers; all validated at `build()` |
//! | [`testing`] | an in-process client over a built server, typed results and gate errors, assertion helpers |
//! | [`TypedActionTool`] | the actions as a Rust enum of serde structs (`#[derive(ActionEnum)]`): schemas generated, `run` receives the variant; see [`tool_kinds`] for when to use which |
//!
//! ```
//! use serde_json::json;
//! use wymcp::{ActionSchema, ActionResult, ActionTool, Actions, Context, Data, Reply, Server};
//!
//! struct Greeter;
//!
//! impl ActionTool for Greeter {
//!     fn name(&self) -> &str { "greeter" }
//!     fn description(&self) -> &str { "Greets people" }
//!     fn actions(&self) -> Actions {
//!         Actions::new().action(
//!             "greet",
//!             ActionSchema::new("Greet someone by name")
//!                 .property("name", json!({"type": "string", "minLength": 1}))
//!                 .required(["name"]),
//!         )
//!     }
//!     async fn run_action(&self, _action: &str, data: Data, _ctx: Context) -> ActionResult {
//!         Ok(Reply::new(json!({"greeting": format!("Hello, {}!", data["name"].as_str().unwrap_or("you"))})))
//!     }
//! }
//!
//! let server = Server::builder().name("greeter").tool(Greeter).build().unwrap();
//! assert_eq!(server.tool_names(), ["greeter", "help"]);
//! ```
//!
//! ## Cargo features
//!
//! | Feature | Default | Adds |
//! |---|---|---|
//! | `http` | on | [`transport::http`] (Streamable HTTP on axum and hyper), `--port`/`--bind` in [`run`] |
//! | `stdio` | on | [`transport::stdio`], `--stdio` in [`run`] |
//!
//! Features only add. A stdio-only server builds no HTTP stack:
//! `wymcp = { version = "0.1", default-features = false, features = ["stdio"] }`. With neither,
//! the core remains (tools, gates, `help`, resources, prompts, [`testing`]) for a transport of
//! your own; [`run`] needs one of the two.

#![warn(missing_docs)]
// The transport-neutral code (sessions, the stateless era, JSON-RPC framing) serves both
// transports; a build with one of them left out leaves parts of it unused. The default build
// (both) keeps every dead-code lint.
#![cfg_attr(
    not(all(feature = "http", feature = "stdio")),
    allow(dead_code, unused_imports)
)]

pub mod completion;
mod context;
mod dispatch;
mod help;
pub mod mrtr;
mod paging;
pub mod prompt;
pub mod protocol;
pub mod resource;
#[cfg(any(feature = "http", feature = "stdio"))]
mod run;
mod server;
pub mod session;
mod stateless;
pub mod testing;
mod tool;
pub mod transport;

#[doc = include_str!("docs/tool_kinds.md")]
pub mod tool_kinds {}

pub use completion::{Complete, Completion, CompletionValues};
pub use context::{Context, ContextBuilder, Delivery, Notifier};
pub use dispatch::CallToolResult;
pub use prompt::{GetPromptResult, Prompt, PromptArgument, PromptArguments, PromptMessage};
pub use protocol::{ProtocolVersion, RpcError};
pub use resource::{ReadResource, Resource, ResourceContents, ResourceError, ResourceTemplate};
#[cfg(any(feature = "http", feature = "stdio"))]
pub use run::{Cli, CliError, Invocation, RunError, Transport, run};
pub use server::{Server, ServerBuilder, ServerInfo};
pub use tool::{
    ActionEnum, ActionError, ActionResult, ActionTool, CallError, CallOutput, CallResult, Content,
    Data, DataError, ErrorKind, Failure, PlainTool, Reply, TypedActionTool,
};
pub use wymcp_core::{
    ActionSchema, Actions, Callback, ConfigurationError, Hint, Problem, bound, keyset,
};

/// Declares a tool's actions as a JSON literal, validated while your crate compiles.
///
/// The literal is checked by the very chain [`ServerBuilder::build`] runs; a refusal fails the
/// build with the runtime's message, pointing at the offending token. It expands to
/// [`Actions`].
///
/// ```
/// let actions = wymcp::actions!({
///     "get": {
///         "description": "Get a task by id or by title",
///         "properties": {"id": {"type": "integer"}, "title": {"type": "string"}},
///         "required_one_of": [["id"], ["title"]]
///     }
/// });
/// assert_eq!(actions.len(), 1);
/// ```
///
/// ```compile_fail
/// let actions = wymcp::actions!({
///     "get": {"description": "Get a task", "properties": {}, "required": ["id"]}
/// });
/// ```
pub use wymcp_macros::actions;

/// Derives [`ActionEnum`]: see the trait for what a variant, its doc and its struct become.
pub use wymcp_macros::ActionEnum;

/// The `schemars` this crate generates property schemas with, for
/// `#[schemars(crate = "wymcp::schemars")]` when your crate does not depend on it.
pub use schemars;

/// Derives a JSON Schema for an action's struct (schemars' derive). Its generated code names
/// `schemars`: depend on `schemars = "1"`, or add `#[schemars(crate = "wymcp::schemars")]`.
pub use schemars::JsonSchema;

#[doc(hidden)]
pub mod __private {
    //! Support for the macros; not public API.

    pub use crate::tool::typed::support::{parse_data, typed_action, unit_action, unknown_action};

    /// The `Actions` of a literal the `actions!` macro validated at compile time.
    pub fn actions_from_validated_json(text: &str) -> crate::Actions {
        crate::Actions::from_value(
            serde_json::from_str(text).expect("the actions! macro emits the JSON it validated"),
        )
    }
}

/// The crate's README (as crates.io shows it), its code compiled as a doctest so it stays true.
/// The repository's README and guide are compiled by the `wymcp-guide` package (`docs/`).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
