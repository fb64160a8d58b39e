//! The sessions live on this node: each one's [`SessionHandle`] (runtime tools, running calls,
//! waiting server requests) and the assigns its calls share, made from the session's record
//! the first time a request of it arrives here.

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value};

use crate::Server;
use crate::session::Notifier;
use crate::session::{SessionHandle, SessionRecord};

/// A session's assigns, shared by the calls running on this node.
pub(crate) type SharedAssigns = Arc<Mutex<Map<String, Value>>>;

/// The live sessions of one serving core.
#[derive(Debug, Default)]
pub(crate) struct LiveSessions {
    // Keyed by session ids this server made, looked up on every request: foldhash, not SipHash.
    handles: Mutex<foldhash::HashMap<String, SessionHandle>>,
    assigns: Mutex<foldhash::HashMap<String, SharedAssigns>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl LiveSessions {
    /// The session's live handle, created from the record the first time (with `standalone`
    /// as its stream for messages no request owns).
    pub(crate) fn handle(
        &self,
        record: &SessionRecord,
        server: &Server,
        node: &Arc<str>,
        standalone: impl FnOnce() -> Notifier,
    ) -> SessionHandle {
        let mut handles = lock(&self.handles);
        // The hot path (every request of a live session) finds it without allocating a key.
        if let Some(handle) = handles.get(record.id.as_str()) {
            return handle.clone();
        }
        handles
            .entry(record.id.clone())
            .or_insert_with(|| {
                SessionHandle::live(
                    record.id.clone(),
                    server.configured(),
                    record.version,
                    record.log_level,
                    Some(standalone()),
                )
                .on_node(node)
            })
            .clone()
    }

    /// The session's live handle, if this node has one.
    pub(crate) fn existing(&self, session: &str) -> Option<SessionHandle> {
        lock(&self.handles).get(session).cloned()
    }

    /// The session's shared assigns, seeded from the record the first time.
    pub(crate) fn assigns(&self, record: &SessionRecord) -> SharedAssigns {
        let mut assigns = lock(&self.assigns);
        if let Some(shared) = assigns.get(record.id.as_str()) {
            return shared.clone();
        }
        assigns
            .entry(record.id.clone())
            .or_insert_with(|| Arc::new(Mutex::new(record.assigns.clone())))
            .clone()
    }

    /// The sessions with a live handle on this node.
    pub(crate) fn ids(&self) -> Vec<String> {
        lock(&self.handles).keys().cloned().collect()
    }

    /// The sessions running a call on this node.
    pub(crate) fn busy(&self) -> Vec<String> {
        lock(&self.handles)
            .iter()
            .filter(|(_, handle)| handle.is_busy())
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// Ends the session's live things here: closing its handle cancels its running calls and
    /// fails its waiting server requests.
    pub(crate) fn end(&self, session: &str) {
        if let Some(handle) = lock(&self.handles).remove(session) {
            handle.close();
        }
        lock(&self.assigns).remove(session);
    }
}
