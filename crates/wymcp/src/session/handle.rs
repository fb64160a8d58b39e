//! [`SessionHandle`]: a live session on the node that owns it — its runtime tools and the
//! dirty tool list, its log level, its running calls, the server→client requests awaiting an
//! answer, and the session's standalone stream.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rand::RngCore as _;
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;
use wymcp_core::{ConfigurationError, Problem};

use super::calls::{RunningCall, RunningCalls, Work};
use super::{Delivery, Notifier};
use crate::protocol::{LogLevel, ProtocolVersion};
use crate::tool::erased::{ActionAdapter, PlainAdapter};
use crate::tool::registered::{HELP, RegisteredTool};
use crate::tool::typed::Typed;
use crate::tool::{ActionTool, PlainTool, TypedActionTool};

/// The `notifications/tools/list_changed` notification.
pub(crate) fn list_changed() -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
}

/// This process's node id: 6 random bytes, base64url (8 characters). Server→client request
/// ids carry it, so an answer landing on another node can be routed back.
pub fn node_id() -> &'static str {
    static NODE: OnceLock<String> = OnceLock::new();
    NODE.get_or_init(|| {
        let mut bytes = [0u8; 6];
        rand::rng().fill_bytes(&mut bytes);
        URL_SAFE_NO_PAD.encode(bytes)
    })
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
    /// The server's configured tools, help last.
    configured: Arc<[Arc<RegisteredTool>]>,
    version: ProtocolVersion,
    log_level: Mutex<Option<LogLevel>>,
    tools: Mutex<ToolState>,
    pending: Mutex<HashMap<String, oneshot::Sender<Answer>>>,
    standalone: Mutex<Option<Notifier>>,
    calls: Arc<RunningCalls>,
}

#[derive(Default)]
struct ToolState {
    runtime: Vec<Arc<RegisteredTool>>,
    dirty: bool,
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
    /// A live session; `standalone` carries messages not related to a request (the HTTP GET
    /// stream, stdout for stdio).
    pub(crate) fn new(
        id: impl Into<String>,
        configured: Arc<[Arc<RegisteredTool>]>,
        version: ProtocolVersion,
        log_level: Option<LogLevel>,
        standalone: Option<Notifier>,
    ) -> Self {
        SessionHandle {
            inner: Arc::new(Inner {
                id: id.into(),
                configured,
                version,
                log_level: Mutex::new(log_level),
                tools: Mutex::new(ToolState::default()),
                pending: Mutex::new(HashMap::new()),
                standalone: Mutex::new(standalone),
                calls: Arc::default(),
            }),
        }
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

    /// Registers an action tool on this session, validated here as the builder validates
    /// configured tools; it replaces a runtime tool of the same name and shadows a configured
    /// one. A refused tool leaves the session's list unchanged.
    pub fn register_tool<T: ActionTool>(&self, tool: T) -> Result<(), ConfigurationError> {
        reserved(tool.name())?;
        self.install(RegisteredTool::action(Arc::new(ActionAdapter(tool)))?);
        Ok(())
    }

    /// Registers a plain tool on this session (see [`register_tool`](Self::register_tool)).
    pub fn register_plain_tool<T: PlainTool>(&self, tool: T) -> Result<(), ConfigurationError> {
        reserved(tool.name())?;
        self.install(RegisteredTool::plain(Arc::new(PlainAdapter(tool)))?);
        Ok(())
    }

    /// Registers a typed action tool on this session (see [`register_tool`](Self::register_tool)).
    pub fn register_typed_tool<T: TypedActionTool>(
        &self,
        tool: T,
    ) -> Result<(), ConfigurationError> {
        self.register_tool(Typed(tool))
    }

    /// Removes a runtime tool; configured tools cannot be removed. Answers whether a runtime
    /// tool of that name was there (an unknown name changes nothing).
    pub fn unregister_tool(&self, name: &str) -> bool {
        let mut state = lock(&self.inner.tools);
        let before = self.served(&state.runtime);
        let count = state.runtime.len();
        state.runtime.retain(|t| t.name != name);
        let removed = state.runtime.len() != count;
        let edge = self.mark(&mut state, before);
        drop(state);
        if edge {
            self.send_list_changed();
        }
        removed
    }

    fn install(&self, tool: RegisteredTool) {
        let tool = Arc::new(tool);
        let mut state = lock(&self.inner.tools);
        let before = self.served(&state.runtime);
        state.runtime.retain(|t| t.name != tool.name);
        state.runtime.insert(0, tool);
        let edge = self.mark(&mut state, before);
        drop(state);
        if edge {
            self.send_list_changed();
        }
    }

    /// Marks the list dirty when the served set changed; answers whether this is the
    /// clean→dirty edge.
    fn mark(&self, state: &mut ToolState, before: BTreeMap<String, Value>) -> bool {
        if self.served(&state.runtime) == before || state.dirty {
            return false;
        }
        state.dirty = true;
        true
    }

    /// What `tools/list` would serve, as a set: name → definition.
    fn served(&self, runtime: &[Arc<RegisteredTool>]) -> BTreeMap<String, Value> {
        merge(&self.inner.configured, runtime)
            .iter()
            .map(|t| {
                (
                    t.name.clone(),
                    t.definition.for_version(self.inner.version).clone(),
                )
            })
            .collect()
    }

    fn send_list_changed(&self) {
        // Fire and forget: registration never blocks on the notification.
        let _ = self.send_standalone(list_changed());
    }

    /// The session's tool names in `tools/list` order, without clearing the dirty flag.
    pub fn tool_names(&self) -> Vec<String> {
        self.effective_tools()
            .iter()
            .map(|t| t.name.clone())
            .collect()
    }

    /// The merged tool list (runtime, configured minus shadowed, help), not clearing the flag.
    pub(crate) fn effective_tools(&self) -> Vec<Arc<RegisteredTool>> {
        merge(&self.inner.configured, &lock(&self.inner.tools).runtime)
    }

    /// [`effective_tools`](Self::effective_tools) when the session registered runtime tools;
    /// `None` when it did not, so its list is its server's own (the common case, and no
    /// per-call copy of the list).
    pub(crate) fn runtime_tools_merged(&self) -> Option<Vec<Arc<RegisteredTool>>> {
        let state = lock(&self.inner.tools);
        (!state.runtime.is_empty()).then(|| merge(&self.inner.configured, &state.runtime))
    }

    /// Serves `tools/list`: the merged list for the session's revision; clears the dirty flag
    /// (read and clear are one step).
    pub fn list_tools(&self) -> Value {
        let mut state = lock(&self.inner.tools);
        state.dirty = false;
        let tools: Vec<Value> = merge(&self.inner.configured, &state.runtime)
            .iter()
            .map(|t| t.definition.for_version(self.inner.version).clone())
            .collect();
        json!({ "tools": tools })
    }

    /// Whether the tool list changed since `tools/list` was last served.
    pub fn is_tool_list_dirty(&self) -> bool {
        lock(&self.inner.tools).dirty
    }

    /// The notification a stream attaching now must receive (the list is dirty), if any.
    pub(crate) fn on_stream_attached(&self) -> Option<Value> {
        self.is_tool_list_dirty().then(list_changed)
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
        let mut bytes = [0u8; 8];
        rand::rng().fill_bytes(&mut bytes);
        let id = format!(
            "srv-{}.{}.{}",
            node_id(),
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

fn reserved(name: &str) -> Result<(), ConfigurationError> {
    if name == HELP {
        return Err(
            ConfigurationError::new(Problem::ReservedAtRuntime(name.to_owned())).in_tool(name),
        );
    }
    Ok(())
}

/// Runtime tools (newest first), then configured tools not shadowed, then help.
fn merge(
    configured: &[Arc<RegisteredTool>],
    runtime: &[Arc<RegisteredTool>],
) -> Vec<Arc<RegisteredTool>> {
    let mut tools: Vec<Arc<RegisteredTool>> = runtime.to_vec();
    for tool in configured {
        if !runtime.iter().any(|r| r.name == tool.name) {
            tools.push(tool.clone());
        }
    }
    tools
}
