//! `subscriptions/listen` (MCP 2026-07-28): a POST answered by a long-lived SSE stream of the
//! change notifications the client opted in to. It replaces the session era's GET stream and
//! `resources/subscribe`.
//!
//! * The first frame is `notifications/subscriptions/acknowledged`, carrying the filter the
//!   server honours (only kinds the stateless era's capabilities declare, only resource URIs
//!   the server resolves) and the subscription id: the listen request's JSON-RPC id, as the
//!   specification and the official SDK have it.
//! * Every later notification carries that id in `params._meta`, and only requested kinds
//!   are sent: `notifications/{tools,prompts,resources}/list_changed` and
//!   `notifications/resources/updated` for the listed URIs, `notifications/tasks` for the
//!   listed tasks (the tasks extension). Progress and log messages never
//!   travel here; they stay on the stream of the request they belong to.
//! * SSE comments keep the connection alive ([`HttpConfig::keepalive`]); a client that went
//!   away is noticed at the latest at the next one, and its slot is freed.
//! * At most [`HttpConfig::max_listen_streams`] streams are open at once; one more is refused
//!   (503).
//! * When the server closes the streams (graceful shutdown,
//!   [`StreamableHttpService::close_streams`](super::StreamableHttpService::close_streams)),
//!   each ends with the successful `subscriptions/listen` response (graceful closure).
//! * A stream that falls more than the hub's buffer behind (`Lagged`) cannot know what it
//!   missed: it sends `list_changed` for every list kind it honours and `resources/updated`
//!   for every URI it honours (the client re-fetches, which is what it would have done), each
//!   listed task's state, and goes on.
//!
//! [`HttpConfig::keepalive`]: super::HttpConfig::keepalive
//! [`HttpConfig::max_listen_streams`]: super::HttpConfig::max_listen_streams

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::Value;
use tokio::sync::broadcast;
use tokio::time::Interval;
use tokio_util::sync::CancellationToken;

use super::accept::Accept;
use super::rejection::{CoreRefused, Dialect, Rejection, StreamNotAccepted, TooManyListenStreams};
use super::sse::{self, KEEPALIVE};
use super::state::State;
use crate::resource::Change;
use crate::serve::Listen as Admitted;
use crate::serve::Slot;
use crate::serve::stateless::listen::{self, Filter};

/// Answers a `subscriptions/listen` request whose envelope and headers passed: the SSE
/// stream, or a JSON-RPC refusal (406 without `text/event-stream` in `Accept`, 400 for a bad
/// filter, 503 when the limit of open streams is reached).
pub(crate) async fn open(state: &Arc<State>, accept: Accept, listen: Admitted) -> Response {
    match stream(state, accept, listen).await {
        Ok(response) => response,
        Err((id, refusal)) => refusal.write(Dialect::JsonRpc(id)).into_response(),
    }
}

async fn stream(
    state: &Arc<State>,
    accept: Accept,
    listen: Admitted,
) -> Result<Response, (Value, Rejection)> {
    let id = listen.id.clone();
    if !accept.admits_sse {
        let refusal = StreamNotAccepted {
            request: "subscriptions/listen",
        };
        return Err((id, refusal.into()));
    }
    let filter = listen.filter(&state.core).await.map_err(|error| {
        let status = StatusCode::BAD_REQUEST;
        (id.clone(), CoreRefused { status, error }.into())
    })?;
    let max = state.config.max_listen_streams;
    let Some(slot) = state.listeners.acquire(max) else {
        tracing::warn!(
            max,
            "subscriptions/listen refused: the stream limit is reached"
        );
        return Err((id, TooManyListenStreams { max }.into()));
    };
    // Subscribed before the acknowledgement is written: no change after it is missed.
    let changes = state.core.server().features().hub.changes();
    let ack = filter.acknowledgement(&id);
    let mut queued = VecDeque::from([frame(&ack)]);
    let server = state.core.server();
    queued.extend(filter.current(server, &id).await.iter().map(frame));
    let keepalive = state.config.keepalive.max(Duration::from_millis(1));
    let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + keepalive, keepalive);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let listen = Listen {
        state: state.clone(),
        id,
        filter,
        changes,
        stop: state.listeners.stop(),
        ticker,
        queued,
        ended: false,
        _slot: slot,
    };
    Ok(sse::response(futures_util::stream::unfold(listen, next)))
}

/// One SSE event of the stream (not resumable: no id).
fn frame(message: &Value) -> Bytes {
    sse::event(None, None, &message.to_string())
}

/// An open listen stream.
struct Listen {
    state: Arc<State>,
    id: Value,
    filter: Filter,
    changes: broadcast::Receiver<Change>,
    stop: CancellationToken,
    ticker: Interval,
    /// Frames written before anything else is awaited (the acknowledgement, a resync).
    queued: VecDeque<Bytes>,
    ended: bool,
    _slot: Slot,
}

impl Listen {
    async fn notification(&self, change: &Change) -> Option<Bytes> {
        let server = self.state.core.server();
        Some(frame(
            &self.filter.notification(server, change, &self.id).await?,
        ))
    }

    /// The successful `subscriptions/listen` response that ends the stream gracefully.
    fn closing(&self) -> Bytes {
        frame(&listen::closing(
            self.state.core.server(),
            &self.state.config.cache_hints,
            &self.id,
        ))
    }
}

async fn next(mut s: Listen) -> Option<(Result<Bytes, Infallible>, Listen)> {
    loop {
        if let Some(bytes) = s.queued.pop_front() {
            return Some((Ok(bytes), s));
        }
        if s.ended {
            return None;
        }
        tokio::select! {
            biased;
            () = s.stop.cancelled() => {
                s.ended = true;
                let closing = s.closing();
                s.queued.push_back(closing);
            }
            change = s.changes.recv() => match change {
                Ok(change) => {
                    if let Some(bytes) = s.notification(&change).await {
                        return Some((Ok(bytes), s));
                    }
                }
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::warn!(
                        missed,
                        "subscriptions/listen stream lagged: resending every kind it honours"
                    );
                    for change in s.filter.everything() {
                        if let Some(bytes) = s.notification(&change).await {
                            s.queued.push_back(bytes);
                        }
                    }
                }
                // The server is gone: end as a shutdown would.
                Err(broadcast::error::RecvError::Closed) => {
                    s.ended = true;
                    let closing = s.closing();
                    s.queued.push_back(closing);
                }
            },
            _ = s.ticker.tick() => return Some((Ok(Bytes::from_static(KEEPALIVE)), s)),
        }
    }
}
