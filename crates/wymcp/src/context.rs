//! [`Context`]: what a tool knows about the call it is serving.

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::mrtr::{Asked, InputKind, Round};
use crate::protocol::{LogLevel, ProtocolVersion};
use crate::session::{ClientRequestError, Elicitation, ListRoots, Sampling, SessionHandle};
pub use crate::session::{Delivery, Notifier};

/// What a tool knows about the call it serves: the request, the session, the negotiated
/// revision, the assigns, and a cancellation token.
///
/// Cheap to clone; every clone sees the same assigns and the same cancellation.
///
/// ```
/// use serde_json::json;
/// use wymcp::{Context, ProtocolVersion};
///
/// let ctx = Context::builder()
///     .protocol_version(ProtocolVersion::V2025_06_18)
///     .assign("current_user", json!("ada"))
///     .build();
/// assert_eq!(ctx.assigns()["current_user"], "ada");
/// ctx.assign("count", json!(1));
/// assert_eq!(ctx.assigns()["count"], 1);
/// ```
#[derive(Clone, Debug)]
pub struct Context {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    request_id: Option<Value>,
    session_id: Option<String>,
    protocol_version: ProtocolVersion,
    assigns: Arc<Mutex<Map<String, Value>>>,
    client_info: Option<Arc<Value>>,
    client_capabilities: Option<Arc<Value>>,
    progress_token: Option<Value>,
    cancellation: CancellationToken,
    notifier: Option<Notifier>,
    session: Option<SessionHandle>,
    stream_closer: Option<CancellationToken>,
    progress: Mutex<ProgressState>,
    /// The request's own log level (stateless era: `_meta` `logLevel`).
    log_level: Option<LogLevel>,
    /// Stateless era: the client capabilities the call asked for but the request did not
    /// declare, as a `ClientCapabilities` object (the transport answers `-32021`).
    required_capabilities: Mutex<Option<Value>>,
    /// Stateless era: the call's multi round-trip input round (`tools/call`, `prompts/get`,
    /// `resources/read`).
    input: Option<Arc<Round>>,
    /// The tool's own request state when the call has no input round.
    request_state: Mutex<Option<Value>>,
}

#[derive(Debug, Default)]
struct ProgressState {
    last: Option<f64>,
    completed: bool,
}

impl Default for Context {
    fn default() -> Self {
        Context::builder().build()
    }
}

impl Context {
    /// Starts a context; transports build one per call, tests build their own.
    pub fn builder() -> ContextBuilder {
        ContextBuilder {
            request_id: None,
            session_id: None,
            protocol_version: ProtocolVersion::LATEST_SESSION_ERA,
            assigns: None,
            client_info: None,
            client_capabilities: None,
            progress_token: None,
            cancellation: None,
            notifier: None,
            session: None,
            stream_closer: None,
            log_level: None,
            input: None,
        }
    }

    /// The JSON-RPC id of the request being served, when there is one.
    pub fn request_id(&self) -> Option<&Value> {
        self.inner.request_id.as_ref()
    }

    /// The session id, when the call belongs to a session: the one the builder was given, else
    /// the live session's.
    pub fn session_id(&self) -> Option<&str> {
        self.inner
            .session_id
            .as_deref()
            .or_else(|| self.inner.session.as_ref().map(SessionHandle::id))
    }

    /// The protocol revision negotiated for the call.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.inner.protocol_version
    }

    /// A snapshot of the assigns: the identity upstream middleware produced plus the session's
    /// assigns, as updated by tools.
    pub fn assigns(&self) -> Map<String, Value> {
        self.lock().clone()
    }

    /// Sets one assign; it is kept for the rest of the session (or, without a session, for the
    /// rest of this call).
    pub fn assign(&self, key: impl Into<String>, value: Value) {
        self.lock().insert(key.into(), value);
    }

    /// The client's `clientInfo`, when known.
    pub fn client_info(&self) -> Option<&Value> {
        self.inner.client_info.as_deref()
    }

    /// The client's declared capabilities, when known.
    pub fn client_capabilities(&self) -> Option<&Value> {
        self.inner.client_capabilities.as_deref()
    }

    /// The request's `_meta.progressToken`, when the client asked for progress.
    pub fn progress_token(&self) -> Option<&Value> {
        self.inner.progress_token.as_ref()
    }

    /// The token cancelled when the client cancels the call (or the session ends).
    pub fn cancellation(&self) -> &CancellationToken {
        &self.inner.cancellation
    }

    /// Whether the call has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancellation.is_cancelled()
    }

    /// The live session the call belongs to: register and unregister tools on it, read its
    /// tool list. `None` for calls outside a session (and contexts built for tests).
    pub fn session(&self) -> Option<&SessionHandle> {
        self.inner.session.as_ref()
    }

    fn send(&self, message: Value) -> Delivery {
        if let Some(notifier) = &self.inner.notifier {
            return notifier.deliver(message);
        }
        match &self.inner.session {
            Some(session) => session.send_standalone(message),
            None => Delivery::NoStream,
        }
    }

    fn stream_name(&self) -> String {
        match (&self.inner.notifier, &self.inner.session) {
            (Some(notifier), _) => notifier.stream().to_owned(),
            (None, Some(session)) => session
                .standalone()
                .map_or_else(|| "none".to_owned(), |n| n.stream().to_owned()),
            (None, None) => "none".to_owned(),
        }
    }

    /// Sends a notification related to this call (`{"jsonrpc":"2.0","method":…,"params":…}`):
    /// on the request's own stream when the transport opened one, else on the session's
    /// standalone stream. Answers whether it was sent.
    pub fn notify(&self, method: &str, params: Value) -> bool {
        // Log messages below the session's level are not sent, however they were built.
        if method == "notifications/message"
            && let Some(min) = self
                .inner
                .session
                .as_ref()
                .and_then(SessionHandle::log_level)
            && params["level"]
                .as_str()
                .and_then(LogLevel::parse)
                .is_some_and(|level| level < min)
        {
            return false;
        }
        // Stateless era: log messages only at or above the request's own `logLevel`.
        if method == "notifications/message"
            && self.inner.session.is_none()
            && self.inner.protocol_version.is_stateless()
            && !params["level"]
                .as_str()
                .and_then(LogLevel::parse)
                .is_some_and(|level| self.log_passes(level))
        {
            return false;
        }
        self.send(serde_json::json!({
            "jsonrpc": "2.0",
            "method": method,
            "params": params,
        })) == Delivery::Sent
    }

    /// Reports progress (`notifications/progress`) when the client asked for it with a
    /// progress token; answers whether it was sent. Nothing is sent without a token, when
    /// `progress` does not exceed the last value reported, or once the call has completed.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        let Some(token) = &self.inner.progress_token else {
            return false;
        };
        {
            let mut state = self
                .inner
                .progress
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if state.completed
                || !progress.is_finite()
                || state.last.is_some_and(|last| progress <= last)
            {
                return false;
            }
            state.last = Some(progress);
        }
        let mut params = Map::new();
        params.insert("progressToken".to_owned(), token.clone());
        params.insert("progress".to_owned(), Value::from(progress));
        if let Some(total) = total {
            params.insert("total".to_owned(), Value::from(total));
        }
        if let Some(message) = message {
            params.insert("message".to_owned(), Value::from(message));
        }
        self.notify("notifications/progress", Value::Object(params))
    }

    /// Marks the call complete: no progress is reported after this (transports call it when
    /// the call's response is ready).
    pub fn complete(&self) {
        self.inner
            .progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .completed = true;
    }

    /// Sends a log message (`notifications/message`) when `level` passes the session's
    /// `logging/setLevel` (no level set: everything passes), or in the stateless era the
    /// request's own `logLevel` (none sent: nothing passes). Answers whether it was sent;
    /// outside both nothing is sent.
    pub fn log(&self, level: LogLevel, data: Value) -> bool {
        self.log_to(level, None, data)
    }

    /// [`log`](Self::log) naming the `logger`.
    pub fn log_as(&self, level: LogLevel, logger: &str, data: Value) -> bool {
        self.log_to(level, Some(logger), data)
    }

    fn log_to(&self, level: LogLevel, logger: Option<&str>, data: Value) -> bool {
        if !self.log_passes(level) {
            return false;
        }
        let mut params = Map::new();
        params.insert("level".to_owned(), Value::from(level.as_str()));
        if let Some(logger) = logger {
            params.insert("logger".to_owned(), Value::from(logger));
        }
        params.insert("data".to_owned(), data);
        self.notify("notifications/message", Value::Object(params))
    }

    /// Ends the SSE stream carrying this call's messages now, while the call runs on (SEP-1699
    /// polling): the client reconnects with `Last-Event-ID` (after the stream's `retry`) and is
    /// replayed what the call sent since, its response included. Answers whether the
    /// transport will do so: Streamable HTTP with
    /// [`sse_polling`](crate::transport::http::StreamableHttp::sse_polling) on, the request
    /// answered as an SSE stream; `false` anywhere else (the call simply goes on).
    pub fn close_sse_stream(&self) -> bool {
        match &self.inner.stream_closer {
            Some(closer) => {
                closer.cancel();
                true
            }
            None => false,
        }
    }

    /// Asks the client's model for a completion (`sampling/createMessage`) and waits for the
    /// answer: the client's result, verbatim. Needs the client's `sampling` capability.
    ///
    /// In a session this is a server→client request. In the stateless era it is an input
    /// request of a multi round-trip request ([`crate::mrtr`]): the call is answered
    /// `input_required` and runs again from the start on the client's retry, when this
    /// returns the answer. Code before it may run more than once.
    pub async fn sample(&self, request: Sampling) -> Result<Value, ClientRequestError> {
        if self.missing_in_stateless("sampling", None) {
            return Err(ClientRequestError::NotSupported);
        }
        if let Some(round) = &self.inner.input {
            let key = request.input_key().map(str::to_owned);
            let (params, _) = request.into_parts();
            return ask_input(round, InputKind::Sampling, key, params).await;
        }
        if self.inner.session.is_none() {
            return Err(ClientRequestError::NoSession);
        }
        if !self.declares("sampling", None) {
            return Err(ClientRequestError::NotSupported);
        }
        let (params, timeout) = request.into_parts();
        self.round_trip("sampling/createMessage", params, timeout)
            .await
    }

    /// Asks the user for input (`elicitation/create`) and waits for the answer: the client's
    /// result verbatim (`{"action":"accept"|"decline"|"cancel","content"?:{…}}`). Form mode
    /// needs 2025-06-18 or later and the client's `elicitation` capability; URL mode needs
    /// 2025-11-25 and `elicitation.url`.
    ///
    /// In a session this is a server→client request. In the stateless era it is an input
    /// request of a multi round-trip request ([`crate::mrtr`]) under the request's
    /// [`key`](Elicitation::key): the call is answered `input_required` and runs again from
    /// the start on the client's retry, when this returns the answer. Side effects before it
    /// must be idempotent, or carried in [`set_request_state`](Self::set_request_state).
    ///
    /// ```
    /// use serde_json::{Map, Value, json};
    /// use wymcp::session::Elicitation;
    /// use wymcp::{CallOutput, CallResult, Context, PlainTool};
    ///
    /// struct Greet;
    ///
    /// impl PlainTool for Greet {
    ///     fn name(&self) -> &str { "greet" }
    ///     fn description(&self) -> &str { "Greets the user by name" }
    ///     fn input_schema(&self) -> Map<String, Value> {
    ///         json!({"type": "object"}).as_object().cloned().unwrap_or_default()
    ///     }
    ///     async fn run(&self, _arguments: Map<String, Value>, ctx: Context) -> CallResult {
    ///         let ask = Elicitation::form("What is your name?", json!({
    ///             "type": "object",
    ///             "properties": {"name": {"type": "string"}},
    ///             "required": ["name"]
    ///         }))
    ///         .key("user_name");
    ///         // Same code in both eras: a server→client request in a session, an input
    ///         // request (`input_required`, then a retry) in the stateless era.
    ///         let answer = ctx.elicit(ask).await.unwrap_or_default();
    ///         let name = answer["content"]["name"].as_str().unwrap_or("stranger");
    ///         Ok(CallOutput::text(format!("Hello, {name}!")))
    ///     }
    /// }
    /// ```
    pub async fn elicit(&self, request: Elicitation) -> Result<Value, ClientRequestError> {
        let sub = request.is_url_mode().then_some("url");
        if self.missing_in_stateless("elicitation", sub) {
            return Err(ClientRequestError::NotSupported);
        }
        if let Some(round) = &self.inner.input {
            let key = request.input_key().map(str::to_owned);
            let (params, _) = request.into_parts();
            return ask_input(round, InputKind::Elicitation, key, params).await;
        }
        if self.inner.session.is_none() {
            return Err(ClientRequestError::NoSession);
        }
        let version = self.inner.protocol_version;
        let supported = if request.is_url_mode() {
            version.supports_url_elicitation() && self.declares("elicitation", Some("url"))
        } else {
            version.supports_elicitation() && self.declares("elicitation", None)
        };
        if !supported {
            return Err(ClientRequestError::NotSupported);
        }
        let (params, timeout) = request.into_parts();
        self.round_trip("elicitation/create", params, timeout).await
    }

    /// Asks the client for its roots (`roots/list`) and waits for the answer: the client's
    /// result verbatim (`{"roots": [{"uri": …, "name"?: …}]}`). Needs the client's `roots`
    /// capability. A server→client request in a session; an input request of a multi
    /// round-trip request in the stateless era, like [`elicit`](Self::elicit).
    ///
    /// ```
    /// use wymcp::Context;
    /// use wymcp::session::{ClientRequestError, ListRoots};
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// // A context outside any session (and outside the stateless era) has nobody to ask.
    /// let ctx = Context::default();
    /// let answer = ctx.list_roots(ListRoots::new().key("client_roots")).await;
    /// assert_eq!(answer, Err(ClientRequestError::NoSession));
    /// # });
    /// ```
    pub async fn list_roots(&self, request: ListRoots) -> Result<Value, ClientRequestError> {
        if self.missing_in_stateless("roots", None) {
            return Err(ClientRequestError::NotSupported);
        }
        if let Some(round) = &self.inner.input {
            let key = request.input_key().map(str::to_owned);
            let (params, _) = request.into_parts();
            return ask_input(round, InputKind::Roots, key, params).await;
        }
        if self.inner.session.is_none() {
            return Err(ClientRequestError::NoSession);
        }
        if !self.declares("roots", None) {
            return Err(ClientRequestError::NotSupported);
        }
        let (params, timeout) = request.into_parts();
        self.round_trip("roots/list", params, timeout).await
    }

    /// Whether the client declared `capability` (`"elicitation"`, `"sampling"`, `"roots"`,
    /// …): in a session, at `initialize`; in the stateless era, in this request's
    /// `clientCapabilities`. Check it before asking for what the call can do without: asking
    /// for an undeclared kind in the stateless era answers the call `-32021`.
    ///
    /// ```
    /// use serde_json::json;
    /// use wymcp::Context;
    ///
    /// let ctx = Context::builder().client_capabilities(json!({"sampling": {}})).build();
    /// assert!(ctx.client_declares("sampling"));
    /// assert!(!ctx.client_declares("elicitation"));
    /// ```
    pub fn client_declares(&self, capability: &str) -> bool {
        self.declares(capability, None)
    }

    /// The tool's own value carried from round to round of a multi round-trip request: what
    /// [`set_request_state`](Self::set_request_state) set in this run or, on a retry, in
    /// the run that asked. `None` on a first run.
    pub fn request_state(&self) -> Option<Value> {
        match &self.inner.input {
            Some(round) => round.tool_state(),
            None => self
                .inner
                .request_state
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone(),
        }
    }

    /// Sets the tool's own value: in the stateless era it is sealed into the `requestState`
    /// of the next `input_required`, so a retry can read it back with
    /// [`request_state`](Self::request_state) instead of redoing work. Outside (a session)
    /// it is kept for this call, which is never re-run. Refused when the state would exceed
    /// its bound.
    ///
    /// ```
    /// use serde_json::json;
    /// use wymcp::Context;
    ///
    /// let ctx = Context::default();
    /// assert_eq!(ctx.request_state(), None);
    /// ctx.set_request_state(json!({"draft": 42})).unwrap();
    /// assert_eq!(ctx.request_state(), Some(json!({"draft": 42})));
    /// ```
    pub fn set_request_state(&self, value: Value) -> Result<(), ClientRequestError> {
        match &self.inner.input {
            Some(round) => {
                round
                    .set_tool_state(value)
                    .map_err(|e| ClientRequestError::RequestStateTooLarge {
                        size: e.size,
                        limit: e.limit,
                    })
            }
            None => {
                *self
                    .inner
                    .request_state
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner) = Some(value);
                Ok(())
            }
        }
    }

    /// Whether a log message of `level` may be sent: in a session, when it passes the
    /// session's level (none set: everything passes); in the stateless era, only when the
    /// request set a `logLevel` and `level` passes it; otherwise never.
    fn log_passes(&self, level: LogLevel) -> bool {
        match &self.inner.session {
            Some(session) => session.log_level().is_none_or(|min| level >= min),
            None if self.inner.protocol_version.is_stateless() => {
                self.inner.log_level.is_some_and(|min| level >= min)
            }
            None => false,
        }
    }

    /// The request's own log level (stateless era: `_meta` `logLevel`), when set.
    pub fn log_level(&self) -> Option<LogLevel> {
        self.inner.log_level
    }

    /// Stateless era: records that the call needs `required` (a `ClientCapabilities` object)
    /// the request did not declare; answers whether it is missing.
    fn missing_in_stateless(&self, capability: &str, sub: Option<&str>) -> bool {
        if !self.inner.protocol_version.is_stateless() || self.declares(capability, sub) {
            return false;
        }
        // Every capability the call asked for is named, not only the last one.
        let mut required = self
            .inner
            .required_capabilities
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let all = required.get_or_insert_with(|| Value::Object(Map::new()));
        if let Some(all) = all.as_object_mut() {
            let entry = all
                .entry(capability)
                .or_insert_with(|| Value::Object(Map::new()));
            if let (Some(sub), Some(entry)) = (sub, entry.as_object_mut()) {
                entry.insert(sub.to_owned(), Value::Object(Map::new()));
            }
        }
        true
    }

    /// The client capabilities the call asked for but the stateless request did not declare
    /// (a `ClientCapabilities` object), if any.
    pub(crate) fn required_capabilities(&self) -> Option<Value> {
        self.inner
            .required_capabilities
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Whether the client declared `capability` (and its `sub` key), by key presence.
    fn declares(&self, capability: &str, sub: Option<&str>) -> bool {
        let Some(found) = self
            .inner
            .client_capabilities
            .as_ref()
            .and_then(|c| c.get(capability))
        else {
            return false;
        };
        sub.is_none_or(|sub| found.get(sub).is_some())
    }

    async fn round_trip(
        &self,
        method: &str,
        params: Value,
        timeout: std::time::Duration,
    ) -> Result<Value, ClientRequestError> {
        let Some(session) = &self.inner.session else {
            return Err(ClientRequestError::NoSession);
        };
        let (id, answer) = session.begin_request(&self.stream_name());
        // Forgets the pending entry however this ends (answered, timed out, call dropped).
        let _pending = Pending { session, id: &id };
        let message = serde_json::json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": method,
            "params": params,
        });
        match self.send(message) {
            Delivery::Sent => {}
            Delivery::NoStream => return Err(ClientRequestError::NoStream),
            Delivery::Disconnected => return Err(ClientRequestError::Disconnected),
        }
        match tokio::time::timeout(timeout, answer).await {
            Ok(Ok(Ok(result))) => Ok(result),
            Ok(Ok(Err(error))) => Err(ClientRequestError::Client(error)),
            Ok(Err(_)) => Err(ClientRequestError::Disconnected),
            Err(_) => Err(ClientRequestError::Timeout),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Map<String, Value>> {
        // A panic while holding the lock cannot leave a map half-written: recover the data.
        self.inner
            .assigns
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// Builds a [`Context`].
#[derive(Debug)]
#[must_use]
pub struct ContextBuilder {
    request_id: Option<Value>,
    session_id: Option<String>,
    protocol_version: ProtocolVersion,
    /// `None` until set: a transport shares the session's, so a default made up front would be
    /// allocated and dropped on every call.
    assigns: Option<Arc<Mutex<Map<String, Value>>>>,
    client_info: Option<Arc<Value>>,
    client_capabilities: Option<Arc<Value>>,
    progress_token: Option<Value>,
    cancellation: Option<CancellationToken>,
    notifier: Option<Notifier>,
    session: Option<SessionHandle>,
    stream_closer: Option<CancellationToken>,
    log_level: Option<LogLevel>,
    input: Option<Arc<Round>>,
}

impl ContextBuilder {
    /// The request's JSON-RPC id.
    pub fn request_id(mut self, id: Value) -> Self {
        self.request_id = Some(id);
        self
    }
    /// The session the call belongs to (when not set, [`Context::session_id`] answers the
    /// [`session`](Self::session) handle's id).
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
    pub fn session(mut self, session: SessionHandle) -> Self {
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
    /// The context.
    pub fn build(self) -> Context {
        Context {
            inner: Arc::new(Inner {
                request_id: self.request_id,
                session_id: self.session_id,
                protocol_version: self.protocol_version,
                assigns: self.assigns.unwrap_or_default(),
                client_info: self.client_info,
                client_capabilities: self.client_capabilities,
                progress_token: self.progress_token,
                cancellation: self.cancellation.unwrap_or_default(),
                notifier: self.notifier,
                session: self.session,
                stream_closer: self.stream_closer,
                progress: Mutex::new(ProgressState::default()),
                log_level: self.log_level,
                required_capabilities: Mutex::new(None),
                input: self.input,
                request_state: Mutex::new(None),
            }),
        }
    }
}

/// One input request of a multi round-trip request: its answer when the client gave it, else
/// recorded for the round's `input_required` and pending until the driver drops the call.
async fn ask_input(
    round: &Round,
    kind: InputKind,
    key: Option<String>,
    params: Value,
) -> Result<Value, ClientRequestError> {
    match round.ask(kind, key, params) {
        Asked::Answered(answer) => Ok(answer),
        Asked::TooLarge(e) => Err(ClientRequestError::RequestStateTooLarge {
            size: e.size,
            limit: e.limit,
        }),
        Asked::Recorded => std::future::pending().await,
    }
}

struct Pending<'a> {
    session: &'a SessionHandle,
    id: &'a str,
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        self.session.forget_request(self.id);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::Context;
    use crate::ProtocolVersion;
    use crate::session::{Elicitation, Sampling};

    #[tokio::test]
    async fn a_stateless_call_names_every_capability_it_lacked() {
        let ctx = Context::builder()
            .protocol_version(ProtocolVersion::V2026_07_28)
            .client_capabilities(json!({}))
            .build();
        assert!(ctx.sample(Sampling::prompt("hi")).await.is_err());
        let form = Elicitation::form("name?", json!({"type": "object"}));
        assert!(ctx.elicit(form).await.is_err());
        assert_eq!(
            ctx.required_capabilities(),
            Some(json!({"sampling": {}, "elicitation": {}}))
        );
    }
}
