//! `subscriptions/listen` on stdio: the stream's messages are lines on stdout among every
//! other message, each tagged with the subscription id (the listen request's id), which is
//! how the client tells several open streams apart.
//!
//! * The acknowledgement comes first for its subscription (messages of other subscriptions
//!   and other requests may come before it).
//! * Only the kinds the filter asked for, and the server honours, are written.
//! * `notifications/cancelled` for the listen request's id ends the stream: nothing more is
//!   written for it. When the connection ends (end of input, SIGTERM), each open stream ends
//!   with its closing response (`{"resultType": "complete", …}`).
//! * At most [`StdioConfig::max_listen_streams`](super::StdioConfig::max_listen_streams)
//!   streams are open at once; one more is refused with `-32600`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::lines::Stdout;
use crate::protocol::{RpcError, failure};
use crate::serve::stateless::listen::closing;
use crate::serve::{Core, Listen};
use crate::session::Work;

/// The listen streams of one connection.
pub(super) struct Listens(Arc<Shared>);

struct Shared {
    core: Core,
    out: Stdout,
    slots: Slots,
    /// Cancelled when the connection ends: listen streams close gracefully.
    closing: CancellationToken,
}

impl Shared {
    fn write(&self, message: &Value) -> bool {
        self.out.line(message.to_string())
    }
}

impl Listens {
    pub(super) fn new(core: Core, out: Stdout, max: usize) -> Self {
        Listens(Arc::new(Shared {
            core,
            out,
            slots: Slots::new(max),
            closing: CancellationToken::new(),
        }))
    }

    /// Opens the stream of an admitted listen request, in its own task, registered among the
    /// connection's requests so that `notifications/cancelled` ends it.
    pub(super) fn open(&self, listen: Listen) {
        let shared = self.0.clone();
        let registered = shared
            .core
            .requests()
            .map(|r| r.start(&listen.id, Work::Listen));
        let Some((registration, token)) = registered else {
            return;
        };
        tokio::spawn(async move {
            let answer = tokio::select! {
                biased;
                // A cancelled stream gets nothing more, its closing response included.
                () = token.cancelled() => None,
                answer = run(&shared, listen) => answer,
            };
            if let Some(answer) = answer
                && !token.is_cancelled()
            {
                shared.write(&answer);
            }
            drop(registration);
        });
    }

    /// The connection ends: each open stream ends with its closing response.
    pub(super) fn close(&self) {
        self.0.closing.cancel();
    }
}

/// The open listen streams of one connection, under a limit.
struct Slots {
    open: Arc<AtomicUsize>,
    max: usize,
}

/// One open stream's place under the limit, given back when the stream ends.
struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Slots {
    fn new(max: usize) -> Self {
        Slots {
            open: Arc::new(AtomicUsize::new(0)),
            max,
        }
    }

    fn acquire(&self) -> Option<Slot> {
        self.open
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.max).then_some(n + 1)
            })
            .ok()?;
        Some(Slot(self.open.clone()))
    }
}

/// Runs the listen stream of request `id` until the connection closes it (answering its
/// closing response) or the caller drops it (the client cancelled it). A bad filter, or one
/// stream too many, is answered at once.
async fn run(shared: &Shared, listen: Listen) -> Option<Value> {
    let filter = match listen.filter(&shared.core).await {
        Ok(filter) => filter,
        Err(error) => return Some(failure(listen.id, &error)),
    };
    let id = listen.id;
    let Some(_slot) = shared.slots.acquire() else {
        let max = shared.slots.max;
        tracing::warn!(
            max,
            "subscriptions/listen refused: the stream limit is reached"
        );
        let reason = format!(
            "Too many listen streams: the limit of {max} open subscriptions/listen streams is reached. Cancel one or try again later."
        );
        let error = RpcError::new(
            RpcError::INVALID_REQUEST,
            "Invalid Request",
            Some(json!({ "error": reason })),
        );
        return Some(failure(id, &error));
    };
    // Subscribed before the acknowledgement is written: no change after it is missed.
    let server = shared.core.server();
    let mut changes = server.features().hub.changes();
    shared.write(&filter.acknowledgement(&id));
    for message in filter.current(server, &id).await {
        shared.write(&message);
    }
    let close = || Some(closing(server, &shared.core.settings().cache_hints, &id));
    loop {
        tokio::select! {
            biased;
            () = shared.closing.cancelled() => return close(),
            change = changes.recv() => match change {
                Ok(change) => {
                    if let Some(message) = filter.notification(server, &change, &id).await {
                        shared.write(&message);
                    }
                }
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::warn!(
                        missed,
                        "subscriptions/listen stream lagged: resending every kind it honours"
                    );
                    for change in filter.everything() {
                        if let Some(message) = filter.notification(server, &change, &id).await {
                            shared.write(&message);
                        }
                    }
                }
                // The server is gone: end as a shutdown would.
                Err(broadcast::error::RecvError::Closed) => return close(),
            },
        }
    }
}
