//! (a') The floor of a validating server: `bare` (the same axum handler, byte for byte) plus the
//! one thing no server that checks its arguments can skip: the call's `data` checked by a plain
//! `jsonschema` validator, compiled once at start-up from the `calc` action's schema (the
//! properties `a` and `b` integers, both required) with the options wymcp's value gate uses
//! (`wymcp_core::value_gate::options()`: draft 2020-12, formats asserted, offline). The data is
//! freed with the message, as in `bare`.
//!
//! wymcp's own share of a call is what it costs above this server, in the same rounds.
//!
//! `floor <addr>`: prints `listening on <addr>` once bound.

use std::sync::LazyLock;

use axum::Router;
use axum::body::Bytes;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::post;
use axum::serve::ListenerExt as _;
use serde_json::{Value, json};

/// The `calc` action's data schema, compiled once.
static VALIDATOR: LazyLock<jsonschema::Validator> = LazyLock::new(|| {
    let schema = json!({
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    });
    wymcp_core::value_gate::options()
        .build(&schema)
        .expect("the calc schema builds")
});

async fn mcp(body: Bytes) -> impl IntoResponse {
    let Ok(message) = serde_json::from_slice::<Value>(&body) else {
        return (
            StatusCode::BAD_REQUEST,
            [(header::CONTENT_TYPE, "application/json")],
            Vec::new(),
        );
    };
    let data = &message["params"]["arguments"]["data"];
    // The floor's one addition to bare.
    if !VALIDATOR.is_valid(data) {
        return (
            StatusCode::BAD_REQUEST,
            [(header::CONTENT_TYPE, "application/json")],
            Vec::new(),
        );
    }
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
    LazyLock::force(&VALIDATOR);
    let listener = tokio::net::TcpListener::bind(addr).await?;
    println!("listening on {}", listener.local_addr()?);
    let app = Router::new().route("/mcp", post(mcp));
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, app).await
}
