//! [`ResultSizeLimitLayer`]: refuses a result larger than a limit, whole, rather than cut it.

use std::task::{Context as TaskContext, Poll};

use futures_util::future::BoxFuture;
use tower::{BoxError, Layer, Service};

use super::{Operation, Refusal, Response};
use crate::dispatch::WireResult;

/// Refuses a result whose wire form (`content`, `isError`, `structuredContent`) is larger than
/// `max_bytes`. The result is never cut: a cut result could break its `outputSchema` or lose
/// the part that mattered. The model reads instead:
///
/// `{"errorType": "result_too_large", "limit_bytes": 65536, "size_bytes": 91234, "message":
/// "The result is 91234 bytes, over the limit of 65536 bytes (ResultSizeLimitLayer). Ask for
/// less per call: a narrower filter, a smaller page."}`
///
/// On another method than `tools/call` (a server layer wraps those too) the size is the
/// method's `result`'s, and the refusal the JSON-RPC error `-32000` with the same message and
/// `data` (`errorType`, `method`, `limit_bytes`, `size_bytes`).
///
/// The tool ran: what it did is done. Put the limit on tools whose results grow with their
/// data (lists, searches, reads), not on ones that change state.
///
/// ```
/// use wymcp::Server;
/// use wymcp::middleware::ResultSizeLimitLayer;
///
/// let server = Server::builder().layer(ResultSizeLimitLayer::new(64 * 1024)).build().unwrap();
/// # let _ = server;
/// ```
#[derive(Debug, Clone, Copy)]
pub struct ResultSizeLimitLayer {
    max_bytes: usize,
}

impl ResultSizeLimitLayer {
    /// Results up to `max_bytes` bytes pass.
    pub fn new(max_bytes: usize) -> Self {
        ResultSizeLimitLayer { max_bytes }
    }
}

impl<S> Layer<S> for ResultSizeLimitLayer {
    type Service = ResultSizeLimit<S>;

    fn layer(&self, inner: S) -> ResultSizeLimit<S> {
        ResultSizeLimit {
            inner,
            max_bytes: self.max_bytes,
        }
    }
}

/// The service of [`ResultSizeLimitLayer`].
#[derive(Debug, Clone)]
pub struct ResultSizeLimit<S> {
    inner: S,
    max_bytes: usize,
}

impl<S> Service<Operation> for ResultSizeLimit<S>
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
        let version = operation.protocol_version();
        let max = self.max_bytes;
        let call = self.inner.call(operation);
        Box::pin(async move {
            let response = call.await.map_err(Into::into)?;
            let size = match &response {
                Response::Call(result) => wire_size(&WireResult { result, version }),
                Response::Method(Ok(result)) => wire_size(result),
                // An error is the server's own answer, bounded where it is made.
                Response::Method(Err(_)) => 0,
            };
            if size <= max {
                return Ok(response);
            }
            Err(too_large(size, max).into())
        })
    }
}

#[cold]
fn too_large(size: usize, max: usize) -> Refusal {
    let message = format!(
        "The result is {size} bytes, over the limit of {max} bytes (ResultSizeLimitLayer). \
         Ask for less per call: a narrower filter, a smaller page."
    );
    Refusal::new("result_too_large", message)
        .detail("limit_bytes", max.into())
        .detail("size_bytes", size.into())
}

/// The serialized size of `value`, counted without writing it anywhere.
fn wire_size(value: &impl serde::Serialize) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing to a counter cannot fail; a value that cannot serialize counts what it wrote.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}
