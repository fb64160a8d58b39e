//! [`RateLimitStore`]: where a [`RateLimitLayer`](super::RateLimitLayer)'s buckets live when
//! several nodes share one budget.

use std::time::Duration;

use futures_util::future::BoxFuture;

/// A rate limit store could not be reached or failed; the reason is for logs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("rate limit store unavailable: {0}")]
pub struct RateLimitStoreError(pub String);

/// Buckets kept outside the process, so that every node serving the same clients takes from
/// the same budget (`wymcp_redis::Redis::rate_limits` keeps them in Redis). Give it to
/// [`RateLimitLayer::shared`](super::RateLimitLayer::shared).
///
/// A bucket follows GCRA, the rule `governor` applies in process: one token comes back every
/// `interval`, and a bucket holds at most `burst` of them.
///
/// Needs the `rate-limit` feature, as the layer does.
///
/// ```
/// use std::time::Duration;
/// use futures_util::future::BoxFuture;
/// use wymcp::backend::{RateLimitStore, RateLimitStoreError};
///
/// /// A store that never refuses (say, for a staging deployment).
/// struct Unlimited;
///
/// impl RateLimitStore for Unlimited {
///     fn take<'a>(&'a self, _key: &'a str, _interval: Duration, _burst: u32)
///         -> BoxFuture<'a, Result<Option<Duration>, RateLimitStoreError>> {
///         Box::pin(async { Ok(None) })
///     }
/// }
/// ```
pub trait RateLimitStore: Send + Sync + 'static {
    /// Takes a token from the bucket `key`: `None` when one was taken, else how long until one
    /// comes back (nothing is taken then).
    fn take<'a>(
        &'a self,
        key: &'a str,
        interval: Duration,
        burst: u32,
    ) -> BoxFuture<'a, Result<Option<Duration>, RateLimitStoreError>>;
}
