//! What a failed Redis command means to the request that needed it: Redis full (at
//! `maxmemory` with the `noeviction` policy: reads are served, writes refused) is told apart
//! from Redis unreachable or failing, so that a refusal names the real cause.

/// Whether `err` is Redis refusing a write because it is at `maxmemory` (`OOM`).
pub(crate) fn is_full(err: &redis::RedisError) -> bool {
    err.code() == Some("OOM")
}

/// The text of a store error for `err`: "Redis is full (…)" for `OOM`, otherwise
/// "redis: <error>".
pub(crate) fn describe(err: &redis::RedisError) -> String {
    if is_full(err) {
        "Redis is full (maxmemory reached, writes refused): nothing new is stored until \
         memory is freed or maxmemory is raised"
            .to_owned()
    } else {
        format!("redis: {err}")
    }
}

/// The session store's error for `err`: [`StoreError::full`] for `OOM`, else
/// [`StoreError::unavailable`]; the text [`describe`]s it.
///
/// [`StoreError::full`]: wymcp::backend::StoreError::full
/// [`StoreError::unavailable`]: wymcp::backend::StoreError::unavailable
pub(crate) fn store_error(err: &redis::RedisError) -> wymcp::backend::StoreError {
    if is_full(err) {
        wymcp::backend::StoreError::full(describe(err))
    } else {
        wymcp::backend::StoreError::unavailable(describe(err))
    }
}
