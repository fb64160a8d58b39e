//! [`SessionHandle`]: a live session on the node that owns it — its runtime tools and the
//! dirty tool list, its log level, its running calls, the server→client requests awaiting an
//! answer, and the session's standalone stream.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::calls::{RunningCall, RunningCalls, Work};
use super::{Delivery, Notifier, ToolList};
use crate::protocol::{LogLevel, ProtocolVersion};

/// The `notifications/tools/list_changed` notification.
pub(crate) fn list_changed() -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
}

/// This process's node id: 6 random bytes, base64url (8 characters). Server→client request
/// ids carry it, so an answer landing on another node can be routed back.
pub fn node_id() -> &'static str {
    static NODE: OnceLock<String> = OnceLock::new();
    NODE.get_or_init(|| URL_SAFE_NO_PAD.encode(crate::random::bytes::<6>()))
}

type Answer = Result<Value, Value>;

/// A live session on the node that owns it. Cheap to clone; every clone is the same session.
///
/// Tools reach it through [`Context::session`](crate::Context::session); the server side gets
/// it from its transport (for example
/// [`StreamableHttpService::session`](crate::transport::http::StreamableHttpService::session)).
///
/// Runtime tools are validated in the caller exactly as [`ServerBuilder::build`] validates
/// configured ones, and the name `help` is refused. The session's tool list is the runtime tools
/// (most recently registered first), then the configured tools whose names no runtime tool
/// claims, then `help`. When the set of definitions `tools/list` would serve changes, the list
/// becomes *dirty*: on the clean→dirty edge only, `notifications/tools/list_changed` is sent on
/// the session's standalone stream (if one is attached), and again whenever a stream attaches
/// while dirty. Only serving `tools/list` ([`list_tools`](Self::list_tools)) clears the flag.
///
/// [`ServerBuilder::build`]: crate::ServerBuilder::build
#[derive(Clone)]
pub struct SessionHandle {
    inner: Arc<Inner>,
}

struct Inner {
    id: String,
    version: ProtocolVersion,
    log_level: Mutex<Option<LogLevel>>,
    tools: Box<dyn ToolList>,
    pending: Mutex<HashMap<String, oneshot::Sender<Answer>>>,
    standalone: Mutex<Option<Notifier>>,
    calls: Arc<RunningCalls>,
    /// The node serving this handle (its server requests' ids name it).
    node: Arc<str>,
    /// Which of the server's declared scopes the session's last request held (a fingerprint;
    /// 0 before the first): a change means its visible tools changed.
    seen_scopes: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for SessionHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionHandle")
            .field("id", &self.inner.id)
            .field("version", &self.inner.version)
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl SessionHandle {
    /// A live session with its tool list; `standalone` carries messages not related to a
    /// request (the HTTP GET stream, stdout for stdio). The tool API makes live sessions
    /// (`SessionHandle::live` in `crate::tool::runtime`), with the list it reads back.
    pub(crate) fn with_tools(
        id: String,
        version: ProtocolVersion,
        log_level: Option<LogLevel>,
        standalone: Option<Notifier>,
        tools: Box<dyn ToolList>,
    ) -> Self {
        SessionHandle {
            inner: Arc::new(Inner {
                id,
                version,
                log_level: Mutex::new(log_level),
                tools,
                pending: Mutex::new(HashMap::new()),
                standalone: Mutex::new(standalone),
                calls: Arc::default(),
                node: node_id().into(),
                seen_scopes: std::sync::atomic::AtomicU64::new(0),
            }),
        }
    }

    /// The handle as served by node `node` (before it is shared).
    pub(crate) fn on_node(mut self, node: &Arc<str>) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.node = node.clone();
        }
        self
    }

    /// Records the fingerprint of the scopes this request holds; the one recorded before
    /// (0 for none).
    pub(crate) fn swap_seen_scopes(&self, fingerprint: u64) -> u64 {
        self.inner
            .seen_scopes
            .swap(fingerprint, std::sync::atomic::Ordering::AcqRel)
    }

    /// The session id.
    pub fn id(&self) -> &str {
        &self.inner.id
    }

    /// The revision negotiated at `initialize`.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.inner.version
    }

    /// The level set by `logging/setLevel` (`None`: every message passes).
    pub fn log_level(&self) -> Option<LogLevel> {
        *lock(&self.inner.log_level)
    }

    pub(crate) fn set_log_level(&self, level: Option<LogLevel>) {
        *lock(&self.inner.log_level) = level;
    }

    /// The session's tool list, seen through [`ToolList`]; what it holds is the tool API's
    /// (`crate::tool::runtime`).
    pub(crate) fn tool_list(&self) -> &dyn ToolList {
        &*self.inner.tools
    }

    /// Sends `notifications/tools/list_changed` on the standalone stream, if one is attached.
    pub(crate) fn send_list_changed(&self) {
        // Fire and forget: registration never blocks on the notification.
        let _ = self.send_standalone(list_changed());
    }

    /// The notification a stream attaching now must receive (the list is dirty), if any.
    pub(crate) fn on_stream_attached(&self) -> Option<Value> {
        self.inner.tools.is_dirty().then(list_changed)
    }

    /// Sends a message on the session's standalone stream.
    pub(crate) fn send_standalone(&self, message: Value) -> Delivery {
        let standalone = lock(&self.inner.standalone).clone();
        match standalone {
            Some(notifier) => notifier.deliver(message),
            None => Delivery::NoStream,
        }
    }

    /// The standalone stream, as a notifier.
    pub(crate) fn standalone(&self) -> Option<Notifier> {
        lock(&self.inner.standalone).clone()
    }

    /// Registers a server→client request about to be sent on `stream`: answers its id
    /// (`srv-<node>.<stream>.<random>`) and where its answer will arrive.
    pub(crate) fn begin_request(&self, stream: &str) -> (String, oneshot::Receiver<Answer>) {
        let bytes = crate::random::bytes::<8>();
        let id = format!(
            "srv-{}.{}.{}",
            self.inner.node,
            stream,
            URL_SAFE_NO_PAD.encode(bytes)
        );
        let (tx, rx) = oneshot::channel();
        lock(&self.inner.pending).insert(id.clone(), tx);
        (id, rx)
    }

    /// Forgets a pending request (timed out, or its caller went away).
    pub(crate) fn forget_request(&self, id: &str) {
        lock(&self.inner.pending).remove(id);
    }

    /// Whether a server request of this id awaits its answer here.
    pub(crate) fn awaits(&self, id: &Value) -> bool {
        id.as_str()
            .is_some_and(|id| lock(&self.inner.pending).contains_key(id))
    }

    /// Routes a client's answer to the server request of that id: `Ok(result)` or
    /// `Err(error object)`. Answers whether a request was waiting (unknown ids are ignored).
    pub fn deliver_response(&self, id: &Value, answer: Result<Value, Value>) -> bool {
        let Some(id) = id.as_str() else { return false };
        match lock(&self.inner.pending).remove(id) {
            Some(tx) => tx.send(answer).is_ok(),
            None => false,
        }
    }

    /// Registers a call running on this session under its request id, so that
    /// `notifications/cancelled` can reach it; answers the registration (dropping it
    /// unregisters the call) and the call's cancellation token.
    ///
    /// `None` when `max` calls run on the session already.
    pub(crate) fn start_call(
        &self,
        id: &Value,
        max: usize,
    ) -> Option<(RunningCall, CancellationToken)> {
        self.inner.calls.start_within(id, Work::Call, max)
    }

    /// Resolves once no call runs on this session here.
    pub(crate) async fn drained(&self) {
        self.inner.calls.drained().await;
    }

    /// The client can send nothing more (stdio input ended): the server requests waiting
    /// for its answers fail now instead of waiting for answers that cannot come.
    pub(crate) fn input_ended(&self) {
        lock(&self.inner.pending).clear();
    }

    /// Whether a call runs on this session here (a running call keeps its session alive).
    pub(crate) fn is_busy(&self) -> bool {
        self.inner.calls.is_busy()
    }

    /// Cancels the running call with this request id; `false` when none runs here.
    pub(crate) fn cancel_call(&self, id: &Value) -> bool {
        self.inner.calls.cancel(id)
    }

    /// The session ended: its running calls are cancelled, its waiting server requests fail
    /// and its standalone stream is let go.
    pub(crate) fn close(&self) {
        self.inner.calls.cancel_all();
        lock(&self.inner.pending).clear();
        *lock(&self.inner.standalone) = None;
    }
}
