//! [`Context`]: what a tool knows about the call it is serving.

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::protocol::ProtocolVersion;

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
    client_info: Option<Value>,
    client_capabilities: Option<Value>,
    progress_token: Option<Value>,
    cancellation: CancellationToken,
    notifier: Option<Notifier>,
}

/// Where a call's request-related notifications (progress, log messages) go; the transport
/// sets it. Receives whole JSON-RPC notifications.
#[derive(Clone)]
pub struct Notifier(Arc<dyn Fn(Value) + Send + Sync>);

impl Notifier {
    /// A notifier calling `send` with each notification.
    pub fn new(send: impl Fn(Value) + Send + Sync + 'static) -> Self {
        Notifier(Arc::new(send))
    }
}

impl std::fmt::Debug for Notifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Notifier")
    }
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
            assigns: Arc::new(Mutex::new(Map::new())),
            client_info: None,
            client_capabilities: None,
            progress_token: None,
            cancellation: CancellationToken::new(),
            notifier: None,
        }
    }

    /// The JSON-RPC id of the request being served, when there is one.
    pub fn request_id(&self) -> Option<&Value> {
        self.inner.request_id.as_ref()
    }

    /// The session id, when the call belongs to a session.
    pub fn session_id(&self) -> Option<&str> {
        self.inner.session_id.as_deref()
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
        self.inner.client_info.as_ref()
    }

    /// The client's declared capabilities, when known.
    pub fn client_capabilities(&self) -> Option<&Value> {
        self.inner.client_capabilities.as_ref()
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

    /// Sends a notification related to this call (`{"jsonrpc":"2.0","method":…,"params":…}`).
    /// Answers `false` when the transport offers no way to send it.
    pub fn notify(&self, method: &str, params: Value) -> bool {
        match &self.inner.notifier {
            Some(notifier) => {
                (notifier.0)(serde_json::json!({
                    "jsonrpc": "2.0",
                    "method": method,
                    "params": params,
                }));
                true
            }
            None => false,
        }
    }

    /// Reports progress (`notifications/progress`) when the client asked for it with a
    /// progress token; answers whether it was sent.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        let Some(token) = &self.inner.progress_token else {
            return false;
        };
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
    assigns: Arc<Mutex<Map<String, Value>>>,
    client_info: Option<Value>,
    client_capabilities: Option<Value>,
    progress_token: Option<Value>,
    cancellation: CancellationToken,
    notifier: Option<Notifier>,
}

impl ContextBuilder {
    /// The request's JSON-RPC id.
    pub fn request_id(mut self, id: Value) -> Self {
        self.request_id = Some(id);
        self
    }
    /// The session the call belongs to.
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
    pub fn assign(self, key: impl Into<String>, value: Value) -> Self {
        self.assigns
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key.into(), value);
        self
    }
    /// Shares a session's assigns, so updates outlive the call.
    pub fn shared_assigns(mut self, assigns: Arc<Mutex<Map<String, Value>>>) -> Self {
        self.assigns = assigns;
        self
    }
    /// The client's `clientInfo`.
    pub fn client_info(mut self, info: Value) -> Self {
        self.client_info = Some(info);
        self
    }
    /// The client's capabilities.
    pub fn client_capabilities(mut self, capabilities: Value) -> Self {
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
        self.cancellation = token;
        self
    }
    /// Where the call's notifications go (set by transports).
    pub fn notifier(mut self, notifier: Notifier) -> Self {
        self.notifier = Some(notifier);
        self
    }
    /// The context.
    pub fn build(self) -> Context {
        Context {
            inner: Arc::new(Inner {
                request_id: self.request_id,
                session_id: self.session_id,
                protocol_version: self.protocol_version,
                assigns: self.assigns,
                client_info: self.client_info,
                client_capabilities: self.client_capabilities,
                progress_token: self.progress_token,
                cancellation: self.cancellation,
                notifier: self.notifier,
            }),
        }
    }
}
