//! [`RedisExt`]: Redis on the HTTP builder in one line.

use wymcp::transport::http::StreamableHttp;

use crate::Redis;

/// Puts a [`Redis`] deployment's store, event log and bus on a builder.
pub trait RedisExt {
    /// Sessions in Redis, the SSE event log on Redis Streams, the bus on Redis pub/sub: any
    /// node built this way serves any request of any session on the same Redis.
    fn redis(self, redis: &Redis) -> Self;
}

impl RedisExt for StreamableHttp {
    fn redis(self, redis: &Redis) -> Self {
        self.session_store(redis.session_store())
            .event_log(redis.event_log())
            .bus(redis.bus())
    }
}
