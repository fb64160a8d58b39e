//! [`CallConcurrencyLayer`]: at most `n` calls running at once per caller (or per tool,
//! per action, in total), refused `concurrency_limited` rather than queued.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context as TaskContext, Poll};

use futures_util::future::BoxFuture;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tower::{BoxError, Layer, Service};

use super::{Operation, Per, Refusal, Response};

/// Beyond this many callers in the table, the idle ones (no call running) are dropped.
const SWEEP_ABOVE: usize = 1024;

/// Limits how many calls run at once, per caller (default) or as [`per`](Self::per) says. A
/// call over the limit is refused at once, never queued (tower's `ConcurrencyLimitLayer`
/// waits instead; it works too):
///
/// `{"errorType": "concurrency_limited", "limit": 4, "message": "At most 4 calls may run at
/// once for each caller, and 4 are running. Wait for one to finish, then retry."}`
///
/// ```
/// use wymcp::Server;
/// use wymcp::middleware::{CallConcurrencyLayer, Per};
///
/// let server = Server::builder()
///     .layer(CallConcurrencyLayer::new(4))
///     .layer(CallConcurrencyLayer::new(100).per(Per::Everyone))
///     .build()
///     .unwrap();
/// # let _ = server;
/// ```
#[derive(Debug, Clone, Copy)]
pub struct CallConcurrencyLayer {
    max: usize,
    per: Per,
}

impl CallConcurrencyLayer {
    /// At most `max` calls at once per caller (0 reads as 1).
    pub fn new(max: usize) -> Self {
        CallConcurrencyLayer {
            max: max.max(1),
            per: Per::Caller,
        }
    }

    /// Whose calls share the limit (default [`Per::Caller`]).
    #[must_use]
    pub fn per(mut self, per: Per) -> Self {
        self.per = per;
        self
    }
}

impl<S> Layer<S> for CallConcurrencyLayer {
    type Service = CallConcurrency<S>;

    fn layer(&self, inner: S) -> CallConcurrency<S> {
        CallConcurrency {
            inner,
            slots: Arc::new(Slots {
                max: self.max,
                per: self.per,
                running: Mutex::default(),
            }),
        }
    }
}

struct Slots {
    max: usize,
    per: Per,
    running: Mutex<HashMap<String, Arc<Semaphore>>>,
}

impl Slots {
    /// A slot for `operation`, held until its call ends; or the refusal.
    fn acquire(&self, operation: &Operation) -> Result<OwnedSemaphorePermit, Refusal> {
        let key = self.per.key(operation);
        // One lock around lookup, acquisition and sweep: a sweep never drops a semaphore a
        // caller is about to take a slot of.
        let mut running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        if running.len() > SWEEP_ABOVE {
            running.retain(|_, slots| slots.available_permits() < self.max);
        }
        let slots = running
            .entry(key)
            .or_insert_with(|| Arc::new(Semaphore::new(self.max)));
        slots
            .clone()
            .try_acquire_owned()
            .map_err(|_| self.refusal())
    }

    #[cold]
    fn refusal(&self) -> Refusal {
        let message = format!(
            "At most {max} calls may run at once for {whom}, and {max} are running. Wait for \
             one to finish, then retry.",
            max = self.max,
            whom = self.per.whom()
        );
        Refusal::new("concurrency_limited", message).detail("limit", self.max.into())
    }
}

/// The service of [`CallConcurrencyLayer`].
#[derive(Clone)]
pub struct CallConcurrency<S> {
    inner: S,
    slots: Arc<Slots>,
}

impl<S> std::fmt::Debug for CallConcurrency<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallConcurrency")
            .field("max", &self.slots.max)
            .finish_non_exhaustive()
    }
}

impl<S> Service<Operation> for CallConcurrency<S>
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
        match self.slots.acquire(&operation) {
            Ok(permit) => {
                let call = self.inner.call(operation);
                Box::pin(async move {
                    let result = call.await.map_err(Into::into);
                    drop(permit);
                    result
                })
            }
            Err(refusal) => Box::pin(std::future::ready(Err(refusal.into()))),
        }
    }
}
