//! [`ContextBuilder`]: how a transport (or a test) makes a [`Context`].

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::Identity;
use super::{Asks, Caller, Context, Inner, Membership, ProgressState, Request};
use crate::mrtr::Round;
use crate::protocol::{LogLevel, ProtocolVersion};
use crate::session::{Notifier, SessionHandle};

/// Builds a [`Context`].
#[derive(Debug)]
#[must_use]
pub struct ContextBuilder {
    pub(super) request_id: Option<Value>,
    pub(super) session_id: Option<String>,
    pub(super) protocol_version: ProtocolVersion,
    /// `None` until set: a transport shares the session's, so a default made up front would be
    /// allocated and dropped on every call.
    pub(super) assigns: Option<Arc<Mutex<Map<String, Value>>>>,
    pub(super) client_info: Option<Arc<Value>>,
    pub(super) client_capabilities: Option<Arc<Value>>,
    pub(super) progress_token: Option<Value>,
    pub(super) cancellation: Option<CancellationToken>,
    pub(super) notifier: Option<Notifier>,
    pub(super) session: Option<SessionHandle>,
    pub(super) stream_closer: Option<CancellationToken>,
    pub(super) log_level: Option<LogLevel>,
    pub(super) input: Option<Arc<Round>>,
    pub(super) identity: Option<Arc<Identity>>,
    pub(super) origin: super::Origin,
    pub(super) user_state: Option<Arc<dyn crate::user_state::UserStateStore>>,
}

impl ContextBuilder {
    /// The request's JSON-RPC id.
    pub fn request_id(mut self, id: Value) -> Self {
        self.request_id = Some(id);
        self
    }
    /// The session the call belongs to (when not set, [`Context::session_id`] answers the
    /// live session's id).
    pub fn session_id(mut self, id: impl Into<String>) -> Self {
        self.session_id = Some(id.into());
        self
    }
    /// The negotiated revision.
    pub fn protocol_version(mut self, version: ProtocolVersion) -> Self {
        self.protocol_version = version;
        self
    }
    /// One initial assign.
    pub fn assign(mut self, key: impl Into<String>, value: Value) -> Self {
        self.assigns
            .get_or_insert_with(Default::default)
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key.into(), value);
        self
    }
    /// Shares a session's assigns, so updates outlive the call.
    pub fn shared_assigns(mut self, assigns: Arc<Mutex<Map<String, Value>>>) -> Self {
        self.assigns = Some(assigns);
        self
    }
    /// The client's `clientInfo`.
    pub fn client_info(mut self, info: Value) -> Self {
        self.client_info = Some(Arc::new(info));
        self
    }
    /// The client's capabilities.
    pub fn client_capabilities(mut self, capabilities: Value) -> Self {
        self.client_capabilities = Some(Arc::new(capabilities));
        self
    }
    /// The session's `clientInfo` and capabilities, shared with its record (no copy per call).
    pub(crate) fn shared_client(mut self, info: Arc<Value>, capabilities: Arc<Value>) -> Self {
        self.client_info = Some(info);
        self.client_capabilities = Some(capabilities);
        self
    }
    /// The request's progress token.
    pub fn progress_token(mut self, token: Value) -> Self {
        self.progress_token = Some(token);
        self
    }
    /// The cancellation token of the call.
    pub fn cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = Some(token);
        self
    }
    /// Where the call's notifications go (set by transports).
    pub fn notifier(mut self, notifier: Notifier) -> Self {
        self.notifier = Some(notifier);
        self
    }
    /// The live session the call belongs to.
    pub(crate) fn session(mut self, session: SessionHandle) -> Self {
        self.session = Some(session);
        self
    }
    /// Cancelled by [`Context::close_sse_stream`]: the transport ends the call's stream.
    pub(crate) fn stream_closer(mut self, closer: CancellationToken) -> Self {
        self.stream_closer = Some(closer);
        self
    }
    /// The request's own log level (the stateless era's `_meta` `logLevel`): log messages
    /// below it are not sent, and without it a stateless call sends none.
    pub fn log_level(mut self, level: LogLevel) -> Self {
        self.log_level = Some(level);
        self
    }
    /// Stateless era: the call's multi round-trip input round (set by the transport).
    pub(crate) fn input_round(mut self, round: Arc<Round>) -> Self {
        self.input = Some(round);
        self
    }
    /// Who the caller is, as the transport authenticated it ([`Context::identity`]).
    ///
    /// ```
    /// use wymcp::{Context, Identity};
    /// use serde_json::json;
    ///
    /// let ctx = Context::builder()
    ///     .identity(Identity::new("alice").claim("scope", json!("tasks:read")))
    ///     .build();
    /// let who = ctx.identity().unwrap();
    /// assert_eq!(who.subject(), "alice");
    /// assert!(who.has_scope("tasks:read"));
    /// ```
    pub fn identity(mut self, identity: impl Into<Arc<Identity>>) -> Self {
        self.identity = Some(identity.into());
        self
    }

    /// The identity as a task record kept it ([`Identity::to_value`]'s form): set, and
    /// assigned under `"identity"`, as the transport sets a caller's (not one: nothing).
    pub(crate) fn kept_identity(self, kept: Option<&Value>) -> Self {
        match kept.and_then(Identity::from_value) {
            Some(identity) => self
                .assign("identity", identity.to_value())
                .identity(identity),
            None => self,
        }
    }

    /// Where the call came from (set by the serving core).
    pub(crate) fn origin(mut self, origin: super::Origin) -> Self {
        self.origin = origin;
        self
    }
    /// The server's user-state store (set by the serving core).
    pub(crate) fn user_state(
        mut self,
        store: Option<&Arc<dyn crate::user_state::UserStateStore>>,
    ) -> Self {
        self.user_state = store.cloned();
        self
    }
    /// The context.
    pub fn build(self) -> Context {
        // The core picks how the call reaches its client from what it was given.
        let channel = super::channel::Channel::pick(self.session.as_ref(), self.input);
        Context {
            inner: Arc::new(Inner {
                request: Request {
                    id: self.request_id,
                    protocol_version: self.protocol_version,
                    progress_token: self.progress_token,
                    log_level: self.log_level,
                    stream_closer: self.stream_closer,
                },
                caller: Caller {
                    identity: self.identity,
                    client_info: self.client_info,
                    client_capabilities: self.client_capabilities,
                    origin: self.origin,
                },
                session: Membership {
                    id: self.session_id,
                    handle: self.session,
                    assigns: self.assigns.unwrap_or_default(),
                    notifier: self.notifier,
                },
                cancellation: self.cancellation.unwrap_or_default(),
                progress: Mutex::new(ProgressState::default()),
                asks: Asks::through(channel),
                task: None,
                user_state: self.user_state,
            }),
        }
    }
}
