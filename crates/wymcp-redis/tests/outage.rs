//! Redis unavailable: requests are answered 503 with a reason that says so, within the
//! connection's response timeout, never a hang or a panic; service resumes by itself when
//! Redis is back. A restarted node loses no session. Redis round trips per `tools/call`: one.

#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wymcp::transport::http::StreamableHttp;
use wymcp_redis::Redis;

use support::fixture::node_server;
use support::redis_server::RedisServer;
use support::{Client, Node, SESSION_VERSION};

async fn node(url: &str) -> Node {
    let redis = Redis::connect(url).await.unwrap();
    Node::serve(StreamableHttp::builder(node_server(&redis))).await
}

async fn open(client: &mut Client) {
    let init = json!({"protocolVersion": SESSION_VERSION, "capabilities": {},
        "clientInfo": {"name": "outage-test", "version": "1"}});
    assert_eq!(client.request(1, "initialize", init).await.status(), 200);
    assert_eq!(
        client.notify("notifications/initialized", json!({})).await,
        202
    );
}

/// A `tools/call` of `steps`: its status and its last message.
async fn call(client: &mut Client, id: i64) -> (u16, Value) {
    let params = json!({"name": "steps", "arguments": {}});
    let answer = client.request(id, "tools/call", params).await;
    (answer.status(), answer.last().await)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_frozen_mid_load_is_503_then_service_resumes_with_the_session() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let node = node(&redis.url()).await;
    let mut client = Client::new(vec![node.url.clone()], false);
    open(&mut client).await;
    let session = client.session.clone();
    assert_eq!(call(&mut client, 2).await.0, 200);
    // Load from four clients of the session while Redis freezes and thaws: 40 calls each.
    let mut load = Vec::new();
    for worker in 0..4 {
        let (url, session) = (node.url.clone(), session.clone());
        load.push(tokio::spawn(async move {
            let mut client = Client::new(vec![url], false);
            client.session = session;
            let mut statuses = Vec::new();
            for n in 0..40 {
                let started = Instant::now();
                let (status, message) = call(&mut client, 100 * worker + n).await;
                assert!(started.elapsed() < Duration::from_secs(6), "a request hung");
                if status == 503 {
                    assert_eq!(
                        message["error"]["data"]["reason"],
                        "session store unavailable"
                    );
                }
                statuses.push(status);
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
            statuses
        }));
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    redis.freeze();
    tokio::time::sleep(Duration::from_secs(3)).await;
    redis.thaw();
    let mut all = Vec::new();
    for worker in load {
        all.extend(worker.await.unwrap());
    }
    assert!(all.iter().all(|s| *s == 200 || *s == 503), "{all:?}");
    assert!(
        all.contains(&503),
        "some calls met the frozen Redis: {all:?}"
    );
    // Back by itself: the same session serves again.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (status, message) = call(&mut client, 9).await;
        if status == 200 {
            assert!(message["result"].is_object(), "{message}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "service did not resume: {status} {message}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_down_refuses_a_new_session_with_503_and_a_restarted_redis_serves_new_ones() {
    let Some(mut redis) = RedisServer::start() else {
        return;
    };
    let node = node(&redis.url()).await;
    redis.stop();
    let mut client = Client::new(vec![node.url.clone()], false);
    let init = json!({"protocolVersion": SESSION_VERSION, "capabilities": {},
        "clientInfo": {"name": "outage-test", "version": "1"}});
    let refused = client.request(1, "initialize", init).await;
    assert_eq!(refused.status(), 503);
    let body = refused.last().await;
    assert_eq!(
        body["error"]["data"]["reason"], "session store unavailable",
        "{body}"
    );
    redis.resume();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut client = Client::new(vec![node.url.clone()], false);
    loop {
        let init = json!({"protocolVersion": SESSION_VERSION, "capabilities": {},
            "clientInfo": {"name": "outage-test", "version": "1"}});
        if client.request(1, "initialize", init).await.status() == 200 {
            break;
        }
        assert!(Instant::now() < deadline, "service did not resume");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_node_loses_no_session() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let first = node(&redis.url()).await;
    let mut client = Client::new(vec![first.url.clone()], false);
    open(&mut client).await;
    drop(first);
    let second = node(&redis.url()).await;
    let mut again = Client::new(vec![second.url.clone()], false);
    again.session = client.session.clone();
    let (status, message) = call(&mut again, 2).await;
    assert_eq!(status, 200, "{message}");
}

/// The round trips Redis was sent: the commands a client sends at the top level (a script's
/// own commands are counted by `INFO commandstats` too, and left out here).
fn round_trips(url: &str) -> u64 {
    let client = redis::Client::open(url).unwrap();
    let mut conn = client.get_connection().unwrap();
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query(&mut conn)
        .unwrap();
    let top_level = [
        "evalsha", "eval", "script", "set", "getex", "mget", "del", "publish", "multi",
    ];
    info.lines()
        .filter_map(|l| {
            let (name, stats) = l.strip_prefix("cmdstat_")?.split_once(':')?;
            let calls = stats.split("calls=").nth(1)?.split(',').next()?;
            top_level
                .contains(&name)
                .then(|| calls.parse::<u64>().ok())?
        })
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tools_call_costs_one_redis_round_trip() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let node = node(&redis.url()).await;
    let mut client = Client::new(vec![node.url.clone()], false);
    open(&mut client).await;
    // The first call makes this node's live handle and loads the scripts.
    assert_eq!(call(&mut client, 2).await.0, 200);
    let before = round_trips(&redis.url());
    for id in 0..20 {
        let (status, message) = call(&mut client, 10 + id).await;
        assert_eq!(status, 200, "{message}");
    }
    let per_call = (round_trips(&redis.url()) - before) as f64 / 20.0;
    assert_eq!(per_call, 1.0, "Redis round trips per tools/call");
}
