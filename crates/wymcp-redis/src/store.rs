//! [`RedisSessionStore`]: session records in Redis, with a sliding TTL.

use std::sync::{Arc, LazyLock, Mutex, PoisonError};
use std::time::Duration;

use futures_util::future::BoxFuture;
use redis::Script;
use redis::aio::ConnectionManager;
use wymcp::backend::{CreateError, SessionRecord, SessionStore, StoreError};

use crate::connection::Keys;
use crate::loads::Loads;
use crate::record;

/// The reaping pass both scripts share. KEYS[2]: the index; ARGV[2]: TTL ms; `prefix`: the
/// record key prefix; `owners`, `cprefix`: the session → client hash and the client sets'
/// prefix. Entries whose score says idle past the TTL are looked at: a record still there
/// (renewed by `GETEX`, which leaves the index alone) gets its real last use back as its
/// score; a record gone is a session ended, removed from the index and its client's set, and
/// answered.
const SWEEP: &str = "local t = redis.call('TIME') \
     local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) \
     local ttl = tonumber(ARGV[2]) \
     local gone = {} \
     for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now - ttl, 'LIMIT', 0, 1000)) do \
       local left = redis.call('PTTL', prefix .. id) \
       if left > 0 then \
         redis.call('ZADD', KEYS[2], now - (ttl - left), id) \
       else \
         redis.call('ZREM', KEYS[2], id) \
         local c = redis.call('HGET', owners, id) \
         if c then redis.call('ZREM', cprefix .. c, id) redis.call('HDEL', owners, id) end \
         table.insert(gone, id) \
       end \
     end ";

/// KEYS: record, index. ARGV: record JSON, TTL ms, cap, id, record key prefix, session →
/// client hash, client sets' prefix, client (`''`: counted against no one), the client's cap.
/// 1 stored, 0 refused (cap: the index's entries, once the ended sessions among them are swept
/// out), 2 refused (the client's cap: its set's entries whose records are still there).
static CREATE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!(
        "local prefix = ARGV[5] local owners = ARGV[6] local cprefix = ARGV[7] \
         local client = ARGV[8] \
         if client ~= '' then \
           local set = cprefix .. client \
           if redis.call('ZCARD', set) >= tonumber(ARGV[9]) then \
             for _, id in ipairs(redis.call('ZRANGE', set, 0, -1)) do \
               if redis.call('EXISTS', prefix .. id) == 0 then \
                 redis.call('ZREM', set, id) redis.call('HDEL', owners, id) \
               end \
             end \
           end \
           if redis.call('ZCARD', set) >= tonumber(ARGV[9]) then return 2 end \
         end \
         if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[3]) then {SWEEP} end \
         if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[3]) then return 0 end \
         local t = redis.call('TIME') \
         local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) \
         redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) \
         redis.call('ZADD', KEYS[2], now, ARGV[4]) \
         if client ~= '' then \
           redis.call('ZADD', cprefix .. client, now, ARGV[4]) \
           redis.call('HSET', owners, ARGV[4], client) \
         end \
         return 1"
    ))
});

/// KEYS: (unused), index. ARGV: (unused), TTL ms, record key prefix, session → client hash,
/// client sets' prefix. The ids of the sessions ended since the last pass (at most 1,000 a
/// pass: the reaper comes back).
static REAP: LazyLock<Script> = LazyLock::new(|| {
    Script::new(&format!(
        "local prefix = ARGV[3] local owners = ARGV[4] local cprefix = ARGV[5] {SWEEP} return gone"
    ))
});

/// KEYS: record, index. ARGV: id, session → client hash, client sets' prefix. 1 when the
/// record was there; its index entry and its client's count go either way.
static REMOVE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        "local deleted = redis.call('DEL', KEYS[1]) \
         redis.call('ZREM', KEYS[2], ARGV[1]) \
         local c = redis.call('HGET', ARGV[2], ARGV[1]) \
         if c then redis.call('ZREM', ARGV[3] .. c, ARGV[1]) redis.call('HDEL', ARGV[2], ARGV[1]) end \
         return deleted",
    )
});

/// Session records in Redis: `<prefix>:session:<id>` (JSON, expiring after the session TTL,
/// renewed by every load), the index `<prefix>:sessions` (id → last use as the reaper last
/// saw it, for the cap on live sessions and the reaper), and for the per-client quota
/// (`Limits::max_sessions_per_client`, counted across every node) `<prefix>:client:<client>`
/// (its sessions) with `<prefix>:session-clients` (session → client), kept by the create,
/// the remove and the reaper's pass. A load is one `GETEX … PX` (Redis
/// 6.2 or later), sent in one pipeline with the loads of the requests that arrived with it;
/// a save is one `SET … XX KEEPTTL`. The record's own TTL decides when a
/// session ends; the reaper finds the ended ones through the index.
///
/// Made by [`Redis::session_store`](crate::Redis::session_store).
#[derive(Clone)]
pub struct RedisSessionStore {
    conn: ConnectionManager,
    keys: Keys,
    /// The records this node decoded, with the text they were decoded from: a load whose text
    /// is unchanged shares the record instead of decoding it again (most requests). Keyed by
    /// session ids the nodes made: foldhash, not SipHash.
    decoded: Arc<Mutex<DecodedCache>>,
    /// The most bytes the decoded records weigh together ([`Redis::max_decoded_bytes`]).
    ///
    /// [`Redis::max_decoded_bytes`]: crate::Redis::max_decoded_bytes
    max_decoded_bytes: usize,
    /// The index's key, made once (every load names it).
    index: Arc<str>,
    /// The loads of concurrent requests, sent together.
    loads: Arc<Loads>,
}

/// A record as loaded, the JSON text it came from, and what the two weigh.
type Decoded = (Box<str>, Arc<SessionRecord>, usize);

/// The records a node keeps decoded, and what they weigh together.
#[derive(Debug, Default)]
struct DecodedCache {
    records: foldhash::HashMap<String, Decoded>,
    bytes: usize,
}

/// How many decoded records a node keeps (when more sessions are live on this node, the
/// cache starts over).
const MAX_DECODED: usize = 20_000;

/// The most bytes a node's decoded records weigh together, unless set: 64 MiB (without a
/// bound in bytes, 20,000 records of 64 KiB capabilities held 22.6 GB: hostile-2026-12-04,
/// N3).
pub(crate) const DEFAULT_MAX_DECODED_BYTES: usize = 64 * 1024 * 1024;

/// What a decoded record weighs: its text, and its client capabilities and info parsed.
fn weight(text: &str, record: &SessionRecord) -> usize {
    text.len()
        .saturating_add(wymcp::limits::json_weight(&record.client_capabilities))
        .saturating_add(wymcp::limits::json_weight(&record.client_info))
}

impl std::fmt::Debug for RedisSessionStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisSessionStore").finish_non_exhaustive()
    }
}

fn failed(err: redis::RedisError) -> StoreError {
    crate::failure::store_error(&err)
}

fn millis(ttl: Duration) -> u64 {
    u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1)
}

impl RedisSessionStore {
    pub(crate) fn new(conn: ConnectionManager, keys: Keys, max_decoded_bytes: usize) -> Self {
        RedisSessionStore {
            index: keys.sessions().into(),
            loads: Arc::new(Loads::new(conn.clone())),
            conn,
            keys,
            decoded: Arc::default(),
            max_decoded_bytes,
        }
    }

    /// What the records this node keeps decoded weigh together now, in bytes (at most
    /// [`Redis::max_decoded_bytes`](crate::Redis::max_decoded_bytes)): each record's text
    /// plus its client capabilities' and info's
    /// [`json_weight`](wymcp::limits::json_weight).
    pub fn decoded_bytes(&self) -> usize {
        self.decoded
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .bytes
    }

    /// The record `text` is: the one decoded before when the text is the same.
    fn decode(&self, id: &str, text: String) -> Result<Arc<SessionRecord>, StoreError> {
        let mut cache = self.decoded.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((known, record, _)) = cache.records.get(id)
            && **known == *text
        {
            return Ok(record.clone());
        }
        let record = Arc::new(record::decode(&text)?);
        let weight = weight(&text, &record);
        if let Some((_, _, old)) = cache.records.remove(id) {
            cache.bytes -= old;
        }
        if weight > self.max_decoded_bytes {
            // Heavier than the whole cache: decoded for this load only.
            return Ok(record);
        }
        if cache.records.len() >= MAX_DECODED
            || cache.bytes.saturating_add(weight) > self.max_decoded_bytes
        {
            cache.records.clear();
            cache.bytes = 0;
        }
        cache.bytes += weight;
        let entry = (text.into_boxed_str(), record.clone(), weight);
        cache.records.insert(id.to_owned(), entry);
        Ok(record)
    }

    fn forget(&self, id: &str) {
        let mut cache = self.decoded.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, _, weight)) = cache.records.remove(id) {
            cache.bytes -= weight;
        }
    }
}

impl RedisSessionStore {
    /// One `CREATE`: the record stored unless a cap is reached (`client`: `""` for none).
    async fn create_counted(
        &self,
        record: SessionRecord,
        max: usize,
        ttl: Duration,
        client: &str,
        max_per_client: usize,
    ) -> Result<(), CreateError> {
        let text = record::encode(&record)?;
        let mut conn = self.conn.clone();
        let stored: i64 = CREATE
            .key(self.keys.session(&record.id))
            .key(self.keys.sessions())
            .arg(text)
            .arg(millis(ttl))
            .arg(max)
            .arg(&record.id)
            .arg(self.keys.session_prefix())
            .arg(self.keys.session_clients())
            .arg(self.keys.client_prefix())
            .arg(client)
            .arg(max_per_client)
            .invoke_async(&mut conn)
            .await
            .map_err(failed)?;
        match stored {
            1 => Ok(()),
            2 => Err(CreateError::ClientFull(max_per_client)),
            _ => Err(CreateError::Full(max)),
        }
    }
}

impl SessionStore for RedisSessionStore {
    fn create(
        &self,
        record: SessionRecord,
        max: usize,
        ttl: Duration,
    ) -> BoxFuture<'_, Result<(), CreateError>> {
        Box::pin(self.create_counted(record, max, ttl, "", 0))
    }

    /// Every node sharing the Redis counts a client's sessions together.
    fn counts_clients(&self) -> bool {
        true
    }

    fn create_for_client<'a>(
        &'a self,
        record: SessionRecord,
        max: usize,
        ttl: Duration,
        client: &'a str,
        max_per_client: usize,
    ) -> BoxFuture<'a, Result<(), CreateError>> {
        Box::pin(self.create_counted(record, max, ttl, client, max_per_client))
    }

    fn load<'a>(
        &'a self,
        id: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<Option<Arc<SessionRecord>>, StoreError>> {
        Box::pin(async move {
            let text = (self.loads)
                .load(self.keys.session(id), millis(ttl))
                .await
                .map_err(|err| StoreError::unavailable(format!("redis: {err}")))?;
            match text {
                Some(text) => self.decode(id, text).map(Some),
                None => {
                    self.forget(id);
                    Ok(None)
                }
            }
        })
    }

    fn save(&self, record: SessionRecord) -> BoxFuture<'_, Result<bool, StoreError>> {
        Box::pin(async move {
            let text = record::encode(&record)?;
            let mut conn = self.conn.clone();
            let done: Option<String> = redis::cmd("SET")
                .arg(self.keys.session(&record.id))
                .arg(text)
                .arg("XX")
                .arg("KEEPTTL")
                .query_async(&mut conn)
                .await
                .map_err(failed)?;
            Ok(done.is_some())
        })
    }

    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let deleted: i64 = REMOVE
                .key(self.keys.session(id))
                .key(self.keys.sessions())
                .arg(id)
                .arg(self.keys.session_clients())
                .arg(self.keys.client_prefix())
                .invoke_async(&mut conn)
                .await
                .map_err(failed)?;
            self.forget(id);
            Ok(deleted > 0)
        })
    }

    fn reap(&self, ttl: Duration) -> BoxFuture<'_, Result<Vec<String>, StoreError>> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let gone: Vec<String> = REAP
                .key("")
                .key(&*self.index)
                .arg("")
                .arg(millis(ttl))
                .arg(self.keys.session_prefix())
                .arg(self.keys.session_clients())
                .arg(self.keys.client_prefix())
                .invoke_async(&mut conn)
                .await
                .map_err(failed)?;
            for id in &gone {
                self.forget(id);
            }
            Ok(gone)
        })
    }
}
