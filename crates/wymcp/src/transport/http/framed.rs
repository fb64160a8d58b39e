//! What [`HttpServer`](super::HttpServer) adds to each request of a connection before the
//! router sees it: the body's read timeout, and the client's address where a session may
//! start. Both cost nothing on the hot path: the timer is armed only when the body has to be
//! waited for (a request whose body arrived with its head never starts one), and the address
//! is attached only to requests that could open a session.

use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::http::{HeaderMap, HeaderName, Request};
use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use tokio::time::Sleep;

use crate::protocol::{ProtocolVersion, headers};

/// The body did not arrive in time: no piece of it for the connection's body read timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("no piece of the request body arrived within {0:?} (ConnectionLimits::body_read_timeout)")]
pub(crate) struct BodyTimedOut(pub(crate) Duration);

/// A body whose every wait for its next piece is bounded by `timeout`.
pub(crate) struct TimedBody<B> {
    inner: B,
    timeout: Duration,
    /// Armed when a read has to wait, disarmed when a piece arrives.
    sleep: Option<Pin<Box<Sleep>>>,
}

impl<B> Body for TimedBody<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<axum::BoxError>,
{
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::BoxError>>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(frame) => {
                this.sleep = None;
                Poll::Ready(frame.map(|f| f.map_err(Into::into)))
            }
            Poll::Pending => {
                let timeout = this.timeout;
                let sleep = this
                    .sleep
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
                match sleep.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Some(Err(Box::new(BodyTimedOut(timeout))))),
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

use std::future::Future as _;

/// The per-connection service in front of the router.
#[derive(Clone)]
pub(crate) struct Framed<S> {
    pub(crate) inner: S,
    pub(crate) peer: SocketAddr,
    pub(crate) body_timeout: Duration,
}

/// Whether a request could open a session (only those need the client's address, for the
/// sessions per client): one without a session id, outside the stateless era.
fn may_open_session(headers: &HeaderMap) -> bool {
    // Prepared names: a name given as text is parsed again at every lookup.
    static SESSION: HeaderName = HeaderName::from_static(headers::SESSION_ID);
    static VERSION: HeaderName = HeaderName::from_static(headers::PROTOCOL_VERSION);
    // The header's half of the era's rule (`Era::of`), without parsing: this runs on every
    // request.
    let stateless = headers
        .get(&VERSION)
        .is_some_and(|v| ProtocolVersion::names_stateless(v.as_bytes()));
    !headers.contains_key(&SESSION) && !stateless
}

impl<S, B> tower::Service<Request<B>> for Framed<S>
where
    S: tower::Service<Request<TimedBody<B>>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let (mut parts, body) = request.into_parts();
        if may_open_session(&parts.headers) {
            parts.extensions.insert(ConnectInfo(self.peer));
        }
        let body = TimedBody {
            inner: body,
            timeout: self.body_timeout,
            sleep: None,
        };
        self.inner.call(Request::from_parts(parts, body))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_requests_that_may_open_a_session_carry_the_peer() {
        let mut headers = HeaderMap::new();
        assert!(may_open_session(&headers));
        headers.insert(
            "mcp-protocol-version",
            "2025-11-25".parse().expect("a value"),
        );
        assert!(may_open_session(&headers));
        headers.insert(
            "mcp-protocol-version",
            " 2026-07-28".parse().expect("a value"),
        );
        assert!(!may_open_session(&headers));
        let mut headers = HeaderMap::new();
        headers.insert("mcp-session-id", "s".parse().expect("a value"));
        assert!(!may_open_session(&headers));
    }
}
