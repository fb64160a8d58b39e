//! Two services of one process as nodes of one cluster (`LocalBus`, a shared in-memory store
//! and event log, a node id each): a session opened on one is served by the other, and the
//! client's answer to a server request reaches the node running the call, wherever it lands.

#![allow(clippy::unwrap_used, missing_docs)]

mod http_harness;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use wymcp::session::InMemoryEventLog;
use wymcp::session::{InMemorySessionStore, LocalBus, Sampling};
use wymcp::transport::http::StreamableHttp;
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
    let store = Arc::new(InMemorySessionStore::new());
    let log = Arc::new(InMemoryEventLog::new());
    let bus = Arc::new(LocalBus::new());
    let node = |id: &str| {
        let server = Server::builder().plain_tool(Summarize).build().unwrap();
        StreamableHttp::builder(server)
            .node_id(id)
            .session_store(store.clone())
            .event_log(log.clone())
            .bus(bus.clone())
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

/// One `Server` served by two services, each a node of its own cluster (its own bus, store and
/// log): a notification of the shared server reaches the other node of *each* cluster. Before
/// the sessions had one owner, the first service served installed the server's relay ("the
/// first call wins"), and the second cluster never heard of it.
#[tokio::test]
async fn one_server_served_by_two_clusters_notifies_both() {
    let shared = Server::builder()
        .plain_tool(Summarize)
        .list_changed(true)
        .build()
        .unwrap();
    let cluster = |name: &'static str| {
        let (store, log, bus) = (
            Arc::new(InMemorySessionStore::new()),
            Arc::new(InMemoryEventLog::new()),
            Arc::new(LocalBus::new()),
        );
        move |id: &str, server: Server| {
            StreamableHttp::builder(server)
                .node_id(&format!("{name}-{id}"))
                .session_store(store.clone())
                .event_log(log.clone())
                .bus(bus.clone())
        }
    };
    let (first, second) = (cluster("first"), cluster("second"));
    let other_server = || {
        Server::builder()
            .plain_tool(Summarize)
            .list_changed(true)
            .build()
            .unwrap()
    };
    // The shared server on node 1 of each cluster; node 2 of each has a server of its own.
    let _first_1 = Http::serve(first("1", shared.clone())).await;
    let _second_1 = Http::serve(second("1", shared.clone())).await;
    let first_2 = Http::serve(first("2", other_server())).await;
    let second_2 = Http::serve(second("2", other_server())).await;
    let mut streams = Vec::new();
    for node in [&first_2, &second_2] {
        let session = node.ready("2025-11-25").await;
        let stream = node.get_stream(&session, &[]).await;
        streams.push(Sse::bounded(stream, Duration::from_secs(10)));
    }
    assert!(shared.notify_tools_list_changed());
    for (name, stream) in ["first", "second"].into_iter().zip(&mut streams) {
        let (heard, _) = stream.until("notifications/tools/list_changed").await;
        assert_eq!(
            heard,
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {}}),
            "the {name} cluster's other node"
        );
    }
}
