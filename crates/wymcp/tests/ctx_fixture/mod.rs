//! Tools exercising the context, shared by the HTTP and stdio context tests.

#![allow(dead_code, clippy::unwrap_used)]

use std::time::Duration;

use serde_json::{Map, Value, json};
use wymcp::protocol::LogLevel;
use wymcp::session::{ClientRequestError, Elicitation, Sampling};
use wymcp::{
    ActionResult, ActionSchema, ActionTool, Actions, CallOutput, CallResult, Context, Data,
    PlainTool, Reply, Server,
};

pub(crate) fn object(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

/// The vocabulary name of a failed round trip.
pub(crate) fn code(err: &ClientRequestError) -> Value {
    match err {
        ClientRequestError::Client(error) => json!({"client_error": error}),
        ClientRequestError::NotSupported => json!("not_supported"),
        ClientRequestError::NoSession => json!("no_session"),
        ClientRequestError::NoStream => json!("no_stream"),
        ClientRequestError::Disconnected => json!("disconnected"),
        ClientRequestError::Timeout => json!("timeout"),
        _ => json!("other"),
    }
}

fn answer(result: Result<Value, ClientRequestError>) -> Value {
    match result {
        Ok(value) => json!({"ok": value}),
        Err(err) => json!({"error": code(&err)}),
    }
}

/// `ctx` tool: `{"op": ..., "timeout_ms"?: n}`.
pub(crate) struct CtxTool;

impl PlainTool for CtxTool {
    fn name(&self) -> &str {
        "ctx"
    }
    fn description(&self) -> &str {
        "Exercises the context"
    }
    fn input_schema(&self) -> Map<String, Value> {
        object(json!({"type": "object", "properties": {
            "op": {"type": "string"},
            "timeout_ms": {"type": "integer"}
        }, "required": ["op"]}))
    }
    async fn run(&self, arguments: Map<String, Value>, ctx: Context) -> CallResult {
        let timeout = Duration::from_millis(
            arguments
                .get("timeout_ms")
                .and_then(Value::as_u64)
                .unwrap_or(10_000),
        );
        let op = arguments["op"].as_str().unwrap_or_default().to_owned();
        let body = match op.as_str() {
            "log" => json!({
                "info": ctx.log(LogLevel::Info, json!("Processing started")),
                "db": ctx.log_as(LogLevel::Error, "database", json!({"query": "failed"})),
                "debug": ctx.log(LogLevel::Debug, json!("details")),
            }),
            "progress" => json!({
                "first": ctx.progress(50.0, Some(100.0), Some("Halfway there")),
                "not_increasing": ctx.progress(10.0, None, None),
                "second": ctx.progress(60.0, None, None),
            }),
            "sample" => answer(
                ctx.sample(
                    Sampling::prompt("Summarize this")
                        .max_tokens(500)
                        .timeout(timeout),
                )
                .await,
            ),
            "elicit" => answer(
                ctx.elicit(
                    Elicitation::form(
                        "Which branch?",
                        json!({"type": "object", "properties": {"branch": {"type": "string"}},
                               "required": ["branch"]}),
                    )
                    .timeout(timeout),
                )
                .await,
            ),
            "elicit_url" => answer(
                ctx.elicit(
                    Elicitation::url("Sign in", "https://example.com/login", "e-1")
                        .timeout(timeout),
                )
                .await,
            ),
            "assigns" => Value::Object(ctx.assigns()),
            "register" => {
                let session = ctx.session().unwrap();
                session.register_tool(Widgets).unwrap();
                json!({"tools": session.tool_names(), "dirty": session.is_tool_list_dirty()})
            }
            "steps" => {
                // Progress, a log message and an elicitation in one call.
                ctx.progress(1.0, Some(3.0), Some("started"));
                ctx.log(LogLevel::Info, json!("asking for the branch"));
                let answer = answer(
                    ctx.elicit(
                        Elicitation::form(
                            "Which branch?",
                            json!({"type": "object",
                                   "properties": {"branch": {"type": "string"}}}),
                        )
                        .timeout(timeout),
                    )
                    .await,
                );
                ctx.progress(3.0, Some(3.0), Some("done"));
                answer
            }
            other => json!({"unknown op": other}),
        };
        Ok(CallOutput::json(body))
    }
}

/// A runtime tool (action-dispatched).
pub(crate) struct Widgets;

impl ActionTool for Widgets {
    fn name(&self) -> &str {
        "widgets"
    }
    fn description(&self) -> &str {
        "Widgets, registered at runtime"
    }
    fn actions(&self) -> Actions {
        Actions::new().action(
            "create",
            ActionSchema::new("Create a widget")
                .property("name", json!({"type": "string"}))
                .required(["name"]),
        )
    }
    async fn run_action(&self, _action: &str, data: Data, _ctx: Context) -> ActionResult {
        Ok(Reply::new(json!({"created": data["name"]})))
    }
}

/// Another runtime tool, with a configurable name and description.
pub(crate) struct Named(pub &'static str, pub &'static str);

impl ActionTool for Named {
    fn name(&self) -> &str {
        self.0
    }
    fn description(&self) -> &str {
        self.1
    }
    fn actions(&self) -> Actions {
        Actions::new().action("run", ActionSchema::new("Run it"))
    }
    async fn run_action(&self, _action: &str, _data: Data, _ctx: Context) -> ActionResult {
        Ok(Reply::new(json!({"ran": self.0})))
    }
}

/// A runtime tool whose schema is refused (`required: ["ghost"]`).
pub(crate) struct Ghost;

impl ActionTool for Ghost {
    fn name(&self) -> &str {
        "ghost"
    }
    fn description(&self) -> &str {
        "Requires an undeclared property"
    }
    fn actions(&self) -> Actions {
        Actions::new().action("get", ActionSchema::new("Get").required(["ghost"]))
    }
    async fn run_action(&self, _action: &str, _data: Data, _ctx: Context) -> ActionResult {
        Ok(Reply::new(json!({})))
    }
}

/// A runtime tool trying to replace help.
pub(crate) struct FakeHelp;

impl ActionTool for FakeHelp {
    fn name(&self) -> &str {
        "help"
    }
    fn description(&self) -> &str {
        "Not the real help"
    }
    fn actions(&self) -> Actions {
        Actions::new()
    }
    async fn run_action(&self, _action: &str, _data: Data, _ctx: Context) -> ActionResult {
        Ok(Reply::new(json!({})))
    }
}

/// The server both transports' context tests serve: `[ctx, A, help]`.
pub(crate) fn server() -> Server {
    Server::builder()
        .name("ctx-test")
        .plain_tool(CtxTool)
        .tool(Named("A", "Configured tool A"))
        .build()
        .unwrap()
}

/// A plain runtime tool.
pub(crate) struct CtxToolAlias;

impl PlainTool for CtxToolAlias {
    fn name(&self) -> &str {
        "echo"
    }
    fn description(&self) -> &str {
        "Echoes its arguments"
    }
    fn input_schema(&self) -> Map<String, Value> {
        object(json!({"type": "object", "properties": {"text": {"type": "string"}}}))
    }
    async fn run(&self, arguments: Map<String, Value>, _ctx: Context) -> CallResult {
        Ok(CallOutput::json(Value::Object(arguments)))
    }
}
