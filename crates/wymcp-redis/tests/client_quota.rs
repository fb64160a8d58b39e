//! `Limits::max_sessions_per_client` across nodes: two nodes sharing one `redis-server` count a
//! client's sessions together, a `DELETE` on either node frees a place, and an expired
//! session's place is free again without waiting for the reaper.

#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use std::time::Duration;

use serde_json::json;
use wymcp::Limits;
use wymcp::backend::{CreateError, SessionStore};
use wymcp::transport::http::StreamableHttp;
use wymcp_redis::Redis;

use support::fixture::{on_redis, server_with};
use support::record;
use support::redis_server::RedisServer;
use support::{Node, SESSION_VERSION};

/// A node behind a proxy on 127.0.0.1 (so `X-Forwarded-For` names the client), sharing `redis`.
async fn node(redis: &Redis) -> Node {
    let server = server_with(|builder| {
        builder
            .limits(Limits::default().max_sessions_per_client(2))
            .backends(on_redis(redis))
    });
    let builder =
        StreamableHttp::builder(server).trusted_proxies([std::net::Ipv4Addr::LOCALHOST.into()]);
    Node::serve(builder).await
}

/// `initialize` on `node` from `client`: the status, the session id, the body.
async fn initialize(
    http: &reqwest::Client,
    node: &Node,
    client: &str,
) -> (u16, Option<String>, String) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": SESSION_VERSION, "capabilities": {},
        "clientInfo": {"name": "quota-test", "version": "1"}}});
    let answer = http
        .post(&node.url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("x-forwarded-for", client)
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = answer.status().as_u16();
    let session = answer
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_owned());
    (status, session, answer.text().await.unwrap())
}

#[tokio::test]
async fn a_clients_sessions_are_counted_on_every_node_together() {
    let Some(redis_server) = RedisServer::start() else {
        return;
    };
    let redis = Redis::connect(&redis_server.url()).await.unwrap();
    let (a, b) = (node(&redis).await, node(&redis).await);
    let http = reqwest::Client::new();
    let greedy = "203.0.113.7";
    let (first, one, _) = initialize(&http, &a, greedy).await;
    let (second, _, _) = initialize(&http, &b, greedy).await;
    assert_eq!((first, second), (200, 200));
    // Its third session, on either node, is refused: the two are counted together.
    for node in [&a, &b] {
        let (status, session, text) = initialize(&http, node, greedy).await;
        assert_eq!(status, 503, "{text}");
        assert_eq!(session, None);
        assert!(text.contains("Limits::max_sessions_per_client"), "{text}");
        assert!(
            text.contains("the limit of 2 live sessions per client"),
            "{text}"
        );
    }
    // Another client is not affected.
    assert_eq!(initialize(&http, &a, "198.51.100.9").await.0, 200);
    // A DELETE on the other node frees a place.
    let deleted = http
        .delete(&b.url)
        .header("mcp-session-id", one.unwrap())
        .header("mcp-protocol-version", SESSION_VERSION)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status().as_u16(), 200);
    assert_eq!(initialize(&http, &a, greedy).await.0, 200);
    assert_eq!(initialize(&http, &b, greedy).await.0, 503);
}

#[tokio::test]
async fn the_store_counts_clients_and_an_expired_session_frees_its_place() {
    let Some(redis_server) = RedisServer::start() else {
        return;
    };
    let store = Redis::connect(&redis_server.url())
        .await
        .unwrap()
        .session_store();
    assert!(store.counts_clients());
    let ttl = Duration::from_millis(400);
    let create = |id: &'static str, client: &'static str| {
        store.create_for_client(record(id), 100, ttl, client, 2)
    };
    create("a", "address:x").await.unwrap();
    create("b", "address:x").await.unwrap();
    assert_eq!(
        create("c", "address:x").await,
        Err(CreateError::ClientFull(2))
    );
    create("d", "address:y").await.unwrap();
    // A removed session's place is free at once.
    assert!(store.remove("a").await.unwrap());
    create("c", "address:x").await.unwrap();
    assert_eq!(
        create("e", "address:x").await,
        Err(CreateError::ClientFull(2))
    );
    // Expired (not loaded for the TTL): free without a reaper pass, which then reports them.
    tokio::time::sleep(Duration::from_millis(600)).await;
    create("e", "address:x").await.unwrap();
    let mut gone = store.reap(ttl).await.unwrap();
    gone.sort();
    assert_eq!(gone, ["b", "c", "d"]);
    // A session counted against no one counts only against the cap on all sessions.
    store.create(record("f"), 100, ttl).await.unwrap();
    create("g", "address:x").await.unwrap();
    assert_eq!(
        create("h", "address:x").await,
        Err(CreateError::ClientFull(2))
    );
}
