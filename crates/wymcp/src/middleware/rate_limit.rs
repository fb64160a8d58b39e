//! [`RateLimitLayer`]: a token bucket per caller (GCRA, `governor`; or in a shared
//! [`RateLimitStore`]), refused `rate_limited` with `retryAfterMs`. The `rate-limit` feature.

use std::num::NonZeroU32;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context as TaskContext, Poll};

use futures_util::future::{BoxFuture, Either, Ready, ready};
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use tower::{BoxError, Layer, Service};

use super::{Operation, Per, RateLimitStore, Refusal};

/// How often (in checks) buckets back at their full burst are dropped: the table holds the
/// callers of the last moments, not every caller ever seen.
const SWEEP_EVERY: u64 = 1024;

/// Limits how often each caller may call: `n` calls per second (or minute), in bursts of up
/// to `burst` (default `n`). A call over the limit is refused before the tool runs:
///
/// `{"errorType": "rate_limited", "limit": "5/s", "retryAfterMs": 187, "message": "Rate limit
/// reached: at most 5/s for each caller. Retry after 187 ms."}`
///
/// The budget is per [`Per::Caller`] unless [`per`](Self::per) says otherwise; one layer
/// is one set of buckets (attach it to a tool or an action for a budget of its own). The
/// buckets live in this process, so each node of a deployment counts on its own, unless
/// [`shared`](Self::shared) puts them in a store every node uses.
///
/// Needs the `rate-limit` feature (`wymcp = { version = "0.1", features = ["rate-limit"] }`),
/// off by default: `governor` is built only for it.
///
/// ```
/// use std::num::NonZeroU32;
/// use wymcp::Server;
/// use wymcp::middleware::{Per, RateLimitLayer};
///
/// let five = NonZeroU32::new(5).unwrap();
/// let server = Server::builder()
///     .layer(RateLimitLayer::per_second(five).burst(NonZeroU32::new(10).unwrap()).per(Per::CallerAndTool))
///     .build()
///     .unwrap();
/// # let _ = server;
/// ```
#[derive(Clone)]
pub struct RateLimitLayer {
    quota: Quota,
    limit: String,
    per: Per,
    shared: Option<Arc<dyn RateLimitStore>>,
}

impl std::fmt::Debug for RateLimitLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimitLayer")
            .field("limit", &self.limit)
            .field("per", &self.per)
            .field("shared", &self.shared.is_some())
            .finish()
    }
}

impl RateLimitLayer {
    /// `n` calls per second per caller.
    pub fn per_second(n: NonZeroU32) -> Self {
        RateLimitLayer {
            quota: Quota::per_second(n),
            limit: format!("{n}/s"),
            per: Per::Caller,
            shared: None,
        }
    }

    /// `n` calls per minute per caller.
    pub fn per_minute(n: NonZeroU32) -> Self {
        RateLimitLayer {
            quota: Quota::per_minute(n),
            limit: format!("{n}/min"),
            per: Per::Caller,
            shared: None,
        }
    }

    /// At most `burst` calls at once after a quiet spell (default: the per-period count).
    #[must_use]
    pub fn burst(mut self, burst: NonZeroU32) -> Self {
        self.quota = self.quota.allow_burst(burst);
        self
    }

    /// Whose calls share a bucket (default [`Per::Caller`]).
    #[must_use]
    pub fn per(mut self, per: Per) -> Self {
        self.per = per;
        self
    }

    /// Keeps the buckets in `store`, so every node using the same store (and the same limit)
    /// takes from one budget; each check is then a call to the store. While the store fails, a
    /// call is refused `unavailable` (retry after a second) rather than let through unmetered.
    /// One store per layer: two layers sharing a store and a limit share their buckets.
    ///
    /// ```
    /// use std::num::NonZeroU32;
    /// # use std::time::Duration;
    /// # use futures_util::future::BoxFuture;
    /// use wymcp::middleware::RateLimitLayer;
    /// # struct Shared;
    /// # impl wymcp::backend::RateLimitStore for Shared {
    /// #     fn take<'a>(&'a self, _: &'a str, _: Duration, _: u32)
    /// #         -> BoxFuture<'a, Result<Option<Duration>, wymcp::backend::RateLimitStoreError>> {
    /// #         Box::pin(async { Ok(None) })
    /// #     }
    /// # }
    ///
    /// // With wymcp-redis: `.shared(redis.rate_limits("calls"))`.
    /// let layer = RateLimitLayer::per_minute(NonZeroU32::new(60).unwrap()).shared(Shared);
    /// # let _ = layer;
    /// ```
    #[must_use]
    pub fn shared(mut self, store: impl RateLimitStore) -> Self {
        self.shared = Some(Arc::new(store));
        self
    }
}

impl<S> Layer<S> for RateLimitLayer {
    type Service = RateLimit<S>;

    fn layer(&self, inner: S) -> RateLimit<S> {
        RateLimit {
            inner,
            buckets: Arc::new(Buckets {
                limiter: RateLimiter::keyed(self.quota),
                clock: DefaultClock::default(),
                checks: AtomicU64::new(0),
                limit: self.limit.clone(),
                per: self.per,
                shared: self.shared.clone().map(|store| Shared {
                    store,
                    interval: self.quota.replenish_interval(),
                    burst: self.quota.burst_size().get(),
                }),
            }),
        }
    }
}

struct Buckets {
    limiter: DefaultKeyedRateLimiter<String>,
    clock: DefaultClock,
    checks: AtomicU64,
    limit: String,
    per: Per,
    /// The buckets' store, when not this process.
    shared: Option<Shared>,
}

/// A store of buckets and the rule of this layer's.
struct Shared {
    store: Arc<dyn RateLimitStore>,
    interval: std::time::Duration,
    burst: u32,
}

impl Buckets {
    /// Takes a token from `operation`'s bucket, or says how long to wait for one.
    fn check(&self, operation: &Operation) -> Result<(), Refusal> {
        if self.checks.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1 {
            self.limiter.retain_recent();
        }
        let key = self.per.key(operation);
        let Err(not_until) = self.limiter.check_key(&key) else {
            return Ok(());
        };
        let wait = not_until.wait_time_from(self.clock.now());
        Err(self.refusal(wait))
    }

    /// [`check`](Self::check) against the shared store: the bucket's key names the limit too,
    /// so a layer whose limit changed starts afresh.
    async fn check_shared(&self, shared: &Shared, operation: &Operation) -> Result<(), Refusal> {
        let key = format!("{}|{}", self.limit, self.per.key(operation));
        match shared.store.take(&key, shared.interval, shared.burst).await {
            Ok(None) => Ok(()),
            Ok(Some(wait)) => Err(self.refusal(wait)),
            Err(err) => {
                tracing::warn!(%err, "MCP rate limit store failed: call refused");
                let message = "The rate limit store is unavailable. Retry after 1000 ms.";
                Err(Refusal::new("unavailable", message)
                    .retry_after(std::time::Duration::from_secs(1))
                    .detail("limit", self.limit.clone().into()))
            }
        }
    }

    #[cold]
    fn refusal(&self, wait: std::time::Duration) -> Refusal {
        let ms = super::refusal::ceil_ms(wait);
        let message = format!(
            "Rate limit reached: at most {} for {}. Retry after {ms} ms.",
            self.limit,
            self.per.whom()
        );
        Refusal::new("rate_limited", message)
            .retry_after(wait)
            .detail("limit", self.limit.clone().into())
    }
}

/// The service of [`RateLimitLayer`].
#[derive(Clone)]
pub struct RateLimit<S> {
    inner: S,
    buckets: Arc<Buckets>,
}

impl<S> std::fmt::Debug for RateLimit<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimit")
            .field("limit", &self.buckets.limit)
            .finish_non_exhaustive()
    }
}

impl<S> Service<Operation> for RateLimit<S>
where
    S: Service<Operation> + Clone + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
    S::Response: Send + 'static,
{
    type Response = S::Response;
    type Error = BoxError;
    /// In process: the inner future, or the refusal at once; with a shared store, the check
    /// and then the inner call, boxed.
    type Future = Either<
        Either<
            futures_util::future::MapErr<S::Future, fn(S::Error) -> BoxError>,
            Ready<Result<S::Response, BoxError>>,
        >,
        BoxFuture<'static, Result<S::Response, BoxError>>,
    >;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, operation: Operation) -> Self::Future {
        use futures_util::TryFutureExt;
        if self.buckets.shared.is_some() {
            // The service made ready goes into the future; its clone stays for the next call.
            let clone = self.inner.clone();
            let mut inner = std::mem::replace(&mut self.inner, clone);
            let buckets = self.buckets.clone();
            return Either::Right(Box::pin(async move {
                if let Some(shared) = &buckets.shared {
                    buckets.check_shared(shared, &operation).await?;
                }
                inner.call(operation).await.map_err(Into::into)
            }));
        }
        Either::Left(match self.buckets.check(&operation) {
            Ok(()) => Either::Left(self.inner.call(operation).map_err(Into::into as fn(_) -> _)),
            Err(refusal) => Either::Right(ready(Err(refusal.into()))),
        })
    }
}
