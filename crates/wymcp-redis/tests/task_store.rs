//! `RedisTaskStore::replace_if` against a real `redis-server`: it replaces a task only while
//! the kept record has the node and heartbeat the caller read, so of many nodes taking over
//! the same task left by a stopped node, exactly one does; `put_admitted` and
//! `replace_if_admitted` count a principal's running tasks over every node.

#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use serde_json::json;
use wymcp::backend::{TaskRecord, TaskStore};
use wymcp_redis::Redis;

use support::redis_server::RedisServer;

/// A working task of `node` with heartbeat `beat`, kept for a minute from now.
fn task(node: &str, beat: u64) -> TaskRecord {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    serde_json::from_value(json!({
        "id": "t1", "principal": "alice", "tool": "count", "status": "working",
        "created_at_ms": now, "last_updated_at_ms": now, "ttl_ms": 60_000,
        "result": null, "error": null, "node": node, "heartbeat_ms": beat,
    }))
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_taker_of_many_replaces_a_left_task() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let store = Redis::connect(&redis.url()).await.unwrap().task_store();
    assert!(
        !store.replace_if(task("b", 5), Some("a"), 1).await.unwrap(),
        "nothing kept"
    );
    store.put(task("a", 1_764_000_000_123)).await.unwrap();
    // A stale read (another heartbeat, another node) does not replace.
    let stale = store.replace_if(task("b", 5), Some("a"), 1_764_000_000_000);
    assert!(!stale.await.unwrap());
    assert!(
        !store
            .replace_if(task("b", 5), Some("x"), 1_764_000_000_123)
            .await
            .unwrap()
    );
    assert_eq!(
        store.get("t1").await.unwrap().unwrap().node.as_deref(),
        Some("a")
    );

    // Ten takers read the same record at once: one wins.
    let takers = (0..10).map(|n| {
        let store = store.clone();
        tokio::spawn(async move {
            let mine = task(&format!("taker{n}"), 7);
            store
                .replace_if(mine, Some("a"), 1_764_000_000_123)
                .await
                .unwrap()
        })
    });
    let mut won = 0;
    for taker in takers {
        won += usize::from(taker.await.unwrap());
    }
    assert_eq!(won, 1);
    let kept = store.get("t1").await.unwrap().unwrap();
    assert!(kept.node.unwrap().starts_with("taker"));
    assert_eq!(kept.heartbeat_ms, 7);
}

/// A running task of `principal` with id `id` and heartbeat `beat`, kept for a minute.
fn running(id: &str, principal: &str, beat: u64) -> TaskRecord {
    let mut task = task("a", beat);
    task.id = id.to_owned();
    task.principal = Some(principal.to_owned());
    task
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

#[tokio::test]
async fn a_principals_running_tasks_are_counted_over_every_node() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let store = Redis::connect(&redis.url()).await.unwrap().task_store();
    let (now, fresh_since) = (now_ms(), now_ms() - 600);
    assert!(
        store
            .put_admitted(running("t1", "alice", now), 2, fresh_since)
            .await
            .unwrap()
    );
    assert!(
        store
            .put_admitted(running("t2", "alice", now), 2, fresh_since)
            .await
            .unwrap()
    );
    // A third is refused (nothing stored); another principal is not affected.
    assert!(
        !store
            .put_admitted(running("t3", "alice", now), 2, fresh_since)
            .await
            .unwrap()
    );
    assert!(store.get("t3").await.unwrap().is_none());
    assert!(
        store
            .put_admitted(running("t4", "bob", now), 2, fresh_since)
            .await
            .unwrap()
    );
    // A task that ended frees its place.
    let mut ended = running("t1", "alice", now);
    ended.status = wymcp::task::TaskStatus::Completed;
    store.put(ended).await.unwrap();
    assert!(
        store
            .put_admitted(running("t3", "alice", now), 2, fresh_since)
            .await
            .unwrap()
    );
    // A task whose heartbeat stopped (its node did) no longer counts.
    let mut stale = running("t2", "alice", now - 5_000);
    stale.heartbeat_ms = now - 5_000;
    store.put(stale).await.unwrap();
    assert!(
        store
            .put_admitted(running("t5", "alice", now), 2, fresh_since)
            .await
            .unwrap()
    );
    assert!(
        !store
            .put_admitted(running("t6", "alice", now), 2, fresh_since)
            .await
            .unwrap()
    );
}

#[tokio::test]
async fn a_task_taken_over_to_run_again_waits_while_its_principal_runs_the_cap() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let store = Redis::connect(&redis.url()).await.unwrap().task_store();
    let (now, fresh_since) = (now_ms(), now_ms() - 600);
    // Node A ran alice's t1 and stopped (its heartbeat is old); alice then started two more on
    // node B, her cap.
    let left = running("t1", "alice", now - 5_000);
    store.put(left.clone()).await.unwrap();
    for id in ["t2", "t3"] {
        let mut task = running(id, "alice", now);
        task.node = Some("b".into());
        assert!(store.put_admitted(task, 2, fresh_since).await.unwrap());
    }
    let mut taken = left.clone();
    taken.node = Some("b".into());
    taken.heartbeat_ms = now;
    let read = (Some("a"), left.heartbeat_ms);
    assert!(
        !store
            .replace_if_admitted(taken.clone(), read, 2, fresh_since)
            .await
            .unwrap(),
        "at alice's cap the left task is not taken over"
    );
    let kept = store.get("t1").await.unwrap().unwrap();
    assert_eq!(kept.node.as_deref(), Some("a"), "and stays as it was");
    assert_eq!(kept.heartbeat_ms, left.heartbeat_ms);
    // A stale read is refused as replace_if refuses it.
    let stale = (Some("a"), left.heartbeat_ms + 1);
    assert!(
        !store
            .replace_if_admitted(taken.clone(), stale, 3, fresh_since)
            .await
            .unwrap()
    );
    // One of alice's tasks ends: the left one is taken over, and counts.
    let mut ended = running("t2", "alice", now);
    ended.status = wymcp::task::TaskStatus::Completed;
    store.put(ended).await.unwrap();
    assert!(
        store
            .replace_if_admitted(taken, read, 2, fresh_since)
            .await
            .unwrap()
    );
    assert_eq!(
        store.get("t1").await.unwrap().unwrap().node.as_deref(),
        Some("b")
    );
    assert!(
        !store
            .put_admitted(running("t4", "alice", now), 2, fresh_since)
            .await
            .unwrap(),
        "the task taken over counts against the cap"
    );
}

/// A 2026-07-28 request of `method` on the client's next node: the whole answer.
async fn ask(
    client: &mut support::Client,
    method: &str,
    params: serde_json::Value,
) -> serde_json::Value {
    client.request(1, method, params).await.last().await
}

#[tokio::test]
async fn a_task_over_the_principals_cap_on_another_node_is_refused() {
    let Some(redis_server) = RedisServer::start() else {
        return;
    };
    let redis = Redis::connect(&redis_server.url()).await.unwrap();
    let serve = |id: &'static str| {
        let server = support::fixture::tasks_server_capped(&redis, 1);
        let builder = wymcp::transport::http::StreamableHttp::builder(server).node_id(id);
        support::Node::serve(builder)
    };
    let (a, b) = (serve("a").await, serve("b").await);
    let mut on_a = support::Client::new(vec![a.url.clone()], true);
    let mut on_b = support::Client::new(vec![b.url.clone()], true);
    let slow = json!({"name": "slow", "arguments": {}});
    let handle = ask(&mut on_a, "tools/call", slow.clone()).await;
    assert_eq!(handle["result"]["resultType"], "task", "{handle}");
    let refused = ask(&mut on_b, "tools/call", slow.clone()).await;
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("at most 1 at once on all nodes"),
        "{refused}"
    );
    assert!(
        message.contains("task_max_running_per_principal"),
        "{refused}"
    );
    // Cancelled on the node running it, the task frees the place on the other.
    let task = json!({"taskId": handle["result"]["taskId"]});
    let cancelled = ask(&mut on_a, "tasks/cancel", task).await;
    assert!(cancelled.get("result").is_some(), "{cancelled}");
    let handle = ask(&mut on_b, "tools/call", slow).await;
    assert_eq!(handle["result"]["resultType"], "task", "{handle}");
}

/// N6: tasks kept in Redis (running or ended, until their TTL ends) are bounded per principal
/// and in all, and a task past a bound is refused naming it; an expired task frees its place.
#[tokio::test]
async fn the_tasks_kept_are_bounded_per_principal_and_in_all() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let store = Redis::connect(&redis.url())
        .await
        .unwrap()
        .task_store()
        .max_tasks_per_principal(2)
        .max_tasks(3);
    let (now, fresh_since) = (now_ms(), now_ms() - 600);
    let mut short = running("t1", "alice", now);
    short.ttl_ms = 300;
    assert!(store.put_admitted(short, 100, fresh_since).await.unwrap());
    assert!(
        store
            .put_admitted(running("t2", "alice", now), 100, fresh_since)
            .await
            .unwrap()
    );
    // Ended tasks still count: they are kept until their TTL ends.
    let mut ended = running("t2", "alice", now);
    ended.status = wymcp::task::TaskStatus::Completed;
    store.put(ended).await.unwrap();
    let refused = store
        .put_admitted(running("t3", "alice", now), 100, fresh_since)
        .await
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "task store: this caller keeps its most tasks in Redis, 2 \
         (RedisTaskStore::max_tasks_per_principal); try again once some have expired"
    );
    assert!(store.get("t3").await.unwrap().is_none(), "nothing stored");
    assert!(
        store
            .put_admitted(running("t4", "bob", now), 100, fresh_since)
            .await
            .unwrap()
    );
    let refused = store
        .put_admitted(running("t5", "bob", now), 100, fresh_since)
        .await
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "task store: the Redis task store keeps its most tasks, 3 (RedisTaskStore::max_tasks); \
         try again once some have expired"
    );
    assert!(store.get("t5").await.unwrap().is_none(), "nothing stored");
    // alice's short-lived task expires: its place is free again.
    tokio::time::sleep(std::time::Duration::from_millis(400)).await;
    let (now, fresh_since) = (now_ms(), now_ms() - 600);
    assert!(
        store
            .put_admitted(running("t3", "alice", now), 100, fresh_since)
            .await
            .unwrap()
    );
}
