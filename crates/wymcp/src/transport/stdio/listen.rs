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

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::lines::Stdout;
use crate::protocol::{RpcError, failure};
use crate::serve::stateless::listen::{Frame, Subscription, Unopened};
use crate::serve::{Core, Listen, Listeners, Work};

/// The listen streams of one connection.
pub(super) struct Listens(Arc<Shared>);

struct Shared {
    core: Core,
    out: Stdout,
    /// How many are open.
    listeners: Listeners,
    max: usize,
    /// Cancelled when the connection ends, for good: a stream still opening then ends at
    /// once with its closing response (the HTTP service's `Listeners::stop` is renewed after
    /// a close, for the streams opened later; the stdout of a connection that ended must not
    /// be held open by one).
    closing: CancellationToken,
}

impl Listens {
    pub(super) fn new(core: Core, out: Stdout, max: usize) -> Self {
        Listens(Arc::new(Shared {
            core,
            out,
            listeners: Listeners::default(),
            max,
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
            tokio::select! {
                biased;
                // A cancelled stream gets nothing more, its closing response included.
                () = token.cancelled() => {}
                () = run(&shared, listen) => {}
            }
            drop(registration);
        });
    }

    /// The connection ends: each open stream ends with its closing response.
    pub(super) fn close(&self) {
        self.0.closing.cancel();
    }
}

/// Runs the listen stream of request `id`, each message a line, until the connection closes
/// it (its closing response written last) or stdout is gone. A bad filter, or one stream too
/// many, is answered at once.
async fn run(shared: &Shared, listen: Listen) {
    let id = listen.id.clone();
    let opened = Subscription::open(
        &shared.core,
        listen,
        &shared.listeners,
        shared.max,
        usize::MAX,
        shared.closing.clone(),
        None,
    );
    let mut subscription = match opened.await {
        Ok(subscription) => subscription,
        Err(Unopened::Filter(error)) => {
            shared.out.line(failure(id, &error).to_string());
            return;
        }
        // stdio has one client, whom no per-client cap counts.
        Err(Unopened::TooMany { max } | Unopened::TooManyForClient { max }) => {
            let reason = format!(
                "Too many listen streams: the limit of {max} open subscriptions/listen streams is reached. Cancel one or try again later."
            );
            let error = RpcError::new(
                RpcError::INVALID_REQUEST,
                "Invalid Request",
                Some(json!({ "error": reason })),
            );
            shared.out.line(failure(id, &error).to_string());
            return;
        }
    };
    while let Some(frame) = subscription.next().await {
        if let Frame::Message(message) = frame
            && !shared.out.line(message.to_string())
        {
            return;
        }
    }
}
