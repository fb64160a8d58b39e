//! [`RedisUserState`]: per-principal user state ([`wymcp::user_state`]) in Redis, so every
//! node reads what any node wrote.

use std::sync::LazyLock;
use std::time::Duration;

use futures_util::future::BoxFuture;
use redis::Script;
use redis::aio::ConnectionManager;
use wymcp::backend::{UserStateLimits, UserStateStore};
use wymcp::user_state::UserStateError;

use crate::connection::Keys;

/// KEYS: the principal's hash. ARGV: key, value, most keys, idle TTL ms. 1, or -1 when the
/// principal holds the most keys already and `key` is not one of them.
static SET: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 \
            and redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then return -1 end \
         redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) \
         redis.call('PEXPIRE', KEYS[1], ARGV[4]) \
         return 1",
    )
});

/// Each principal's state as one hash (`<prefix>:user:<principal>`, key → JSON text), expiring
/// [`UserStateLimits::idle_ttl`] after its last read or write. The value size and the keys per
/// principal are bounded by the limits (a write past them is refused naming the bound); the
/// number of principals is bounded by Redis's memory (`max_principals` does not apply). Every
/// operation is one round trip.
///
/// ```no_run
/// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
/// let redis = wymcp_redis::Redis::connect("redis://127.0.0.1:6379/").await?;
/// let backends = wymcp::backend::Backends::new().user_state(redis.user_state());
/// let server = wymcp::Server::builder().backends(backends).build()?;
/// # let _ = server; Ok(()) }
/// ```
#[derive(Clone)]
pub struct RedisUserState {
    conn: ConnectionManager,
    keys: Keys,
    limits: UserStateLimits,
}

impl std::fmt::Debug for RedisUserState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisUserState")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

fn failed(err: redis::RedisError) -> UserStateError {
    UserStateError::Store(crate::failure::describe(&err))
}

fn millis(ttl: Duration) -> u64 {
    u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1)
}

impl RedisUserState {
    pub(crate) fn new(conn: ConnectionManager, keys: Keys) -> Self {
        RedisUserState {
            conn,
            keys,
            limits: UserStateLimits::default(),
        }
    }

    /// Bounds other than the defaults (64 KiB per value, 256 keys, 24 h idle).
    pub fn limits(mut self, limits: UserStateLimits) -> Self {
        self.limits = limits;
        self
    }
}

impl UserStateStore for RedisUserState {
    fn get<'a>(
        &'a self,
        principal: &'a str,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Option<String>, UserStateError>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let hash = self.keys.user(principal);
            let (value, _): (Option<String>, i64) = redis::pipe()
                .hget(&hash, key)
                .pexpire(
                    &hash,
                    i64::try_from(millis(self.limits.idle_ttl)).unwrap_or(i64::MAX),
                )
                .query_async(&mut conn)
                .await
                .map_err(failed)?;
            Ok(value)
        })
    }

    fn set<'a>(
        &'a self,
        principal: &'a str,
        key: &'a str,
        json: String,
    ) -> BoxFuture<'a, Result<(), UserStateError>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let stored: i64 = SET
                .key(self.keys.user(principal))
                .arg(key)
                .arg(json)
                .arg(self.limits.max_keys)
                .arg(millis(self.limits.idle_ttl))
                .invoke_async(&mut conn)
                .await
                .map_err(failed)?;
            if stored < 0 {
                return Err(UserStateError::TooManyKeys(self.limits.max_keys));
            }
            Ok(())
        })
    }

    fn remove<'a>(
        &'a self,
        principal: &'a str,
        key: &'a str,
    ) -> BoxFuture<'a, Result<bool, UserStateError>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let removed: i64 = redis::cmd("HDEL")
                .arg(self.keys.user(principal))
                .arg(key)
                .query_async(&mut conn)
                .await
                .map_err(failed)?;
            Ok(removed > 0)
        })
    }

    fn max_value_bytes(&self) -> usize {
        self.limits.max_value_bytes
    }
}
