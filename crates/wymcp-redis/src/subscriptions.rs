//! [`RedisSubscriptions`]: the `resources/subscribe` subscriptions of every session in Redis,
//! so a subscription outlives the node that took it and is notified from any node.

use std::sync::LazyLock;

use futures_util::future::BoxFuture;
use redis::Script;
use redis::aio::ConnectionManager;
use wymcp::Limits;
use wymcp::backend::{SubscriptionError, SubscriptionStore};

use crate::connection::Keys;

/// KEYS: the session's URIs, the URI's sessions, the total. ARGV: URI, session, the
/// per-session cap, the total cap. 1 subscribed, 0 held already, -1 the session's cap, -2 the
/// total's.
static SUBSCRIBE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return 0 end \
         if redis.call('SCARD', KEYS[1]) >= tonumber(ARGV[3]) then return -1 end \
         if tonumber(redis.call('GET', KEYS[3]) or '0') >= tonumber(ARGV[4]) then return -2 end \
         redis.call('SADD', KEYS[1], ARGV[1]) \
         redis.call('SADD', KEYS[2], ARGV[2]) \
         redis.call('INCR', KEYS[3]) \
         return 1",
    )
});

/// KEYS: the session's URIs, the URI's sessions, the total. ARGV: URI, session. 1 when the
/// session was subscribed.
static UNSUBSCRIBE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "if redis.call('SREM', KEYS[1], ARGV[1]) == 0 then return 0 end \
         redis.call('SREM', KEYS[2], ARGV[2]) \
         if redis.call('DECR', KEYS[3]) < 0 then redis.call('SET', KEYS[3], 0) end \
         return 1",
    )
});

/// KEYS: the session's URIs, the total. ARGV: session, the URIs' sets' prefix. How many
/// subscriptions the session held.
static FORGET: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local uris = redis.call('SMEMBERS', KEYS[1]) \
         for _, uri in ipairs(uris) do redis.call('SREM', ARGV[2] .. uri, ARGV[1]) end \
         redis.call('DEL', KEYS[1]) \
         if #uris > 0 and redis.call('DECRBY', KEYS[2], #uris) < 0 then \
           redis.call('SET', KEYS[2], 0) \
         end \
         return #uris",
    )
});

/// KEYS: the URI's sessions, the total. ARGV: URI, the session records' prefix, the
/// sessions' sets' prefix. The subscribed sessions whose record is still there; the others
/// (a session whose end was never cleared, its node gone meanwhile) are dropped on the way.
static SUBSCRIBERS: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local live = {} \
         for _, s in ipairs(redis.call('SMEMBERS', KEYS[1])) do \
           if redis.call('EXISTS', ARGV[2] .. s) == 1 then \
             table.insert(live, s) \
           else \
             redis.call('SREM', KEYS[1], s) \
             if redis.call('SREM', ARGV[3] .. s, ARGV[1]) == 1 \
               and redis.call('DECR', KEYS[2]) < 0 then redis.call('SET', KEYS[2], 0) end \
           end \
         end \
         return live",
    )
});

/// Subscriptions in Redis, for
/// [`Backends::subscriptions`](wymcp::backend::Backends::subscriptions): a set of
/// URIs per session (`<prefix>:subs:<session>`), a set of sessions per URI
/// (`<prefix>:subscribers:<uri>`) and the total (`<prefix>:subscriptions`), kept together by
/// scripts, so [`Limits::max_subscriptions_per_session`] and [`Limits::max_subscriptions`]
/// hold over every node. A session's subscriptions go when it ends (a `DELETE` on any node,
/// or the reaper finding it expired); a lookup skips, and drops, subscribers whose session
/// record is gone. Use it with the session store of the same [`Redis`](crate::Redis), whose
/// records it reads. Every operation is one round trip.
///
/// ```no_run
/// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
/// use wymcp::transport::http::StreamableHttp;
/// use wymcp::backend::Backends;
/// use wymcp_redis::Redis;
///
/// let redis = Redis::connect("redis://127.0.0.1:6379/").await?;
/// // With the sessions of the same Redis, whose records it reads (`redis.backends()` has both).
/// let backends = Backends::new()
///     .sessions(redis.session_store())
///     .subscriptions(redis.subscription_store());
/// let server = wymcp::Server::builder().backends(backends).build()?;
/// let service = StreamableHttp::builder(server).build();
/// # let _ = service; Ok(()) }
/// ```
#[derive(Clone)]
pub struct RedisSubscriptions {
    conn: ConnectionManager,
    keys: Keys,
}

impl std::fmt::Debug for RedisSubscriptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisSubscriptions").finish_non_exhaustive()
    }
}

fn failed(err: redis::RedisError) -> SubscriptionError {
    SubscriptionError::Unavailable(crate::failure::describe(&err))
}

impl RedisSubscriptions {
    pub(crate) fn new(conn: ConnectionManager, keys: Keys) -> Self {
        RedisSubscriptions { conn, keys }
    }
}

impl SubscriptionStore for RedisSubscriptions {
    fn subscribe<'a>(
        &'a self,
        session: &'a str,
        uri: &'a str,
        limits: &'a Limits,
    ) -> BoxFuture<'a, Result<(), SubscriptionError>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let answer: i64 = SUBSCRIBE
                .key(self.keys.subscriptions_of(session))
                .key(self.keys.subscribers(uri))
                .key(self.keys.subscription_total())
                .arg(uri)
                .arg(session)
                .arg(limits.max_subscriptions_per_session)
                .arg(limits.max_subscriptions)
                .invoke_async(&mut conn)
                .await
                .map_err(failed)?;
            match answer {
                -1 => Err(SubscriptionError::SessionFull {
                    max: limits.max_subscriptions_per_session,
                }),
                -2 => Err(SubscriptionError::ServerFull {
                    max: limits.max_subscriptions,
                }),
                _ => Ok(()),
            }
        })
    }

    fn unsubscribe<'a>(
        &'a self,
        session: &'a str,
        uri: &'a str,
    ) -> BoxFuture<'a, Result<bool, SubscriptionError>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let removed: i64 = UNSUBSCRIBE
                .key(self.keys.subscriptions_of(session))
                .key(self.keys.subscribers(uri))
                .key(self.keys.subscription_total())
                .arg(uri)
                .arg(session)
                .invoke_async(&mut conn)
                .await
                .map_err(failed)?;
            Ok(removed == 1)
        })
    }

    fn subscribers<'a>(
        &'a self,
        uri: &'a str,
    ) -> BoxFuture<'a, Result<Vec<String>, SubscriptionError>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            SUBSCRIBERS
                .key(self.keys.subscribers(uri))
                .key(self.keys.subscription_total())
                .arg(uri)
                .arg(self.keys.session_prefix())
                .arg(self.keys.subscriptions_of(""))
                .invoke_async(&mut conn)
                .await
                .map_err(failed)
        })
    }

    fn subscriptions_of<'a>(
        &'a self,
        session: &'a str,
    ) -> BoxFuture<'a, Result<Vec<String>, SubscriptionError>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let mut uris: Vec<String> = redis::cmd("SMEMBERS")
                .arg(self.keys.subscriptions_of(session))
                .query_async(&mut conn)
                .await
                .map_err(failed)?;
            uris.sort();
            Ok(uris)
        })
    }

    fn forget_session<'a>(
        &'a self,
        session: &'a str,
    ) -> BoxFuture<'a, Result<(), SubscriptionError>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let _held: i64 = FORGET
                .key(self.keys.subscriptions_of(session))
                .key(self.keys.subscription_total())
                .arg(session)
                .arg(self.keys.subscribers(""))
                .invoke_async(&mut conn)
                .await
                .map_err(failed)?;
            Ok(())
        })
    }
}
