//! [`RedisRateLimits`]: a rate limit's buckets in Redis, so every node takes from one budget.

use std::sync::LazyLock;
use std::time::Duration;

use futures_util::future::BoxFuture;
use redis::Script;
use redis::aio::ConnectionManager;
use wymcp::backend::{RateLimitStore, RateLimitStoreError};

/// GCRA on Redis's clock. KEYS: the bucket (its theoretical arrival time, µs). ARGV: the
/// interval between tokens (µs), the burst. -1 when a token was taken, else the wait (µs).
/// Times are written with `%.0f`: Lua's own number formatting would round them.
static TAKE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local t = redis.call('TIME') \
         local now = tonumber(t[1]) * 1000000 + tonumber(t[2]) \
         local interval = tonumber(ARGV[1]) \
         local tat = tonumber(redis.call('GET', KEYS[1]) or now) \
         if tat < now then tat = now end \
         local next_tat = tat + interval \
         local allow_at = next_tat - tonumber(ARGV[2]) * interval \
         if now < allow_at then return math.floor(allow_at - now) end \
         local ttl = math.max(1, math.ceil((next_tat - now) / 1000)) \
         redis.call('SET', KEYS[1], string.format('%.0f', next_tat), 'PX', string.format('%.0f', ttl)) \
         return -1",
    )
});

/// The buckets of one rate limit in Redis (`<prefix>:rate:<name>:<limit>|<caller>`, a string
/// each, expiring when the bucket is full again), for
/// [`RateLimitLayer::shared`](wymcp::middleware::RateLimitLayer::shared): every node with
/// the same name shares the budget. Each check is one round trip, on Redis's clock.
///
/// ```no_run
/// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
/// use std::num::NonZeroU32;
/// use wymcp::middleware::RateLimitLayer;
///
/// let redis = wymcp_redis::Redis::connect("redis://127.0.0.1:6379/").await?;
/// let sixty = NonZeroU32::new(60).unwrap();
/// let server = wymcp::Server::builder()
///     .call_layer(RateLimitLayer::per_minute(sixty).shared(redis.rate_limits("calls")))
///     .build()?;
/// # let _ = server; Ok(()) }
/// ```
#[derive(Clone)]
pub struct RedisRateLimits {
    conn: ConnectionManager,
    prefix: String,
}

impl std::fmt::Debug for RedisRateLimits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisRateLimits")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl RedisRateLimits {
    pub(crate) fn new(conn: ConnectionManager, prefix: String) -> Self {
        RedisRateLimits { conn, prefix }
    }
}

fn micros(duration: Duration) -> u64 {
    u64::try_from(duration.as_micros())
        .unwrap_or(u64::MAX)
        .max(1)
}

impl RateLimitStore for RedisRateLimits {
    fn take<'a>(
        &'a self,
        key: &'a str,
        interval: Duration,
        burst: u32,
    ) -> BoxFuture<'a, Result<Option<Duration>, RateLimitStoreError>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let wait: i64 = TAKE
                .key(format!("{}{key}", self.prefix))
                .arg(micros(interval))
                .arg(burst.max(1))
                .invoke_async(&mut conn)
                .await
                .map_err(|err| RateLimitStoreError(format!("redis: {err}")))?;
            Ok(u64::try_from(wait).ok().map(Duration::from_micros))
        })
    }
}
