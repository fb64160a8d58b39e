//! [`RedisBus`]: messages between nodes on Redis pub/sub: one channel per node, one for all.

use std::time::Duration;

use futures_util::StreamExt as _;
use futures_util::future::BoxFuture;
use futures_util::stream::{self, BoxStream};
use redis::AsyncCommands as _;
use redis::aio::ConnectionManager;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::mpsc;
use wymcp::backend::{Bus, BusMessage, CallLease, Recipient, StoreError};

use crate::connection::Keys;

/// How many messages for this node may wait to be taken before the subscriber waits.
const INBOX: usize = 4_096;
/// How long the mark of a call outlives its last renewal.
const MARK_TTL_MS: u64 = 3_600_000;
/// How long the subscriber waits before reconnecting to Redis.
const RECONNECT: Duration = Duration::from_millis(250);

#[derive(Serialize, Deserialize)]
struct Envelope {
    from: String,
    message: BusMessage,
}

/// The bus between nodes on Redis pub/sub: `<prefix>:bus:node:<node>` carries messages for
/// one node (the answer to a server request it sent), `<prefix>:bus:all` messages for every
/// node (a cancellation, the end of a session, a notification, a stream event). A publish is
/// one round trip. The subscriber reconnects by itself; what was published while it was
/// disconnected is lost (pub/sub keeps nothing).
///
/// Made by [`Redis::bus`](crate::Redis::bus).
#[derive(Clone)]
pub struct RedisBus {
    client: redis::Client,
    conn: ConnectionManager,
    keys: Keys,
}

impl std::fmt::Debug for RedisBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisBus").finish_non_exhaustive()
    }
}

impl RedisBus {
    pub(crate) fn new(client: redis::Client, conn: ConnectionManager, keys: Keys) -> Self {
        RedisBus { client, conn, keys }
    }
}

impl Bus for RedisBus {
    fn publish<'a>(
        &'a self,
        from: &'a str,
        to: Recipient<'a>,
        message: BusMessage,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let channel = match to {
                Recipient::Node(node) => self.keys.node(node),
                Recipient::Everyone => self.keys.everyone(),
            };
            let envelope = Envelope {
                from: from.to_owned(),
                message,
            };
            let text = serde_json::to_string(&envelope)
                .map_err(|e| StoreError::unavailable(format!("bus message: {e}")))?;
            let mut conn = self.conn.clone();
            conn.publish::<_, _, ()>(channel, text)
                .await
                .map_err(failed)
        })
    }

    fn subscribe(&self, node: &str) -> BoxStream<'static, BusMessage> {
        let (tx, rx) = mpsc::channel(INBOX);
        let channels = [self.keys.node(node), self.keys.everyone()];
        tokio::spawn(listen(self.client.clone(), channels, node.to_owned(), tx));
        stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|m| (m, rx)) }).boxed()
    }

    fn hold_call<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
        request_id: &'a Value,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let id = request_id.to_string();
            let ttl = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
            let mut conn = self.conn.clone();
            redis::pipe()
                .cmd("SET")
                .arg(self.keys.call(session, stream))
                .arg(&id)
                .arg("PX")
                .arg(ttl)
                .ignore()
                .cmd("SET")
                .arg(self.keys.call_mark(session, stream))
                .arg(&id)
                .arg("PX")
                .arg(MARK_TTL_MS)
                .ignore()
                .query_async::<()>(&mut conn)
                .await
                .map_err(failed)
        })
    }

    fn release_call<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let keys = [
                self.keys.call(session, stream),
                self.keys.call_mark(session, stream),
            ];
            conn.del::<_, ()>(&keys).await.map_err(failed)
        })
    }

    fn call_lease<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
    ) -> BoxFuture<'a, Result<CallLease, StoreError>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let keys = [
                self.keys.call(session, stream),
                self.keys.call_mark(session, stream),
            ];
            let (held, mark): (Option<String>, Option<String>) = redis::cmd("MGET")
                .arg(&keys)
                .query_async(&mut conn)
                .await
                .map_err(failed)?;
            let id = |text: String| serde_json::from_str(&text).unwrap_or(Value::String(text));
            Ok(match (held, mark) {
                (Some(held), _) => CallLease::Held(id(held)),
                (None, Some(mark)) => CallLease::Orphaned(id(mark)),
                (None, None) => CallLease::Unknown,
            })
        })
    }
}

fn failed(err: redis::RedisError) -> StoreError {
    crate::failure::store_error(&err)
}

/// Subscribes to `channels` and forwards what they carry (but this node's own broadcasts) to
/// `tx`, reconnecting whenever the connection drops, until `tx`'s receiver is gone.
async fn listen(
    client: redis::Client,
    channels: [String; 2],
    node: String,
    tx: mpsc::Sender<BusMessage>,
) {
    while !tx.is_closed() {
        match client.get_async_pubsub().await {
            Ok(mut pubsub) => {
                if let Err(err) = pubsub.subscribe(&channels).await {
                    tracing::warn!(%err, "MCP bus: subscribing failed");
                } else {
                    tracing::debug!(node, "MCP bus: subscribed");
                    let mut messages = pubsub.into_on_message();
                    while let Some(msg) = messages.next().await {
                        let Ok(envelope) =
                            serde_json::from_slice::<Envelope>(msg.get_payload_bytes())
                        else {
                            tracing::warn!("MCP bus: a message that is not wymcp's was ignored");
                            continue;
                        };
                        if envelope.from == node {
                            continue;
                        }
                        if tx.send(envelope.message).await.is_err() {
                            return;
                        }
                    }
                    tracing::warn!(
                        node,
                        "MCP bus: the connection to Redis dropped; reconnecting"
                    );
                }
            }
            Err(err) => tracing::warn!(%err, "MCP bus: Redis unreachable; retrying"),
        }
        tokio::time::sleep(RECONNECT).await;
    }
}
