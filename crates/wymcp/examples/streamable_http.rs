//! A wymcp server over Streamable HTTP, for trying it with real MCP clients.
//!
//! ```sh
//! cargo run -p wymcp --example streamable_http                 # 127.0.0.1:8080
//! cargo run -p wymcp --example streamable_http -- --port 0     # a free port
//! ```
//!
//! [`wymcp::run`] serves it: the banner (stderr) says where it listens (the endpoint is `/mcp`)
//! and how to connect clients; `--stdio` serves it over stdin/stdout instead.

use serde_json::json;
use wymcp::{ActionResult, ActionSchema, ActionTool, Actions, Context, Data, Reply, Server};

struct Greeter;

impl ActionTool for Greeter {
    fn name(&self) -> &str {
        "greeter"
    }
    fn description(&self) -> &str {
        "Greets people"
    }
    fn actions(&self) -> Actions {
        Actions::new().action(
            "greet",
            ActionSchema::new("Greet someone by name")
                .property("name", json!({"type": "string", "minLength": 1}))
                .required(["name"]),
        )
    }
    async fn run_action(&self, _action: &str, data: Data, _ctx: Context) -> ActionResult {
        let name = data["name"].as_str().unwrap_or("you");
        Ok(Reply::new(json!({ "greeting": format!("Hello, {name}!") })))
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::builder()
        .name("wymcp-example")
        .version(env!("CARGO_PKG_VERSION"))
        .instructions("Call greeter with action greet.")
        .tool(Greeter)
        .build()?;
    wymcp::run(server).await?;
    Ok(())
}
