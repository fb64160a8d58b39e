//! The tools the suite's 2026-07-28 `server-stateless` scenario calls around
//! `subscriptions/listen` and per-request logging:
//!
//! * `test_trigger_tool_change` / `test_trigger_prompt_change`: the diagnostic hooks that
//!   change a list, so open listen streams get `notifications/{tools,prompts}/list_changed`
//!   (the fixture's lists are fixed at build, so the "change" is the notification itself);
//! * `test_logging_tool`: logs at three levels through `Context::log`, which sends only what
//!   passes the request's own `_meta` `logLevel` (nothing without one).
//!
//! The hooks reach the server through [`attach`], called once the server is built.

use std::sync::OnceLock;

use serde_json::{Map, Value, json};
use wymcp::protocol::LogLevel;
use wymcp::{CallOutput, CallResult, Context, PlainTool, Server, ServerBuilder};

/// The built server, for the hooks (one per process).
static SERVER: OnceLock<Server> = OnceLock::new();

/// Registers the tools on `builder`.
pub(crate) fn register(builder: ServerBuilder) -> ServerBuilder {
    builder
        .plain_tool(Trigger::Tools)
        .plain_tool(Trigger::Prompts)
        .plain_tool(Logging)
}

/// Lets the hooks notify `server`'s clients.
pub(crate) fn attach(server: &Server) {
    let _ = SERVER.set(server.clone());
}

/// A diagnostic hook that announces a list change to every client.
#[derive(Clone, Copy)]
enum Trigger {
    Tools,
    Prompts,
}

impl PlainTool for Trigger {
    fn name(&self) -> &str {
        match self {
            Trigger::Tools => "test_trigger_tool_change",
            Trigger::Prompts => "test_trigger_prompt_change",
        }
    }
    fn description(&self) -> &str {
        match self {
            Trigger::Tools => "Changes the tool list: open listen streams get tools/list_changed",
            Trigger::Prompts => {
                "Changes the prompt list: open listen streams get prompts/list_changed"
            }
        }
    }
    fn input_schema(&self) -> Map<String, Value> {
        Map::from_iter([("type".to_owned(), json!("object"))])
    }
    async fn run(&self, _arguments: Map<String, Value>, _ctx: Context) -> CallResult {
        let notified = SERVER.get().is_some_and(|server| match self {
            Trigger::Tools => server.notify_tools_list_changed(),
            Trigger::Prompts => server.notify_prompts_list_changed(),
        });
        Ok(CallOutput::json(json!({ "notified": notified })))
    }
}

/// Logs at debug, info and warning; what reaches the client is the request's choice.
struct Logging;

impl PlainTool for Logging {
    fn name(&self) -> &str {
        "test_logging_tool"
    }
    fn description(&self) -> &str {
        "Sends log messages at debug, info and warning, only those the request's logLevel admits"
    }
    fn input_schema(&self) -> Map<String, Value> {
        Map::from_iter([("type".to_owned(), json!("object"))])
    }
    async fn run(&self, _arguments: Map<String, Value>, ctx: Context) -> CallResult {
        let sent = [LogLevel::Debug, LogLevel::Info, LogLevel::Warning]
            .into_iter()
            .filter(|level| ctx.log(*level, json!(format!("a {} message", level.as_str()))))
            .count();
        Ok(CallOutput::json(json!({ "logged": sent })))
    }
}
