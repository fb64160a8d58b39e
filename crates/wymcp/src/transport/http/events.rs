//! The SSE event log: every event a stream sends is appended, so a client reconnecting with
//! `Last-Event-ID` can be replayed what it missed on that stream.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};

use futures_util::future::BoxFuture;

use crate::session::StoreError;

/// Default number of events kept per stream by [`InMemoryEventLog`].
pub const DEFAULT_EVENTS_PER_STREAM: usize = 256;

/// An event as logged: its id and its `data` text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoggedEvent {
    /// The event id (`<stream>.<sequence>`, unique within the session).
    pub id: String,
    /// The `data` field.
    pub data: String,
}

/// Appends and replays SSE events, keyed by session and stream.
///
/// Event ids are minted by the log as `<stream>.<n>` with `n` counting per session, so an id
/// is unique within its session and says which stream it belongs to.
pub trait EventLog: Send + Sync + 'static {
    /// Appends an event to `stream` of `session`, answering its id.
    fn append<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
        data: String,
    ) -> BoxFuture<'a, Result<String, StoreError>>;

    /// The events of the stream that `last_event_id` belongs to, after it; `None` when the id
    /// is unknown (never issued, or already evicted from the bounded buffer).
    fn replay_after<'a>(
        &'a self,
        session: &'a str,
        last_event_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Vec<LoggedEvent>>, StoreError>>;

    /// Forgets a session's events.
    fn remove_session<'a>(&'a self, session: &'a str) -> BoxFuture<'a, Result<(), StoreError>>;
}

#[derive(Debug, Default)]
struct SessionLog {
    next: u64,
    streams: HashMap<String, VecDeque<LoggedEvent>>,
}

/// The default [`EventLog`]: a bounded buffer per stream in this process.
#[derive(Debug)]
pub struct InMemoryEventLog {
    per_stream: usize,
    sessions: Mutex<HashMap<String, SessionLog>>,
}

impl Default for InMemoryEventLog {
    fn default() -> Self {
        Self::with_capacity(DEFAULT_EVENTS_PER_STREAM)
    }
}

impl InMemoryEventLog {
    /// A log keeping [`DEFAULT_EVENTS_PER_STREAM`] events per stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// A log keeping `per_stream` events per stream.
    pub fn with_capacity(per_stream: usize) -> Self {
        InMemoryEventLog {
            per_stream: per_stream.max(1),
            sessions: Mutex::new(HashMap::new()),
        }
    }
}

impl EventLog for InMemoryEventLog {
    fn append<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
        data: String,
    ) -> BoxFuture<'a, Result<String, StoreError>> {
        let id = {
            let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
            let log = sessions.entry(session.to_owned()).or_default();
            log.next += 1;
            let id = format!("{stream}.{}", log.next);
            let buffer = log.streams.entry(stream.to_owned()).or_default();
            if buffer.len() >= self.per_stream {
                buffer.pop_front();
            }
            buffer.push_back(LoggedEvent {
                id: id.clone(),
                data,
            });
            id
        };
        Box::pin(async move { Ok(id) })
    }

    fn replay_after<'a>(
        &'a self,
        session: &'a str,
        last_event_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Vec<LoggedEvent>>, StoreError>> {
        let result = (|| {
            let (stream, _) = last_event_id.rsplit_once('.')?;
            let sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
            let buffer = sessions.get(session)?.streams.get(stream)?;
            let at = buffer.iter().position(|e| e.id == last_event_id)?;
            Some(buffer.iter().skip(at + 1).cloned().collect())
        })();
        Box::pin(async move { Ok(result) })
    }

    fn remove_session<'a>(&'a self, session: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        self.sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(session);
        Box::pin(async move { Ok(()) })
    }
}
