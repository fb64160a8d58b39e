//! What [`HttpServer`](super::HttpServer) adds to each request of a connection before the
//! router sees it: the body's read timeouts (the wait for each piece, and for the whole body),
//! and the client's address (the connection's peer; behind a trusted proxy the routes read the
//! forwarded one). The timers are armed only when the body has to be waited for (a request
//! whose body arrived with its head never starts one).

use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::http::Request;
use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use tokio::time::{Instant, Sleep};

/// The body did not arrive in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum BodyTimedOut {
    /// No piece of it for the connection's body read timeout.
    #[error(
        "no piece of the request body arrived within {0:?} (ConnectionLimits::body_read_timeout)"
    )]
    Idle(Duration),
    /// Not all of it within the body deadline, counted from the first wait for it (a body
    /// trickled a byte at a time).
    #[error("the request body did not arrive whole within {0:?} (ConnectionLimits::body_deadline)")]
    Deadline(Duration),
}

/// A body whose every wait for its next piece is bounded by `timeout`, and whose whole
/// arrival by `deadline`, counted from its first wait.
pub(crate) struct TimedBody<B> {
    inner: B,
    timeout: Duration,
    deadline: Duration,
    /// When the deadline is up: set at the first wait.
    due: Option<Instant>,
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
                let (timeout, deadline) = (this.timeout, this.deadline);
                let sleep = this.sleep.get_or_insert_with(|| {
                    let now = Instant::now();
                    let due = *this.due.get_or_insert(now + deadline);
                    Box::pin(tokio::time::sleep_until(due.min(now + timeout)))
                });
                match sleep.as_mut().poll(cx) {
                    Poll::Ready(()) => {
                        let timed_out = match this.due {
                            Some(due) if Instant::now() >= due => BodyTimedOut::Deadline(deadline),
                            _ => BodyTimedOut::Idle(timeout),
                        };
                        Poll::Ready(Some(Err(Box::new(timed_out))))
                    }
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
    pub(crate) body_deadline: Duration,
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
        // Every request carries its client's address: sessions, streams and listen streams
        // are counted per client, and a call's rate and concurrency budgets without an
        // identity are the client's, in both eras (issue 48, N8: keyed by session, a client
        // that opened sessions had a budget per session).
        parts.extensions.insert(ConnectInfo(self.peer));
        let body = TimedBody {
            inner: body,
            timeout: self.body_timeout,
            deadline: self.body_deadline,
            due: None,
            sleep: None,
        };
        self.inner.call(Request::from_parts(parts, body))
    }
}
