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

/// N3: a node's decoded-record cache is bounded in bytes (it was bounded in records only, and
/// 20,000 records of 64 KiB capabilities held 22.6 GB). Three sessions with heavy
/// capabilities are served over HTTP by a node whose cache holds about two of them: what it
/// keeps decoded never passes the bound, and every request is still served.
#[tokio::test]
async fn a_node_keeps_at_most_its_byte_bound_of_records_decoded() {
    use serde_json::{Map, Value, json};
    use wymcp::transport::http::StreamableHttp;

    let Some(redis) = RedisServer::start() else {
        return;
    };
    let capabilities: Map<String, Value> = (0..500).map(|i| (format!("k{i}"), json!(0))).collect();
    let info = json!({"name": "t", "version": "0"});
    let weight = wymcp::limits::json_weight(&Value::Object(capabilities.clone()))
        + wymcp::limits::json_weight(&info);
    // A record's text is under a third of its weight here: room for two records, not three.
    let bound = 2 * weight + weight;
    let shared = Redis::connect(&redis.url())
        .await
        .unwrap()
        .max_decoded_bytes(bound);
    let store = shared.session_store();
    let server = support::fixture::server_with(|builder| {
        builder.backends(support::fixture::on_redis(&shared).sessions(store.clone()))
    });
    let builder = StreamableHttp::builder(server);
    let node = support::Node::serve(builder).await;
    let init = json!({"protocolVersion": support::SESSION_VERSION,
        "capabilities": capabilities, "clientInfo": info});
    let mut clients = Vec::new();
    for _ in 0..3 {
        let mut client = support::Client::new(vec![node.url.clone()], false);
        assert_eq!(
            client.request(0, "initialize", init.clone()).await.status(),
            200
        );
        clients.push(client);
    }
    let mut most = 0;
    for round in 1..=3 {
        for client in &mut clients {
            let answer = client.request(round, "ping", json!({})).await;
            assert_eq!(answer.status(), 200);
            let held = store.decoded_bytes();
            assert!(held <= bound, "{held} bytes decoded, bound {bound}");
            most = most.max(held);
        }
    }
    assert!(
        most > weight,
        "the cache keeps records ({most} bytes at most)"
    );
    // A bound smaller than one record: nothing is kept, every load decodes.
    let small = Redis::connect(&redis.url())
        .await
        .unwrap()
        .max_decoded_bytes(weight / 2)
        .session_store();
    let id = clients[0].session.clone().unwrap();
    let ttl = Duration::from_secs(60);
    assert!(small.load(&id, ttl).await.unwrap().is_some());
    assert_eq!(small.decoded_bytes(), 0);
}
