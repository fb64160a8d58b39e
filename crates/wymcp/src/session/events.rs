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
///
/// All sessions together keep at most [`max_total_bytes`](Self::max_total_bytes) of event data
/// (256 MiB by default, [`Limits::max_logged_bytes_total`]): past it, a session's own oldest
/// events make room for its new one, and a session with none to give has its new event
/// refused, [`StoreError`] naming the limit (the event is then sent live but not logged, so
/// it cannot be replayed):
///
/// ```
/// use wymcp::backend::{EventLog, InMemoryEventLog};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let log = InMemoryEventLog::with_limits(100, 1024).max_total_bytes(4);
/// log.append("s1", "post1", "abc".into()).await.unwrap();
/// // s2 would pass the total and has nothing of its own to drop.
/// let refused = log.append("s2", "post1", "de".into()).await.unwrap_err();
/// assert!(refused.to_string().contains("Limits::max_logged_bytes_total"));
/// // s1 makes room by dropping its own oldest event.
/// log.append("s1", "post1", "xyz".into()).await.unwrap();
/// # });
/// ```
///
/// [`Limits::max_logged_bytes_total`]: crate::Limits::max_logged_bytes_total
#[derive(Debug)]
pub struct InMemoryEventLog {
    max_events: usize,
    max_bytes: usize,
    max_total_bytes: usize,
    sessions: Mutex<Sessions>,
}

/// Every session's log, and the bytes of data they hold together.
#[derive(Debug, Default)]
struct Sessions {
    logs: HashMap<String, SessionLog>,
    bytes: usize,
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
            max_total_bytes: crate::limits::DEFAULT_MAX_LOGGED_BYTES_TOTAL,
            sessions: Mutex::default(),
        }
    }

    /// Keeps at most `bytes` of event data for all sessions together (default 256 MiB,
    /// [`Limits::max_logged_bytes_total`](crate::Limits::max_logged_bytes_total)).
    pub fn max_total_bytes(mut self, bytes: usize) -> Self {
        self.max_total_bytes = bytes;
        self
    }
}

impl SessionLog {
    /// Drops the oldest events until the log is within its bounds (the newest always stays);
    /// answers the bytes dropped.
    fn trim(&mut self, max_events: usize, max_bytes: usize) -> usize {
        let mut dropped_bytes = 0;
        while self.events.len() > max_events || (self.bytes > max_bytes && self.events.len() > 1) {
            match self.events.pop_front() {
                Some((_, dropped)) => {
                    self.bytes -= dropped.data.len();
                    dropped_bytes += dropped.data.len();
                }
                None => break,
            }
        }
        dropped_bytes
    }

    /// Drops the oldest events until `needed` more bytes fit under `room` for all sessions
    /// (`total`: what they hold now); answers the bytes dropped, or `None` when this log
    /// cannot make that much room (it then drops nothing).
    fn make_room(&mut self, total: usize, needed: usize, room: usize) -> Option<usize> {
        let over = total.saturating_add(needed).saturating_sub(room);
        if over > self.bytes {
            return None;
        }
        let mut dropped_bytes = 0;
        while dropped_bytes < over {
            let (_, dropped) = self.events.pop_front()?;
            self.bytes -= dropped.data.len();
            dropped_bytes += dropped.data.len();
        }
        Some(dropped_bytes)
    }
}

impl EventLog for InMemoryEventLog {
    fn append<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
        data: String,
    ) -> BoxFuture<'a, Result<String, StoreError>> {
        let id = (|| {
            let mut guard = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
            let sessions = &mut *guard;
            let total = sessions.bytes;
            let log = sessions.logs.entry(session.to_owned()).or_default();
            if total.saturating_add(data.len()) > self.max_total_bytes {
                let Some(freed) = log.make_room(total, data.len(), self.max_total_bytes) else {
                    if log.events.is_empty() {
                        sessions.logs.remove(session);
                    }
                    return Err(StoreError::full(format!(
                        "the event log holds its most, {} bytes of events for all sessions \
                         (Limits::max_logged_bytes_total): this event of {} bytes is sent \
                         but not logged, so it cannot be replayed",
                        self.max_total_bytes,
                        data.len()
                    )));
                };
                sessions.bytes -= freed;
            }
            let log = sessions.logs.entry(session.to_owned()).or_default();
            log.next += 1;
            let id = format!("{stream}.{}", log.next);
            log.bytes += data.len();
            let added = data.len();
            let event = LoggedEvent {
                id: id.clone(),
                data,
            };
            log.events.push_back((stream.to_owned(), event));
            let dropped = log.trim(self.max_events, self.max_bytes);
            sessions.bytes = sessions.bytes + added - dropped;
            Ok(id)
        })();
        Box::pin(async move { id })
    }

    fn replay_after<'a>(
        &'a self,
        session: &'a str,
        last_event_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Vec<LoggedEvent>>, StoreError>> {
        let result = (|| {
            let (stream, _) = last_event_id.rsplit_once('.')?;
            let sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
            let events = &sessions.logs.get(session)?.events;
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
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(log) = sessions.logs.remove(session) {
            sessions.bytes -= log.bytes;
        }
        drop(sessions);
        Box::pin(async move { Ok(()) })
    }
}
