//! (b) wymcp: one action-dispatched tool `calc` (action `add`, `a` and `b` required integers),
//! stateful Streamable HTTP at `/mcp`, through the full gate chain.
//!
//! `wymcp_calc <addr>`: prints `listening on <addr>` once bound.

use serde_json::json;
use wymcp::transport::http::{HttpServer, StreamableHttp};
use wymcp::{ActionResult, ActionSchema, ActionTool, Actions, Context, Data, Reply, Server};

struct Calc;

impl ActionTool for Calc {
    fn name(&self) -> &str {
        "calc"
    }
    fn description(&self) -> &str {
        "Arithmetic"
    }
    fn actions(&self) -> Actions {
        Actions::new().action(
            "add",
            ActionSchema::new("Add two integers")
                .property("a", json!({"type": "integer"}))
                .property("b", json!({"type": "integer"}))
                .required(["a", "b"]),
        )
    }
    async fn run_action(&self, _action: &str, data: Data, _ctx: Context) -> ActionResult {
        let a = data["a"].as_i64().unwrap_or(0);
        let b = data["b"].as_i64().unwrap_or(0);
        Ok(Reply::new(json!({ "sum": a + b })))
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:0".to_owned());
    let server = Server::builder()
        .name("calc")
        .version("1.0.0")
        .tool(Calc)
        .build()?;
    // Room for the 10,000 idle sessions of the scale figure plus the 64 of the load.
    let http = HttpServer::bind(
        addr.as_str(),
        StreamableHttp::builder(server).max_sessions(20_000),
    )
    .await?;
    println!("listening on {}", http.local_addr()?);
    http.run().await?;
    Ok(())
}
