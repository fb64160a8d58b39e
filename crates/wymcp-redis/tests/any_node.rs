//! Any node serves any request of any session: two nodes sharing one real `redis-server`, a
//! client sending each HTTP request to the other node in turn, in both eras. Each conversation
//! runs once against a single in-memory node and once against the two nodes on Redis; the two
//! transcripts must be equal, and each step asserts what it must show on its own.
//!
//! The two nodes are two processes (this test binary run again, see `support::NodeProcess`):
//! they share nothing but Redis. The conformance suites run through nginx in front of two
//! fixture processes as well (`crates/wymcp/tests/conformance/run.sh --scale-out`).

#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use serde_json::{Value, json};
use wymcp::transport::http::StreamableHttp;

use support::fixture::{README, server};
use support::redis_server::RedisServer;
use support::{Client, Node, NodeProcess, SESSION_VERSION, normalized};

/// One node in memory, the reference.
async fn alone() -> Vec<Node> {
    vec![Node::serve(StreamableHttp::builder(server(None))).await]
}

/// Two node processes on the Redis at `url`.
fn two_on(url: &str) -> Vec<NodeProcess> {
    (0..2)
        .map(|_| NodeProcess::spawn("node_process", url))
        .collect()
}

/// Not a test of its own: with `WYMCP_TEST_NODE_REDIS` set, one node process of the tests here
/// (serving until killed); without it, it returns at once.
#[test]
fn node_process() {
    support::serve_as_node_process();
}

/// A call result's JSON output (its first text content, parsed).
fn output(message: &Value) -> Value {
    let text = message["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or("null");
    serde_json::from_str(text).unwrap_or(Value::Null)
}

fn urls(nodes: &[Node]) -> Vec<String> {
    nodes.iter().map(|n| n.url.clone()).collect()
}

fn process_urls(nodes: &[NodeProcess]) -> Vec<String> {
    nodes.iter().map(|n| n.url.clone()).collect()
}

/// The session era's conversation; what it heard, normalized.
async fn session_conversation(client: &mut Client) -> Vec<Value> {
    let mut heard = Vec::new();
    let init = json!({"protocolVersion": SESSION_VERSION,
        "capabilities": {"elicitation": {}, "sampling": {}},
        "clientInfo": {"name": "nodes-test", "version": "1"}});
    let opened = client.request(1, "initialize", init).await;
    assert_eq!(opened.status(), 200);
    heard.push(opened.last().await["result"]["serverInfo"].clone());
    assert_eq!(
        client.notify("notifications/initialized", json!({})).await,
        202
    );
    let list = client
        .request(2, "tools/list", json!({}))
        .await
        .last()
        .await;
    heard.push(
        list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].clone())
            .collect(),
    );
    progress(client, &mut heard).await;
    resources(client, &mut heard).await;
    asks(client, &mut heard).await;
    cancellation(client, &mut heard).await;
    resumed_stream(client, &mut heard).await;
    deleted(client, &mut heard).await;
    heard.into_iter().map(normalized).collect()
}

/// A call with progress: every message of its stream.
async fn progress(client: &mut Client, heard: &mut Vec<Value>) {
    let call = json!({"name": "steps", "arguments": {}, "_meta": {"progressToken": "p"}});
    let mut stream = client.request(3, "tools/call", call).await.stream();
    while let Some((_, message)) = stream.next().await {
        heard.push(message);
    }
    let last = heard.last().unwrap();
    assert_eq!(output(last), json!({"steps": 2}), "{last}");
}

/// The resources listed, and the readme read.
async fn resources(client: &mut Client, heard: &mut Vec<Value>) {
    let listed = client
        .request(20, "resources/list", json!({}))
        .await
        .last()
        .await;
    assert_eq!(listed["result"]["resources"][0]["uri"], README, "{listed}");
    heard.push(listed["result"]["resources"].clone());
    let read = client
        .request(21, "resources/read", json!({"uri": README}))
        .await
        .last()
        .await;
    assert_eq!(
        read["result"]["contents"][0]["text"], "Read me first.",
        "{read}"
    );
    heard.push(read["result"]["contents"].clone());
}

/// Elicitation, then sampling: each answer is POSTed to the other node than the one running
/// the call, and reaches the call.
async fn asks(client: &mut Client, heard: &mut Vec<Value>) {
    let call = json!({"name": "ask", "arguments": {}});
    let mut stream = client.request(4, "tools/call", call).await.stream();
    let elicit = stream.message().await;
    assert_eq!(elicit["method"], "elicitation/create");
    let answer = json!({"action": "accept", "content": {"name": "Ada"}});
    let posted = client
        .post(json!({"jsonrpc": "2.0", "id": elicit["id"], "result": answer}))
        .await;
    assert_eq!(posted.status(), 202);
    let sample = stream.message().await;
    assert_eq!(sample["method"], "sampling/createMessage");
    let answer = json!({"role": "assistant", "model": "m",
        "content": {"type": "text", "text": "A summary"}});
    let posted = client
        .post(json!({"jsonrpc": "2.0", "id": sample["id"], "result": answer}))
        .await;
    assert_eq!(posted.status(), 202);
    let result = stream.message().await;
    assert_eq!(
        output(&result),
        json!({"name": "Ada", "summary": "A summary"}),
        "{result}"
    );
    heard.extend([elicit, sample, result]);
}

/// `notifications/cancelled` sent to the other node ends the call where it runs: its stream
/// ends without an answer.
async fn cancellation(client: &mut Client, heard: &mut Vec<Value>) {
    let call = json!({"name": "slow", "arguments": {}, "_meta": {"progressToken": "s"}});
    let mut stream = client.request(5, "tools/call", call).await.stream();
    heard.push(stream.message().await);
    let cancelled = json!({"requestId": 5, "reason": "changed my mind"});
    assert_eq!(
        client.notify("notifications/cancelled", cancelled).await,
        202
    );
    assert!(
        stream.next().await.is_none(),
        "the cancelled call's stream ends unanswered"
    );
    heard.push(json!("slow: ended without an answer"));
}

/// The session's GET stream hears a resource change announced by a call on any node; a GET
/// resuming it with `Last-Event-ID`, on the other node, replays what was missed.
async fn resumed_stream(client: &mut Client, heard: &mut Vec<Value>) {
    let subscribed = client
        .request(6, "resources/subscribe", json!({"uri": README}))
        .await;
    heard.push(subscribed.last().await);
    let (status, mut get) = client.get(None).await;
    assert_eq!(status, 200);
    let touch = json!({"name": "touch", "arguments": {}});
    heard.push(
        client
            .request(7, "tools/call", touch.clone())
            .await
            .last()
            .await,
    );
    let (id, updated) = get.next().await.unwrap();
    assert_eq!(updated["method"], "notifications/resources/updated");
    heard.push(updated);
    drop(get);
    // Announced while no GET stream is open: logged, and replayed on resumption.
    heard.push(client.request(8, "tools/call", touch).await.last().await);
    let (status, mut resumed) = client.get(id.as_deref()).await;
    assert_eq!(status, 200);
    let missed = resumed.message().await;
    assert_eq!(missed["params"], json!({"uri": README}));
    heard.push(missed);
}

/// DELETE on one node ends the session everywhere: a call running on another node is aborted
/// (its stream ends), and every node answers 404 for the session afterwards.
async fn deleted(client: &mut Client, heard: &mut Vec<Value>) {
    let call = json!({"name": "slow", "arguments": {}, "_meta": {"progressToken": "d"}});
    let mut stream = client.request(9, "tools/call", call).await.stream();
    heard.push(stream.message().await);
    assert_eq!(client.delete().await, 200);
    assert!(
        stream.next().await.is_none(),
        "DELETE aborts the running call"
    );
    for id in [10, 11] {
        let gone = client.request(id, "tools/list", json!({})).await;
        assert_eq!(gone.status(), 404);
        heard.push(gone.last().await);
    }
}

/// The 2026-07-28 conversation: a call with progress, a listen stream hearing a change
/// announced on the other node, and a multi round-trip call retried on the other node.
async fn stateless_conversation(client: &mut Client) -> Vec<Value> {
    let mut heard = Vec::new();
    let discovered = client
        .request(1, "server/discover", json!({}))
        .await
        .last()
        .await;
    heard.push(discovered["result"]["serverInfo"].clone());
    progress(client, &mut heard).await;
    resources(client, &mut heard).await;
    let filter = json!({"notifications": {"resourceSubscriptions": [README]}});
    let mut listen = client
        .request(2, "subscriptions/listen", filter)
        .await
        .stream();
    heard.push(listen.message().await);
    let touch = json!({"name": "touch", "arguments": {}});
    heard.push(client.request(3, "tools/call", touch).await.last().await);
    let updated = listen.message().await;
    assert_eq!(updated["method"], "notifications/resources/updated");
    heard.push(updated);
    // Each round of `ask` is answered by a retry on the other node.
    let mut call = json!({"name": "ask", "arguments": {}});
    let answers = [
        json!({"action": "accept", "content": {"name": "Ada"}}),
        json!({"role": "assistant", "model": "m", "content": {"type": "text", "text": "A summary"}}),
    ];
    for (round, answer) in answers.into_iter().enumerate() {
        let asked = client
            .request(4 + round as i64, "tools/call", call.clone())
            .await
            .last()
            .await;
        let result = &asked["result"];
        assert_eq!(result["resultType"], "input_required", "{asked}");
        let key = result["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .next()
            .unwrap()
            .clone();
        call["inputResponses"] = json!({ key: answer });
        call["requestState"] = result["requestState"].clone();
        heard.push(asked);
    }
    let done = client.request(6, "tools/call", call).await.last().await;
    assert_eq!(
        output(&done),
        json!({"name": "Ada", "summary": "A summary"}),
        "{done}"
    );
    heard.push(done);
    heard.into_iter().map(normalized).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_alternating_between_two_nodes_hears_what_one_node_says() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let reference = session_conversation(&mut Client::new(urls(&alone().await), false)).await;
    let nodes = two_on(&redis.url());
    let mut client = Client::new(process_urls(&nodes), false);
    let shared = session_conversation(&mut client).await;
    assert_eq!(shared, reference);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stateless_requests_alternating_between_two_nodes_hear_what_one_node_says() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let reference = stateless_conversation(&mut Client::new(urls(&alone().await), true)).await;
    let nodes = two_on(&redis.url());
    let shared = stateless_conversation(&mut Client::new(process_urls(&nodes), true)).await;
    assert_eq!(shared, reference);
}
