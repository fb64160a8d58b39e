//! `RateLimitLayer::shared(redis.rate_limits(..))`: two nodes sharing one `redis-server` take
//! from one budget, where layers of their own let each node count alone; while Redis is down
//! a call is refused `unavailable`, never let through unmetered.

#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use std::num::NonZeroU32;

use serde_json::{Value, json};
use wymcp::middleware::RateLimitLayer;
use wymcp::transport::http::StreamableHttp;
use wymcp_redis::Redis;

use support::fixture::server_with;
use support::redis_server::RedisServer;
use support::{Client, Node};

/// Three calls a minute per caller.
fn three_a_minute() -> RateLimitLayer {
    RateLimitLayer::per_minute(NonZeroU32::new(3).unwrap())
}

/// A node whose calls pass `layer`.
async fn node(layer: RateLimitLayer, id: &str) -> Node {
    let server = server_with(|builder| builder.call_layer(layer));
    Node::serve(StreamableHttp::builder(server).node_id(id)).await
}

/// A 2026-07-28 `tools/call` of `steps` on the next node: its result's JSON payload.
async fn call(client: &mut Client, id: i64) -> Value {
    let params = json!({"name": "steps", "arguments": {}});
    let message = client.request(id, "tools/call", params).await.last().await;
    let text = message["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a tool result: {message}"));
    serde_json::from_str(text).unwrap()
}

#[tokio::test]
async fn nodes_sharing_redis_take_from_one_budget() {
    let Some(mut redis_server) = RedisServer::start() else {
        return;
    };
    let redis = Redis::connect(&redis_server.url()).await.unwrap();
    let shared = || three_a_minute().shared(redis.rate_limits("calls"));
    let (a, b) = (node(shared(), "a").await, node(shared(), "b").await);
    let mut client = Client::new(vec![a.url.clone(), b.url.clone()], true);
    for id in 1..=3 {
        assert_eq!(call(&mut client, id).await, json!({"steps": 2}));
    }
    // The fourth, on either node, is over the budget both counted.
    for id in 4..=5 {
        let refused = call(&mut client, id).await;
        assert_eq!(refused["errorType"], "rate_limited", "{refused}");
        assert_eq!(refused["limit"], "3/min");
        let wait = refused["retryAfterMs"].as_u64().unwrap();
        assert!(wait > 0 && wait <= 20_000, "{refused}");
    }
    // Redis down: refused, not let through.
    redis_server.stop();
    let refused = call(&mut client, 6).await;
    assert_eq!(refused["errorType"], "unavailable", "{refused}");
    assert_eq!(refused["retryAfterMs"], 1000);
}

#[tokio::test]
async fn nodes_with_layers_of_their_own_count_alone() {
    let (a, b) = (
        node(three_a_minute(), "a").await,
        node(three_a_minute(), "b").await,
    );
    let mut client = Client::new(vec![a.url.clone(), b.url.clone()], true);
    // Six calls, three on each node: each node's own budget holds them.
    for id in 1..=6 {
        assert_eq!(call(&mut client, id).await, json!({"steps": 2}));
    }
    assert_eq!(call(&mut client, 7).await["errorType"], "rate_limited");
}
