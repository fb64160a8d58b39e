//! A stdio-only server (`wymcp` with `default-features = false, features = ["stdio"]`): one
//! tool, `greet`, that asks the user's name through elicitation. Built so, wymcp keeps the
//! stateless era's `requestState` in this process (at most 2 here, to show the capacity) and
//! hands the client a handle to it. `tests/request_state.rs` drives it over its pipes.

use serde_json::{Map, Value, json};
use wymcp::session::Elicitation;
use wymcp::{CallError, CallOutput, CallResult, Context, PlainTool, Server};

/// Greets the user by the name elicitation gives.
struct Greet;

impl PlainTool for Greet {
    fn name(&self) -> &str {
        "greet"
    }
    fn description(&self) -> &str {
        "Greets the user by name"
    }
    fn input_schema(&self) -> Map<String, Value> {
        json!({"type": "object", "properties": {"greeting": {"type": "string"}}})
            .as_object()
            .cloned()
            .unwrap_or_default()
    }
    async fn run(&self, arguments: Map<String, Value>, ctx: Context) -> CallResult {
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
        let greeting = arguments
            .get("greeting")
            .and_then(Value::as_str)
            .unwrap_or("Hello");
        let name = answer["content"]["name"].as_str().unwrap_or("?");
        Ok(CallOutput::text(format!("{greeting}, {name}!")))
    }
}

fn server() -> Result<Server, wymcp::ConfigurationError> {
    Server::builder()
        .name("stdio-only")
        .version("0.1.0")
        .request_state_capacity(2)
        .plain_tool(Greet)
        .build()
}

wymcp::main!(server);
