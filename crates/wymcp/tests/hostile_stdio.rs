//! Hostile clients against the serving core's limits over stdio (issue 19, D11 and D16): the
//! calls in flight at end of input are answered before the output ends; pending calls are
//! capped per connection in both eras.

#![allow(clippy::unwrap_used, missing_docs)]

mod hostile_fixture;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use hostile_fixture::{call, payload};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio_util::sync::CancellationToken;
use wymcp::Limits;
use wymcp::transport::stdio::{StdioConfig, serve_io};

/// Serves the fixture with `limits` over an in-memory pipe, writes `lines` then ends the input,
/// and answers every line the server wrote until its output ended.
async fn run(limits: Limits, lines: Vec<Value>) -> Vec<Value> {
    let server = hostile_fixture::server(limits, Arc::new(AtomicBool::new(false)));
    let (client, served) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(served);
    let (client_read, mut client_write) = tokio::io::split(client);
    let serving = tokio::spawn(serve_io(
        server,
        StdioConfig::default(),
        server_read,
        server_write,
        CancellationToken::new(),
        |_| {},
    ));
    for line in lines {
        client_write
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
    }
    client_write.shutdown().await.unwrap();
    drop(client_write);
    let mut out = BufReader::new(client_read).lines();
    let mut answers = Vec::new();
    while let Some(line) = out.next_line().await.unwrap() {
        answers.push(serde_json::from_str(&line).unwrap());
    }
    serving.await.unwrap().unwrap();
    answers
}

fn handshake() -> Vec<Value> {
    vec![
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "pipe", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ]
}

fn answer_to(answers: &[Value], id: u64) -> &Value {
    answers
        .iter()
        .find(|a| a["id"] == id)
        .unwrap_or_else(|| panic!("no answer to {id} in {answers:?}"))
}

#[tokio::test]
async fn d16_calls_in_flight_at_end_of_input_are_all_answered() {
    let mut lines = handshake();
    for id in 1..=20 {
        lines.push(call(id, "sleep", json!({"ms": 300})));
    }
    let answers = run(Limits::default(), lines).await;
    for id in 1..=20 {
        let result = &answer_to(&answers, id)["result"];
        assert_eq!(payload(result), json!({"slept_ms": 300}), "call {id}");
    }
}

#[tokio::test]
async fn d16_stateless_requests_in_flight_at_end_of_input_are_answered() {
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "pipe", "version": "0"}
    });
    let lines = (1..=5)
        .map(|id| {
            let mut body = call(id, "sleep", json!({"ms": 300}));
            body["params"]["_meta"] = meta.clone();
            body
        })
        .collect();
    let answers = run(Limits::default(), lines).await;
    for id in 1..=5 {
        let result = &answer_to(&answers, id)["result"];
        assert_eq!(payload(result), json!({"slept_ms": 300}), "request {id}");
    }
}

#[tokio::test]
async fn d11_pending_calls_on_one_connection_are_capped_and_refusals_name_the_limit() {
    let mut lines = handshake();
    for id in 1..=5 {
        lines.push(call(id, "sleep", json!({"ms": 400})));
    }
    let answers = run(Limits::default().max_calls_per_session(3), lines).await;
    let refused: Vec<&Value> = answers
        .iter()
        .filter(|a| a["error"]["code"] == -32000)
        .collect();
    assert_eq!(refused.len(), 2, "{answers:?}");
    assert!(
        refused[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Limits::max_calls_per_session")
    );
    let served = answers
        .iter()
        .filter(|a| a["result"]["content"].is_array())
        .count();
    assert_eq!(served, 3, "{answers:?}");
}
