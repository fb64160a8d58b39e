//! Redis at `maxmemory` with the `noeviction` policy (reads served, writes refused `OOM`), as
//! an operator meets it: a new task is refused naming a full store, never the running-task cap
//! (N6); a task ending meanwhile keeps its result once Redis has room again (N7); a new session
//! and an SSE event are refused naming a full store, and the events not logged are counted
//! (N19). Redis is made full with `CONFIG SET maxmemory 1` and freed with `maxmemory 0`.

#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use std::time::Duration;

use serde_json::{Map, Value, json};
use wymcp::backend::{CreateError, EventLog as _, SessionStore as _, StoreErrorKind};
use wymcp::backend::{TaskRecord, TaskStore as _};
use wymcp::task::TaskSupport;
use wymcp::transport::http::StreamableHttp;
use wymcp::{CallOutput, CallResult, Context, PlainTool, ToolPolicy};
use wymcp_redis::Redis;

use support::fixture::on_redis;
use support::redis_server::RedisServer;
use support::{Client, Node};

const FULL: &str = "Redis is full (maxmemory reached, writes refused): nothing new is stored \
                    until memory is freed or maxmemory is raised";

fn fill(redis: &RedisServer) {
    assert_eq!(
        redis.cli(&["CONFIG", "SET", "maxmemory-policy", "noeviction"]),
        "OK"
    );
    assert_eq!(redis.cli(&["CONFIG", "SET", "maxmemory", "1"]), "OK");
}

fn free(redis: &RedisServer) {
    assert_eq!(redis.cli(&["CONFIG", "SET", "maxmemory", "0"]), "OK");
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

fn running(id: &str) -> TaskRecord {
    let now = now_ms();
    serde_json::from_value(json!({
        "id": id, "principal": "alice", "tool": "count", "status": "working",
        "created_at_ms": now, "last_updated_at_ms": now, "ttl_ms": 60_000,
        "result": null, "error": null, "node": "a", "heartbeat_ms": now,
    }))
    .unwrap()
}

/// N6: alice's one running slot is taken by a task whose end could not be recorded; with
/// Redis full, her next task is refused as a full store, not as "Too many tasks running".
#[tokio::test]
async fn a_new_task_in_a_full_redis_is_refused_as_a_full_store_not_as_the_running_cap() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let store = Redis::connect(&redis.url()).await.unwrap().task_store();
    let fresh_since = now_ms() - 600;
    assert!(
        store
            .put_admitted(running("t1"), 1, fresh_since)
            .await
            .unwrap()
    );
    fill(&redis);
    let refused = store.put_admitted(running("t2"), 1, fresh_since).await;
    assert_eq!(
        refused.unwrap_err().to_string(),
        format!("task store: {FULL}")
    );
    free(&redis);
    assert!(store.get("t2").await.unwrap().is_none(), "nothing stored");
}

/// N19: a new session in a full Redis is refused naming a full store; an SSE event is refused
/// the same way and counted as not logged; both work again once Redis has room.
#[tokio::test]
async fn sessions_and_events_in_a_full_redis_are_refused_as_a_full_store_and_counted() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let shared = Redis::connect(&redis.url()).await.unwrap();
    let (sessions, events) = (shared.session_store(), shared.event_log());
    let ttl = Duration::from_secs(60);
    fill(&redis);
    let refused = sessions
        .create(support::record("s1"), 100, ttl)
        .await
        .unwrap_err();
    let CreateError::Store(error) = &refused else {
        panic!("{refused:?}")
    };
    assert_eq!(error.kind(), StoreErrorKind::Full);
    assert_eq!(refused.to_string(), format!("session store error: {FULL}"));
    let refused = events
        .append("s1", "post0", "{}".to_owned())
        .await
        .unwrap_err();
    assert_eq!(refused.to_string(), format!("session store error: {FULL}"));
    let _ = events.append("s1", "post0", "{}".to_owned()).await;
    assert_eq!(events.unlogged_events(), 2);
    free(&redis);
    sessions
        .create(support::record("s1"), 100, ttl)
        .await
        .unwrap();
    let id = events.append("s1", "post0", "{}".to_owned()).await.unwrap();
    assert!(id.starts_with("post0."), "{id}");
    assert_eq!(events.unlogged_events(), 2, "a logged event is not counted");
}

/// A new session over HTTP while Redis is full is told the store is full (503, `data.reason`
/// "session store full"), not that it is unavailable; once Redis has room it is served.
#[tokio::test]
async fn a_new_session_in_a_full_redis_is_told_the_store_is_full() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let shared = Redis::connect(&redis.url()).await.unwrap();
    let node = Node::serve(StreamableHttp::builder(support::fixture::node_server(
        &shared,
    )))
    .await;
    let mut client = Client::new(vec![node.url.clone()], false);
    let init = json!({"protocolVersion": support::SESSION_VERSION, "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}});
    fill(&redis);
    let answer = client.request(0, "initialize", init.clone()).await;
    assert_eq!(answer.status(), 503);
    let body = answer.last().await;
    assert_eq!(
        body["error"],
        json!({"code": -32603, "message": "Internal error",
            "data": {"reason": "session store full"}}),
        "{body}"
    );
    assert!(client.session.is_none());
    free(&redis);
    let answer = client.request(1, "initialize", init).await;
    assert_eq!(answer.status(), 200);
    assert!(client.session.is_some());
}

/// Naps `ms` milliseconds, then answers; not rerun when its node stops.
struct Nap;

impl PlainTool for Nap {
    fn name(&self) -> &str {
        "doze"
    }
    fn description(&self) -> &str {
        "Naps ms milliseconds"
    }
    fn input_schema(&self) -> Map<String, Value> {
        json!({"type": "object", "properties": {"ms": {"type": "integer"}}})
            .as_object()
            .cloned()
            .unwrap()
    }
    async fn run(&self, arguments: Map<String, Value>, _ctx: Context) -> CallResult {
        let ms = arguments.get("ms").and_then(Value::as_u64).unwrap_or(0);
        tokio::time::sleep(Duration::from_millis(ms)).await;
        Ok(CallOutput::json(json!({"dozed": ms})))
    }
}

async fn request(client: &mut Client, method: &str, params: Value) -> Value {
    client.request(1, method, params).await.last().await
}

/// N7: a task acknowledged `working` ends while Redis refuses writes; once Redis has room,
/// `tasks/get` answers its result, not "The node running this task stopped".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_ending_while_redis_is_full_keeps_its_result() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let shared = Redis::connect(&redis.url()).await.unwrap();
    let server = support::fixture::server_with(|builder| {
        builder
            .plain_tool_with(Nap, ToolPolicy::new().task_support(TaskSupport::Optional))
            .backends(on_redis(&shared).tasks(shared.task_store()))
            .task_heartbeat(Duration::from_millis(100))
    });
    let node = Node::serve(StreamableHttp::builder(server)).await;
    let mut client = Client::new(vec![node.url.clone()], true);
    let call = json!({"name": "doze", "arguments": {"ms": 300}});
    let handle = request(&mut client, "tools/call", call).await;
    assert_eq!(handle["result"]["status"], "working", "{handle}");
    let id = handle["result"]["taskId"].as_str().unwrap().to_owned();
    fill(&redis);
    // The call ends at 300 ms; its end is refused for a second (ten heartbeats: a task whose
    // node stopped would be found so by then).
    tokio::time::sleep(Duration::from_millis(1_300)).await;
    free(&redis);
    let mut seen = Vec::new();
    for _ in 0..100 {
        let task = request(&mut client, "tasks/get", json!({"taskId": id})).await;
        let status = task["result"]["status"].clone();
        if status != "working" {
            assert_eq!(status, "completed", "{task}");
            let text = task["result"]["result"]["content"][0]["text"]
                .as_str()
                .unwrap();
            let result: Value = serde_json::from_str(text).unwrap();
            assert_eq!(result, json!({"dozed": 300}));
            return;
        }
        seen.push(task);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the task never ended: {seen:?}");
}
