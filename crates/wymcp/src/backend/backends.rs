//! [`Backends`]: every store a server keeps outside its process, in one value.

use std::fmt;
use std::sync::Arc;

use crate::resource::subscription_store::SubscriptionStore;
use crate::session::bus::Bus;
use crate::session::events::EventLog;
use crate::session::store::SessionStore;
use crate::task::store::TaskStore;
use crate::user_state::UserStateStore;

/// The stores a server uses instead of its process's memory, given once to
/// [`ServerBuilder::backends`](crate::ServerBuilder::backends); every deployment serving the
/// server (Streamable HTTP, stdio) takes what it needs from there. A store left unset is kept
/// in the process (user state: off).
///
/// Cheap to clone: the nodes of one deployment each build their server with a clone of the
/// same value, and share every store in it.
///
/// ```
/// use wymcp::Server;
/// use wymcp::backend::{Backends, InMemoryEventLog, InMemorySessionStore, LocalBus};
/// use wymcp::transport::http::StreamableHttp;
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// // Two nodes in one process sharing sessions, events and a bus: what Redis does between
/// // processes (`wymcp_redis::Redis::backends`).
/// let shared = Backends::new()
///     .sessions(InMemorySessionStore::new())
///     .events(InMemoryEventLog::new())
///     .bus(LocalBus::new());
/// let node = |id: &str| {
///     let server = Server::builder().backends(shared.clone()).build().unwrap();
///     StreamableHttp::builder(server).node_id(id).build()
/// };
/// let (a, b) = (node("a"), node("b"));
/// # let _ = (a, b);
/// # }
/// ```
#[derive(Clone, Default)]
#[must_use]
pub struct Backends {
    pub(crate) sessions: Option<Arc<dyn SessionStore>>,
    pub(crate) events: Option<Arc<dyn EventLog>>,
    pub(crate) bus: Option<Arc<dyn Bus>>,
    pub(crate) tasks: Option<Arc<dyn TaskStore>>,
    pub(crate) user_state: Option<Arc<dyn UserStateStore>>,
    pub(crate) subscriptions: Option<Arc<dyn SubscriptionStore>>,
}

impl Backends {
    /// No store set: everything in the process, user state off.
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps the sessions' records in `store` (Streamable HTTP; stdio's one session stays in
    /// its process), so every node sharing it serves every session.
    pub fn sessions(mut self, store: impl SessionStore) -> Self {
        self.sessions = Some(Arc::new(store));
        self
    }

    /// Keeps the SSE events a client resumes from (`Last-Event-ID`) in `log` (Streamable
    /// HTTP).
    pub fn events(mut self, log: impl EventLog) -> Self {
        self.events = Some(Arc::new(log));
        self
    }

    /// Reaches the other nodes serving the same sessions through `bus` (Streamable HTTP): a
    /// request for a session may then arrive at any node. The nodes share their session
    /// store and event log too.
    pub fn bus(mut self, bus: impl Bus) -> Self {
        self.bus = Some(Arc::new(bus));
        self
    }

    /// Keeps tasks in `store` (default: [`InMemoryTaskStore`](super::InMemoryTaskStore)).
    pub fn tasks(mut self, store: impl TaskStore) -> Self {
        self.tasks = Some(Arc::new(store));
        self
    }

    /// Keeps per-principal state ([`Context::user_state`](crate::Context::user_state)) in
    /// `store`; without it a tool's user state answers
    /// [`UserStateError::NotConfigured`](crate::user_state::UserStateError::NotConfigured).
    pub fn user_state(mut self, store: impl UserStateStore) -> Self {
        self.user_state = Some(Arc::new(store));
        self
    }

    /// Keeps the `resources/subscribe` subscriptions of sessions in `store`, so a
    /// subscription taken on one node is notified from any node and outlives it; then
    /// [`Limits::max_subscriptions`](crate::Limits::max_subscriptions) bounds the store's
    /// total, every node's together. stdio's sessions keep theirs in the process in any case.
    pub fn subscriptions(mut self, store: impl SubscriptionStore) -> Self {
        self.subscriptions = Some(Arc::new(store));
        self
    }
}

impl fmt::Debug for Backends {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let set = |present: bool| if present { "set" } else { "in process" };
        f.debug_struct("Backends")
            .field("sessions", &set(self.sessions.is_some()))
            .field("events", &set(self.events.is_some()))
            .field("bus", &set(self.bus.is_some()))
            .field("tasks", &set(self.tasks.is_some()))
            .field("user_state", &set(self.user_state.is_some()))
            .field("subscriptions", &set(self.subscriptions.is_some()))
            .finish()
    }
}
