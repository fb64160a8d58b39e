//! [`LocalBus`]: a [`Bus`] between services in one process.

use futures_util::StreamExt as _;
use futures_util::future::BoxFuture;
use futures_util::stream::{self, BoxStream};
use tokio::sync::broadcast;

use super::StoreError;
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::bus::{Bus, BusMessage, CallLease, Recipient};

/// How many messages a slow subscriber may fall behind before it loses the oldest.
const CAPACITY: usize = 1024;

#[derive(Debug, Clone)]
struct Envelope {
    from: String,
    to: Option<String>,
    message: BusMessage,
}

/// A [`Bus`] between several services of one process (each with its own
/// [`node_id`](crate::transport::http::StreamableHttp::node_id) and its own [`Server`](crate::Server),
/// as separate processes would have: a server's notifications are relayed to the other nodes,
/// so two nodes sharing one `Server` would deliver each twice), sharing one
/// [`SessionStore`](super::SessionStore) and one event log: what several nodes do through
/// Redis, in memory. Tests and single-process deployments with several endpoints use it.
///
/// ```
/// use wymcp::backend::{Backends, InMemoryEventLog, InMemorySessionStore, LocalBus};
/// use wymcp::transport::http::StreamableHttp;
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let shared = Backends::new()
///     .sessions(InMemorySessionStore::new())
///     .events(InMemoryEventLog::new())
///     .bus(LocalBus::new());
/// let node = |id: &str| {
///     let server = wymcp::Server::builder().backends(shared.clone()).build().unwrap();
///     StreamableHttp::builder(server).node_id(id).build()
/// };
/// let (a, b) = (node("a"), node("b"));
/// # let _ = (a, b);
/// # }
/// ```
#[derive(Debug)]
pub struct LocalBus {
    tx: broadcast::Sender<Envelope>,
    /// The leases of calls on resumable streams: (session, stream) → request id, held until.
    calls: Mutex<HashMap<(String, String), (Value, Instant)>>,
}

impl Default for LocalBus {
    fn default() -> Self {
        LocalBus {
            tx: broadcast::channel(CAPACITY).0,
            calls: Mutex::default(),
        }
    }
}

impl LocalBus {
    /// A bus no service uses yet.
    pub fn new() -> Self {
        Self::default()
    }
}

impl Bus for LocalBus {
    fn publish<'a>(
        &'a self,
        from: &'a str,
        to: Recipient<'a>,
        message: BusMessage,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let to = match to {
            Recipient::Node(node) => Some(node.to_owned()),
            Recipient::Everyone => None,
        };
        // No subscriber is not an error: no other node is there to hear it.
        let _ = self.tx.send(Envelope {
            from: from.to_owned(),
            to,
            message,
        });
        Box::pin(async { Ok(()) })
    }

    fn subscribe(&self, node: &str) -> BoxStream<'static, BusMessage> {
        let node = node.to_owned();
        stream::unfold((self.tx.subscribe(), node), |(mut rx, node)| async move {
            loop {
                match rx.recv().await {
                    Ok(e) if e.to.as_deref() == Some(node.as_str()) => {
                        return Some((e.message, (rx, node)));
                    }
                    Ok(e) if e.to.is_none() && e.from != node => {
                        return Some((e.message, (rx, node)));
                    }
                    Ok(_) => {}
                    Err(broadcast::error::RecvError::Lagged(missed)) => {
                        tracing::warn!(missed, "local bus: messages lost");
                    }
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        })
        .boxed()
    }

    fn hold_call<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
        request_id: &'a Value,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let until = Instant::now() + ttl;
        let key = (session.to_owned(), stream.to_owned());
        let mut calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
        calls.insert(key, (request_id.clone(), until));
        Box::pin(async { Ok(()) })
    }

    fn release_call<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let key = (session.to_owned(), stream.to_owned());
        let mut calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
        calls.remove(&key);
        Box::pin(async { Ok(()) })
    }

    fn call_lease<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
    ) -> BoxFuture<'a, Result<CallLease, StoreError>> {
        let key = (session.to_owned(), stream.to_owned());
        let calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
        let lease = match calls.get(&key) {
            Some((id, until)) if *until > Instant::now() => CallLease::Held(id.clone()),
            Some((id, _)) => CallLease::Orphaned(id.clone()),
            None => CallLease::Unknown,
        };
        Box::pin(async { Ok(lease) })
    }
}
