//! Which sessions subscribed to which resource URIs: here, or in a shared
//! [`SubscriptionStore`] for sessions with ids.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::{SubscriptionError, SubscriptionStore};

/// A session as the bookkeeping knows it (`None`: a call with no session).
pub(crate) type SessionKey = Option<String>;

/// Who subscribes: a session, and whether its subscriptions belong in the shared store (a
/// Streamable HTTP session, which every node serving it can look up) or in this process (a
/// stdio session, or a call through no transport: no other node knows them).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Subscriber<'a> {
    session: Option<&'a str>,
    over_http: bool,
}

impl<'a> Subscriber<'a> {
    /// The subscriber a request of `ctx` speaks for.
    pub(crate) fn of(ctx: &'a crate::Context) -> Self {
        Subscriber {
            session: ctx.session_id(),
            over_http: ctx.origin().transport == crate::context::TransportKind::Http,
        }
    }

    /// The session, when its subscriptions belong in a shared store.
    fn shared_session(self) -> Option<&'a str> {
        self.session.filter(|_| self.over_http)
    }
}

/// `resources/subscribe` bookkeeping: URI → subscribed sessions, in this process, or in the
/// shared store for the sessions with ids when the server has one.
#[derive(Default)]
pub(crate) struct Subscriptions {
    state: Mutex<State>,
    shared: Option<Arc<dyn SubscriptionStore>>,
}

impl std::fmt::Debug for Subscriptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscriptions")
            .field("shared", &self.shared.is_some())
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Default)]
struct State {
    by_uri: BTreeMap<String, BTreeSet<SessionKey>>,
    /// How many URIs each session is subscribed to (kept with `by_uri`, for the caps).
    per_session: HashMap<SessionKey, usize>,
    total: usize,
}

impl Subscriptions {
    /// Bookkeeping in this process, and in `shared` for sessions with ids when set.
    pub(crate) fn new(shared: Option<Arc<dyn SubscriptionStore>>) -> Self {
        Subscriptions {
            state: Mutex::default(),
            shared,
        }
    }

    /// The shared store, when the server has one.
    pub(crate) fn shared(&self) -> Option<&Arc<dyn SubscriptionStore>> {
        self.shared.as_ref()
    }

    /// Subscribes `subscriber` to `uri` where its subscriptions live.
    pub(crate) async fn subscribe(
        &self,
        uri: &str,
        subscriber: Subscriber<'_>,
        limits: &crate::Limits,
    ) -> Result<(), SubscriptionError> {
        match (subscriber.shared_session(), &self.shared) {
            (Some(session), Some(store)) => store.subscribe(session, uri, limits).await,
            _ => self.subscribe_here(uri, subscriber.session.map(str::to_owned), limits),
        }
    }

    /// Unsubscribes `subscriber` from `uri` where its subscriptions live; whether it was.
    pub(crate) async fn unsubscribe(
        &self,
        uri: &str,
        subscriber: Subscriber<'_>,
    ) -> Result<bool, SubscriptionError> {
        match (subscriber.shared_session(), &self.shared) {
            (Some(session), Some(store)) => store.unsubscribe(session, uri).await,
            _ => Ok(self.unsubscribe_here(uri, &subscriber.session.map(str::to_owned))),
        }
    }

    /// The URIs `session` is subscribed to: those held in this process, then, for a session
    /// with an id, those of the shared store when there is one (a Streamable HTTP session's
    /// are there, a stdio session's here).
    pub(crate) async fn of(&self, session: Option<&str>) -> Result<Vec<String>, SubscriptionError> {
        let mut uris = self.subscriptions_of(&session.map(str::to_owned));
        if let (Some(session), Some(store)) = (session, &self.shared) {
            uris.extend(store.subscriptions_of(session).await?);
        }
        Ok(uris)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Every update keeps the map and the counts together under the lock: a poisoned state
        // is still consistent.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Subscribes `session` to `uri` unless a cap of `limits` is reached (subscribing again to
    /// a URI the session holds is always accepted).
    fn subscribe_here(
        &self,
        uri: &str,
        session: SessionKey,
        limits: &crate::Limits,
    ) -> Result<(), SubscriptionError> {
        let mut state = self.lock();
        if state.by_uri.get(uri).is_some_and(|s| s.contains(&session)) {
            return Ok(());
        }
        let held = state.per_session.get(&session).copied().unwrap_or(0);
        if held >= limits.max_subscriptions_per_session {
            return Err(SubscriptionError::SessionFull {
                max: limits.max_subscriptions_per_session,
            });
        }
        if state.total >= limits.max_subscriptions {
            return Err(SubscriptionError::ServerFull {
                max: limits.max_subscriptions,
            });
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
    fn unsubscribe_here(&self, uri: &str, session: &SessionKey) -> bool {
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

    /// The sessions subscribed to `uri` in this process (not those of the shared store).
    pub(crate) fn subscribers_here(&self, uri: &str) -> Vec<SessionKey> {
        self.lock()
            .by_uri
            .get(uri)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default()
    }

    fn subscriptions_of(&self, session: &SessionKey) -> Vec<String> {
        self.lock()
            .by_uri
            .iter()
            .filter(|(_, sessions)| sessions.contains(session))
            .map(|(uri, _)| uri.clone())
            .collect()
    }

    /// Drops the subscriptions `session` holds in this process (the shared store's are
    /// dropped by the node that ends the session: [`forget_shared`](Self::forget_shared));
    /// answers their URIs.
    pub(crate) fn forget_here(&self, session: &SessionKey) -> Vec<String> {
        let mut state = self.lock();
        let Some(held) = state.per_session.get(session).copied() else {
            return Vec::new();
        };
        let mut dropped = Vec::with_capacity(held);
        state.by_uri.retain(|uri, sessions| {
            if sessions.remove(session) {
                dropped.push(uri.clone());
            }
            !sessions.is_empty()
        });
        state.release(session, held);
        dropped
    }
}

impl Subscriptions {
    /// Drops the subscriptions `session` holds in the shared store, if there is one;
    /// answers their URIs (as far as the store could tell them).
    pub(crate) async fn forget_shared(&self, session: &str) -> Vec<String> {
        let Some(store) = &self.shared else {
            return Vec::new();
        };
        let held = store.subscriptions_of(session).await.unwrap_or_default();
        if let Err(err) = store.forget_session(session).await {
            tracing::warn!(%err, "the subscriptions of an ended session were not dropped");
        }
        held
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
