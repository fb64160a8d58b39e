//! (c) rmcp 3.x: the same `calc` tool (`{"action":"add","data":{"a":1,"b":2}}`, `a` and `b`
//! required integers), written the way rmcp's documentation shows (`#[tool_router]`,
//! `Parameters<T>` deserialized with serde, `Json<T>` structured output), on rmcp's
//! streamable HTTP server at `/mcp`.
//!
//! `rmcp_calc <addr> stateless|stateful`: `stateless` is rmcp's stateless JSON mode
//! (`legacy_session_mode(false)`, `json_response(true)`); `stateful` is its default session mode.
//! Prints `listening on <addr>` once bound. `rmcp_calc stdio`: the same tool on rmcp's stdio
//! transport (`rmcp::transport::stdio()`, `ServiceExt::serve`), until stdin ends (`stdio.sh`).
//!
//! rmcp 3.11 speaks MCP 2026-07-28 too: a request whose `_meta` envelope names that revision is
//! served statelessly whatever the mode (checked as that revision requires: the envelope, the
//! `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers), and in the `stateless` mode its
//! answer is plain JSON. The benchmark's 2026-07-28 rmcp row is the `stateless` mode.

use axum::serve::ListenerExt as _;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServiceExt as _, schemars, tool, tool_router};

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Action {
    Add,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct AddData {
    a: i64,
    b: i64,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct CalcRequest {
    action: Action,
    data: AddData,
}

#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
struct Sum {
    sum: i64,
}

#[derive(Debug, Clone, Default)]
struct Calc;

#[tool_router(server_handler)]
impl Calc {
    #[tool(name = "calc", description = "Arithmetic")]
    fn calc(&self, Parameters(CalcRequest { action, data }): Parameters<CalcRequest>) -> Json<Sum> {
        match action {
            Action::Add => Json(Sum {
                sum: data.a + data.b,
            }),
        }
    }
}

// `ALLOC=mimalloc` (the scripts' knob): this server on mimalloc instead of the system allocator.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let addr = args.next().unwrap_or_else(|| "127.0.0.1:0".to_owned());
    if addr == "stdio" {
        let running = Calc
            .serve(rmcp::transport::stdio())
            .await
            .map_err(std::io::Error::other)?;
        running.waiting().await.map_err(std::io::Error::other)?;
        return Ok(());
    }
    let mode = args.next().unwrap_or_else(|| "stateful".to_owned());
    let config = match mode.as_str() {
        "stateless" => StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true),
        "stateful" => StreamableHttpServerConfig::default(),
        other => panic!("mode must be stateless or stateful, not {other}"),
    };
    let service: StreamableHttpService<Calc, LocalSessionManager> =
        StreamableHttpService::new(|| Ok(Calc), Default::default(), config);
    let app = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(addr).await?;
    println!("listening on {}", listener.local_addr()?);
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, app).await
}
