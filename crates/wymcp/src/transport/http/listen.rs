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
//!   (503). At most [`HttpConfig::max_listen_streams_per_client`] of them are one client's
//!   (its principal, else its address, forwarded by a trusted proxy); one more of that client
//!   is refused (429, `Retry-After`), and the others still get theirs.
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
//! [`HttpConfig::max_listen_streams_per_client`]: super::HttpConfig::max_listen_streams_per_client

use std::sync::Arc;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::Value;

use super::accept::Accept;
use super::rejection::{
    CoreRefused, Dialect, Rejection, StreamNotAccepted, TooManyListenStreams,
    TooManyListenStreamsForClient,
};
use super::sse::{self, KEEPALIVE};
use super::state::State;
use crate::serve::Listen as Admitted;
use crate::serve::stateless::listen::{Frame, Subscription, Unopened};

/// Answers a `subscriptions/listen` request whose envelope and headers passed: the SSE
/// stream, or a JSON-RPC refusal (406 without `text/event-stream` in `Accept`, 400 for a bad
/// filter, 503 when the limit of open streams is reached, 429 when the caller's is).
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
    let config = &state.config;
    let subscription = Subscription::open(
        &state.core,
        listen,
        &state.listeners,
        config.max_listen_streams,
        config.max_listen_streams_per_client,
        state.listeners.stop(),
        Some(config.keepalive),
    )
    .await
    .map_err(|unopened| match unopened {
        Unopened::Filter(error) => {
            let status = StatusCode::BAD_REQUEST;
            (id, CoreRefused { status, error }.into())
        }
        Unopened::TooMany { max } => (id, TooManyListenStreams { max }.into()),
        Unopened::TooManyForClient { max } => (id, TooManyListenStreamsForClient { max }.into()),
    })?;
    Ok(sse::response(futures_util::stream::unfold(
        subscription,
        next,
    )))
}

/// The stream's next SSE frame: a message as an event (not resumable: no id), a keepalive as
/// a comment.
async fn next(
    mut subscription: Subscription,
) -> Option<(Result<Bytes, std::convert::Infallible>, Subscription)> {
    let bytes = match subscription.next().await? {
        Frame::Message(message) => sse::event(None, None, &message.to_string()),
        Frame::KeepAlive => Bytes::from_static(KEEPALIVE),
    };
    Some((Ok(bytes), subscription))
}
