//! [`Sessions`]: the one owner of the sessions of one deployment (an endpoint, a stdio
//! connection). It creates, loads, resolves, saves and ends them, expires the idle ones (the
//! reaper), fans the server's notifications out to their streams, keeps their event log, and
//! holds everything that crosses nodes: the bus, the relay of the server's notifications, the
//! leases of running calls. Every transport serves its sessions through it; none keeps a
//! lifecycle of its own.

use std::sync::{Arc, Weak};
use std::time::Duration;

use futures_util::StreamExt as _;
use futures_util::future::BoxFuture;
use serde_json::Value;
use tokio::sync::broadcast;
use tokio::task::AbortHandle;

use super::budget::InitializeBudget;
use super::client_values::ClientValues;
use super::cluster::{Cluster, Elsewhere};
use super::live::LiveSessions;
use super::quota::ClientQuota;
use super::streams::{StreamEvent, Streams};
use super::{Class, EndReason, Identity, Refusal, SessionHooks};
use crate::Server;
use crate::resource::ServerNotification;
use crate::session::{
    BusMessage, CreateError, EventLog, LoggedEvent, Notice, Recipient, SessionHandle,
    SessionRecord, SessionStore, StoreError, node_of_request,
};
use crate::session::{Delivery, Notifier};

/// What a deployment's sessions are kept in and how they live, as its transport configured it.
pub(crate) struct SessionsConfig {
    pub(crate) store: Arc<dyn SessionStore>,
    pub(crate) hooks: Option<Arc<dyn SessionHooks>>,
    /// Where stream events are logged for resumption (`None`: the transport resumes nothing,
    /// and nothing is logged).
    pub(crate) events: Option<Arc<dyn EventLog>>,
    /// How long a session lives without a request (`Duration::MAX`: for ever, no reaper).
    pub(crate) ttl: Duration,
    /// The most live sessions at once.
    pub(crate) max: usize,
    /// The name of a session's standalone stream (in event ids and server request ids).
    pub(crate) standalone: &'static str,
    /// This node and its bus to the others.
    pub(crate) cluster: Cluster,
}

/// A session's record as its store answered, loaded before its message was parsed
/// ([`Sessions::load`]); [`Sessions::resolve`] judges it as it would a load of its own.
pub(crate) struct Loaded(Result<Option<Arc<SessionRecord>>, StoreError>);

/// The sessions of one deployment.
pub(crate) struct Sessions {
    server: Server,
    store: Arc<dyn SessionStore>,
    hooks: Option<Arc<dyn SessionHooks>>,
    events: Arc<dyn EventLog>,
    streams: Arc<Streams>,
    live: LiveSessions,
    quota: ClientQuota,
    /// What the live sessions created here keep of `initialize`, weighed together.
    initialize_budget: InitializeBudget,
    /// The client capabilities and info sessions keep, shared when equal.
    client_values: ClientValues,
    cluster: Cluster,
    /// How an event reaches a stream another node holds (`None`: no other node).
    elsewhere: Option<Elsewhere>,
    ttl: Duration,
    max: usize,
    standalone: &'static str,
}

impl Sessions {
    pub(crate) fn new(server: Server, config: SessionsConfig) -> Self {
        let events = config.events.unwrap_or_else(|| Arc::new(Unlogged));
        let elsewhere = config.cluster.bus.as_ref().map(|bus| Elsewhere {
            node: config.cluster.node.clone(),
            bus: bus.clone(),
            events: events.clone(),
        });
        Sessions {
            server,
            store: config.store,
            hooks: config.hooks,
            events,
            streams: Arc::default(),
            live: LiveSessions::default(),
            quota: ClientQuota::default(),
            initialize_budget: InitializeBudget::default(),
            client_values: ClientValues::default(),
            cluster: config.cluster,
            elsewhere,
            ttl: config.ttl,
            max: config.max,
            standalone: config.standalone,
        }
    }

    /// Inside a Tokio runtime, starts what runs beside the requests: the reaper (when sessions
    /// expire), the fan-out of the server's notifications, and with other nodes the relay of
    /// this node's notifications and the taking of what the others send. Each task ends when
    /// the sessions are dropped; the handles abort them sooner.
    pub(crate) fn start(self: &Arc<Self>) -> Vec<AbortHandle> {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return Vec::new();
        };
        let mut tasks = Vec::new();
        if self.ttl < Duration::MAX {
            tasks.push(runtime.spawn(reap(Arc::downgrade(self))).abort_handle());
        }
        let notifications = self.server.notifications();
        tasks.push(
            runtime
                .spawn(fan_out(Arc::downgrade(self), notifications))
                .abort_handle(),
        );
        if let Some(bus) = &self.cluster.bus {
            let notices = self.server.notices();
            let relay = relay(self.cluster.node.clone(), bus.clone(), notices);
            tasks.push(runtime.spawn(relay).abort_handle());
            let messages = bus.subscribe(&self.cluster.node);
            tasks.push(
                runtime
                    .spawn(take(Arc::downgrade(self), messages))
                    .abort_handle(),
            );
        }
        tasks
    }

    pub(crate) fn store(&self) -> &dyn SessionStore {
        self.store.as_ref()
    }

    pub(crate) fn hooks(&self) -> Option<&dyn SessionHooks> {
        self.hooks.as_deref()
    }

    /// The log of the sessions' stream events.
    pub(crate) fn events(&self) -> &dyn EventLog {
        self.events.as_ref()
    }

    /// The sessions' open streams on this node.
    pub(crate) fn streams(&self) -> &Streams {
        &self.streams
    }

    /// How a stream event reaches another node, when there are others.
    pub(crate) fn elsewhere(&self) -> Option<&Elsewhere> {
        self.elsewhere.as_ref()
    }

    pub(crate) fn cluster(&self) -> &Cluster {
        &self.cluster
    }

    pub(crate) fn live(&self) -> &LiveSessions {
        &self.live
    }

    /// The client capabilities and info new sessions keep, shared when equal.
    pub(crate) fn client_values(&self) -> &ClientValues {
        &self.client_values
    }

    /// How long a session lives without a request.
    pub(crate) fn ttl(&self) -> Duration {
        self.ttl
    }

    /// The session's live handle on this node, made the first time (its standalone stream
    /// is the stream attached under its id, or another node's).
    pub(crate) fn handle(&self, record: &SessionRecord) -> SessionHandle {
        let standalone = || self.standalone_stream(&record.id);
        self.live
            .handle(record, &self.server, &self.cluster.node, standalone)
    }

    /// A session's standalone stream (messages no request owns): delivered to the stream
    /// attached here, which logs it as it writes it; with other nodes, a stream not attached
    /// here gets it logged and sent on the bus.
    fn standalone_stream(&self, session: &str) -> Notifier {
        let streams = Arc::downgrade(&self.streams);
        let (session, elsewhere, name) =
            (session.to_owned(), self.elsewhere.clone(), self.standalone);
        Notifier::with_delivery(name, move |message: Value| {
            let Some(streams) = streams.upgrade() else {
                return Delivery::NoStream;
            };
            let data = message.to_string();
            match (
                streams.deliver(&session, StreamEvent { id: None, data }),
                &elsewhere,
            ) {
                (Delivery::NoStream, Some(elsewhere)) => {
                    elsewhere.log_and_send(&session, name, message.to_string());
                    Delivery::Sent
                }
                (delivery, _) => delivery,
            }
        })
    }

    /// The live session `id` (on this node), made from its record when this node has no handle
    /// for it yet; `None` when there is no such session.
    pub(crate) async fn session_handle(
        &self,
        id: &str,
    ) -> Result<Option<SessionHandle>, StoreError> {
        if let Some(handle) = self.live.existing(id) {
            return Ok(Some(handle));
        }
        let record = self.store.load(id, self.ttl).await?;
        Ok(record.map(|record| self.handle(&record)))
    }

    /// Loads session `id` ahead of its message. Streamable HTTP loads the session a
    /// session-era POST names once its body is read and before it is parsed: a request that
    /// waits for a remote store (Redis) then holds its bytes, not the tree parsed from them,
    /// and the tree is made, used and freed in one turn, as on a node in memory (see
    /// docs/performance-history.md, "3 December 2026: a node on Redis, the session loaded
    /// before the body is parsed").
    pub(crate) async fn load(&self, id: &str) -> Loaded {
        Loaded(self.store.load(id, self.ttl).await)
    }

    /// The session `id` for a request presenting `identity` (`loaded`: its record as loaded
    /// ahead, if it was; else it is loaded now): refused as gone when it does not exist (any
    /// more) or belongs to another identity.
    pub(crate) async fn resolve(
        &self,
        id: &str,
        identity: Option<&Identity>,
        (rid, message): (&Value, Option<&Value>),
        loaded: Option<Loaded>,
    ) -> Result<Arc<SessionRecord>, Refusal> {
        let loaded = match loaded {
            Some(Loaded(loaded)) => loaded,
            None => self.store.load(id, self.ttl).await,
        };
        match loaded {
            Ok(Some(record)) if owns(&record, identity) => Ok(record),
            Ok(found) => {
                if found.is_none() {
                    self.forget(id);
                }
                let request_id = message.and_then(|m| m.get("id"));
                tracing::info!(
                    name: "wymcp.session.not_found",
                    session_id = %wymcp_core::bound::echo(id),
                    request_id = request_id.map(|id| wymcp_core::bound::echo(&id.to_string())),
                    method = message
                        .and_then(|m| m.get("method"))
                        .and_then(serde_json::Value::as_str)
                        .map(wymcp_core::bound::echo),
                    "MCP session not found"
                );
                Err(Refusal::session_gone(rid.clone()))
            }
            Err(err) => Err(Refusal::store(rid.clone(), &err)),
        }
    }

    /// Stores the new session, counted against its client (when known): refused when the client
    /// or the server holds its most sessions. A store that counts clients itself (one shared by
    /// several nodes) counts them across all nodes; otherwise this node does.
    pub(crate) async fn create(
        &self,
        record: SessionRecord,
        id: &Value,
        client: Option<&str>,
    ) -> Result<(), Refusal> {
        let session = record.id.clone();
        let max_per_client = self.server.limits().max_sessions_per_client;
        let store = self.store.as_ref();
        let shared = client.filter(|_| store.counts_clients());
        if let Some(client) = client.filter(|_| shared.is_none())
            && !self.quota.reserve(client, &session, max_per_client)
        {
            return Err(too_many_for_client(id, max_per_client));
        }
        let max_weight = self.server.limits().max_initialize_params_total;
        if let Err(held) = self.initialize_budget.reserve(&record, max_weight) {
            self.quota.release(&session);
            return Err(initialize_budget_spent(id, held, max_weight));
        }
        let created = match shared {
            Some(client) => {
                store
                    .create_for_client(record, self.max, self.ttl, client, max_per_client)
                    .await
            }
            None => store.create(record, self.max, self.ttl).await,
        };
        created.map_err(|error| {
        self.quota.release(&session);
        self.initialize_budget.release(&session);
        match error {
            CreateError::Full(max) => {
                tracing::warn!(max, "MCP session refused: the session limit is reached");
                unavailable(
                    id,
                    format!(
                        "Too many sessions: the limit of {max} live sessions is reached. Try again later."
                    ),
                )
            }
            CreateError::ClientFull(max) => too_many_for_client(id, max),
            CreateError::Store(err) => Refusal::store(id.clone(), &err),
        }
    })
    }

    /// Saves a changed record; a session gone meanwhile is refused as such.
    pub(crate) async fn save(&self, record: SessionRecord, rid: &Value) -> Result<(), Refusal> {
        match self.store.save(record).await {
            Ok(true) => Ok(()),
            Ok(false) => Err(Refusal::session_gone(rid.clone())),
            Err(error) => Err(Refusal::store(rid.clone(), &error)),
        }
    }

    /// Ends session `id` for a request presenting `identity` (Streamable HTTP's DELETE): to
    /// anyone but its owner it does not exist. Answers whether it was ended.
    pub(crate) async fn end_owned(
        &self,
        id: &str,
        identity: Option<&Identity>,
    ) -> Result<bool, StoreError> {
        match self.store.load(id, self.ttl).await? {
            Some(record) if owns(&record, identity) => self.end(id, EndReason::Deleted).await,
            Some(_) => Ok(false),
            None => {
                self.forget(id);
                Ok(false)
            }
        }
    }

    /// Ends session `id` everywhere: its record, its live handle (its running calls are
    /// cancelled), its streams and logged events, its resource subscriptions, on this node and
    /// (through the bus) the others; then the end hook, when the store had it. Answers whether
    /// the store had it.
    pub(crate) async fn end(&self, id: &str, reason: EndReason) -> Result<bool, StoreError> {
        let found = self.store.remove(id).await?;
        self.forget_everywhere(id).await;
        self.events.remove_session(id).await?;
        if found {
            self.ended(id, reason).await;
        }
        Ok(found)
    }

    /// One round of the reaper: the sessions idle past the TTL are removed and ended as
    /// [`end`](Self::end) ends one; answers how many.
    pub(crate) async fn reap(&self) -> Result<usize, StoreError> {
        // A running call keeps its session alive: its idle timer restarts (a load does it).
        for id in self.live.busy() {
            self.store.load(&id, self.ttl).await?;
        }
        let gone = self.store.reap(self.ttl).await?;
        for id in &gone {
            self.forget_everywhere(id).await;
            if let Err(err) = self.events.remove_session(id).await {
                tracing::warn!(%err, "could not forget the events of an expired session");
            }
            self.ended(id, EndReason::Expired).await;
            tracing::info!(
                name: "wymcp.session.expired",
                session_id = id.as_str(),
                "MCP session expired"
            );
        }
        Ok(gone.len())
    }

    /// What this node holds of a session gone from the store, its subscriptions, and (through
    /// the bus) what the other nodes hold of it.
    async fn forget_everywhere(&self, id: &str) {
        self.forget(id);
        self.server.forget_session(Some(id)).await;
        let ended = BusMessage::Ended {
            session: id.to_owned(),
        };
        self.publish(Recipient::Everyone, ended).await;
    }

    /// A session found gone from the store (expired, or ended on another node): what this
    /// node still holds of it goes too, or its handle would outlive it until the reaper's next
    /// round (found by fuzzing). The reaper still reports the end of an expired one.
    pub(crate) fn forget(&self, id: &str) {
        #[cfg(feature = "otel")]
        super::metrics::session_ended(id);
        self.quota.release(id);
        self.initialize_budget.release(id);
        self.live.end(id);
        self.streams.end_session(id);
        self.server.forget_session_here(Some(id));
    }

    /// Runs the session hooks' end hook, when there are hooks.
    async fn ended(&self, id: &str, reason: EndReason) {
        if let Some(hooks) = self.hooks() {
            hooks.on_end(id, reason).await;
        }
    }

    /// Sends a JSON-RPC message to a session's standalone stream, logged first (a client that
    /// resumes gets it even when no stream is open now). Answers whether a stream took it.
    pub(crate) async fn push(&self, session: &str, message: &Value) -> Result<bool, StoreError> {
        let data = message.to_string();
        let id = self
            .events
            .append(session, self.standalone, data.clone())
            .await?;
        Ok(self
            .streams
            .send(session, StreamEvent { id: Some(id), data }))
    }

    /// Delivers one server notification to the standalone stream of the session it names,
    /// or of every session live on this node when it names none; logged first. With other
    /// nodes, one naming a session whose stream another node holds (or one this node never
    /// served) travels on the bus to it; one naming none goes to the streams this node holds
    /// (every node hears it: the relay publishes it).
    async fn deliver(&self, notification: &ServerNotification) {
        let sessions = match &notification.session_id {
            Some(id) if self.live.existing(id).is_some() => vec![id.clone()],
            // A session this node has not served, named by the shared subscription store:
            // another node may hold its stream.
            Some(id) if self.elsewhere.is_some() => vec![id.clone()],
            // A session no node serves.
            Some(_) => Vec::new(),
            None if self.elsewhere.is_some() => self.streams.sessions(),
            None => self.live.ids(),
        };
        let data = notification.message.to_string();
        let named = notification.session_id.is_some();
        for session in sessions {
            // A log that refuses the event (a store full or down) does not cost the client the
            // notification: it is sent live without an id, so the stream cannot be resumed
            // past it, as a call's events are (issue 48, N19).
            let id = match self
                .events
                .append(&session, self.standalone, data.clone())
                .await
            {
                Ok(id) => Some(id),
                Err(err) => {
                    tracing::warn!(
                        %err,
                        "SSE event log failed: the notification is sent without an id"
                    );
                    None
                }
            };
            let event = StreamEvent {
                id: id.clone(),
                data: data.clone(),
            };
            // Another node's stream is reached through the log (its id), so only a logged
            // event travels there.
            if !self.streams.send(&session, event)
                && named
                && let (Some(elsewhere), Some(id)) = (&self.elsewhere, id)
            {
                let stream = self.standalone.to_owned();
                elsewhere.send(session, stream, id, data.clone()).await;
            }
        }
    }

    /// Takes one message another node sent: a client's answer, a cancellation, the end of a
    /// session, a notification, an event for a stream held here.
    fn take(&self, message: BusMessage) {
        match message {
            BusMessage::Answer {
                session,
                id,
                answer,
            } => {
                if let Some(handle) = self.live.existing(&session) {
                    handle.deliver_response(&Value::String(id), answer);
                }
            }
            BusMessage::Cancel {
                session,
                request_id,
            } => {
                if let Some(handle) = self.live.existing(&session)
                    && handle.cancel_call(&request_id)
                {
                    tracing::info!(request_id = %request_id, "MCP call cancelled by the client (through another node)");
                }
            }
            BusMessage::Ended { session } => self.forget(&session),
            BusMessage::Notify(notice) => self.server.notify_here(&notice),
            BusMessage::Event {
                session,
                stream,
                id,
                data,
            } => {
                let event = StreamEvent { id: Some(id), data };
                if stream == self.standalone {
                    self.streams.send(&session, event);
                } else {
                    self.streams.deliver_resumed(&session, &stream, event);
                }
            }
        }
    }

    /// Sends `message` to `to` on the bus, if there is one; a failure is logged (the bus is
    /// at most once: the failure semantics of `docs/scale-out.md` cover a lost message).
    pub(crate) async fn publish(&self, to: Recipient<'_>, message: BusMessage) {
        if let Some(bus) = &self.cluster.bus
            && let Err(err) = bus.publish(&self.cluster.node, to, message).await
        {
            tracing::warn!(%err, node = %self.cluster.node, "MCP bus: message not sent");
        }
    }
}

impl Sessions {
    /// A client's answer to server request `id` of `session` that no call here awaits: to
    /// the node whose id the request carries.
    pub(crate) async fn route_answer(
        &self,
        session: &str,
        id: &Value,
        answer: Result<Value, Value>,
    ) {
        let Some(id) = id.as_str() else { return };
        match node_of_request(id) {
            Some(node) if node != &*self.cluster().node => {
                let message = BusMessage::Answer {
                    session: session.to_owned(),
                    id: id.to_owned(),
                    answer,
                };
                self.publish(Recipient::Node(node), message).await;
            }
            // This node's own request, no longer waited on; or not a server request id.
            _ => {}
        }
    }

    /// `notifications/cancelled` for a call of `session` that does not run here: every other
    /// node cancels it if it runs there.
    pub(crate) async fn cancel_elsewhere(&self, session: &str, request_id: &Value) {
        let message = BusMessage::Cancel {
            session: session.to_owned(),
            request_id: request_id.clone(),
        };
        self.publish(Recipient::Everyone, message).await;
    }
}

/// Whether a request presenting `identity` may use the session `record`.
pub(crate) fn owns(record: &SessionRecord, identity: Option<&Identity>) -> bool {
    match (&record.subject, identity) {
        (None, _) => true,
        (Some(subject), Some(identity)) => subject == identity.principal(),
        (Some(_), None) => false,
    }
}

/// The refusal of a session the server cannot hold now (503).
fn unavailable(id: &Value, message: String) -> Refusal {
    Refusal::new(
        Class::Unavailable,
        id.clone(),
        super::invalid_request(message),
    )
}

/// The refusal of a session its client has no place for.
fn too_many_for_client(id: &Value, max: usize) -> Refusal {
    tracing::warn!(
        max,
        "MCP session refused: the client's session limit is reached"
    );
    unavailable(
        id,
        format!(
            "Too many sessions for this client: the limit of {max} live sessions per \
             client is reached (Limits::max_sessions_per_client). End a session (DELETE) \
             or try again later."
        ),
    )
}

/// The refusal of a session whose `initialize` data would pass the server-wide budget.
fn initialize_budget_spent(id: &Value, held: usize, max: usize) -> Refusal {
    tracing::warn!(
        held,
        max,
        "MCP session refused: the live sessions' initialize data reach their limit"
    );
    unavailable(
        id,
        format!(
            "Too much session data: the live sessions' initialize params (client capabilities \
             and info) weigh {held} of at most {max} bytes on this server \
             (Limits::max_initialize_params_total). Try again later, or send smaller \
             capabilities."
        ),
    )
}

/// Removes idle sessions and ends their live things, until the sessions are dropped.
async fn reap(sessions: Weak<Sessions>) {
    // Twice per TTL at least: the reaper restarts the idle timer of a session running a call
    // (see `Sessions::reap`), which must happen before that session's TTL is up.
    let period = match sessions.upgrade() {
        Some(s) => (s.ttl / 2).clamp(Duration::from_millis(10), Duration::from_secs(60)),
        None => return,
    };
    let mut ticker = tokio::time::interval(period);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        let Some(sessions) = sessions.upgrade() else {
            return;
        };
        if let Err(err) = sessions.reap().await {
            tracing::warn!(%err, "session reaper failed");
        }
    }
}

/// Fans the server's notifications (`notifications/resources/updated`, `list_changed`) out to
/// the sessions' streams ([`Sessions::deliver`]), until the sessions or the server are
/// dropped.
async fn fan_out(
    sessions: Weak<Sessions>,
    mut notifications: broadcast::Receiver<ServerNotification>,
) {
    loop {
        let notification = match notifications.recv().await {
            Ok(notification) => notification,
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                tracing::warn!(missed, "server notifications dropped: the transport lagged");
                continue;
            }
            Err(broadcast::error::RecvError::Closed) => return,
        };
        let Some(sessions) = sessions.upgrade() else {
            return;
        };
        sessions.deliver(&notification).await;
    }
}

/// Relays the notifications this node's server emits to the other nodes, until the server is
/// dropped. Each deployment with a bus relays what it hears, so one server served by several
/// deployments needs no "first one wins".
async fn relay(
    node: Arc<str>,
    bus: Arc<dyn crate::session::Bus>,
    mut notices: broadcast::Receiver<Notice>,
) {
    loop {
        let notice = match notices.recv().await {
            Ok(notice) => notice,
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                tracing::warn!(
                    missed,
                    "MCP bus: notifications not relayed: the relay lagged"
                );
                continue;
            }
            Err(broadcast::error::RecvError::Closed) => return,
        };
        let message = BusMessage::Notify(notice);
        if let Err(err) = bus.publish(&node, Recipient::Everyone, message).await {
            tracing::warn!(%err, "MCP bus: notification not relayed");
        }
    }
}

/// Takes what other nodes send, until the sessions are dropped or the bus ends.
async fn take(
    sessions: Weak<Sessions>,
    mut messages: futures_util::stream::BoxStream<'static, BusMessage>,
) {
    while let Some(message) = messages.next().await {
        let Some(sessions) = sessions.upgrade() else {
            return;
        };
        sessions.take(message);
    }
}

/// The event log of a transport that resumes nothing (stdio): nothing is kept.
struct Unlogged;

impl EventLog for Unlogged {
    fn append<'a>(
        &'a self,
        _session: &'a str,
        _stream: &'a str,
        _data: String,
    ) -> BoxFuture<'a, Result<String, StoreError>> {
        Box::pin(std::future::ready(Ok(String::new())))
    }

    fn replay_after<'a>(
        &'a self,
        _session: &'a str,
        _last_event_id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Vec<LoggedEvent>>, StoreError>> {
        Box::pin(std::future::ready(Ok(None)))
    }

    fn remove_session<'a>(&'a self, _session: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(std::future::ready(Ok(())))
    }
}
