//! [`Core`]: what a transport holds to serve a [`Server`]: the session store and the live
//! sessions of this node, the session hooks, the settings both eras honour.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::cluster::Cluster;
use super::live::LiveSessions;
use super::quota::ClientQuota;
use super::{
    EndReason, Era, Identity, Inbound, Outcome, Refusal, SessionHooks, session, stateless,
};
use crate::Notifier;
use crate::Server;
use crate::protocol::ProtocolVersion;
use crate::protocol::stateless::CacheHints;
use crate::session::{RunningCalls, SessionHandle, SessionRecord, SessionStore, StoreError};

/// What the core honours, as its transport configured it.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// The most live sessions at once.
    pub(crate) max_sessions: usize,
    /// How long a session lives without a request.
    pub(crate) session_ttl: Duration,
    /// A session-era request whose version header names another revision than the session's
    /// is refused (2025-06-18 and later).
    pub(crate) strict_version_header: bool,
    /// The cache hints of the stateless era's results.
    pub(crate) cache_hints: CacheHints,
    /// The transport serves one session (stdio): `initialize` inside it is refused.
    pub(crate) one_session: bool,
    /// Which transport this is (operation middleware sees it).
    pub(crate) transport: crate::context::TransportKind,
}

/// A session's record as its store answered, loaded before its message was parsed
/// ([`Core::load`]); [`Core::resolve`] judges it as it would a load of its own.
pub(crate) struct Loaded(Result<Option<Arc<SessionRecord>>, StoreError>);

/// The standalone stream of a session (messages no request owns), as its transport carries it.
pub(crate) type Standalone = Box<dyn Fn(&str) -> Notifier + Send + Sync>;

/// The serving core of one endpoint. Cheap to clone; every clone is the same core.
#[derive(Clone)]
pub(crate) struct Core(Arc<Inner>);

struct Inner {
    server: Server,
    store: Arc<dyn SessionStore>,
    hooks: Option<Arc<dyn SessionHooks>>,
    settings: Settings,
    live: LiveSessions,
    quota: ClientQuota,
    standalone: Standalone,
    /// The stateless requests `notifications/cancelled` can reach (stdio, where requests share
    /// one connection); `None` where each request ends with its own (Streamable HTTP).
    requests: Option<Arc<RunningCalls>>,
    /// This node and its bus to the others.
    cluster: Cluster,
    /// The `_meta` of the stateless era's `tools/call` answers, written once.
    stateless_meta: Arc<serde_json::value::RawValue>,
}

impl Core {
    /// A core serving `server` with sessions in `store`.
    pub(crate) fn new(
        server: Server,
        store: Arc<dyn SessionStore>,
        hooks: Option<Arc<dyn SessionHooks>>,
        settings: Settings,
        standalone: Standalone,
        cancellable_requests: bool,
        cluster: Cluster,
    ) -> Self {
        if let Some(bus) = &cluster.bus {
            server.relay_to(cluster.node.clone(), bus.clone());
        }
        let stateless_meta = stateless::meta(server.info());
        Core(Arc::new(Inner {
            stateless_meta,
            server,
            store,
            hooks,
            settings,
            live: LiveSessions::default(),
            quota: ClientQuota::default(),
            standalone,
            requests: cancellable_requests.then(Arc::default),
            cluster,
        }))
    }

    pub(crate) fn cluster(&self) -> &Cluster {
        &self.0.cluster
    }

    pub(crate) fn server(&self) -> &Server {
        &self.0.server
    }

    pub(crate) fn store(&self) -> &dyn SessionStore {
        self.0.store.as_ref()
    }

    pub(crate) fn hooks(&self) -> Option<&dyn SessionHooks> {
        self.0.hooks.as_deref()
    }

    pub(crate) fn settings(&self) -> &Settings {
        &self.0.settings
    }

    /// The `_meta` of the stateless era's `tools/call` answers (the server's name and version).
    pub(crate) fn stateless_meta(&self) -> &Arc<serde_json::value::RawValue> {
        &self.0.stateless_meta
    }

    /// The live sessions of each client on this node.
    pub(crate) fn quota(&self) -> &ClientQuota {
        &self.0.quota
    }

    pub(crate) fn live(&self) -> &LiveSessions {
        &self.0.live
    }

    /// The stateless requests that can be cancelled by id, on transports that have them.
    pub(crate) fn requests(&self) -> Option<&Arc<RunningCalls>> {
        self.0.requests.as_ref()
    }

    /// Serves one message.
    pub(crate) async fn serve(&self, inbound: Inbound<'_>) -> Result<Outcome, Refusal> {
        match inbound.era {
            Era::Session => session::serve(self, inbound).await,
            // Boxed: the stateless era's future is several times a session call's, and the
            // transport's request future would otherwise be as large as it.
            Era::Stateless => Box::pin(stateless::serve(self, inbound)).await,
        }
    }

    /// Serves a JSON-RPC batch (2025-03-26 sessions only): the array of answers, `None` when
    /// no message of it wants one.
    pub(crate) async fn serve_batch(
        &self,
        items: Vec<Value>,
        inbound: Inbound<'_>,
    ) -> Result<Option<Value>, Refusal> {
        Box::pin(session::serve_batch(self, items, inbound)).await
    }

    /// The session's live handle on this node, made the first time.
    pub(crate) fn handle(&self, record: &SessionRecord) -> SessionHandle {
        let standalone = || (self.0.standalone)(&record.id);
        let node = &self.0.cluster.node;
        self.0.live.handle(record, &self.0.server, node, standalone)
    }

    /// The live session `id` (on this node), made from its record when this node has no handle
    /// for it yet; `None` when there is no such session.
    pub(crate) async fn session_handle(
        &self,
        id: &str,
    ) -> Result<Option<SessionHandle>, StoreError> {
        if let Some(handle) = self.0.live.existing(id) {
            return Ok(Some(handle));
        }
        let record = self.store().load(id, self.settings().session_ttl).await?;
        Ok(record.map(|record| self.handle(&record)))
    }

    /// Loads session `id` ahead of its message. Streamable HTTP loads the session a
    /// session-era POST names once its body is read and before it is parsed: a request that
    /// waits for a remote store (Redis) then holds its bytes, not the tree parsed from them,
    /// and the tree is made, used and freed in one turn, as on a node in memory (see
    /// docs/performance.md, "3 December 2026: a node on Redis, the session loaded before the
    /// body is parsed").
    pub(crate) async fn load(&self, id: &str) -> Loaded {
        Loaded(self.store().load(id, self.settings().session_ttl).await)
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
            None => self.store().load(id, self.settings().session_ttl).await,
        };
        match loaded {
            Ok(Some(record)) if owns(&record, identity) => Ok(record),
            Ok(found) => {
                if found.is_none() {
                    self.forget_gone(id);
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

    /// A request naming revision `requested` in its version header, in session `record`:
    /// refused when strict and another revision than the session's (2025-06-18 and later).
    pub(crate) fn check_version(
        &self,
        record: &SessionRecord,
        requested: Option<ProtocolVersion>,
        rid: &Value,
    ) -> Result<(), Refusal> {
        if self.settings().strict_version_header
            && record.version.has_version_header()
            && requested.is_some_and(|v| v != record.version)
        {
            return Err(Refusal::invalid(
                rid.clone(),
                "Incorrect MCP-Protocol-Version header. Expected the version negotiated during initialize.",
            ));
        }
        Ok(())
    }

    /// Saves a changed record; a session gone meanwhile is refused as such.
    pub(crate) async fn save(&self, record: SessionRecord, rid: &Value) -> Result<(), Refusal> {
        match self.store().save(record).await {
            Ok(true) => Ok(()),
            Ok(false) => Err(Refusal::session_gone(rid.clone())),
            Err(error) => Err(Refusal::store(rid.clone(), &error)),
        }
    }

    /// `notifications/cancelled` for a stateless request: cancels the running request its
    /// `requestId` names, on transports whose requests can be cancelled by id.
    pub(crate) fn cancel_request(&self, params: Option<&Value>) {
        if let Some(requests) = self.requests()
            && let Some(id) = params.and_then(|p| p.get("requestId"))
            && requests.cancel(id)
        {
            tracing::info!(request_id = %id, "MCP stateless request cancelled by the client");
        }
    }

    /// Ends session `id` here and in the store: its record, its live handle (its running calls
    /// are cancelled), its resource subscriptions. Answers whether the store had it; the end
    /// hook runs through [`Core::ended`].
    pub(crate) async fn end_session(&self, id: &str) -> Result<bool, StoreError> {
        let found = self.store().remove(id).await?;
        self.forget(id);
        self.0.server.forget_session(Some(id)).await;
        let ended = crate::session::BusMessage::Ended {
            session: id.to_owned(),
        };
        self.publish(crate::session::Recipient::Everyone, ended)
            .await;
        Ok(found)
    }

    /// Removes the sessions idle past the TTL, forgetting them here; answers their ids (the end
    /// hook runs through [`Core::ended`]).
    pub(crate) async fn reap(&self) -> Result<Vec<String>, StoreError> {
        // A running call keeps its session alive: its idle timer restarts (a load does it).
        let ttl = self.settings().session_ttl;
        for id in self.0.live.busy() {
            self.store().load(&id, ttl).await?;
        }
        let gone = self.store().reap(self.settings().session_ttl).await?;
        for id in &gone {
            self.forget(id);
            self.0.server.forget_session(Some(id)).await;
            let ended = crate::session::BusMessage::Ended {
                session: id.clone(),
            };
            self.publish(crate::session::Recipient::Everyone, ended)
                .await;
        }
        Ok(gone)
    }

    /// A session found gone from the store (expired, or ended on another node): what this
    /// node still holds of it goes too, or its handle would outlive it until the reaper's next
    /// round (found by fuzzing). The reaper still reports the end of an expired one.
    pub(crate) fn forget_gone(&self, id: &str) {
        self.forget(id);
    }

    fn forget(&self, id: &str) {
        self.0.quota.release(id);
        self.0.live.end(id);
        self.0.server.forget_session_here(Some(id));
    }

    /// Runs the session hooks' end hook, when there are hooks.
    pub(crate) async fn ended(&self, id: &str, reason: EndReason) {
        if let Some(hooks) = self.hooks() {
            hooks.on_end(id, reason).await;
        }
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
