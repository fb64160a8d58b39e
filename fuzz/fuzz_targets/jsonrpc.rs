//! The JSON-RPC message layer through the serving core, both eras: a sequence of messages
//! (well-formed and broken, as bytes) on one connection; every line the server writes is one
//! JSON-RPC message valid against the official schema of the revision the exchange uses, and
//! every request is answered at most once.
#![no_main]

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio_util::sync::CancellationToken;
use wymcp::transport::stdio::{StdioConfig, serve_io};
use wymcp_fuzz::json::{self, Era};
use wymcp_fuzz::{fixture, schema};

/// The most messages one input sends.
const MAX_MESSAGES: usize = 16;

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let mut lines: Vec<(Vec<u8>, Option<Value>)> = Vec::new();
    while !u.is_empty() && lines.len() < MAX_MESSAGES {
        let Ok(kind) = u.int_in_range(0..=9u8) else { break };
        let message = match kind {
            0..=3 => json::message(&mut u, Era::Session, &[]),
            4..=7 => json::message(&mut u, Era::Stateless, &[]),
            8 => json::value(&mut u, 3),
            _ => {
                // Raw bytes: anything but a newline, so they stay one line.
                let bytes: Vec<u8> = u.arbitrary().unwrap_or_default();
                lines.push((bytes.into_iter().filter(|b| *b != b'\n').collect(), None));
                continue;
            }
        };
        let Ok(message) = message else { break };
        lines.push((message.to_string().into_bytes(), Some(message)));
    }
    wymcp_fuzz::runtime().block_on(exchange(lines));
});

async fn exchange(lines: Vec<(Vec<u8>, Option<Value>)>) {
    let (client, server) = tokio::io::duplex(1 << 20);
    let (server_in, server_out) = tokio::io::split(server);
    let (client_in, mut client_out) = tokio::io::split(client);
    let config = StdioConfig::default().shutdown_grace(Duration::from_secs(1));
    let serving = tokio::spawn(serve_io(
        fixture::server(),
        config,
        server_in,
        server_out,
        CancellationToken::new(),
        |_| {},
    ));
    let mut requested: HashMap<String, usize> = HashMap::new();
    // Ids of requests of each era: an answer is checked against its request's revision.
    let (mut session_ids, mut stateless_ids) = (HashSet::new(), HashSet::new());
    let mut revision = 2;
    for (bytes, message) in &lines {
        if let Some(m) = message {
            if m["method"] == "initialize"
                && let Some(v) = m["params"]["protocolVersion"].as_str() {
                    // The revision the server agrees to: the one asked, when it serves it.
                    revision = schema::REVISIONS[..3].iter().position(|r| *r == v).unwrap_or(revision);
                }
            if m.get("id").is_some() && m.get("method").is_some() {
                let id = m["id"].to_string();
                *requested.entry(id.clone()).or_default() += 1;
                if m["params"]["_meta"].get("io.modelcontextprotocol/protocolVersion").is_some()
                    || m["method"] == "server/discover"
                    || m["method"] == "subscriptions/listen"
                {
                    stateless_ids.insert(id);
                } else {
                    session_ids.insert(id);
                }
            }
        }
        client_out.write_all(bytes).await.expect("the duplex takes the line");
        client_out.write_all(b"\n").await.expect("the duplex takes the line");
    }
    client_out.shutdown().await.expect("the duplex closes");
    let mut reader = BufReader::new(client_in).lines();
    let mut answered: HashMap<String, usize> = HashMap::new();
    let read = async {
        while let Ok(Some(line)) = reader.next_line().await {
            let message: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("a line that is not JSON ({e}): {line}"));
            let id = message.get("id").map(Value::to_string).unwrap_or_default();
            // A message of the server's own (a notification, a request), or an answer whose id
            // both eras' requests used, may be of either.
            let either = message.get("method").is_some()
                || (session_ids.contains(&id) == stateless_ids.contains(&id));
            let at = if stateless_ids.contains(&id) && !session_ids.contains(&id) { 3 } else { revision };
            let checked = schema::check_message(at, &message);
            if let Err(problem) = checked
                && !(either && schema::check_message(3, &message).is_ok()) {
                    panic!("{problem}");
                }
            if message.get("method").is_none() && message.get("id").is_some_and(|id| !id.is_null()) {
                *answered.entry(message["id"].to_string()).or_default() += 1;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(600), read)
        .await
        .expect("the server ends its output once the input ends");
    let ended = tokio::time::timeout(Duration::from_secs(600), serving)
        .await
        .expect("serve_io returns once the input ends");
    assert!(matches!(ended, Ok(Ok(()))), "serve_io ended with {ended:?}");
    for (id, n) in &answered {
        let sent = requested.get(id).copied().unwrap_or(0);
        assert!(*n <= sent.max(1), "id {id} answered {n} times, requested {sent} times");
    }
}
