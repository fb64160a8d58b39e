//! `resources/subscribe` with the subscriptions in Redis (`Redis::subscription_store`): a
//! subscription taken by one node outlives it, a change announced on any node reaches the
//! subscribed session's GET stream once, wherever that stream is held, and the two caps of
//! `Limits` count every node's subscriptions together.

#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use redis::AsyncCommands as _;
use serde_json::{Value, json};
use wymcp::ResourceTemplate;
use wymcp::resource::{ResourceContents, read_fn};
use wymcp::transport::http::StreamableHttp;
use wymcp::{Limits, Server};
use wymcp_redis::Redis;

use support::redis_server::RedisServer;
use support::{Client, Node, SESSION_VERSION};

/// A node's server: items behind a template, subscriptions in `redis`, within `limits`.
fn server(redis: &Redis, limits: Limits) -> Server {
    let item = read_fn(|uri: String, _vars, _ctx| async move {
        Ok(vec![ResourceContents::text(uri, "an item")])
    });
    Server::builder()
        .name("subscriptions")
        .version("1.0.0")
        .list_changed(true)
        .limits(limits)
        .resource_template(ResourceTemplate::new("test://items/{id}", "item", item))
        .backends(redis.backends())
        .build()
        .unwrap()
}

/// A connection of the test's own, to look at the keys.
async fn raw(redis_server: &RedisServer) -> redis::aio::MultiplexedConnection {
    let client = redis::Client::open(redis_server.url()).unwrap();
    client.get_multiplexed_async_connection().await.unwrap()
}

/// A node serving `server` (its backends on Redis), as node `id` (the nodes of one process need their own).
async fn node(server: &Server, id: &str) -> Node {
    let builder = StreamableHttp::builder(server.clone());
    Node::serve(builder.node_id(id)).await
}

/// A session opened on `node`: a client sending every request there.
async fn open(node: &Node) -> Client {
    let mut client = Client::new(vec![node.url.clone()], false);
    let init = json!({"protocolVersion": SESSION_VERSION, "capabilities": {},
        "clientInfo": {"name": "subscriptions-test", "version": "1"}});
    assert_eq!(client.request(1, "initialize", init).await.status(), 200);
    let initialized = client.notify("notifications/initialized", json!({})).await;
    assert_eq!(initialized, 202);
    client
}

/// `client`'s session, its requests sent to `node`.
fn on(client: &Client, node: &Node) -> Client {
    let mut other = Client::new(vec![node.url.clone()], false);
    other.session = client.session.clone();
    other
}

async fn subscribe(client: &mut Client, id: i64, uri: &str) -> Value {
    let params = json!({"uri": uri});
    client
        .request(id, "resources/subscribe", params)
        .await
        .last()
        .await
}

#[tokio::test]
async fn a_subscription_outlives_its_node_and_each_change_reaches_it_once() {
    let Some(redis_server) = RedisServer::start() else {
        return;
    };
    let redis = Redis::connect(&redis_server.url()).await.unwrap();
    let (first, second) = (
        server(&redis, Limits::default()),
        server(&redis, Limits::default()),
    );
    let taker = node(&first, "taker").await;
    let holder = node(&second, "holder").await;
    let mut client = open(&taker).await;
    let answer = subscribe(&mut client, 2, "test://items/1").await;
    assert_eq!(answer["result"], json!({}), "{answer}");
    let (status, mut stream) = on(&client, &holder).get(None).await;
    assert_eq!(status, 200);
    // The node that took the subscription stops; one started in its place knows of it.
    drop(taker);
    drop(first);
    let restarted = server(&redis, Limits::default());
    let _replacement = node(&restarted, "replacement").await;
    let session = client.session.clone();
    assert_eq!(
        restarted.subscriptions(session.as_deref()).await.unwrap(),
        ["test://items/1"]
    );
    assert_eq!(restarted.notify_resource_updated("test://items/1").await, 1);
    assert_eq!(restarted.notify_resource_updated("test://items/2").await, 0);
    // Announced by the node holding the stream, too.
    assert_eq!(second.notify_resource_updated("test://items/1").await, 1);
    for _ in 0..2 {
        let updated = stream.message().await;
        assert_eq!(updated["method"], "notifications/resources/updated");
        assert_eq!(updated["params"], json!({"uri": "test://items/1"}));
    }
    // A change every session hears, as a marker: no third copy of the update came before it.
    assert!(second.notify_tools_list_changed());
    let marker = stream.message().await;
    assert_eq!(marker["method"], "notifications/tools/list_changed");
}

#[tokio::test]
async fn the_subscription_caps_count_every_nodes_subscriptions() {
    let Some(redis_server) = RedisServer::start() else {
        return;
    };
    let redis = Redis::connect(&redis_server.url()).await.unwrap();
    let limits = Limits::default()
        .max_subscriptions_per_session(2)
        .max_subscriptions(3);
    let (first, second) = (server(&redis, limits.clone()), server(&redis, limits));
    let (a, b) = (node(&first, "a").await, node(&second, "b").await);
    let mut one = open(&a).await;
    assert_eq!(
        subscribe(&mut one, 2, "test://items/1").await["result"],
        json!({})
    );
    let mut one_on_b = on(&one, &b);
    assert_eq!(
        subscribe(&mut one_on_b, 3, "test://items/2").await["result"],
        json!({})
    );
    // Again to a URI it holds: accepted, nothing counted.
    assert_eq!(
        subscribe(&mut one, 4, "test://items/2").await["result"],
        json!({})
    );
    let refused = subscribe(&mut one, 5, "test://items/3").await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let message = refused["error"].to_string();
    assert!(
        message.contains("Limits::max_subscriptions_per_session"),
        "{message}"
    );
    let mut two = open(&b).await;
    assert_eq!(
        subscribe(&mut two, 2, "test://items/1").await["result"],
        json!({})
    );
    let refused = subscribe(&mut on(&two, &a), 3, "test://items/4").await;
    let message = refused["error"].to_string();
    assert!(message.contains("the server holds 3"), "{message}");
    assert!(message.contains("Limits::max_subscriptions)"), "{message}");
    // A DELETE on either node frees the session's places, on every node.
    assert_eq!(on(&one, &b).delete().await, 200);
    let mut conn = raw(&redis_server).await;
    let session_one = one.session.clone().unwrap();
    let held: bool = conn
        .exists(format!("wymcp:subs:{session_one}"))
        .await
        .unwrap();
    assert!(
        !held,
        "the ended session's subscriptions are gone from Redis"
    );
    assert_eq!(
        subscribe(&mut on(&two, &a), 4, "test://items/4").await["result"],
        json!({})
    );
    let unsubscribe = json!({"uri": "test://items/1"});
    let answer = two
        .request(5, "resources/unsubscribe", unsubscribe)
        .await
        .last()
        .await;
    assert_eq!(answer["result"], json!({}), "{answer}");
    assert_eq!(
        first.subscriptions(two.session.as_deref()).await.unwrap(),
        ["test://items/4"]
    );
    let total: i64 = conn.get("wymcp:subscriptions").await.unwrap();
    assert_eq!(total, 1);
}

#[tokio::test]
async fn a_subscriber_whose_session_is_gone_is_skipped_and_dropped() {
    let Some(redis_server) = RedisServer::start() else {
        return;
    };
    let redis = Redis::connect(&redis_server.url()).await.unwrap();
    let server = server(&redis, Limits::default());
    let a = node(&server, "a").await;
    let mut client = open(&a).await;
    assert_eq!(
        subscribe(&mut client, 2, "test://items/1").await["result"],
        json!({})
    );
    // Its record vanishes with no node hearing of it (as when every node stopped before the
    // reaper came by): a change finds no one to send to, and the place is freed.
    let mut conn = raw(&redis_server).await;
    let session = client.session.clone().unwrap();
    let _: i64 = conn.del(format!("wymcp:session:{session}")).await.unwrap();
    assert_eq!(server.notify_resource_updated("test://items/1").await, 0);
    let total: i64 = conn.get("wymcp:subscriptions").await.unwrap();
    assert_eq!(total, 0);
    let left: i64 = conn
        .scard("wymcp:subscribers:test://items/1")
        .await
        .unwrap();
    assert_eq!(left, 0);
}

#[tokio::test]
async fn an_expired_sessions_subscriptions_go_with_it() {
    let Some(redis_server) = RedisServer::start() else {
        return;
    };
    let redis = Redis::connect(&redis_server.url()).await.unwrap();
    let server = server(&redis, Limits::default());
    let builder =
        StreamableHttp::builder(server.clone()).session_ttl(std::time::Duration::from_millis(200));
    let a = Node::serve(builder.node_id("a")).await;
    let mut client = open(&a).await;
    assert_eq!(
        subscribe(&mut client, 2, "test://items/1").await["result"],
        json!({})
    );
    let mut conn = raw(&redis_server).await;
    let key = format!("wymcp:subs:{}", client.session.clone().unwrap());
    let held: bool = conn.exists(&key).await.unwrap();
    assert!(held);
    // The reaper comes by every 100 ms; 50 looks, 100 ms apart, are plenty.
    let mut gone = false;
    for _ in 0..50 {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        if !conn.exists::<_, bool>(&key).await.unwrap() {
            gone = true;
            break;
        }
    }
    assert!(gone, "the reaper drops the expired session's subscriptions");
    let total: i64 = conn.get("wymcp:subscriptions").await.unwrap();
    assert_eq!(total, 0);
}
