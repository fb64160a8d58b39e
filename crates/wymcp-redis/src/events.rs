//! [`RedisEventLog`]: every session's SSE events on a Redis Stream, bounded, replayable from
//! any node.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use futures_util::future::BoxFuture;
use redis::aio::ConnectionManager;
use redis::{Script, Value};
use wymcp::backend::StoreError;
use wymcp::backend::{EventLog, LoggedEvent};

use crate::connection::Keys;

/// KEYS: the session's stream, its byte count. ARGV: stream name, data, most events, TTL ms,
/// most bytes. Appends, then drops the oldest entries while the stream holds more events or
/// more bytes of data than allowed (never the new one), keeping the byte count with it. The
/// entry id.
static APPEND: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local id = redis.call('XADD', KEYS[1], '*', 's', ARGV[1], 'd', ARGV[2]) \
         local bytes = redis.call('INCRBY', KEYS[2], #ARGV[2]) \
         local max_events, max_bytes = tonumber(ARGV[3]), tonumber(ARGV[5]) \
         local count = redis.call('XLEN', KEYS[1]) \
         while count > max_events or bytes > max_bytes do \
           local first = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', 1)[1] \
           if first == nil or first[1] == id then break end \
           local len, fields = 0, first[2] \
           for i = 1, #fields, 2 do if fields[i] == 'd' then len = #fields[i + 1] end end \
           redis.call('XDEL', KEYS[1], first[1]) \
           bytes = redis.call('DECRBY', KEYS[2], len) \
           count = count - 1 \
         end \
         redis.call('PEXPIRE', KEYS[1], ARGV[4]) \
         redis.call('PEXPIRE', KEYS[2], ARGV[4]) \
         return id",
    )
});

/// KEYS: the session's stream. ARGV: an entry id. The entries after it, or nil when it is
/// not in the stream (never issued, or trimmed away).
static REPLAY: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "if #redis.call('XRANGE', KEYS[1], ARGV[1], ARGV[1]) == 0 then return false end \
         return redis.call('XRANGE', KEYS[1], '(' .. ARGV[1], '+')",
    )
});

/// The SSE event log on Redis Streams: one stream per session (`<prefix>:events:<id>`),
/// trimmed by every append to its newest [`Redis::max_events`](crate::Redis::max_events)
/// events and [`Redis::max_event_bytes`](crate::Redis::max_event_bytes) bytes of data (the
/// count kept at `<prefix>:event-bytes:<id>`, in the same script), forgotten [`Redis::events_ttl`](crate::Redis::events_ttl) after
/// its last event. An event's id is `<stream>.<entry id>` (`post3.1764590000000-0`), so a
/// `Last-Event-ID` resumes on any node. An append and a replay are one round trip each.
///
/// An event Redis refuses to log (full at `maxmemory`, or unreachable) is still sent live, but
/// its stream cannot be resumed past it: each such event is counted
/// ([`unlogged_events`](Self::unlogged_events)) and the count logged as a warning (at the
/// first, then at every power of two and every thousandth).
#[derive(Clone)]
pub struct RedisEventLog {
    conn: ConnectionManager,
    keys: Keys,
    max_events: usize,
    max_bytes: usize,
    ttl_ms: u64,
    unlogged: Arc<AtomicU64>,
}

impl std::fmt::Debug for RedisEventLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisEventLog")
            .field("max_events", &self.max_events)
            .field("max_bytes", &self.max_bytes)
            .finish_non_exhaustive()
    }
}

fn failed(err: redis::RedisError) -> StoreError {
    crate::failure::store_error(&err)
}

/// Whether `id` is a stream entry id (`<ms>-<seq>`): what a client sends in `Last-Event-ID`
/// reaches Redis only in that shape.
fn is_entry_id(id: &str) -> bool {
    let Some((ms, seq)) = id.split_once('-') else {
        return false;
    };
    let digits = |s: &str| !s.is_empty() && s.len() <= 20 && s.bytes().all(|b| b.is_ascii_digit());
    digits(ms) && digits(seq)
}

impl RedisEventLog {
    pub(crate) fn new(
        conn: ConnectionManager,
        keys: Keys,
        max_events: usize,
        max_bytes: usize,
        ttl: Duration,
    ) -> Self {
        RedisEventLog {
            conn,
            keys,
            max_events,
            max_bytes,
            ttl_ms: u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1),
            unlogged: Arc::default(),
        }
    }

    /// How many events this log (and its clones) could not record since it was made: each was
    /// sent live, but a client resuming its stream does not get it again. A metric for
    /// resumability lost to a full or unreachable Redis.
    pub fn unlogged_events(&self) -> u64 {
        self.unlogged.load(Ordering::Relaxed)
    }

    /// Counts an event Redis refused, and says so at the first, then at every power of two
    /// and every thousandth (a full Redis refuses every event: one warning each would flood).
    fn count_unlogged(&self, err: &StoreError) {
        let unlogged = self
            .unlogged
            .fetch_add(1, Ordering::Relaxed)
            .saturating_add(1);
        if unlogged.is_power_of_two() || unlogged.is_multiple_of(1_000) {
            tracing::warn!(
                unlogged,
                %err,
                "SSE events not logged in Redis: sent live, but their streams cannot be resumed past them"
            );
        }
    }
}

/// An XRANGE reply: entries, each its id and its field-value pairs.
type Entries = Vec<(String, Vec<(String, Vec<u8>)>)>;

/// The events of `stream` among the XRANGE reply `entries`.
fn events_of(entries: Entries, stream: &str) -> Vec<LoggedEvent> {
    entries
        .into_iter()
        .filter_map(|(entry, fields)| {
            let field = |name: &str| {
                fields
                    .iter()
                    .find(|(f, _)| f == name)
                    .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
            };
            (field("s")? == stream).then(|| LoggedEvent {
                id: format!("{stream}.{entry}"),
                data: field("d").unwrap_or_default(),
            })
        })
        .collect()
}

impl EventLog for RedisEventLog {
    fn append<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
        data: String,
    ) -> BoxFuture<'a, Result<String, StoreError>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let entry: String = APPEND
                .key(self.keys.events(session))
                .key(self.keys.event_bytes(session))
                .arg(stream)
                .arg(data)
                .arg(self.max_events)
                .arg(self.ttl_ms)
                .arg(self.max_bytes)
                .invoke_async(&mut conn)
                .await
                .map_err(failed)
                .inspect_err(|err| self.count_unlogged(err))?;
            Ok(format!("{stream}.{entry}"))
        })
    }

    fn replay_after<'a>(
        &'a self,
        session: &'a str,
        last_event_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Vec<LoggedEvent>>, StoreError>> {
        Box::pin(async move {
            let Some((stream, entry)) = last_event_id.rsplit_once('.') else {
                return Ok(None);
            };
            if !is_entry_id(entry) {
                return Ok(None);
            }
            let mut conn = self.conn.clone();
            let reply: Value = REPLAY
                .key(self.keys.events(session))
                .arg(entry)
                .invoke_async(&mut conn)
                .await
                .map_err(failed)?;
            if matches!(reply, Value::Nil) {
                return Ok(None);
            }
            let entries: Entries = redis::from_redis_value(reply)
                .map_err(|e| StoreError::unavailable(format!("redis: {e}")))?;
            Ok(Some(events_of(entries, stream)))
        })
    }

    fn remove_session<'a>(&'a self, session: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            redis::cmd("DEL")
                .arg(self.keys.events(session))
                .arg(self.keys.event_bytes(session))
                .query_async::<()>(&mut conn)
                .await
                .map_err(failed)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::is_entry_id;

    #[test]
    fn only_entry_ids_reach_redis() {
        assert!(is_entry_id("1764590000000-0"));
        assert!(!is_entry_id("1764590000000"));
        assert!(!is_entry_id("-"));
        assert!(!is_entry_id("1-2 +"));
        assert!(!is_entry_id(&format!("{}-0", "9".repeat(21))));
    }
}
