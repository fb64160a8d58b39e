//! A wymcp server over Streamable HTTP, for trying it with real MCP clients.
//!
//! ```sh
//! cargo run -p wymcp --example streamable_http -- 127.0.0.1:8080
//! ```
//!
//! Prints `listening on <addr>` once bound (port 0 picks a free port); the endpoint is `/mcp`.

use serde_json::json;
use wymcp::transport::http::{HttpServer, StreamableHttp};
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
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8080".to_owned());
    let server = Server::builder()
        .name("wymcp-example")
        .version(env!("CARGO_PKG_VERSION"))
        .instructions("Call greeter with action greet.")
        .tool(Greeter)
        .build()?;
    let http = HttpServer::bind(addr.as_str(), StreamableHttp::builder(server)).await?;
    println!("listening on {}", http.local_addr()?);
    http.run().await?;
    Ok(())
}
