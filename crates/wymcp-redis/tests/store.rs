//! `RedisSessionStore` against a real `redis-server`: the cap on live sessions, the sliding
//! TTL, the reaper reporting exactly the sessions that ended, save and remove.

#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use std::time::Duration;

use wymcp::backend::{CreateError, SessionStore};
use wymcp_redis::Redis;

use support::record;
use support::redis_server::RedisServer;

#[tokio::test]
async fn the_cap_the_sliding_ttl_and_the_reaper_hold_on_redis() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let store = Redis::connect(&redis.url()).await.unwrap().session_store();
    let ttl = Duration::from_millis(600);
    store.create(record("a"), 2, ttl).await.unwrap();
    store.create(record("b"), 2, ttl).await.unwrap();
    let refused = store.create(record("c"), 2, ttl).await.unwrap_err();
    assert_eq!(refused, CreateError::Full(2));
    // a is used again after 300 ms; b is not, and is gone 600 ms after its creation.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(store.load("a", ttl).await.unwrap().is_some());
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(store.load("b", ttl).await.unwrap().is_none(), "b expired");
    assert_eq!(store.reap(ttl).await.unwrap(), vec!["b".to_owned()]);
    assert_eq!(
        store.reap(ttl).await.unwrap(),
        Vec::<String>::new(),
        "reported once"
    );
    let a = store.load("a", ttl).await.unwrap().unwrap();
    assert_eq!(a.id, "a");
    // b's place is free again.
    store.create(record("c"), 2, ttl).await.unwrap();
    // Saving changes the record and keeps it alive no longer than its TTL.
    let mut changed = (*a).clone();
    changed.initialized = true;
    assert!(store.save(changed).await.unwrap());
    assert!(store.load("a", ttl).await.unwrap().unwrap().initialized);
    assert!(!store.save(record("nobody")).await.unwrap());
    assert!(store.remove("a").await.unwrap());
    assert!(!store.remove("a").await.unwrap());
    assert!(store.load("a", ttl).await.unwrap().is_none());
}

/// Concurrent loads share pipelines: each still gets its own record, a missing one `None`,
/// and the TTL of each is renewed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_loads_each_get_their_own_record() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let store = Redis::connect(&redis.url()).await.unwrap().session_store();
    let ttl = Duration::from_secs(60);
    for n in 0..40 {
        store
            .create(record(&format!("s{n}")), 100, ttl)
            .await
            .unwrap();
    }
    let loads: Vec<_> = (0..60)
        .map(|n| {
            let store = store.clone();
            tokio::spawn(async move {
                let id = format!("s{n}");
                (id.clone(), store.load(&id, ttl).await.unwrap())
            })
        })
        .collect();
    for load in loads {
        let (id, record) = load.await.unwrap();
        let n: usize = id[1..].parse().unwrap();
        match record {
            Some(record) => assert_eq!(record.id, id),
            None => assert!(n >= 40, "{id} exists"),
        }
        assert_eq!(n < 40, store.load(&id, ttl).await.unwrap().is_some());
    }
}
