//! Which sessions subscribed to which resource URIs.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// A session as the bookkeeping knows it: `None` for a transport without session ids (stdio).
pub(crate) type SessionKey = Option<String>;

/// `resources/subscribe` bookkeeping: URI → subscribed sessions.
#[derive(Debug, Default)]
pub(crate) struct Subscriptions {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    by_uri: BTreeMap<String, BTreeSet<SessionKey>>,
    /// How many URIs each session is subscribed to (kept with `by_uri`, for the caps).
    per_session: HashMap<SessionKey, usize>,
    total: usize,
}

/// Why a subscription was refused: one of the two caps of [`Limits`](crate::Limits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SubscribeRefusal {
    /// The session holds `max_subscriptions_per_session` already.
    Session(usize),
    /// All sessions together hold `max_subscriptions` already.
    Server(usize),
}

impl SubscribeRefusal {
    pub(crate) fn message(self) -> String {
        match self {
            SubscribeRefusal::Session(max) => format!(
                "Too many subscriptions: this session holds {max}, the limit \
                 (Limits::max_subscriptions_per_session). Unsubscribe from one first."
            ),
            SubscribeRefusal::Server(max) => format!(
                "Too many subscriptions: the server holds {max}, its limit \
                 (Limits::max_subscriptions). Try again later."
            ),
        }
    }
}

impl Subscriptions {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Every update keeps the map and the counts together under the lock: a poisoned state
        // is still consistent.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Subscribes `session` to `uri` unless a cap of `limits` is reached (subscribing again to
    /// a URI the session holds is always accepted).
    pub(crate) fn subscribe(
        &self,
        uri: &str,
        session: SessionKey,
        limits: &crate::Limits,
    ) -> Result<(), SubscribeRefusal> {
        let mut state = self.lock();
        if state.by_uri.get(uri).is_some_and(|s| s.contains(&session)) {
            return Ok(());
        }
        let held = state.per_session.get(&session).copied().unwrap_or(0);
        if held >= limits.max_subscriptions_per_session {
            return Err(SubscribeRefusal::Session(
                limits.max_subscriptions_per_session,
            ));
        }
        if state.total >= limits.max_subscriptions {
            return Err(SubscribeRefusal::Server(limits.max_subscriptions));
        }
        state
            .by_uri
            .entry(uri.to_owned())
            .or_default()
            .insert(session.clone());
        *state.per_session.entry(session).or_default() += 1;
        state.total += 1;
        Ok(())
    }

    /// Answers whether the session was subscribed.
    pub(crate) fn unsubscribe(&self, uri: &str, session: &SessionKey) -> bool {
        let mut state = self.lock();
        let Some(sessions) = state.by_uri.get_mut(uri) else {
            return false;
        };
        let removed = sessions.remove(session);
        if sessions.is_empty() {
            state.by_uri.remove(uri);
        }
        if removed {
            state.release(session, 1);
        }
        removed
    }

    pub(crate) fn subscribers(&self, uri: &str) -> Vec<SessionKey> {
        self.lock()
            .by_uri
            .get(uri)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default()
    }

    pub(crate) fn subscriptions_of(&self, session: &SessionKey) -> Vec<String> {
        self.lock()
            .by_uri
            .iter()
            .filter(|(_, sessions)| sessions.contains(session))
            .map(|(uri, _)| uri.clone())
            .collect()
    }

    pub(crate) fn forget_session(&self, session: &SessionKey) {
        let mut state = self.lock();
        let Some(held) = state.per_session.get(session).copied() else {
            return;
        };
        state.by_uri.retain(|_, sessions| {
            sessions.remove(session);
            !sessions.is_empty()
        });
        state.release(session, held);
    }
}

impl State {
    fn release(&mut self, session: &SessionKey, count: usize) {
        if let Some(held) = self.per_session.get_mut(session) {
            *held = held.saturating_sub(count);
            if *held == 0 {
                self.per_session.remove(session);
            }
        }
        self.total = self.total.saturating_sub(count);
    }
}
