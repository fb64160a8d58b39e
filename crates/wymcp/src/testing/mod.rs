//! Testing your tools: an in-process client over a built [`Server`], typed results, gate
//! errors as a type, and assertion helpers.
//!
//! No HTTP and no session engine: [`TestClient`] calls a tool ([`call_tool`]) with a
//! [`Context`] it builds for each call (session id `"test-session"`, request ids counting up
//! from 1, assigns shared between calls like a session's), so a test sees exactly what a client
//! would read in the `tools/call` result, gates and all.
//!
//! ```
//! use serde_json::json;
//! use wymcp::testing::{TestClient, assert_gate_error, assert_ok};
//! use wymcp::{ActionResult, ActionTool, Actions, Context, Data, Reply, Server};
//!
//! struct Tasks;
//!
//! impl ActionTool for Tasks {
//!     fn name(&self) -> &str { "tasks" }
//!     fn description(&self) -> &str { "Task management" }
//!     fn actions(&self) -> Actions {
//!         wymcp::actions!({
//!             "create": {
//!                 "description": "Create a task",
//!                 "properties": {"title": {"type": "string"}},
//!                 "required": ["title"]
//!             }
//!         })
//!     }
//!     async fn run_action(&self, _: &str, data: Data, _: Context) -> ActionResult {
//!         Ok(Reply::new(json!({"created": data["title"]})))
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let client = TestClient::new(Server::builder().tool(Tasks).build().unwrap());
//!
//! let created = client.call("tasks", "create", json!({"title": "Write docs"})).await.unwrap();
//! assert_eq!(assert_ok(&created)["created"], "Write docs");
//!
//! let refused = client.call("tasks", "create", json!({})).await.unwrap();
//! let gate = assert_gate_error(&refused, "missing_required_fields");
//! assert_eq!(gate.payload["missing"], json!(["title"]));
//! # }
//! ```
//!
//! The rest of the module checks what other layers hand you: content lists
//! ([`unwrap_text`], [`unwrap_json`], [`unwrap_single`]) and JSON-RPC responses read over a real
//! transport ([`build_call_request`], [`build_action_request`], [`text_response`],
//! [`json_response`], [`error_response`], [`image_response`], [`audio_response`]).

mod assert;
mod client;
mod response;
mod result;

use serde_json::{Value, json};

use crate::RpcError;
use crate::context::Context;
use crate::server::Server;
use crate::tool::CallToolResult;

pub use crate::context::ContextBuilder;
pub use assert::{assert_fault, assert_gate_error, assert_hint, assert_ok, assert_tool_error};
pub use client::TestClient;
pub use response::{
    Mismatch, audio_response, build_action_request, build_call_request, error_response,
    image_response, json_response, text_response, unwrap_json, unwrap_single, unwrap_text,
};
pub use result::{GateError, Outcome, ToolResult};

/// The session id [`test_context`] gives a context ([`TestClient`] opens real sessions).
pub const TEST_SESSION_ID: &str = "test-session";

/// A [`ContextBuilder`] with a test's defaults: session id [`TEST_SESSION_ID`], request id `1`,
/// the latest protocol revision, client info `{"name": "test", "version": "1.0"}`, client
/// capabilities `{}`, no assigns. Override any of them before `build()`.
///
/// Use it to call a tool's own methods directly (`run_action`, `action_context`, ...).
///
/// ```
/// use serde_json::json;
/// use wymcp::testing::test_context;
///
/// let ctx = test_context().assign("user", json!("u1")).build();
/// assert_eq!(ctx.session_id(), Some("test-session"));
/// assert_eq!(ctx.request_id(), Some(&json!(1)));
/// assert_eq!(ctx.assigns()["user"], "u1");
/// ```
pub fn test_context() -> ContextBuilder {
    Context::builder()
        .session_id(TEST_SESSION_ID)
        .request_id(json!(1))
        .client_info(json!({"name": "test", "version": "1.0"}))
        .client_capabilities(json!({}))
}

/// Calls tool `name` of `server` directly, with a context of your making: the gates, the
/// middleware and the handler run as they do for a transport's `tools/call`, without a
/// transport. `arguments` absent or `null` reads as `{}`.
///
/// Everything inside the arguments is the gates' to refuse (an `isError` result); only an
/// unknown tool or arguments that are not an object are protocol errors (`-32602`). When the
/// context belongs to a live session, the session's tool list (its runtime tools included) is
/// served. [`TestClient`] wraps this with a context per call and recorded notifications.
///
/// ```
/// use serde_json::json;
/// use wymcp::testing::{call_tool, test_context};
/// use wymcp::{Context, Server};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let server = Server::builder().name("demo").version("1.0.0").build().unwrap();
/// let result = call_tool(&server, "help", Some(json!({})), Context::default())
///     .await
///     .unwrap();
/// assert!(!result.is_error());
/// assert_eq!(result.json().unwrap()["tools"][0]["tool"], "help");
///
/// let unknown = call_tool(&server, "nope", None, test_context().build()).await;
/// assert_eq!(unknown.unwrap_err().code(), -32602);
/// # }
/// ```
pub async fn call_tool(
    server: &Server,
    name: &str,
    arguments: Option<Value>,
    ctx: Context,
) -> Result<CallToolResult, RpcError> {
    server.call_tool(name, arguments, ctx).await
}
