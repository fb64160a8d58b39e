//! The server the stdio tests of the stateless era (MCP 2026-07-28) serve, in process
//! (`stdio.rs`) and in a child process (`stdio_stateless_process.rs`), with the messages
//! those tests send.

#![allow(dead_code, clippy::unwrap_used)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value, json};
use wymcp::Resource;
use wymcp::protocol::LogLevel;
use wymcp::session::Elicitation;
use wymcp::{
    ActionResult, ActionSchema, ActionTool, Actions, CallError, CallOutput, CallResult, Context,
    Data, PlainTool, Reply, Server,
};

fn object(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

/// An action tool whose gate refusals both eras must answer alike.
pub(crate) struct Tasks;

impl ActionTool for Tasks {
    fn name(&self) -> &str {
        "tasks"
    }
    fn description(&self) -> &str {
        "Task management"
    }
    fn actions(&self) -> Actions {
        Actions::new().action(
            "create",
            ActionSchema::new("Create a task")
                .property("title", json!({"type": "string", "minLength": 1}))
                .required(["title"]),
        )
    }
    async fn run_action(&self, _action: &str, data: Data, _ctx: Context) -> ActionResult {
        Ok(Reply::new(json!({"created": data["title"]})))
    }
}

/// Asks the user's name (`user_name`): `input_required` in the stateless era.
pub(crate) struct Greet;

impl PlainTool for Greet {
    fn name(&self) -> &str {
        "greet"
    }
    fn description(&self) -> &str {
        "Greets the user by name"
    }
    fn input_schema(&self) -> Map<String, Value> {
        object(json!({"type": "object"}))
    }
    async fn run(&self, _arguments: Map<String, Value>, ctx: Context) -> CallResult {
        let ask = Elicitation::form(
            "What is your name?",
            json!({"type": "object", "properties": {"name": {"type": "string"}},
                   "required": ["name"]}),
        )
        .key("user_name");
        let answer = ctx
            .elicit(ask)
            .await
            .map_err(|e| CallError::tool(e.to_string()))?;
        let name = answer["content"]["name"].as_str().unwrap_or("?");
        Ok(CallOutput::text(format!("Hello, {name}!")))
    }
}

/// Reports progress and three log messages, then answers which were sent.
pub(crate) struct Steps;

impl PlainTool for Steps {
    fn name(&self) -> &str {
        "steps"
    }
    fn description(&self) -> &str {
        "Sends progress and log messages"
    }
    fn input_schema(&self) -> Map<String, Value> {
        object(json!({"type": "object"}))
    }
    async fn run(&self, _arguments: Map<String, Value>, ctx: Context) -> CallResult {
        let progress = ctx.progress(1.0, Some(2.0), Some("half way"));
        let debug = ctx.log(LogLevel::Debug, json!("details"));
        let warning = ctx.log(LogLevel::Warning, json!("careful"));
        Ok(CallOutput::json(json!({
            "progress": progress, "debug": debug, "warning": warning
        })))
    }
}

/// Reports progress once, then runs until cancelled; `cancelled` says whether its context's
/// token was.
pub(crate) struct Slow {
    pub(crate) cancelled: Arc<AtomicBool>,
}

impl PlainTool for Slow {
    fn name(&self) -> &str {
        "slow"
    }
    fn description(&self) -> &str {
        "Runs until cancelled"
    }
    fn input_schema(&self) -> Map<String, Value> {
        object(json!({"type": "object"}))
    }
    async fn run(&self, _arguments: Map<String, Value>, ctx: Context) -> CallResult {
        let token = ctx.cancellation().clone();
        let flag = self.cancelled.clone();
        // Outlives the call: the call's future is dropped when it is cancelled.
        tokio::spawn(async move {
            token.cancelled().await;
            flag.store(true, Ordering::SeqCst);
        });
        ctx.progress(1.0, None, Some("started"));
        std::future::pending::<()>().await;
        Ok(CallOutput::text("never"))
    }
}

/// Announces a tool list change to every client.
pub(crate) struct Trigger(Arc<OnceLock<Server>>);

impl PlainTool for Trigger {
    fn name(&self) -> &str {
        "trigger"
    }
    fn description(&self) -> &str {
        "Announces that the tool list changed"
    }
    fn input_schema(&self) -> Map<String, Value> {
        object(json!({"type": "object"}))
    }
    async fn run(&self, _arguments: Map<String, Value>, _ctx: Context) -> CallResult {
        let notified = self.0.get().is_some_and(Server::notify_tools_list_changed);
        Ok(CallOutput::json(json!({"notified": notified})))
    }
}

pub(crate) const WATCHED: &str = "test://watched";

/// The server, and the flag telling whether `slow` was cancelled.
pub(crate) fn server() -> (Server, Arc<AtomicBool>) {
    let cancelled = Arc::new(AtomicBool::new(false));
    let cell = Arc::new(OnceLock::new());
    let server = Server::builder()
        .name("stateless-stdio")
        .version("1.0.0")
        .list_changed(true)
        .tool(Tasks)
        .plain_tool(Greet)
        .plain_tool(Steps)
        .plain_tool(Slow {
            cancelled: cancelled.clone(),
        })
        .plain_tool(Trigger(cell.clone()))
        .resource(Resource::text(WATCHED, "watched", "v1"))
        .build()
        .unwrap();
    let _ = cell.set(server.clone());
    (server, cancelled)
}

/// The 2026-07-28 envelope, with `capabilities`.
pub(crate) fn envelope(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "stdio-test", "version": "0"}
    })
}

/// A 2026-07-28 request: `params` gets the envelope (no capabilities) unless it has `_meta`.
pub(crate) fn request(id: i64, method: &str, mut params: Value) -> Value {
    params
        .as_object_mut()
        .unwrap()
        .entry("_meta")
        .or_insert_with(|| envelope(json!({})));
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A `tools/call` of the stateless era.
pub(crate) fn call(id: i64, tool: &str, arguments: Value) -> Value {
    request(
        id,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    )
}

/// `notifications/cancelled` for request `id`.
pub(crate) fn cancel(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
           "params": {"requestId": id, "reason": "test"}})
}

/// The session era's `initialize`.
pub(crate) fn initialize(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "stdio-test", "version": "0"}
    }})
}
