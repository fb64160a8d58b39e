//! Sessions as data: [`SessionRecord`] behind a [`SessionStore`] (in memory by default).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use futures_util::future::BoxFuture;
use serde_json::{Map, Value};

use crate::protocol::{LogLevel, ProtocolVersion};

/// A fresh session id: 32 random bytes from the OS's CSPRNG, base64url without padding
/// (43 visible ASCII characters).
pub fn new_session_id() -> String {
    URL_SAFE_NO_PAD.encode(crate::random::bytes::<32>())
}

/// What a session is, as data that any node can load: everything but live things.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionRecord {
    /// The session id.
    pub id: String,
    /// The revision negotiated at `initialize`.
    pub version: ProtocolVersion,
    /// The client's `capabilities` (or `{}`), shared with the context of every call.
    pub client_capabilities: Arc<Value>,
    /// The client's `clientInfo` (or `{}`), shared with the context of every call.
    pub client_info: Arc<Value>,
    /// `notifications/initialized` was received.
    pub initialized: bool,
    /// The level set by `logging/setLevel`, if any.
    pub log_level: Option<LogLevel>,
    /// The session's assigns, shared by its calls.
    pub assigns: Map<String, Value>,
    /// The subject of the identity that initialized the session, when auth is configured;
    /// requests presenting another subject do not see the session.
    pub subject: Option<String>,
}

/// A session store (or event log, or bus) failed: its [`kind`](Self::kind) says how, so that
/// the client is told the cause (a full store is not an unreachable one), and its message
/// says what happened, for the log.
///
/// ```
/// use wymcp::backend::{StoreError, StoreErrorKind};
///
/// let full = StoreError::full("Redis is full (maxmemory reached, writes refused)");
/// assert_eq!(full.kind(), StoreErrorKind::Full);
/// assert_eq!(
///     full.to_string(),
///     "session store error: Redis is full (maxmemory reached, writes refused)"
/// );
/// assert_eq!(StoreError::unavailable("timed out").kind(), StoreErrorKind::Unavailable);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("session store error: {message}")]
pub struct StoreError {
    kind: StoreErrorKind,
    message: String,
}

/// How a store failed ([`StoreError::kind`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StoreErrorKind {
    /// The store could not be reached, did not answer in time, or failed: a new session is
    /// answered 503 with `data.reason` "session store unavailable"; retry shortly.
    Unavailable,
    /// The store is full and refuses new writes (Redis at `maxmemory` with `noeviction`;
    /// reads are still served): a new session is answered 503 with `data.reason` "session
    /// store full"; it clears when memory is freed or the bound raised.
    Full,
}

impl StoreError {
    /// The store could not be reached, did not answer in time, or failed.
    pub fn unavailable(message: impl Into<String>) -> Self {
        StoreError {
            kind: StoreErrorKind::Unavailable,
            message: message.into(),
        }
    }

    /// The store is full and refuses new writes.
    pub fn full(message: impl Into<String>) -> Self {
        StoreError {
            kind: StoreErrorKind::Full,
            message: message.into(),
        }
    }

    /// How the store failed.
    pub fn kind(&self) -> StoreErrorKind {
        self.kind
    }

    /// What happened, as the store said it (for the log; never sent to the client).
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// Why a session could not be created.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CreateError {
    /// The cap on live sessions is reached.
    #[error("too many sessions: the limit of {0} live sessions is reached")]
    Full(usize),
    /// The client holds its most live sessions already
    /// ([`SessionStore::create_for_client`]).
    #[error("too many sessions for this client: the limit of {0} live sessions is reached")]
    ClientFull(usize),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Where session records live. The in-memory [`InMemorySessionStore`] is the default; a
/// shared store (such as Redis) lets several nodes serve one session.
///
/// Expiry is by idle time: a record not loaded for `ttl` is gone.
///
/// `load` shares the record (`Arc`); `create` and `save` take it by value. A store that
/// wraps another, here to count loads:
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use std::time::Duration;
///
/// use futures_util::future::BoxFuture;
/// use wymcp::backend::{
///     CreateError, InMemorySessionStore, SessionRecord, SessionStore, StoreError,
/// };
///
/// #[derive(Default)]
/// struct Counting {
///     inner: InMemorySessionStore,
///     loads: AtomicUsize,
/// }
///
/// impl SessionStore for Counting {
///     fn create(
///         &self,
///         record: SessionRecord,
///         max: usize,
///         ttl: Duration,
///     ) -> BoxFuture<'_, Result<(), CreateError>> {
///         self.inner.create(record, max, ttl)
///     }
///     fn load<'a>(
///         &'a self,
///         id: &'a str,
///         ttl: Duration,
///     ) -> BoxFuture<'a, Result<Option<Arc<SessionRecord>>, StoreError>> {
///         self.loads.fetch_add(1, Ordering::Relaxed);
///         self.inner.load(id, ttl)
///     }
///     fn save(&self, record: SessionRecord) -> BoxFuture<'_, Result<bool, StoreError>> {
///         self.inner.save(record)
///     }
///     fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
///         self.inner.remove(id)
///     }
///     fn reap(&self, ttl: Duration) -> BoxFuture<'_, Result<Vec<String>, StoreError>> {
///         self.inner.reap(ttl)
///     }
/// }
///
/// let backends = wymcp::backend::Backends::new().sessions(Counting::default());
/// let server = wymcp::Server::builder().backends(backends).build().unwrap();
/// # let _ = server;
/// ```
pub trait SessionStore: Send + Sync + 'static {
    /// Stores a new record, refusing when `max` live (not expired) sessions already exist.
    fn create(
        &self,
        record: SessionRecord,
        max: usize,
        ttl: Duration,
    ) -> BoxFuture<'_, Result<(), CreateError>>;

    /// Loads a live record and resets its idle timer; `None` when unknown or expired (an
    /// expired record is never revived; [`reap`](Self::reap) removes it).
    ///
    /// The record is shared (`Arc`): every request of a session loads it, and an in-memory
    /// store hands out its own copy without cloning it. A store that deserializes records
    /// wraps each one in a new `Arc`. To change a record, clone it out
    /// ([`Arc::unwrap_or_clone`]) and [`save`](Self::save) it.
    fn load<'a>(
        &'a self,
        id: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<Option<Arc<SessionRecord>>, StoreError>>;

    /// Replaces a live record; `false` when the session is gone.
    fn save(&self, record: SessionRecord) -> BoxFuture<'_, Result<bool, StoreError>>;

    /// Removes a record; `false` when it was not there.
    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>>;

    /// Removes every record idle for `ttl` or longer, answering their ids.
    fn reap(&self, ttl: Duration) -> BoxFuture<'_, Result<Vec<String>, StoreError>>;

    /// Whether this store counts each client's live sessions itself, through
    /// [`create_for_client`](Self::create_for_client): a store shared by several nodes does,
    /// so that [`Limits::max_sessions_per_client`](crate::Limits::max_sessions_per_client)
    /// holds across all of them. `false` (the default): each node counts the sessions it
    /// created.
    fn counts_clients(&self) -> bool {
        false
    }

    /// [`create`](Self::create), counted against `client` (a principal or a client address):
    /// refused with [`CreateError::ClientFull`] when the client holds `max_per_client` live
    /// sessions already. Called instead of `create` only when
    /// [`counts_clients`](Self::counts_clients) is `true`; the default ignores the client.
    fn create_for_client<'a>(
        &'a self,
        record: SessionRecord,
        max: usize,
        ttl: Duration,
        client: &'a str,
        max_per_client: usize,
    ) -> BoxFuture<'a, Result<(), CreateError>> {
        let _ = (client, max_per_client);
        self.create(record, max, ttl)
    }
}

/// A shared store is a store: several services (nodes of one process) can hold one.
impl<T: SessionStore + ?Sized> SessionStore for Arc<T> {
    fn create(
        &self,
        record: SessionRecord,
        max: usize,
        ttl: Duration,
    ) -> BoxFuture<'_, Result<(), CreateError>> {
        (**self).create(record, max, ttl)
    }
    fn load<'a>(
        &'a self,
        id: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<Option<Arc<SessionRecord>>, StoreError>> {
        (**self).load(id, ttl)
    }
    fn save(&self, record: SessionRecord) -> BoxFuture<'_, Result<bool, StoreError>> {
        (**self).save(record)
    }
    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        (**self).remove(id)
    }
    fn reap(&self, ttl: Duration) -> BoxFuture<'_, Result<Vec<String>, StoreError>> {
        (**self).reap(ttl)
    }
    fn counts_clients(&self) -> bool {
        (**self).counts_clients()
    }
    fn create_for_client<'a>(
        &'a self,
        record: SessionRecord,
        max: usize,
        ttl: Duration,
        client: &'a str,
        max_per_client: usize,
    ) -> BoxFuture<'a, Result<(), CreateError>> {
        (**self).create_for_client(record, max, ttl, client, max_per_client)
    }
}

#[derive(Debug)]
struct Entry {
    record: Arc<SessionRecord>,
    last_seen: Instant,
}

/// The default [`SessionStore`]: a map in this process.
#[derive(Debug, Default)]
pub struct InMemorySessionStore {
    entries: Mutex<Entries>,
}

/// The records, and what the last count at the cap found.
#[derive(Debug, Default)]
struct Entries {
    /// Keyed by session ids this server made: foldhash, not SipHash (looked up per request).
    map: foldhash::HashMap<String, Entry>,
    /// Set when a create counted `max` live records under `ttl`: none of them expires before
    /// `until`, so until then a create at the same cap and TTL is refused without counting
    /// again (a client knocking at a full store costs no scan each time). A load only moves a
    /// record's expiry later and a create adds none at the cap; a remove clears it.
    full: Option<Full>,
}

#[derive(Debug, Clone, Copy)]
struct Full {
    until: Instant,
    max: usize,
    ttl: Duration,
}

impl InMemorySessionStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Entries> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Entries {
    /// Whether `max` live records are held under `ttl`. Fewer records than `max` are fewer live
    /// ones too, so only a store holding `max` records or more counts (opening a session below
    /// the cap does not grow with the sessions held), and at the cap it counts once until the
    /// first of the records it counted could expire.
    fn full(&mut self, max: usize, ttl: Duration, now: Instant) -> bool {
        if self.map.len() < max {
            return false;
        }
        if let Some(full) = self.full
            && full.max == max
            && full.ttl == ttl
            && now < full.until
        {
            return true;
        }
        let mut live = 0;
        let mut until: Option<Instant> = None;
        for entry in self.map.values().filter(|e| !expired(e, now, ttl)) {
            live += 1;
            let expires = entry.last_seen + ttl;
            until = Some(until.map_or(expires, |u| u.min(expires)));
        }
        self.full = match until {
            Some(until) if live >= max => Some(Full { until, max, ttl }),
            _ => None,
        };
        self.full.is_some()
    }
}

fn expired(entry: &Entry, now: Instant, ttl: Duration) -> bool {
    now.saturating_duration_since(entry.last_seen) >= ttl
}

impl SessionStore for InMemorySessionStore {
    fn create(
        &self,
        record: SessionRecord,
        max: usize,
        ttl: Duration,
    ) -> BoxFuture<'_, Result<(), CreateError>> {
        let result = {
            let mut entries = self.lock();
            let now = Instant::now();
            // Expired records stay until the reaper removes them (so their end is reported),
            // but they no longer take a place.
            if entries.full(max, ttl, now) {
                Err(CreateError::Full(max))
            } else {
                entries.map.insert(
                    record.id.clone(),
                    Entry {
                        record: Arc::new(record),
                        last_seen: now,
                    },
                );
                Ok(())
            }
        };
        Box::pin(async move { result })
    }

    fn load<'a>(
        &'a self,
        id: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<Option<Arc<SessionRecord>>, StoreError>> {
        let result = {
            let mut entries = self.lock();
            let now = Instant::now();
            match entries.map.get_mut(id) {
                Some(e) if expired(e, now, ttl) => None,
                Some(e) => {
                    e.last_seen = now;
                    Some(e.record.clone())
                }
                None => None,
            }
        };
        Box::pin(async move { Ok(result) })
    }

    fn save(&self, record: SessionRecord) -> BoxFuture<'_, Result<bool, StoreError>> {
        let found = match self.lock().map.get_mut(&record.id) {
            Some(e) => {
                e.record = Arc::new(record);
                true
            }
            None => false,
        };
        Box::pin(async move { Ok(found) })
    }

    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        let found = {
            let mut entries = self.lock();
            entries.full = None;
            entries.map.remove(id).is_some()
        };
        Box::pin(async move { Ok(found) })
    }

    fn reap(&self, ttl: Duration) -> BoxFuture<'_, Result<Vec<String>, StoreError>> {
        let gone = {
            let mut entries = self.lock();
            let now = Instant::now();
            let gone: Vec<String> = entries
                .map
                .iter()
                .filter(|(_, e)| expired(e, now, ttl))
                .map(|(id, _)| id.clone())
                .collect();
            for id in &gone {
                entries.map.remove(id);
            }
            gone
        };
        Box::pin(async move { Ok(gone) })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    fn record(id: &str) -> SessionRecord {
        SessionRecord {
            id: id.into(),
            version: ProtocolVersion::V2025_06_18,
            client_capabilities: Arc::new(json!({})),
            client_info: Arc::new(json!({})),
            initialized: true,
            log_level: None,
            assigns: Map::new(),
            subject: None,
        }
    }

    /// The in-memory store's futures are ready when made.
    fn now<T>(future: BoxFuture<'_, T>) -> T {
        futures_util::FutureExt::now_or_never(future).expect("the in-memory store answers at once")
    }

    const HOUR: Duration = Duration::from_secs(3600);

    #[test]
    fn sessions_are_admitted_below_the_cap_and_refused_at_it() {
        let store = InMemorySessionStore::new();
        assert_eq!(now(store.create(record("a"), 2, HOUR)), Ok(()));
        assert_eq!(now(store.create(record("b"), 2, HOUR)), Ok(()));
        let refused = now(store.create(record("c"), 2, HOUR));
        assert_eq!(refused, Err(CreateError::Full(2)));
        assert_eq!(
            refused.unwrap_err().to_string(),
            "too many sessions: the limit of 2 live sessions is reached"
        );
        assert!(now(store.load("c", HOUR)).unwrap().is_none());
        // One ends: its place is free again.
        assert_eq!(now(store.remove("a")), Ok(true));
        assert_eq!(now(store.create(record("c"), 2, HOUR)), Ok(()));
        assert_eq!(now(store.load("c", HOUR)).unwrap().unwrap().id, "c");
    }

    #[test]
    fn expired_records_the_reaper_has_not_removed_take_no_place() {
        let store = InMemorySessionStore::new();
        assert_eq!(now(store.create(record("a"), 2, HOUR)), Ok(()));
        assert_eq!(now(store.create(record("b"), 2, HOUR)), Ok(()));
        // With a TTL of zero both records are expired, though still held: the store holds
        // `max` records, and none of them is live.
        assert_eq!(now(store.create(record("c"), 2, Duration::ZERO)), Ok(()));
        // Under an hour's TTL all three are live: a fourth is refused at a cap of 3.
        let refused = now(store.create(record("d"), 3, HOUR));
        assert_eq!(refused, Err(CreateError::Full(3)));
        let mut gone = now(store.reap(Duration::ZERO)).unwrap();
        gone.sort();
        assert_eq!(gone, ["a", "b", "c"]);
        assert_eq!(now(store.create(record("d"), 3, HOUR)), Ok(()));
    }

    /// A record last seen `ago`, put straight into the map (a store's clock cannot be moved;
    /// `ago` stays within seconds, as the monotonic clock starts at boot).
    fn seen(store: &InMemorySessionStore, id: &str, ago: Duration) {
        let last_seen = Instant::now()
            .checked_sub(ago)
            .expect("booted more than `ago` ago");
        store.lock().map.insert(
            id.into(),
            Entry {
                record: Arc::new(record(id)),
                last_seen,
            },
        );
    }

    /// Moves a record's last use (a load moves it later; tests move it earlier too).
    fn shift(store: &InMemorySessionStore, id: &str, earlier: Duration) {
        let mut entries = store.lock();
        let entry = entries.map.get_mut(id).expect("held");
        entry.last_seen = entry
            .last_seen
            .checked_sub(earlier)
            .expect("booted long enough ago");
    }

    #[test]
    fn a_full_store_counts_once_and_a_remove_or_an_expiry_frees_a_place() {
        const TTL: Duration = Duration::from_secs(10);
        let store = InMemorySessionStore::new();
        // Two live records and one expired: full at a cap of 2.
        seen(&store, "live-1", Duration::ZERO);
        seen(&store, "live-2", Duration::from_secs(5));
        seen(&store, "old", Duration::from_secs(20));
        assert_eq!(
            now(store.create(record("c"), 2, TTL)),
            Err(CreateError::Full(2))
        );
        let full = store.lock().full.expect("a count at the cap is remembered");
        // The first of the live records to expire bounds it: live-2, TTL after its last use.
        let live_2 = store.lock().map["live-2"].last_seen;
        assert_eq!(full.until, live_2 + TTL);
        // Refused again without a count: counted now, live-1 (moved back past the TTL) would
        // no longer take a place.
        shift(&store, "live-1", 2 * TTL);
        assert_eq!(
            now(store.create(record("c"), 2, TTL)),
            Err(CreateError::Full(2))
        );
        store.lock().map.get_mut("live-1").expect("held").last_seen = Instant::now();
        // Another cap counts afresh; a count below the cap is not remembered.
        assert_eq!(now(store.create(record("c"), 3, TTL)), Ok(()));
        assert!(store.lock().full.is_none());
        assert_eq!(
            now(store.create(record("d"), 3, TTL)),
            Err(CreateError::Full(3))
        );
        // A live session ends: its place is free at once, though the map still holds `max`
        // records (the expired one is the reaper's).
        assert_eq!(now(store.remove("live-1")), Ok(true));
        assert_eq!(store.lock().map.len(), 3);
        assert_eq!(now(store.create(record("d"), 3, TTL)), Ok(()));
        // The TTL passes (every record older by it, the remembered bound nearer by it): past
        // the bound the records are counted again, and all of them have expired.
        assert_eq!(
            now(store.create(record("e"), 3, TTL)),
            Err(CreateError::Full(3))
        );
        for id in ["live-2", "old", "c", "d"] {
            shift(&store, id, TTL);
        }
        {
            let mut entries = store.lock();
            let full = entries.full.as_mut().expect("full again");
            full.until = full.until.checked_sub(TTL).expect("booted long enough ago");
        }
        assert_eq!(now(store.create(record("e"), 3, TTL)), Ok(()));
    }
}
