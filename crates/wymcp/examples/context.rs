//! A wymcp server whose tool uses its context while it runs: progress, log messages, an
//! elicitation (the user picks a branch) and sampling (the client's model writes a summary).
//! Served over stdio or Streamable HTTP, for trying it with real MCP clients.
//!
//! ```sh
//! cargo run -p wymcp --example context -- --stdio
//! cargo run -p wymcp --example context -- --port 8080    # Streamable HTTP (wymcp::run)
//! ```
//!
//! [`wymcp::run`] serves it: over HTTP its banner (stderr) says where it listens (port 0 picks a
//! free port; the endpoint is `/mcp`). Over stdio, stdout carries JSON-RPC only.

use serde_json::json;
use wymcp::protocol::LogLevel;
use wymcp::session::{Elicitation, Sampling};
use wymcp::{ActionResult, ActionSchema, ActionTool, Actions, Context, Data, Reply, Server};

struct Deploy;

impl ActionTool for Deploy {
    fn name(&self) -> &str {
        "deploy"
    }
    fn description(&self) -> &str {
        "Deploys services, asking the user which branch"
    }
    fn actions(&self) -> Actions {
        Actions::new()
            .action(
                "run",
                ActionSchema::new("Deploy a service: reports progress, logs, asks for the branch")
                    .property("service", json!({"type": "string", "minLength": 1}))
                    .required(["service"]),
            )
            .action(
                "summarize",
                ActionSchema::new("Summarize a text with the client's model")
                    .property("text", json!({"type": "string"}))
                    .required(["text"]),
            )
    }
    async fn run_action(&self, action: &str, data: Data, ctx: Context) -> ActionResult {
        match action {
            "run" => {
                let service = data["service"].as_str().unwrap_or_default().to_owned();
                ctx.progress(1.0, Some(3.0), Some("preparing"));
                ctx.log_as(
                    LogLevel::Info,
                    "deploy",
                    json!(format!("deploying {service}")),
                );
                let answer = ctx
                    .elicit(Elicitation::form(
                        format!("Which branch of {service}?"),
                        json!({"type": "object",
                               "properties": {"branch": {"type": "string"}},
                               "required": ["branch"]}),
                    ))
                    .await?;
                ctx.progress(3.0, Some(3.0), Some("done"));
                match answer["action"].as_str() {
                    Some("accept") => Ok(Reply::new(json!({
                        "deployed": service,
                        "branch": answer["content"]["branch"],
                    }))),
                    other => Ok(Reply::new(json!({"deployed": null, "answer": other}))),
                }
            }
            _ => {
                let text = data["text"].as_str().unwrap_or_default();
                let result = ctx
                    .sample(Sampling::prompt(format!("Summarize: {text}")).max_tokens(200))
                    .await?;
                Ok(Reply::new(json!({
                    "summary": result["content"]["text"],
                    "model": result["model"],
                })))
            }
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::builder()
        .name("wymcp-context-example")
        .version(env!("CARGO_PKG_VERSION"))
        .tool(Deploy)
        .build()?;
    wymcp::run(server).await?;
    Ok(())
}
