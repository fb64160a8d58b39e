//! (a) The physical limit of the setup: a bare axum handler that parses a JSON-RPC
//! `tools/call` with serde_json and answers a fixed-shape result. No sessions, no validation.
//! It reads either era's request alike (the 2026-07-28 one is longer: its `_meta` envelope is
//! parsed with the rest), so each era's ratios are against the same bytes on the wire.
//!
//! `bare <addr>`: prints `listening on <addr>` once bound.

use axum::Router;
use axum::body::Bytes;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::post;
use axum::serve::ListenerExt as _;
use serde_json::{Value, json};

async fn mcp(body: Bytes) -> impl IntoResponse {
    let Ok(message) = serde_json::from_slice::<Value>(&body) else {
        return (
            StatusCode::BAD_REQUEST,
            [(header::CONTENT_TYPE, "application/json")],
            Vec::new(),
        );
    };
    let data = &message["params"]["arguments"]["data"];
    let sum = data["a"].as_i64().unwrap_or(0) + data["b"].as_i64().unwrap_or(0);
    let result = json!({"sum": sum});
    let reply = json!({
        "jsonrpc": "2.0",
        "id": message["id"],
        "result": {
            "content": [{"type": "text", "text": result.to_string()}],
            "structuredContent": result,
            "isError": false,
        }
    });
    let body = serde_json::to_vec(&reply).unwrap_or_default();
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        body,
    )
}

// `ALLOC=mimalloc` (the scripts' knob): this server on mimalloc instead of the system allocator.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:0".to_owned());
    let listener = tokio::net::TcpListener::bind(addr).await?;
    println!("listening on {}", listener.local_addr()?);
    let app = Router::new().route("/mcp", post(mcp));
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, app).await
}
