//! Owner leases: a node running a call answered on a resumable stream (a session's POST
//! stream) renews the call's lease on the bus while it runs; a GET resuming that stream on
//! another node watches the lease, and when it lapses without the call ending (the node
//! stopped) answers the call with a JSON-RPC error instead of leaving the client waiting.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio_util::sync::{CancellationToken, DropGuard};

use super::cluster::Elsewhere;
use super::streams::StreamEvent;
use crate::session::CallLease;

/// How often the running node renews a lease, and a resuming node looks at it.
const HEARTBEAT: Duration = Duration::from_secs(1);
/// How long a lease lasts unrenewed: three heartbeats missed, the node is taken as stopped.
const LEASE: Duration = Duration::from_secs(3);

/// The lease of one running call, renewed until dropped (then released).
pub(crate) struct Lease {
    _renewing: DropGuard,
}

impl Lease {
    /// Takes the lease (the first renewal is done when this returns, before the client can
    /// learn an event id to resume from) and keeps renewing it.
    pub(crate) async fn hold(
        elsewhere: &Elsewhere,
        session: String,
        stream: String,
        request_id: Value,
    ) -> Lease {
        let bus = elsewhere.bus.clone();
        if let Err(err) = bus.hold_call(&session, &stream, &request_id, LEASE).await {
            tracing::warn!(%err, "MCP bus: call lease not taken");
        }
        let stop = CancellationToken::new();
        let stopped = stop.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = stopped.cancelled() => break,
                    () = tokio::time::sleep(HEARTBEAT) => {}
                }
                if let Err(err) = bus.hold_call(&session, &stream, &request_id, LEASE).await {
                    tracing::warn!(%err, "MCP bus: call lease not renewed");
                }
            }
            if let Err(err) = bus.release_call(&session, &stream).await {
                tracing::warn!(%err, "MCP bus: call lease not released");
            }
        });
        Lease {
            _renewing: stop.drop_guard(),
        }
    }
}

/// The error that answers a call whose node stopped.
fn orphaned(request_id: Value) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {
            "code": -32603,
            "message": "Internal error",
            "data": {"reason": "the node running this call stopped; send the request again"}
        }
    })
}

/// Watches the call of `stream` (resumed by a GET here, whose events go to `tx`) until `stop`
/// or the call ends; when its lease lapses, logs and sends its error answer.
pub(crate) fn watch_lease(
    elsewhere: Elsewhere,
    (session, stream): (Arc<str>, String),
    tx: super::StreamSender,
    stop: CancellationToken,
) {
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(HEARTBEAT) => {}
            }
            let request_id = match elsewhere.bus.call_lease(&session, &stream).await {
                Ok(CallLease::Held(_)) => continue,
                Ok(CallLease::Orphaned(id)) => id,
                Ok(CallLease::Unknown) => return,
                Err(err) => {
                    tracing::warn!(%err, "MCP bus: call lease unreadable");
                    continue;
                }
            };
            tracing::warn!(request_id = %request_id, "MCP call orphaned: its node stopped");
            let data = orphaned(request_id).to_string();
            match elsewhere
                .events
                .append(&session, &stream, data.clone())
                .await
            {
                Ok(id) => {
                    let _ = tx.send(StreamEvent { id: Some(id), data });
                }
                Err(err) => tracing::warn!(%err, "SSE event log failed"),
            }
            if let Err(err) = elsewhere.bus.release_call(&session, &stream).await {
                tracing::warn!(%err, "MCP bus: call lease not released");
            }
            return;
        }
    });
}
