//! [`RateLimitLayer`]: a token bucket per caller (GCRA, `governor`), refused `rate_limited`
//! with `retryAfterMs`.

use std::num::NonZeroU32;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context as TaskContext, Poll};

use futures_util::future::{Either, Ready, ready};
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use tower::{BoxError, Layer, Service};

use super::{Operation, Per, Refusal};

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
/// is one set of buckets (attach it to a tool or an action for a budget of its own).
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
#[derive(Debug, Clone)]
pub struct RateLimitLayer {
    quota: Quota,
    limit: String,
    per: Per,
}

impl RateLimitLayer {
    /// `n` calls per second per caller.
    pub fn per_second(n: NonZeroU32) -> Self {
        RateLimitLayer {
            quota: Quota::per_second(n),
            limit: format!("{n}/s"),
            per: Per::Caller,
        }
    }

    /// `n` calls per minute per caller.
    pub fn per_minute(n: NonZeroU32) -> Self {
        RateLimitLayer {
            quota: Quota::per_minute(n),
            limit: format!("{n}/min"),
            per: Per::Caller,
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
    S: Service<Operation>,
    S::Error: Into<BoxError>,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = Either<
        futures_util::future::MapErr<S::Future, fn(S::Error) -> BoxError>,
        Ready<Result<S::Response, BoxError>>,
    >;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, operation: Operation) -> Self::Future {
        use futures_util::TryFutureExt;
        match self.buckets.check(&operation) {
            Ok(()) => Either::Left(self.inner.call(operation).map_err(Into::into as fn(_) -> _)),
            Err(refusal) => Either::Right(ready(Err(refusal.into()))),
        }
    }
}
