//! [`Core`]: what a transport holds to serve a [`Server`]: the deployment's sessions
//! ([`Sessions`]), the settings both eras honour, the stateless requests in flight.

use std::sync::Arc;

use serde_json::Value;
use tokio::task::AbortHandle;

use tracing::Instrument as _;

use super::operation::Operation;
use super::sessions::{Sessions, SessionsConfig};
use super::{Era, Inbound, Outcome, Refusal, session, stateless};
use crate::Server;
use crate::protocol::ProtocolVersion;
use crate::protocol::stateless::CacheHints;
use crate::session::{RunningCalls, SessionRecord};

/// What the core honours, as its transport configured it.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
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

/// The serving core of one endpoint. Cheap to clone; every clone is the same core.
#[derive(Clone)]
pub(crate) struct Core(Arc<Inner>);

struct Inner {
    server: Server,
    /// The deployment's sessions: their whole life, their streams, the other nodes.
    sessions: Arc<Sessions>,
    settings: Settings,
    /// The stateless requests `notifications/cancelled` can reach (stdio, where requests share
    /// one connection); `None` where each request ends with its own (Streamable HTTP).
    requests: Option<Arc<RunningCalls>>,
    /// The `_meta` of the stateless era's `tools/call` answers, written once.
    stateless_meta: Arc<serde_json::value::RawValue>,
    /// What runs beside the requests ([`Sessions::start`]), stopped with the core.
    background: Vec<AbortHandle>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        for task in &self.background {
            task.abort();
        }
    }
}

impl Core {
    /// A core an in-process client calls directly (`TestClient`, the crate's unit tests): its
    /// sessions in memory, never expiring, counted against no quota; `stream` names its
    /// request streams.
    pub(crate) fn direct(server: Server, stream: &'static str) -> Self {
        let settings = Settings {
            strict_version_header: false,
            cache_hints: CacheHints::default(),
            one_session: false,
            transport: crate::context::TransportKind::Direct,
        };
        let sessions = SessionsConfig {
            store: Arc::new(crate::session::InMemorySessionStore::new()),
            hooks: None,
            events: None,
            ttl: std::time::Duration::MAX,
            max: usize::MAX,
            standalone: stream,
            cluster: super::Cluster::alone(),
        };
        Core::new(server, sessions, settings, true)
    }

    /// A core serving `server`, its sessions kept and living as `sessions` says; inside a
    /// Tokio runtime, what runs beside the requests starts with it.
    pub(crate) fn new(
        server: Server,
        sessions: SessionsConfig,
        settings: Settings,
        cancellable_requests: bool,
    ) -> Self {
        let stateless_meta = stateless::meta(server.info());
        let sessions = Arc::new(Sessions::new(server.clone(), sessions));
        let background = sessions.start();
        Core(Arc::new(Inner {
            stateless_meta,
            server,
            sessions,
            settings,
            requests: cancellable_requests.then(Arc::default),
            background,
        }))
    }

    pub(crate) fn server(&self) -> &Server {
        &self.0.server
    }

    /// The deployment's sessions.
    pub(crate) fn sessions(&self) -> &Sessions {
        &self.0.sessions
    }

    pub(crate) fn settings(&self) -> &Settings {
        &self.0.settings
    }

    /// The `_meta` of the stateless era's `tools/call` answers (the server's name and version).
    pub(crate) fn stateless_meta(&self) -> &Arc<serde_json::value::RawValue> {
        &self.0.stateless_meta
    }

    /// The stateless requests that can be cancelled by id, on transports that have them.
    pub(crate) fn requests(&self) -> Option<&Arc<RunningCalls>> {
        self.0.requests.as_ref()
    }

    /// Serves one message: every message of every transport and era enters here, in its
    /// operation's span ([`Operation`]); the span ends with the answer (a call's, when the
    /// call finishes).
    pub(crate) async fn serve(&self, inbound: Inbound<'_>) -> Result<Outcome, Refusal> {
        let operation = Operation::start(self, &inbound);
        let served = match inbound.era {
            Era::Session => {
                session::serve(self, inbound)
                    .instrument(operation.span().clone())
                    .await
            }
            // Boxed: the stateless era's future is several times a session call's, and the
            // transport's request future would otherwise be as large as it.
            Era::Stateless => {
                Box::pin(stateless::serve(self, inbound))
                    .instrument(operation.span().clone())
                    .await
            }
        };
        match served {
            Ok(Outcome::Call(call)) => Ok(Outcome::Call(call.observed(operation))),
            served => {
                operation.served(&served);
                served
            }
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
}
