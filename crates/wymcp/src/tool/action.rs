//! [`ActionTool`]: one tool name, many actions.

use std::future::Future;

use serde_json::{Map, Value};
use wymcp_core::{Actions, Hint};

use super::{ActionError, ActionResult, Companions, Data};
use crate::context::Context;

/// An action-dispatched tool: one tool name exposing many actions
/// (`{"action": "create", "data": {...}}`).
///
/// Implement [`name`](Self::name), [`description`](Self::description),
/// [`actions`](Self::actions) and [`run_action`](Self::run_action); everything else has a
/// working default. The framework generates the input schema from the actions, runs the dispatch
/// gates (unknown arguments, types, action, required, required_one_of, unknown keys at any depth,
/// values), applies defaults, adds hints and context, and contains panics.
///
/// Every zero-argument method is called once, when the server is built, and what it returned is
/// what is served: they must not depend on per-request state.
///
/// ```
/// use serde_json::json;
/// use wymcp::{ActionSchema, ActionResult, ActionTool, Actions, Context, Data, Reply};
///
/// struct Tasks;
///
/// impl ActionTool for Tasks {
///     fn name(&self) -> &str { "tasks" }
///     fn description(&self) -> &str { "Task management" }
///     fn actions(&self) -> Actions {
///         Actions::new().action(
///             "create",
///             ActionSchema::new("Create a task")
///                 .property("name", json!({"type": "string"}))
///                 .required(["name"]),
///         )
///     }
///     async fn run_action(&self, action: &str, data: Data, _ctx: Context) -> ActionResult {
///         match action {
///             "create" => Ok(Reply::new(json!({"message": format!("Created {}", data["name"])}))),
///             _ => unreachable!("the action gate admits declared actions only"),
///         }
///     }
/// }
///
/// let server = wymcp::Server::builder().tool(Tasks).build().unwrap();
/// assert_eq!(server.tool_names(), ["tasks", "help"]);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an action-dispatched tool",
    label = "implement `wymcp::ActionTool` for `{Self}`, or `wymcp::PlainTool` and register it with `.plain_tool(...)`, or `wymcp::TypedActionTool` and register it with `.typed_tool(...)`"
)]
pub trait ActionTool: Send + Sync + 'static {
    /// The tool's name (`help` is reserved).
    fn name(&self) -> &str;

    /// The tool-level description, verbatim (newlines allowed).
    fn description(&self) -> &str;

    /// The actions and their schemas.
    fn actions(&self) -> Actions;

    /// Runs one action. `action` is always a declared action name; `data` passed every gate and
    /// carries the defaults of the properties the caller omitted.
    fn run_action(
        &self,
        action: &str,
        data: Data,
        ctx: Context,
    ) -> impl Future<Output = ActionResult> + Send;

    /// Follow-up suggestions for a reply or failure that carried a hint context. Default: none.
    fn hints(&self, action: &str, hint_context: &Value) -> Vec<Hint> {
        let _ = (action, hint_context);
        Vec::new()
    }

    /// Renders a failure's reason as the text the caller reads.
    /// Default: `"Operation failed: <reason>"`.
    fn handle_error(&self, reason: &ActionError) -> String {
        format!("Operation failed: {reason}")
    }

    /// A JSON Schema for the response; when given, results carry validated
    /// `structuredContent`. Default: none.
    fn output_schema(&self) -> Option<Map<String, Value>> {
        None
    }

    /// A display title. Default: none (no `title` key).
    fn title(&self) -> Option<String> {
        None
    }

    /// MCP tool annotations (`readOnlyHint`, ...), passed through verbatim. Default: none.
    fn annotations(&self) -> Option<Map<String, Value>> {
        None
    }

    /// Runtime context for an action, added under `"context"` to replies and to help's action
    /// level. Read per-request data from `ctx`. Default: none (no `context` key).
    fn action_context(&self, action: &str, ctx: &Context) -> Option<Map<String, Value>> {
        let _ = (action, ctx);
        None
    }

    /// The plain tools and prompts served with this tool, registered after it by
    /// [`ServerBuilder::tool`](crate::ServerBuilder::tool) (a `#[wymcp::tool]` block's
    /// `#[wymcp(plain)]` and `#[wymcp(prompt)]` methods). Called once, when the tool is
    /// registered. Default: none.
    fn companions(&self) -> Companions {
        Companions::new()
    }
}
