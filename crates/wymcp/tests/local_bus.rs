//! Two services of one process as nodes of one cluster (`LocalBus`, a shared in-memory store
//! and event log, a node id each): a session opened on one is served by the other, and the
//! client's answer to a server request reaches the node running the call, wherever it lands.

#![allow(clippy::unwrap_used, missing_docs)]

mod http_harness;

use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio_util::sync::CancellationToken;
use wymcp::backend::{Backends, InMemoryEventLog, InMemorySessionStore, LocalBus};
use wymcp::session::Sampling;
use wymcp::transport::http::StreamableHttp;
use wymcp::transport::stdio::{StdioConfig, serve_io};
use wymcp::{CallError, CallOutput, CallResult, Context, PlainTool, Server};

use http_harness::{Http, Sse};

struct Summarize;

impl PlainTool for Summarize {
    fn name(&self) -> &str {
        "summarize"
    }
    fn description(&self) -> &str {
        "Asks the client's model for a summary"
    }
    fn input_schema(&self) -> Map<String, Value> {
        json!({"type": "object"}).as_object().cloned().unwrap()
    }
    async fn run(&self, _arguments: Map<String, Value>, ctx: Context) -> CallResult {
        let sampled = ctx
            .sample(Sampling::prompt("Summarize").max_tokens(20))
            .await
            .map_err(|e| CallError::tool(e.to_string()))?;
        Ok(CallOutput::text(
            sampled["content"]["text"].as_str().unwrap_or_default(),
        ))
    }
}

#[tokio::test]
async fn an_answer_posted_to_one_node_reaches_the_call_on_the_other() {
    let shared = Backends::new()
        .sessions(InMemorySessionStore::new())
        .events(InMemoryEventLog::new())
        .bus(LocalBus::new());
    let node = |id: &str| {
        let server = Server::builder()
            .plain_tool(Summarize)
            .backends(shared.clone())
            .build()
            .unwrap();
        StreamableHttp::builder(server).node_id(id)
    };
    let (a, b) = (Http::serve(node("a")).await, Http::serve(node("b")).await);
    let session = a.open_session(json!({"sampling": {}})).await;
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                      "params": {"name": "summarize", "arguments": {}}});
    let mut stream = Sse::new(b.session_post(&session, &call).await);
    let asked = stream.message().await.unwrap();
    assert_eq!(asked["method"], "sampling/createMessage");
    assert!(
        asked["id"].as_str().unwrap().starts_with("srv-b."),
        "{asked}"
    );
    let answer = json!({"jsonrpc": "2.0", "id": asked["id"], "result": {
        "role": "assistant", "model": "m", "content": {"type": "text", "text": "Short."}}});
    let headers = [
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let posted = a.post_raw(&headers, answer.to_string()).await;
    assert_eq!(posted.status, 202);
    let result = stream.message().await.unwrap();
    assert_eq!(result["id"], 7);
    assert_eq!(result["result"]["content"][0]["text"], "Short.");
}

/// One `Server` served at once by a node of a cluster (HTTP, its backends shared with the
/// cluster's other node) and over stdio: a notification of the server reaches both the stdio
/// client and the cluster's other node. Before the sessions had one owner, the first
/// deployment served installed the server's relay ("the first call wins").
#[tokio::test]
async fn one_server_served_over_http_and_stdio_at_once_notifies_both() {
    let shared = Backends::new()
        .sessions(InMemorySessionStore::new())
        .events(InMemoryEventLog::new())
        .bus(LocalBus::new());
    let server = |backends: Backends| {
        Server::builder()
            .plain_tool(Summarize)
            .list_changed(true)
            .backends(backends)
            .build()
            .unwrap()
    };
    let served = server(shared.clone());
    let _node_1 = Http::serve(StreamableHttp::builder(served.clone()).node_id("1")).await;
    let node_2 = Http::serve(StreamableHttp::builder(server(shared)).node_id("2")).await;
    let session = node_2.ready("2025-11-25").await;
    let mut stream = Sse::bounded(
        node_2.get_stream(&session, &[]).await,
        Duration::from_secs(10),
    );
    // The same server over stdio, initialized.
    let (client, pipe) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(pipe);
    let (client_read, mut write) = tokio::io::split(client);
    let _stdio = tokio::spawn(serve_io(
        served.clone(),
        StdioConfig::default(),
        server_read,
        server_write,
        CancellationToken::new(),
        |_| {},
    ));
    let mut lines = BufReader::new(client_read).lines();
    for message in [
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "stdio", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ] {
        write
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    }
    let initialized: Value =
        serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(initialized["id"], 0, "{initialized}");

    assert!(served.notify_tools_list_changed());
    let expected =
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {}});
    let (heard, _) = stream.until("notifications/tools/list_changed").await;
    assert_eq!(heard, expected, "the cluster's other node");
    let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
        .await
        .expect("the stdio client hears it within 10 s")
        .unwrap()
        .unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&line).unwrap(),
        expected,
        "the stdio client"
    );
}
