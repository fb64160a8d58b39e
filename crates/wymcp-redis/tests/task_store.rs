//! `RedisTaskStore::replace_if` against a real `redis-server`: it replaces a task only while
//! the kept record has the node and heartbeat the caller read, so of many nodes taking over
//! the same task left by a stopped node, exactly one does.

#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use serde_json::json;
use wymcp::task::{TaskRecord, TaskStore};
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
    let redis = RedisServer::start();
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
