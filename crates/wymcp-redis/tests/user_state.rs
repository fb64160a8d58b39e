//! `RedisUserState` against a real `redis-server`: what one node writes another reads; keys
//! per principal capped, principals apart; state expiring after its idle TTL, renewed by use.

#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use std::time::Duration;

use wymcp::backend::{UserStateLimits, UserStateStore};
use wymcp::user_state::UserStateError;
use wymcp_redis::Redis;

use support::redis_server::RedisServer;

#[tokio::test]
async fn user_state_is_shared_by_nodes_bounded_and_forgotten_when_idle() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let mut limits = UserStateLimits::default();
    limits.max_keys = 2;
    limits.idle_ttl = Duration::from_millis(400);
    // Two nodes: two connections of their own.
    let a = Redis::connect(&redis.url())
        .await
        .unwrap()
        .user_state()
        .limits(limits);
    let b = Redis::connect(&redis.url())
        .await
        .unwrap()
        .user_state()
        .limits(limits);
    a.set("alice", "draft", r#"{"t":1}"#.into()).await.unwrap();
    assert_eq!(
        b.get("alice", "draft").await.unwrap().as_deref(),
        Some(r#"{"t":1}"#)
    );
    assert_eq!(b.get("bob", "draft").await.unwrap(), None);

    a.set("alice", "second", "2".into()).await.unwrap();
    let refused = b.set("alice", "third", "3".into()).await.unwrap_err();
    assert_eq!(refused, UserStateError::TooManyKeys(2));
    b.set("alice", "second", "22".into()).await.unwrap(); // a key held: replaced
    b.set("bob", "third", "3".into()).await.unwrap(); // bob's own keys
    assert!(a.remove("alice", "second").await.unwrap());
    assert!(!a.remove("alice", "second").await.unwrap());

    // Used within the TTL, the state stays; idle past it, it is gone.
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(250)).await;
        assert!(b.get("alice", "draft").await.unwrap().is_some());
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(a.get("alice", "draft").await.unwrap(), None);
    assert_eq!(b.max_value_bytes(), 64 * 1024);
}
