//! Resources over stdio, in process over an in-memory pipe: the method table routes them,
//! `notifications/resources/updated` reaches stdout after `resources/subscribe`, and the end of
//! input forgets the session's subscriptions.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio_util::sync::CancellationToken;
use wymcp::Resource;
use wymcp::Server;
use wymcp::backend::{Backends, SubscriptionError, SubscriptionStore};
use wymcp::transport::stdio::{StdioConfig, serve_io};

fn builder() -> wymcp::ServerBuilder {
    Server::builder().resource(Resource::text("test://w", "w", "v1").mime_type("text/plain"))
}

#[tokio::test]
async fn subscribe_notify_and_forget_over_stdio() {
    subscribe_notify_and_forget(builder().build().expect("builds")).await;
}

/// A shared store that counts the subscriptions it was given (and keeps none).
#[derive(Clone, Default)]
struct Counting(Arc<AtomicUsize>);

impl SubscriptionStore for Counting {
    fn subscribe<'a>(
        &'a self,
        _: &'a str,
        _: &'a str,
        _: &'a wymcp::Limits,
    ) -> BoxFuture<'a, Result<(), SubscriptionError>> {
        self.0.fetch_add(1, Ordering::Relaxed);
        Box::pin(async { Ok(()) })
    }
    fn unsubscribe<'a>(
        &'a self,
        _: &'a str,
        _: &'a str,
    ) -> BoxFuture<'a, Result<bool, SubscriptionError>> {
        Box::pin(async { Ok(false) })
    }
    fn subscribers<'a>(
        &'a self,
        _: &'a str,
    ) -> BoxFuture<'a, Result<Vec<String>, SubscriptionError>> {
        Box::pin(async { Ok(Vec::new()) })
    }
    fn subscriptions_of<'a>(
        &'a self,
        _: &'a str,
    ) -> BoxFuture<'a, Result<Vec<String>, SubscriptionError>> {
        Box::pin(async { Ok(Vec::new()) })
    }
    fn forget_session<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<(), SubscriptionError>> {
        Box::pin(async { Ok(()) })
    }
}

/// A stdio session's subscriptions stay in its process even when the server shares those of
/// its HTTP sessions: no other node knows a stdio session.
#[tokio::test]
async fn stdio_subscriptions_stay_in_process_beside_a_shared_store() {
    let shared = Counting::default();
    let server = builder()
        .backends(Backends::new().subscriptions(shared.clone()))
        .build()
        .expect("builds");
    subscribe_notify_and_forget(server).await;
    assert_eq!(shared.0.load(Ordering::Relaxed), 0);
}

async fn subscribe_notify_and_forget(server: Server) {
    let (client, pipe) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(pipe);
    let (client_read, mut write) = tokio::io::split(client);
    let served = tokio::spawn(serve_io(
        server.clone(),
        StdioConfig::default(),
        server_read,
        server_write,
        CancellationToken::new(),
        |_| {},
    ));
    let mut lines = BufReader::new(client_read).lines();
    let mut exchange = async |message: Value| -> Value {
        write
            .write_all(format!("{message}\n").as_bytes())
            .await
            .expect("written");
        if message.get("id").is_none() {
            return Value::Null;
        }
        let line = lines.next_line().await.expect("read").expect("a line");
        serde_json::from_str(&line).expect("JSON")
    };
    let init = exchange(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "stdio-test", "version": "0"}}}),
    )
    .await;
    assert_eq!(
        init["result"]["capabilities"]["resources"]["subscribe"],
        true
    );
    assert!(init["result"]["capabilities"].get("prompts").is_none());
    exchange(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    let read = exchange(
        json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "test://w"}}),
    )
    .await;
    assert_eq!(read["result"]["contents"][0]["text"], "v1");
    let subscribed = exchange(
        json!({"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": {"uri": "test://w"}}),
    )
    .await;
    assert_eq!(subscribed, json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
    assert_eq!(server.notify_resource_updated("test://w").await, 1);
    // The next line on stdout is the notification.
    let ping = exchange(json!({"jsonrpc": "2.0", "id": 3, "method": "ping"})).await;
    let (updated, pong) = if ping.get("method").is_some() {
        let line = lines.next_line().await.expect("read").expect("a line");
        (ping, serde_json::from_str::<Value>(&line).expect("JSON"))
    } else {
        let line = lines.next_line().await.expect("read").expect("a line");
        (serde_json::from_str::<Value>(&line).expect("JSON"), ping)
    };
    assert_eq!(
        updated,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
               "params": {"uri": "test://w"}})
    );
    assert_eq!(pong["id"], 3);
    write.shutdown().await.expect("closed");
    drop(write);
    served.await.expect("joined").expect("a clean end");
    assert_eq!(server.notify_resource_updated("test://w").await, 0);
}
