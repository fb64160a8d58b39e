//! Sessions as data: [`SessionRecord`] behind a [`SessionStore`] (in memory by default), and
//! the node-local live state (running calls' cancellation tokens, the open GET stream).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use futures_util::future::BoxFuture;
use rand::RngCore as _;
use serde_json::{Map, Value};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::protocol::{LogLevel, ProtocolVersion};

/// A fresh session id: 32 random bytes from the OS-seeded CSPRNG, base64url without padding
/// (43 visible ASCII characters).
pub fn new_session_id() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    URL_SAFE_NO_PAD.encode(bytes)
}

/// What a session is, as data that any node can load: everything but live things.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionRecord {
    /// The session id.
    pub id: String,
    /// The revision negotiated at `initialize`.
    pub version: ProtocolVersion,
    /// The client's `capabilities` (or `{}`).
    pub client_capabilities: Value,
    /// The client's `clientInfo` (or `{}`).
    pub client_info: Value,
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

/// A session store failed (for example a remote store is unreachable).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("session store error: {0}")]
pub struct StoreError(pub String);

/// Why a session could not be created.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CreateError {
    /// The cap on live sessions is reached.
    #[error("too many sessions: the limit of {0} live sessions is reached")]
    Full(usize),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Where session records live. The in-memory [`InMemorySessionStore`] is the default; a
/// shared store (such as Redis) lets several nodes serve one session.
///
/// Expiry is by idle time: a record not loaded for `ttl` is gone.
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
    fn load<'a>(
        &'a self,
        id: &'a str,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<Option<SessionRecord>, StoreError>>;

    /// Replaces a live record; `false` when the session is gone.
    fn save(&self, record: SessionRecord) -> BoxFuture<'_, Result<bool, StoreError>>;

    /// Removes a record; `false` when it was not there.
    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>>;

    /// Removes every record idle for `ttl` or longer, answering their ids.
    fn reap(&self, ttl: Duration) -> BoxFuture<'_, Result<Vec<String>, StoreError>>;
}

#[derive(Debug)]
struct Entry {
    record: SessionRecord,
    last_seen: Instant,
}

/// The default [`SessionStore`]: a map in this process.
#[derive(Debug, Default)]
pub struct InMemorySessionStore {
    entries: Mutex<HashMap<String, Entry>>,
}

impl InMemorySessionStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
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
            let live = entries.values().filter(|e| !expired(e, now, ttl)).count();
            if live >= max {
                Err(CreateError::Full(max))
            } else {
                entries.insert(
                    record.id.clone(),
                    Entry {
                        record,
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
    ) -> BoxFuture<'a, Result<Option<SessionRecord>, StoreError>> {
        let result = {
            let mut entries = self.lock();
            let now = Instant::now();
            match entries.get_mut(id) {
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
        let found = match self.lock().get_mut(&record.id) {
            Some(e) => {
                e.record = record;
                true
            }
            None => false,
        };
        Box::pin(async move { Ok(found) })
    }

    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        let found = self.lock().remove(id).is_some();
        Box::pin(async move { Ok(found) })
    }

    fn reap(&self, ttl: Duration) -> BoxFuture<'_, Result<Vec<String>, StoreError>> {
        let gone = {
            let mut entries = self.lock();
            let now = Instant::now();
            let gone: Vec<String> = entries
                .iter()
                .filter(|(_, e)| expired(e, now, ttl))
                .map(|(id, _)| id.clone())
                .collect();
            for id in &gone {
                entries.remove(id);
            }
            gone
        };
        Box::pin(async move { Ok(gone) })
    }
}

/// One frame for a GET stream: an event id and its JSON data.
#[derive(Debug, Clone)]
pub(crate) struct StreamEvent {
    pub(crate) id: String,
    pub(crate) data: String,
}

#[derive(Debug)]
pub(crate) struct StreamSlot {
    pub(crate) generation: u64,
    pub(crate) tx: mpsc::UnboundedSender<StreamEvent>,
    pub(crate) stop: CancellationToken,
}

/// A session's assigns, shared by the calls running on this node.
pub(crate) type SharedAssigns = Arc<Mutex<Map<String, Value>>>;

/// The live things a node owns: running calls and open streams, plus each session's shared
/// assigns for calls running here.
#[derive(Debug, Default)]
pub(crate) struct Live {
    calls: Mutex<HashMap<(String, String), CancellationToken>>,
    streams: Mutex<HashMap<String, StreamSlot>>,
    assigns: Mutex<HashMap<String, SharedAssigns>>,
    generation: Mutex<u64>,
    streams_opened: std::sync::atomic::AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Live {
    /// Registers a running call; the key is the request id's JSON text.
    pub(crate) fn start_call(&self, session: &str, id: &Value) -> CancellationToken {
        let token = CancellationToken::new();
        lock(&self.calls).insert((session.to_owned(), id.to_string()), token.clone());
        token
    }

    pub(crate) fn finish_call(&self, session: &str, id: &Value) {
        lock(&self.calls).remove(&(session.to_owned(), id.to_string()));
    }

    /// Cancels the named call; `false` when no such call runs here.
    pub(crate) fn cancel_call(&self, session: &str, id: &Value) -> bool {
        match lock(&self.calls).remove(&(session.to_owned(), id.to_string())) {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    /// The session's shared assigns, seeded from the record the first time.
    pub(crate) fn assigns(&self, record: &SessionRecord) -> SharedAssigns {
        lock(&self.assigns)
            .entry(record.id.clone())
            .or_insert_with(|| Arc::new(Mutex::new(record.assigns.clone())))
            .clone()
    }

    /// Attaches a GET stream, stopping the one it replaces. Answers the slot's generation.
    pub(crate) fn attach_stream(
        &self,
        session: &str,
        tx: mpsc::UnboundedSender<StreamEvent>,
        stop: CancellationToken,
    ) -> u64 {
        let generation = {
            let mut g = lock(&self.generation);
            *g += 1;
            *g
        };
        let old = lock(&self.streams).insert(
            session.to_owned(),
            StreamSlot {
                generation,
                tx,
                stop,
            },
        );
        if let Some(old) = old {
            old.stop.cancel();
        }
        generation
    }

    /// Detaches the stream of `generation`, if it is still the attached one.
    pub(crate) fn detach_stream(&self, session: &str, generation: u64) {
        let mut streams = lock(&self.streams);
        if streams
            .get(session)
            .is_some_and(|s| s.generation == generation)
        {
            streams.remove(session);
        }
    }

    /// Sends to the attached stream; `false` when none is attached or it is gone.
    pub(crate) fn send(&self, session: &str, event: StreamEvent) -> bool {
        let streams = lock(&self.streams);
        streams
            .get(session)
            .is_some_and(|slot| slot.tx.send(event).is_ok())
    }

    /// A fresh stream key for a POST answered as SSE (`post<n>`), so its event ids differ from
    /// every other stream's.
    pub(crate) fn next_stream_key(&self) -> String {
        let n = self
            .streams_opened
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        format!("post{n}")
    }

    /// Stops every open stream (server shutdown).
    pub(crate) fn close_streams(&self) {
        for (_, slot) in lock(&self.streams).drain() {
            slot.stop.cancel();
        }
    }

    /// Ends everything this node runs for a session.
    pub(crate) fn end_session(&self, session: &str) {
        if let Some(slot) = lock(&self.streams).remove(session) {
            slot.stop.cancel();
        }
        lock(&self.calls).retain(|(s, _), token| {
            if s == session {
                token.cancel();
                false
            } else {
                true
            }
        });
        lock(&self.assigns).remove(session);
    }
}
