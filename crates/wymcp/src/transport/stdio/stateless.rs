//! The stateless era (MCP 2026-07-28) on stdio: a request whose body names the era
//! ([`crate::stateless::names_era`]) is served as over Streamable HTTP, minus the header
//! checks, beside the session (if any).
//!
//! * Every request runs in its own task: a slow tool never holds the read loop, and answers
//!   are written whole, one line each, in the order they finish.
//! * Progress and log messages of a request go to stdout while it runs (log messages only
//!   with `_meta` `logLevel`); nothing here ever writes a JSON-RPC request (the client's
//!   input travels in `input_required` results).
//! * `notifications/cancelled` naming a running request cancels its context's token, drops
//!   its handler, and nothing more is written for it; for a `subscriptions/listen` request it
//!   ends that stream.
//! * End of input: requests already read are answered (for at most
//!   [`StdioConfig::shutdown_grace`](super::StdioConfig::shutdown_grace)), then whatever
//!   still runs is cancelled, and open listen streams end with their closing response.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::{Notify, mpsc};
use tokio_util::sync::CancellationToken;

use super::listen;
use crate::protocol::modern::{CacheHints, ModernMethod};
use crate::stateless::{self, Prepared, Refusal};
use crate::{Delivery, Notifier, Server};

/// What every stateless request task of one connection shares.
pub(super) struct Shared {
    pub(super) server: Server,
    pub(super) out: mpsc::UnboundedSender<String>,
    pub(super) hints: CacheHints,
    pub(super) listens: listen::Slots,
    /// Cancelled when the connection ends: listen streams close gracefully.
    pub(super) closing: CancellationToken,
    running: Running,
}

impl Shared {
    pub(super) fn write(&self, message: &Value) -> bool {
        self.out.send(message.to_string()).is_ok()
    }
}

/// The stateless requests of one stdio connection.
pub(super) struct Stateless {
    shared: Arc<Shared>,
}

impl Stateless {
    pub(super) fn new(
        server: Server,
        out: mpsc::UnboundedSender<String>,
        hints: CacheHints,
        max_listens: usize,
    ) -> Self {
        Stateless {
            shared: Arc::new(Shared {
                server,
                out,
                hints,
                listens: listen::Slots::new(max_listens),
                closing: CancellationToken::new(),
                running: Running::default(),
            }),
        }
    }

    /// Serves request `id` (method `name`) in its own task.
    pub(super) fn serve(&self, id: Value, name: String, message: Value) {
        let is_listen = name == "subscriptions/listen";
        // Registered before the task starts: a cancellation read right after is not missed.
        let (entry, token) = self.shared.running.start(&id, is_listen);
        let shared = self.shared.clone();
        tokio::spawn(async move {
            let answer = tokio::select! {
                biased;
                // A cancelled request gets nothing more, its answer included.
                () = token.cancelled() => None,
                answer = respond(&shared, id.clone(), name, &message, &token) => answer,
            };
            if let Some(answer) = answer
                && !token.is_cancelled()
            {
                shared.write(&answer);
            }
            shared.running.finish(&id, entry);
        });
    }

    /// `notifications/cancelled`: cancels the running request its `requestId` names.
    pub(super) fn cancel(&self, params: Option<&Value>) {
        if let Some(id) = params.and_then(|p| p.get("requestId"))
            && self.shared.running.cancel(id)
        {
            tracing::info!(request_id = %id, "MCP stateless request cancelled by the client");
        }
    }

    /// End of input: waits (at most `grace`, or until `stop`) for the requests already read
    /// to be answered.
    pub(super) async fn drain(&self, grace: Duration, stop: &CancellationToken) {
        let running = &self.shared.running;
        let drained = async {
            loop {
                let changed = running.changed.notified();
                if running.calls() == 0 {
                    return;
                }
                changed.await;
            }
        };
        tokio::select! {
            () = drained => {}
            () = stop.cancelled() => {}
            () = tokio::time::sleep(grace) => {
                tracing::warn!(
                    running = running.calls(),
                    "stdio: input ended; cancelling stateless requests still running"
                );
            }
        }
    }

    /// The connection ends: running requests are cancelled (nothing more is written for
    /// them), listen streams end with their closing response.
    pub(super) fn end(&self) {
        self.shared.closing.cancel();
        self.shared.running.cancel_calls();
    }
}

/// Answers one request: its refusal, its answer, or (`subscriptions/listen`) the stream's
/// messages and, when the server closes it, its closing response.
async fn respond(
    shared: &Arc<Shared>,
    id: Value,
    name: String,
    message: &Value,
    token: &CancellationToken,
) -> Option<Value> {
    let prepared = match prepare(&shared.server, id, name, message) {
        Ok(prepared) => prepared,
        Err(refusal) => return Some(refusal.to_message()),
    };
    if prepared.method == ModernMethod::SubscriptionsListen {
        return listen::run(shared, prepared.id, prepared.params.as_ref()).await;
    }
    let ctx = prepared
        .ctx
        .notifier(notifier(shared, token))
        .cancellation(token.clone())
        .build();
    let round = prepared.round.as_deref();
    let result = stateless::execute(
        &shared.server,
        prepared.method,
        prepared.params,
        &ctx,
        round,
    )
    .await;
    ctx.complete();
    let answer = stateless::answer(
        &shared.server,
        &shared.hints,
        &ctx,
        &prepared.name,
        prepared.id,
        result,
    );
    Some(answer.into_message())
}

/// The era's checks, without a header layer: the request, its method, its envelope, its
/// revision, its input round.
fn prepare(server: &Server, id: Value, name: String, message: &Value) -> Result<Prepared, Refusal> {
    let incoming = stateless::admit(server, id, name, message)?;
    let version = incoming.version()?;
    incoming.prepare(server, version, None)
}

/// The request's progress and log messages, on stdout until it is cancelled.
fn notifier(shared: &Shared, token: &CancellationToken) -> Notifier {
    let out = shared.out.clone();
    let token = token.clone();
    Notifier::with_delivery(super::STREAM, move |message: Value| {
        if token.is_cancelled() {
            return Delivery::Disconnected;
        }
        match out.send(message.to_string()) {
            Ok(()) => Delivery::Sent,
            Err(_) => Delivery::Disconnected,
        }
    })
}

/// The running requests, by the JSON text of their id (a client may reuse an id once its
/// request is answered, so each start is its own entry).
#[derive(Default)]
struct Running {
    next: AtomicU64,
    entries: Mutex<HashMap<String, Vec<Entry>>>,
    /// Signalled whenever a request finishes.
    changed: Notify,
}

struct Entry {
    n: u64,
    token: CancellationToken,
    listen: bool,
}

impl Running {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<Entry>>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn start(&self, id: &Value, listen: bool) -> (u64, CancellationToken) {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let token = CancellationToken::new();
        let entry = Entry {
            n,
            token: token.clone(),
            listen,
        };
        self.lock().entry(id.to_string()).or_default().push(entry);
        (n, token)
    }

    fn finish(&self, id: &Value, n: u64) {
        let key = id.to_string();
        {
            let mut entries = self.lock();
            if let Some(list) = entries.get_mut(&key) {
                list.retain(|e| e.n != n);
                if list.is_empty() {
                    entries.remove(&key);
                }
            }
        }
        self.changed.notify_waiters();
    }

    /// Cancels every running request with this id; answers whether there was one.
    fn cancel(&self, id: &Value) -> bool {
        let entries = self.lock();
        let Some(list) = entries.get(&id.to_string()) else {
            return false;
        };
        for entry in list {
            entry.token.cancel();
        }
        true
    }

    /// How many requests other than listen streams run.
    fn calls(&self) -> usize {
        self.lock().values().flatten().filter(|e| !e.listen).count()
    }

    /// Cancels every request but the listen streams (they close gracefully instead).
    fn cancel_calls(&self) {
        for entry in self.lock().values().flatten().filter(|e| !e.listen) {
            entry.token.cancel();
        }
    }
}
