//! [`Context`]: what a tool knows about the call it is serving.

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

mod builder;
mod channel;
mod client;
mod identity;
mod origin;
pub(crate) mod scope_gate;
mod task;
mod user_state;

use crate::ProtocolVersion;
use crate::protocol::LogLevel;
use crate::session::SessionHandle;
pub(crate) use crate::session::notifier::{Delivery, Notifier};

pub use builder::ContextBuilder;
pub use identity::Identity;
pub(crate) use identity::missing_scopes;
pub use origin::TransportKind;
pub(crate) use origin::{Origin, network};
pub(crate) use task::TaskLink;

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
    /// The request the call answers.
    request: Request,
    /// Who called.
    caller: Caller,
    /// The session the call runs in, and what its calls share.
    session: Membership,
    /// Cancelled when the call is: the client's `notifications/cancelled`, the request's
    /// end, a timeout (a task's call has its own).
    cancellation: CancellationToken,
    progress: Mutex<ProgressState>,
    /// What the call asks of its client, and how.
    asks: Asks,
    /// The tasks extension: set when the call is, or may become, a task.
    task: Option<Arc<dyn task::TaskLink>>,
    /// The server's user-state store, when it has one.
    user_state: Option<Arc<dyn crate::user_state::UserStateStore>>,
}

/// The request a call answers, as its transport read it.
#[derive(Debug, Clone)]
struct Request {
    id: Option<Value>,
    protocol_version: ProtocolVersion,
    progress_token: Option<Value>,
    /// The request's own log level (stateless era: `_meta` `logLevel`).
    log_level: Option<LogLevel>,
    /// Ends the stream the answer travels on, mid-call (SEP-1699), where the transport
    /// allows it.
    stream_closer: Option<CancellationToken>,
}

/// Who called, as the transport knows it.
#[derive(Debug, Clone)]
struct Caller {
    /// The caller, as the transport authenticated it.
    identity: Option<Arc<Identity>>,
    client_info: Option<Arc<Value>>,
    client_capabilities: Option<Arc<Value>>,
    /// The call's transport and client address.
    origin: Origin,
}

/// The session a call runs in (none in the stateless era) and what its calls share.
#[derive(Debug, Clone)]
struct Membership {
    id: Option<String>,
    handle: Option<SessionHandle>,
    assigns: Arc<Mutex<Map<String, Value>>>,
    notifier: Option<Notifier>,
}

/// What a call asks of its client (sampling, elicitation, roots) and what it found missing.
#[derive(Debug)]
struct Asks {
    /// How the call reaches its client: its session, its multi round-trip round, its task,
    /// or nobody.
    channel: channel::Channel,
    /// Stateless era: the client capabilities the call asked for but the request did not
    /// declare, as a `ClientCapabilities` object (the transport answers `-32021`).
    required_capabilities: Mutex<Option<Value>>,
    /// The tool's own request state when the call's channel has no round.
    request_state: Mutex<Option<Value>>,
}

impl Asks {
    fn through(channel: channel::Channel) -> Self {
        Asks {
            channel,
            required_capabilities: Mutex::new(None),
            request_state: Mutex::new(None),
        }
    }
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
            identity: None,
            origin: Origin::default(),
            user_state: None,
        }
    }

    /// Who the caller is, when the transport authenticated it: the identity of this very
    /// request's credentials (subject, scopes, issuer, client id, claims). In the session era
    /// a later request of the session may present a token with other scopes (after a step-up);
    /// this is that request's. The assigns keep the JSON form under `"identity"`.
    pub fn identity(&self) -> Option<&Identity> {
        self.inner.caller.identity.as_deref()
    }

    /// The JSON-RPC id of the request being served, when there is one.
    pub fn request_id(&self) -> Option<&Value> {
        self.inner.request.id.as_ref()
    }

    /// The session id, when the call belongs to a session: the one the builder was given, else
    /// the live session's.
    pub fn session_id(&self) -> Option<&str> {
        self.inner
            .session
            .id
            .as_deref()
            .or_else(|| self.inner.session.handle.as_ref().map(SessionHandle::id))
    }

    /// Where the call came from (its transport, the client's address).
    pub(crate) fn origin(&self) -> Origin {
        self.inner.caller.origin
    }

    /// The principal of the caller's identity ([`Identity::principal`] of
    /// [`identity`](Self::identity), else the assign `identity.principal` or
    /// `identity.subject` upstream middleware set), when the transport authenticated one.
    pub(crate) fn principal(&self) -> Option<String> {
        if let Some(identity) = self.identity() {
            return Some(identity.principal().to_owned());
        }
        let assigns = self.lock();
        let identity = assigns.get("identity")?;
        let principal = identity
            .get("principal")
            .or_else(|| identity.get("subject"))?;
        Some(principal.as_str()?.to_owned())
    }

    /// The protocol revision negotiated for the call.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.inner.request.protocol_version
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
        self.inner.caller.client_info.as_deref()
    }

    /// The client's declared capabilities, when known.
    pub fn client_capabilities(&self) -> Option<&Value> {
        self.inner.caller.client_capabilities.as_deref()
    }

    /// The request's `_meta.progressToken`, when the client asked for progress.
    pub fn progress_token(&self) -> Option<&Value> {
        self.inner.request.progress_token.as_ref()
    }

    /// The token cancelled when the client cancels the call (or the session ends).
    pub fn cancellation(&self) -> &CancellationToken {
        &self.inner.cancellation
    }

    /// Whether the call has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancellation.is_cancelled()
    }

    /// Runs blocking or CPU-heavy work (`f`) on Tokio's blocking threads, off the async
    /// workers, so that one heavy call cannot stall `ping` and every other request of the
    /// server; answers what `f` returns. A panic inside `f` is a panic of the call (contained
    /// like any other: a `tool_fault` result).
    ///
    /// The call's timeout still answers the client when it elapses, but a blocking thread
    /// cannot be interrupted: `f` itself runs to its end. Check
    /// [`is_cancelled`](Self::is_cancelled) (on a clone of the context) between steps of a
    /// long loop.
    ///
    /// ```
    /// use wymcp::Context;
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let ctx = Context::default();
    /// let sum = ctx.run_blocking(|| (1..=1_000_u64).sum::<u64>()).await;
    /// assert_eq!(sum, 500_500);
    /// # }
    /// ```
    pub async fn run_blocking<T, F>(&self, f: F) -> T
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        match tokio::task::spawn_blocking(f).await {
            Ok(value) => value,
            Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
            // The runtime is shutting down: the call is as good as cancelled.
            Err(_) => std::future::pending().await,
        }
    }

    /// The live session the call belongs to: register and unregister tools on it, read its
    /// tool list. `None` for calls outside a session (and contexts built for tests).
    pub fn session(&self) -> Option<&SessionHandle> {
        self.inner.session.handle.as_ref()
    }

    pub(super) fn send(&self, message: Value) -> Delivery {
        if let Some(notifier) = &self.inner.session.notifier {
            return notifier.deliver(message);
        }
        match &self.inner.session.handle {
            Some(session) => session.send_standalone(message),
            None => Delivery::NoStream,
        }
    }

    pub(super) fn stream_name(&self) -> String {
        match (&self.inner.session.notifier, &self.inner.session.handle) {
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
                .handle
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
            && self.inner.session.handle.is_none()
            && self.inner.request.protocol_version.is_stateless()
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
        let Some(token) = &self.inner.request.progress_token else {
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
        match &self.inner.request.stream_closer {
            Some(closer) => {
                closer.cancel();
                true
            }
            None => false,
        }
    }

    /// Whether a log message of `level` may be sent: in a session, when it passes the
    /// session's level (none set: everything passes); in the stateless era, only when the
    /// request set a `logLevel` and `level` passes it; otherwise never.
    fn log_passes(&self, level: LogLevel) -> bool {
        match &self.inner.session.handle {
            Some(session) => session.log_level().is_none_or(|min| level >= min),
            None if self.inner.request.protocol_version.is_stateless() => {
                self.inner.request.log_level.is_some_and(|min| level >= min)
            }
            None => false,
        }
    }

    /// The request's own log level (stateless era: `_meta` `logLevel`), when set.
    pub fn log_level(&self) -> Option<LogLevel> {
        self.inner.request.log_level
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Map<String, Value>> {
        // A panic while holding the lock cannot leave a map half-written: recover the data.
        self.inner
            .session
            .assigns
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}
