//! `--redis`: two `tasks` processes on two ports sharing one real `redis-server` (and one data
//! directory) serve one session, each request to the other process in turn.

#![allow(clippy::unwrap_used, missing_docs)]

#[path = "../../../crates/wymcp-redis/tests/support/redis_server.rs"]
#[allow(dead_code)] // freeze and thaw are the outage tests'.
mod redis_server;

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_tasks");

/// A `tasks` process serving HTTP on a free port as a node on `redis`; killed on drop.
struct Node {
    child: Child,
    url: String,
}

impl Node {
    fn start(redis: &str, data: &std::path::Path) -> Node {
        let mut child = Command::new(BIN)
            .args(["--port", "0", "--redis", redis, "--data"])
            .arg(data)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, rx) = mpsc::channel();
        let stderr = BufReader::new(child.stderr.take().unwrap());
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let url = loop {
            let line = rx
                .recv_timeout(Duration::from_secs(30))
                .expect("the banner");
            if let Some(rest) = line.trim().strip_prefix("listening") {
                break rest.split_whitespace().next().unwrap().to_owned();
            }
        };
        Node { child, url }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn post(url: &str, session: Option<&str>, body: Value) -> (u16, Option<String>, Value) {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .json(&body);
    if let Some(session) = session {
        request = request
            .header("Mcp-Session-Id", session)
            .header("MCP-Protocol-Version", "2025-11-25");
    }
    let resp = request.send().await.unwrap();
    let status = resp.status().as_u16();
    let id = resp
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_owned());
    let text = resp.text().await.unwrap();
    (
        status,
        id,
        serde_json::from_str(&text).unwrap_or(Value::Null),
    )
}

fn action(id: i64, action: &str, data: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "tasks", "arguments": {"action": action, "data": data}}})
}

#[tokio::test]
async fn two_processes_on_one_redis_serve_one_session_turn_by_turn() {
    let Some(redis) = redis_server::RedisServer::start() else {
        return;
    };
    let data = std::env::temp_dir().join(format!("wymcp-tasks-nodes-{}", std::process::id()));
    let nodes = [
        Node::start(&redis.url(), &data),
        Node::start(&redis.url(), &data),
    ];
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "nodes-test", "version": "1"}}});
    let (status, session, _) = post(&nodes[0].url, None, init).await;
    assert_eq!(status, 200);
    let session = session.unwrap();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(
        post(&nodes[1].url, Some(&session), initialized).await.0,
        202
    );
    let created = action(2, "create", json!({"title": "Shared"}));
    let (status, _, created) = post(&nodes[0].url, Some(&session), created).await;
    assert_eq!(status, 200, "{created}");
    let got = action(3, "get", json!({"title": "Shared"}));
    let (status, _, got) = post(&nodes[1].url, Some(&session), got).await;
    assert_eq!(status, 200, "{got}");
    let text = got["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("\"Shared\""), "{text}");
    // DELETE on one process ends the session on both.
    let deleted = reqwest::Client::new()
        .delete(&nodes[0].url)
        .header("Mcp-Session-Id", &session)
        .header("MCP-Protocol-Version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 200);
    let list = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"});
    assert_eq!(post(&nodes[1].url, Some(&session), list).await.0, 404);
    drop(nodes);
    let _ = std::fs::remove_dir_all(&data);
}

/// Two nodes share one data directory, so their writes meet in one SQLite file: an update on
/// one node while the other writes must wait for the write lock, not fail. (The soak of issue
/// 48 found `update` and `complete` answered "database is locked" at once: their transactions
/// began deferred, read, then could not take the lock another process had taken since.)
#[tokio::test]
async fn both_nodes_update_one_task_at_once_without_database_is_locked() {
    let Some(redis) = redis_server::RedisServer::start() else {
        return;
    };
    let data = std::env::temp_dir().join(format!("wymcp-tasks-locked-{}", std::process::id()));
    let nodes = [
        Node::start(&redis.url(), &data),
        Node::start(&redis.url(), &data),
    ];
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "nodes-test", "version": "1"}}});
    let (status, session, _) = post(&nodes[0].url, None, init).await;
    assert_eq!(status, 200);
    let session = session.unwrap();
    let created = action(2, "create", json!({"title": "Contended"}));
    let (status, _, created) = post(&nodes[0].url, Some(&session), created).await;
    assert_eq!(status, 200, "{created}");
    let text = created["result"]["content"][0]["text"].as_str().unwrap();
    let id = created["result"]["structuredContent"]["id"]
        .as_i64()
        .or_else(|| serde_json::from_str::<Value>(text).ok()?["id"].as_i64())
        .unwrap_or_else(|| panic!("no id in {created}"));
    let mut failed = Vec::new();
    for round in 0..40 {
        let update = |node: usize| {
            let patch = json!({"id": id, "notes": format!("round {round} on node {node}")});
            post(&nodes[node].url, Some(&session), action(3, "update", patch))
        };
        let (a, b) = tokio::join!(update(0), update(1));
        for (status, _, answer) in [a, b] {
            assert_eq!(status, 200, "{answer}");
            if answer["result"]["isError"] != false {
                failed.push(answer["result"]["content"][0]["text"].clone());
            }
        }
    }
    assert_eq!(failed, Vec::<Value>::new(), "every update succeeds");
    drop(nodes);
    let _ = std::fs::remove_dir_all(&data);
}
