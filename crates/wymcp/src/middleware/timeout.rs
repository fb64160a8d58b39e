//! [`CallTimeoutLayer`]: the call timeout of [`Limits`](crate::Limits), as a layer one can put
//! on a tool or an action.

use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use futures_util::future::BoxFuture;
use tower::{BoxError, Layer, Service};

use super::{Operation, Refusal, Response};
use crate::dispatch;

/// Aborts a call that runs longer than `timeout`, answered as
/// [`Limits::call_timeout`](crate::Limits::call_timeout) answers (the same words, naming this
/// layer):
///
/// `{"errorType": "timeout", "tool": "reports", "timeout_ms": 2000, "message": "The call ran
/// longer than its limit of 2000 ms (CallTimeoutLayer) and was aborted. Ask for less work per
/// call, or retry later."}`
///
/// On another method than `tools/call` (a server layer wraps those too) the refusal is the
/// JSON-RPC error `-32000` with the same message and `data` `{"errorType": "timeout",
/// "method": …, "timeout_ms": …}`.
///
/// Where both apply, the shorter wins. Unlike tower's `TimeoutLayer` (which works too, and
/// answers `timeout` without the figure), the refusal names the limit.
///
/// ```
/// use std::time::Duration;
/// use wymcp::{Server, ToolPolicy};
/// use wymcp::middleware::CallTimeoutLayer;
///
/// struct Reports;
///
/// /// Build reports
/// #[wymcp::tool]
/// impl Reports {
///     /// Build one report
///     async fn build(&self) -> serde_json::Value {
///         serde_json::json!({"report": "ok"})
///     }
/// }
///
/// let timeout = CallTimeoutLayer::new(Duration::from_secs(2));
/// let server = Server::builder()
///     .tool_with(Reports, ToolPolicy::new().layer(timeout))
///     .build()
///     .unwrap();
/// # let _ = server;
/// ```
#[derive(Debug, Clone, Copy)]
pub struct CallTimeoutLayer {
    timeout: Duration,
}

impl CallTimeoutLayer {
    /// Calls run at most `timeout`.
    pub fn new(timeout: Duration) -> Self {
        CallTimeoutLayer { timeout }
    }
}

impl<S> Layer<S> for CallTimeoutLayer {
    type Service = CallTimeout<S>;

    fn layer(&self, inner: S) -> CallTimeout<S> {
        CallTimeout {
            inner,
            timeout: self.timeout,
        }
    }
}

/// The service of [`CallTimeoutLayer`].
#[derive(Debug, Clone)]
pub struct CallTimeout<S> {
    inner: S,
    timeout: Duration,
}

impl<S> Service<Operation> for CallTimeout<S>
where
    S: Service<Operation, Response = Response>,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<Response, BoxError>>;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, operation: Operation) -> Self::Future {
        let tool = operation.tool().map(str::to_owned);
        let timeout = self.timeout;
        let call = self.inner.call(operation);
        Box::pin(async move {
            match tokio::time::timeout(timeout, call).await {
                Ok(result) => result.map_err(Into::into),
                Err(_) => match tool {
                    Some(tool) => Ok(Response::Call(dispatch::timed_out(&tool, timeout, SETTING))),
                    None => Err(method_timed_out(timeout).into()),
                },
            }
        })
    }
}

/// What the refusals name as the limit.
const SETTING: &str = "CallTimeoutLayer";

/// The refusal of a method other than `tools/call` that ran out of time.
#[cold]
fn method_timed_out(timeout: Duration) -> Refusal {
    let ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
    let message = format!(
        "The call ran longer than its limit of {ms} ms ({SETTING}) and was aborted. Ask for \
         less work per call, or retry later."
    );
    Refusal::new("timeout", message).detail("timeout_ms", ms.into())
}
