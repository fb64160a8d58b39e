//! Which sessions subscribed to which resource URIs.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// A session as the bookkeeping knows it: `None` for a transport without session ids (stdio).
pub(crate) type SessionKey = Option<String>;

/// `resources/subscribe` bookkeeping: URI → subscribed sessions.
#[derive(Debug, Default)]
pub(crate) struct Subscriptions {
    by_uri: Mutex<BTreeMap<String, BTreeSet<SessionKey>>>,
}

impl Subscriptions {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, BTreeSet<SessionKey>>> {
        // Every update is a single insert or remove: a poisoned map is still consistent.
        self.by_uri.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn subscribe(&self, uri: &str, session: SessionKey) {
        self.lock()
            .entry(uri.to_owned())
            .or_default()
            .insert(session);
    }

    /// Answers whether the session was subscribed.
    pub(crate) fn unsubscribe(&self, uri: &str, session: &SessionKey) -> bool {
        let mut map = self.lock();
        let Some(sessions) = map.get_mut(uri) else {
            return false;
        };
        let removed = sessions.remove(session);
        if sessions.is_empty() {
            map.remove(uri);
        }
        removed
    }

    pub(crate) fn subscribers(&self, uri: &str) -> Vec<SessionKey> {
        self.lock()
            .get(uri)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default()
    }

    pub(crate) fn subscriptions_of(&self, session: &SessionKey) -> Vec<String> {
        self.lock()
            .iter()
            .filter(|(_, sessions)| sessions.contains(session))
            .map(|(uri, _)| uri.clone())
            .collect()
    }

    pub(crate) fn forget_session(&self, session: &SessionKey) {
        let mut map = self.lock();
        map.retain(|_, sessions| {
            sessions.remove(session);
            !sessions.is_empty()
        });
    }
}
