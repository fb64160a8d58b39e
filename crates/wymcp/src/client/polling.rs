//! [`when_stream_closes`]: told when the server ends a request's SSE stream before its answer
//! (SEP-1699 polling), as the client resumes it; a gateway passes the close on to its own
//! caller's stream.

use std::future::Future;
use std::sync::Arc;

/// What [`when_stream_closes`] calls.
#[derive(Clone)]
pub(crate) struct OnClosed(Arc<dyn Fn() + Send + Sync>);

tokio::task_local! {
    /// The hook of the requests made within [`when_stream_closes`].
    static ON_CLOSED: OnClosed;
}

/// Runs `requests` (a future making this client's requests) calling `on_closed` each time
/// the server ends, or the network drops, a request's SSE response stream before its answer,
/// just before the client resumes the stream with `Last-Event-ID` (after the server's
/// `retry`). A server polling (SEP-1699) closes a long call's stream on purpose: a gateway
/// relaying the call closes its own caller's stream then
/// ([`Context::close_sse_stream`](crate::Context::close_sse_stream)), so its caller polls as
/// the upstream's would. Only Streamable HTTP answers with streams; over stdio the hook is
/// never called.
///
/// ```no_run
/// # async fn run(client: wymcp::client::Client) -> Result<(), wymcp::client::ClientError> {
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use std::sync::Arc;
///
/// let closes = Arc::new(AtomicUsize::new(0));
/// let counted = Arc::clone(&closes);
/// let result = wymcp::client::when_stream_closes(
///     move || {
///         counted.fetch_add(1, Ordering::Relaxed);
///     },
///     client.call_tool("test_reconnection", serde_json::json!({})),
/// )
/// .await?;
/// println!("{} after {} resumption(s)", result.text(), closes.load(Ordering::Relaxed));
/// # Ok(()) }
/// ```
pub async fn when_stream_closes<F, H>(on_closed: H, requests: F) -> F::Output
where
    F: Future,
    H: Fn() + Send + Sync + 'static,
{
    ON_CLOSED
        .scope(OnClosed(Arc::new(on_closed)), requests)
        .await
}

/// The hook of the task's requests, to carry into a task of the exchange's own.
pub(crate) fn current() -> Option<OnClosed> {
    ON_CLOSED.try_with(Clone::clone).ok()
}

/// Runs `exchange` under `hook` (taken with [`current`] in the requesting task).
pub(crate) async fn within<F: Future>(hook: Option<OnClosed>, exchange: F) -> F::Output {
    match hook {
        Some(hook) => ON_CLOSED.scope(hook, exchange).await,
        None => exchange.await,
    }
}

/// A request's stream ended before its answer and is about to be resumed.
pub(crate) fn stream_closed() {
    if let Ok(hook) = ON_CLOSED.try_with(Clone::clone) {
        (hook.0)();
    }
}
