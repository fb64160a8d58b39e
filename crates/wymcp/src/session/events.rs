//! The event log of sessions' streams: every event a stream sends is appended, so a client
//! reconnecting with `Last-Event-ID` (Streamable HTTP's SSE) can be replayed what it missed on
//! that stream.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};

use futures_util::future::BoxFuture;

use super::StoreError;

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

/// A shared log is a log: several services (nodes of one process) can hold one.
impl<T: EventLog + ?Sized> EventLog for std::sync::Arc<T> {
    fn append<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
        data: String,
    ) -> BoxFuture<'a, Result<String, StoreError>> {
        (**self).append(session, stream, data)
    }
    fn replay_after<'a>(
        &'a self,
        session: &'a str,
        last_event_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Vec<LoggedEvent>>, StoreError>> {
        (**self).replay_after(session, last_event_id)
    }
    fn remove_session<'a>(&'a self, session: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        (**self).remove_session(session)
    }
}

#[derive(Debug, Default)]
struct SessionLog {
    next: u64,
    /// Every stream's events in the order they were sent, oldest first, with their streams.
    events: VecDeque<(String, LoggedEvent)>,
    /// The bytes of `data` held in `events`.
    bytes: usize,
}

/// The default [`EventLog`]: a bounded buffer per session in this process. A session keeps
/// its most recent events across all of its streams, at most so many events and so many
/// bytes of data (oldest dropped first; [`Limits::max_logged_events`] and
/// [`Limits::max_logged_bytes`] by default), so no number of calls grows it past its bound.
///
/// [`Limits::max_logged_events`]: crate::Limits::max_logged_events
/// [`Limits::max_logged_bytes`]: crate::Limits::max_logged_bytes
///
/// ```
/// use wymcp::backend::{EventLog, InMemoryEventLog};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let log = InMemoryEventLog::with_limits(2, 1024);
/// let first = log.append("s", "post1", "a".into()).await.unwrap();
/// log.append("s", "post2", "b".into()).await.unwrap();
/// log.append("s", "post2", "c".into()).await.unwrap();
/// // The oldest event (post1's) was dropped: its id no longer resumes.
/// assert_eq!(log.replay_after("s", &first).await.unwrap(), None);
/// # });
/// ```
#[derive(Debug)]
pub struct InMemoryEventLog {
    max_events: usize,
    max_bytes: usize,
    sessions: Mutex<HashMap<String, SessionLog>>,
}

impl Default for InMemoryEventLog {
    fn default() -> Self {
        Self::with_limits(
            crate::limits::DEFAULT_MAX_LOGGED_EVENTS,
            crate::limits::DEFAULT_MAX_LOGGED_BYTES,
        )
    }
}

impl InMemoryEventLog {
    /// A log with the default bounds (1,000 events and 1 MiB per session).
    pub fn new() -> Self {
        Self::default()
    }

    /// A log keeping at most `max_events` events and `max_bytes` bytes of event data per
    /// session (at least the newest event is always kept).
    pub fn with_limits(max_events: usize, max_bytes: usize) -> Self {
        InMemoryEventLog {
            max_events: max_events.max(1),
            max_bytes,
            sessions: Mutex::new(HashMap::new()),
        }
    }
}

impl SessionLog {
    /// Drops the oldest events until the log is within its bounds (the newest always stays).
    fn trim(&mut self, max_events: usize, max_bytes: usize) {
        while self.events.len() > max_events || (self.bytes > max_bytes && self.events.len() > 1) {
            match self.events.pop_front() {
                Some((_, dropped)) => self.bytes -= dropped.data.len(),
                None => break,
            }
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
            log.bytes += data.len();
            let event = LoggedEvent {
                id: id.clone(),
                data,
            };
            log.events.push_back((stream.to_owned(), event));
            log.trim(self.max_events, self.max_bytes);
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
            let events = &sessions.get(session)?.events;
            let at = events.iter().position(|(_, e)| e.id == last_event_id)?;
            let missed = events.iter().skip(at + 1);
            Some(
                missed
                    .filter(|(name, _)| name == stream)
                    .map(|(_, e)| e.clone())
                    .collect(),
            )
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
