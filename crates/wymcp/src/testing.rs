//! Testing your tools: an in-process client over a built [`Server`], typed results, gate
//! errors as a type, and assertion helpers.
//!
//! No HTTP and no session engine: [`TestClient`] calls [`Server::call_tool`] with a
//! [`Context`] it builds for each call (session id `"test-session"`, request ids counting up
//! from 1, assigns shared between calls like a session's), so a test sees exactly what a client
//! would read in the `tools/call` result, gates and all.
//!
//! ```
//! use serde_json::json;
//! use wymcp::testing::{TestClient, assert_gate_error, assert_ok};
//! use wymcp::{ActionResult, ActionTool, Actions, Context, Data, Reply, Server};
//!
//! struct Tasks;
//!
//! impl ActionTool for Tasks {
//!     fn name(&self) -> &str { "tasks" }
//!     fn description(&self) -> &str { "Task management" }
//!     fn actions(&self) -> Actions {
//!         wymcp::actions!({
//!             "create": {
//!                 "description": "Create a task",
//!                 "properties": {"title": {"type": "string"}},
//!                 "required": ["title"]
//!             }
//!         })
//!     }
//!     async fn run_action(&self, _: &str, data: Data, _: Context) -> ActionResult {
//!         Ok(Reply::new(json!({"created": data["title"]})))
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let client = TestClient::new(Server::builder().tool(Tasks).build().unwrap());
//!
//! let created = client.call("tasks", "create", json!({"title": "Write docs"})).await.unwrap();
//! assert_eq!(assert_ok(&created)["created"], "Write docs");
//!
//! let refused = client.call("tasks", "create", json!({})).await.unwrap();
//! let gate = assert_gate_error(&refused, "missing_required_fields");
//! assert_eq!(gate.payload["missing"], json!(["title"]));
//! # }
//! ```
//!
//! The rest of the module checks what other layers hand you: content lists
//! ([`unwrap_text`], [`unwrap_json`], [`unwrap_single`]) and JSON-RPC responses read over a real
//! transport ([`build_call_request`], [`build_action_request`], [`text_response`],
//! [`json_response`], [`error_response`], [`image_response`], [`audio_response`]).

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value, json};

use crate::context::{Context, ContextBuilder, Notifier};
use crate::dispatch::CallToolResult;
use crate::protocol::{ProtocolVersion, RpcError};
use crate::server::Server;
use crate::tool::{Content, ErrorKind};

/// The session id [`test_context`] and [`TestClient`] give every call.
pub const TEST_SESSION_ID: &str = "test-session";

/// A [`ContextBuilder`] with a test's defaults: session id [`TEST_SESSION_ID`], request id `1`,
/// the latest protocol revision, client info `{"name": "test", "version": "1.0"}`, client
/// capabilities `{}`, no assigns. Override any of them before `build()`.
///
/// Use it to call a tool's own methods directly (`run_action`, `action_context`, ...).
///
/// ```
/// use serde_json::json;
/// use wymcp::testing::test_context;
///
/// let ctx = test_context().assign("user", json!("u1")).build();
/// assert_eq!(ctx.session_id(), Some("test-session"));
/// assert_eq!(ctx.request_id(), Some(&json!(1)));
/// assert_eq!(ctx.assigns()["user"], "u1");
/// ```
pub fn test_context() -> ContextBuilder {
    Context::builder()
        .session_id(TEST_SESSION_ID)
        .request_id(json!(1))
        .client_info(json!({"name": "test", "version": "1.0"}))
        .client_capabilities(json!({}))
}

/// A refusal by one of the dispatch gates (or by `help`): the payload's `error` name, and the
/// whole payload.
///
/// ```
/// use serde_json::json;
/// use wymcp::testing::GateError;
///
/// let gate = GateError {
///     error: "unknown_action".into(),
///     payload: json!({"error": "unknown_action", "help": "help {tool: \"tasks\"}"}),
/// };
/// assert_eq!(gate.help(), Some("help {tool: \"tasks\"}"));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct GateError {
    /// The payload's `error` value (`missing_required_fields`, `invalid_values`, ...).
    pub error: String,
    /// The whole refusal payload as the caller reads it.
    pub payload: Value,
}

impl GateError {
    /// The refusal's `message`, when it has one.
    pub fn message(&self) -> Option<&str> {
        self.payload.get("message").and_then(Value::as_str)
    }

    /// The help call the refusal points at (`help {tool: "tasks", action: "create"}`).
    pub fn help(&self) -> Option<&str> {
        self.payload.get("help").and_then(Value::as_str)
    }
}

impl fmt::Display for GateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "gate refused the call ({}): {}",
            self.error, self.payload
        )
    }
}

impl std::error::Error for GateError {}

/// What a tool call answered, as a test reads it: the [`CallToolResult`] and its first text
/// item parsed as JSON (every action reply and every refusal is one).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    result: CallToolResult,
    json: Option<Value>,
}

/// What a [`ToolResult`] is, told apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// `isError: false`.
    Ok,
    /// A gate (or help) refused the call before the tool's code ran.
    GateError,
    /// The tool ran and answered an error.
    ToolError,
    /// The tool panicked; the framework contained it (`errorType: tool_fault`).
    Fault,
}

impl ToolResult {
    /// Wraps a [`CallToolResult`].
    pub fn new(result: CallToolResult) -> Self {
        let json = result.json();
        ToolResult { result, json }
    }

    /// The result as the framework produced it.
    pub fn result(&self) -> &CallToolResult {
        &self.result
    }

    /// The result, unwrapped.
    pub fn into_result(self) -> CallToolResult {
        self.result
    }

    /// Whether the result is an error (`isError`).
    pub fn is_error(&self) -> bool {
        self.result.is_error()
    }

    /// Success, gate refusal, tool error or contained fault.
    pub fn outcome(&self) -> Outcome {
        if !self.result.is_error() {
            return Outcome::Ok;
        }
        match self.result.error_kind() {
            Some(ErrorKind::Dispatch) => Outcome::GateError,
            Some(_) => Outcome::ToolError,
            None => Outcome::Fault,
        }
    }

    /// The content items.
    pub fn content(&self) -> &[Content] {
        self.result.content()
    }

    /// The first content item's text, when it is a text item.
    pub fn text(&self) -> Option<&str> {
        self.result.text()
    }

    /// The first text item parsed as JSON.
    pub fn json(&self) -> Option<&Value> {
        self.json.as_ref()
    }

    /// The validated `structuredContent`, when the tool declares an output schema.
    pub fn structured_content(&self) -> Option<&Value> {
        self.result.structured_content()
    }

    /// The gate refusal, when a gate refused the call.
    pub fn gate_error(&self) -> Option<GateError> {
        if self.outcome() != Outcome::GateError {
            return None;
        }
        let payload = self.json.clone()?;
        let error = payload.get("error")?.as_str()?.to_owned();
        Some(GateError { error, payload })
    }

    /// The `hints` of a reply or error body (empty when there are none).
    pub fn hints(&self) -> Vec<Value> {
        self.json
            .as_ref()
            .and_then(|j| j.get("hints"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    }

    /// The `context` of a reply or error body (what `action_context` added).
    pub fn context(&self) -> Option<&Map<String, Value>> {
        self.json
            .as_ref()
            .and_then(|j| j.get("context"))
            .and_then(Value::as_object)
    }

    /// The wire `result` object for a session of `version`.
    pub fn to_value(&self, version: ProtocolVersion) -> Value {
        self.result.to_value(version)
    }
}

impl From<CallToolResult> for ToolResult {
    fn from(result: CallToolResult) -> Self {
        ToolResult::new(result)
    }
}

/// An in-process client over a built [`Server`]: calls tools, actions and help exactly as
/// `tools/call` would, without a transport.
///
/// Calls share one set of assigns (like a session) and record the notifications tools send
/// ([`notifications`](Self::notifications)), such as progress.
///
/// ```
/// use serde_json::json;
/// use wymcp::testing::{TestClient, assert_ok};
/// use wymcp::{ProtocolVersion, Server};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let client = TestClient::new(Server::builder().name("demo").build().unwrap());
/// let tools = client.list_tools(ProtocolVersion::V2025_11_25);
/// assert_eq!(tools["tools"][0]["name"], "help");
///
/// let index = client.help(None, None).await;
/// assert_eq!(assert_ok(&index)["tools"][0]["tool"], "help");
///
/// // An unknown tool is a protocol error, not a result.
/// let error = client.call_tool("nope", json!({})).await.unwrap_err();
/// assert_eq!(error.code(), -32602);
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct TestClient {
    server: Server,
    version: ProtocolVersion,
    assigns: Arc<Mutex<Map<String, Value>>>,
    notifications: Arc<Mutex<Vec<Value>>>,
    next_id: Arc<AtomicU64>,
}

impl TestClient {
    /// A client of `server`, speaking the latest protocol revision.
    pub fn new(server: Server) -> Self {
        TestClient {
            server,
            version: ProtocolVersion::LATEST_SESSION_ERA,
            assigns: Arc::new(Mutex::new(Map::new())),
            notifications: Arc::new(Mutex::new(Vec::new())),
            next_id: Arc::new(AtomicU64::new(1)),
        }
    }

    /// Speaks `version` (what [`Context::protocol_version`] tells the tools).
    #[must_use]
    pub fn with_version(mut self, version: ProtocolVersion) -> Self {
        self.version = version;
        self
    }

    /// Sets an assign every later call sees (as auth middleware or a session would).
    #[must_use]
    pub fn with_assign(self, key: impl Into<String>, value: Value) -> Self {
        lock(&self.assigns).insert(key.into(), value);
        self
    }

    /// The server under test.
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// The assigns as the last call left them.
    pub fn assigns(&self) -> Map<String, Value> {
        lock(&self.assigns).clone()
    }

    /// The notifications tools sent so far (`{"jsonrpc", "method", "params"}`), oldest first.
    pub fn notifications(&self) -> Vec<Value> {
        lock(&self.notifications).clone()
    }

    /// Returns and forgets the notifications sent so far.
    pub fn take_notifications(&self) -> Vec<Value> {
        std::mem::take(&mut *lock(&self.notifications))
    }

    /// The `tools/list` result for `version`.
    pub fn list_tools(&self, version: ProtocolVersion) -> Value {
        self.server.list_tools(version)
    }

    /// The context of the next call: a fresh request id, the shared assigns, a notifier
    /// recording into [`notifications`](Self::notifications).
    pub fn context(&self) -> ContextBuilder {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let sink = Arc::clone(&self.notifications);
        test_context()
            .request_id(json!(id))
            .protocol_version(self.version)
            .shared_assigns(Arc::clone(&self.assigns))
            .notifier(Notifier::new(move |n| lock(&sink).push(n)))
    }

    /// Calls a tool with `arguments` (an object, or `null` for none). A protocol error
    /// (unknown tool, arguments that are not an object) is the `Err`; everything else,
    /// refusals included, is a [`ToolResult`].
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<ToolResult, RpcError> {
        self.call_tool_with(name, arguments, |ctx| ctx).await
    }

    /// [`call_tool`](Self::call_tool) with the call's context adjusted by `configure`
    /// (a progress token, a cancellation token, other assigns, ...).
    ///
    /// ```
    /// # use serde_json::json;
    /// # use wymcp::testing::TestClient;
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// # let client = TestClient::new(wymcp::Server::builder().build().unwrap());
    /// let result = client
    ///     .call_tool_with("help", json!({}), |ctx| ctx.progress_token(json!("p1")))
    ///     .await
    ///     .unwrap();
    /// assert!(!result.is_error());
    /// # }
    /// ```
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: Value,
        configure: impl FnOnce(ContextBuilder) -> ContextBuilder,
    ) -> Result<ToolResult, RpcError> {
        let ctx = configure(self.context()).build();
        let result = self.server.call_tool(name, Some(arguments), ctx).await?;
        Ok(ToolResult::new(result))
    }

    /// Calls one action of an action tool: `{"action": action, "data": data}`, with `data`
    /// left out when it is `null` or `{}`.
    pub async fn call(
        &self,
        tool: &str,
        action: &str,
        data: Value,
    ) -> Result<ToolResult, RpcError> {
        self.call_tool(tool, action_arguments(action, data)).await
    }

    /// [`call`](Self::call) with a progress token: the tool's `ctx.progress(...)` reports
    /// land in [`notifications`](Self::notifications).
    pub async fn call_with_progress(
        &self,
        tool: &str,
        action: &str,
        data: Value,
        token: Value,
    ) -> Result<ToolResult, RpcError> {
        self.call_tool_with(tool, action_arguments(action, data), |ctx| {
            ctx.progress_token(token)
        })
        .await
    }

    /// Reads a resource (`resources/read`): the wire result, `{"contents": [...]}`.
    pub async fn read_resource(&self, uri: &str) -> Result<Value, RpcError> {
        let ctx = self.context().build();
        self.server
            .handle_resources_read(Some(json!({ "uri": uri })), ctx)
            .await
    }

    /// Gets a prompt (`prompts/get`) with string `arguments` (an object, or `null`): the wire
    /// result, `{"messages": [...]}`.
    pub async fn get_prompt(&self, name: &str, arguments: Value) -> Result<Value, RpcError> {
        let mut params = Map::new();
        params.insert("name".into(), Value::String(name.to_owned()));
        if !arguments.is_null() {
            params.insert("arguments".into(), arguments);
        }
        let ctx = self.context().build();
        self.server
            .handle_prompts_get(Some(Value::Object(params)), ctx)
            .await
    }

    /// Calls `help`: the index (`None, None`), a tool, or one action.
    pub async fn help(&self, tool: Option<&str>, action: Option<&str>) -> ToolResult {
        let mut arguments = Map::new();
        if let Some(tool) = tool {
            arguments.insert("tool".into(), Value::String(tool.to_owned()));
        }
        if let Some(action) = action {
            arguments.insert("action".into(), Value::String(action.to_owned()));
        }
        let ctx = self.context().build();
        match self
            .server
            .call_tool("help", Some(Value::Object(arguments)), ctx)
            .await
        {
            Ok(result) => ToolResult::new(result),
            // Every server has help and the arguments are an object: unreachable, but a
            // result keeps the signature honest.
            Err(error) => ToolResult::new(CallToolResult {
                content: vec![Content::text(error.to_string())],
                is_error: true,
                structured: None,
                error_kind: Some(ErrorKind::Dispatch),
            }),
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `{"action": action, "data": data}`, `data` left out when `null` or `{}`.
fn action_arguments(action: &str, data: Value) -> Value {
    let mut arguments = Map::new();
    arguments.insert("action".into(), Value::String(action.to_owned()));
    let empty = data.is_null() || data.as_object().is_some_and(Map::is_empty);
    if !empty {
        arguments.insert("data".into(), data);
    }
    Value::Object(arguments)
}

// ---------------------------------------------------------------------------------------------
// Assertions
// ---------------------------------------------------------------------------------------------

fn describe(result: &ToolResult) -> String {
    let body = result
        .text()
        .map(str::to_owned)
        .unwrap_or_else(|| format!("{:?}", result.content()));
    format!("{:?}: {body}", result.outcome())
}

/// Asserts the call succeeded and returns its reply: the first text item as JSON, or as a JSON
/// string when it is not JSON.
///
/// # Panics
///
/// When the result is an error; the message quotes it.
#[track_caller]
pub fn assert_ok(result: &ToolResult) -> Value {
    if result.is_error() {
        panic!("expected success, got {}", describe(result));
    }
    match (result.json(), result.text()) {
        (Some(json), _) => json.clone(),
        (None, Some(text)) => Value::String(text.to_owned()),
        (None, None) => Value::Null,
    }
}

/// Asserts a gate refused the call with `error` (`"missing_required_fields"`,
/// `"invalid_values"`, `"unknown_params"`, ...) and returns the refusal.
///
/// # Panics
///
/// When the call succeeded, failed another way, or was refused with another error.
#[track_caller]
pub fn assert_gate_error(result: &ToolResult, error: &str) -> GateError {
    match result.gate_error() {
        Some(gate) if gate.error == error => gate,
        Some(gate) => panic!(
            "expected gate error {error:?}, got gate error {:?}: {}",
            gate.error, gate.payload
        ),
        None => panic!("expected gate error {error:?}, got {}", describe(result)),
    }
}

/// Asserts the tool ran and answered an error; returns the text the caller reads (for a
/// failure with a hint context, the JSON body's `error`).
///
/// # Panics
///
/// When the call succeeded, was refused by a gate, or faulted.
#[track_caller]
pub fn assert_tool_error(result: &ToolResult) -> String {
    if result.outcome() != Outcome::ToolError {
        panic!("expected a tool error, got {}", describe(result));
    }
    match result
        .json()
        .and_then(|j| j.get("error"))
        .and_then(Value::as_str)
    {
        Some(error) => error.to_owned(),
        None => result.text().unwrap_or_default().to_owned(),
    }
}

/// Asserts the tool panicked and the framework contained it; returns the fault body
/// (`{"errorType": "tool_fault", ...}`).
///
/// # Panics
///
/// When the call did not fault.
#[track_caller]
pub fn assert_fault(result: &ToolResult) -> Value {
    if result.outcome() != Outcome::Fault {
        panic!("expected a contained fault, got {}", describe(result));
    }
    result.json().cloned().unwrap_or(Value::Null)
}

/// Asserts the result carries a hint pointing at `tool`'s `action`; returns the hint.
///
/// # Panics
///
/// When no hint points there; the message lists the hints.
#[track_caller]
pub fn assert_hint(result: &ToolResult, tool: &str, action: &str) -> Value {
    let hints = result.hints();
    hints
        .iter()
        .find(|h| h["tool"] == tool && h["action"] == action)
        .cloned()
        .unwrap_or_else(|| {
            panic!(
                "expected a hint to {tool} {action}, got hints {hints:?} in {}",
                describe(result)
            )
        })
}

// ---------------------------------------------------------------------------------------------
// Content and JSON-RPC responses
// ---------------------------------------------------------------------------------------------

/// A check on content or a response that did not hold; the message says what was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch(String);

impl Mismatch {
    fn new(message: impl Into<String>) -> Self {
        Mismatch(message.into())
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Mismatch {}

/// The single item of `content`.
///
/// ```
/// use wymcp::Content;
/// use wymcp::testing::unwrap_single;
///
/// let two = [Content::text("a"), Content::text("b")];
/// let error = unwrap_single(&two).unwrap_err();
/// assert!(error.message().starts_with("expected single content item, got: "));
/// ```
pub fn unwrap_single(content: &[Content]) -> Result<&Content, Mismatch> {
    match content {
        [item] => Ok(item),
        _ => Err(Mismatch::new(format!(
            "expected single content item, got: {}",
            serde_json::to_string(content).unwrap_or_else(|_| format!("{content:?}"))
        ))),
    }
}

/// The text of a content list holding exactly one text item.
///
/// ```
/// use wymcp::Content;
/// use wymcp::testing::unwrap_text;
///
/// assert_eq!(unwrap_text(&[Content::text("done")]).unwrap(), "done");
/// ```
pub fn unwrap_text(content: &[Content]) -> Result<&str, Mismatch> {
    let item = unwrap_single(content)?;
    item.as_text()
        .ok_or_else(|| Mismatch::new(format!("expected a text item, got: {item:?}")))
}

/// The single text item of `content`, parsed as JSON.
///
/// ```
/// use serde_json::json;
/// use wymcp::Content;
/// use wymcp::testing::unwrap_json;
///
/// assert_eq!(unwrap_json(&[Content::text(r#"{"id": 7}"#)]).unwrap(), json!({"id": 7}));
/// ```
pub fn unwrap_json(content: &[Content]) -> Result<Value, Mismatch> {
    let text = unwrap_text(content)?;
    serde_json::from_str(text)
        .map_err(|e| Mismatch::new(format!("expected JSON text, got {text:?}: {e}")))
}

/// A `tools/call` JSON-RPC request body with id 1.
///
/// ```
/// use serde_json::json;
/// use wymcp::testing::build_call_request;
///
/// let body = build_call_request("tasks", json!({"action": "get"}));
/// assert_eq!(body["method"], "tools/call");
/// assert_eq!(body["params"]["arguments"], json!({"action": "get"}));
/// ```
pub fn build_call_request(tool: &str, arguments: Value) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    })
}

/// A `tools/call` request for one action: arguments `{"action", "data"}`, `data` left out when
/// it is `null` or `{}`.
///
/// ```
/// use serde_json::json;
/// use wymcp::testing::build_action_request;
///
/// let body = build_action_request("tasks", "get", json!({"id": "7"}));
/// assert_eq!(body["params"]["arguments"], json!({"action": "get", "data": {"id": "7"}}));
/// let body = build_action_request("tasks", "list", json!({}));
/// assert_eq!(body["params"]["arguments"], json!({"action": "list"}));
/// ```
pub fn build_action_request(tool: &str, action: &str, data: Value) -> Value {
    build_call_request(tool, action_arguments(action, data))
}

/// The `result` of a JSON-RPC response (or `response` itself when it already is a result).
fn call_result(response: &Value) -> Result<&Value, Mismatch> {
    if let Some(error) = response.get("error") {
        return Err(Mismatch::new(format!(
            "expected a result, got a JSON-RPC error: {error}"
        )));
    }
    let result = response.get("result").unwrap_or(response);
    if result.get("content").is_some_and(Value::is_array) {
        Ok(result)
    } else {
        Err(Mismatch::new(format!(
            "expected a tools/call result, got: {response}"
        )))
    }
}

fn result_content(result: &Value) -> Result<Vec<Content>, Mismatch> {
    serde_json::from_value(result["content"].clone())
        .map_err(|e| Mismatch::new(format!("content is not MCP content ({e}): {result}")))
}

fn is_error(result: &Value) -> bool {
    result
        .get("isError")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// The text of a successful single-text `tools/call` response.
///
/// ```
/// use serde_json::json;
/// use wymcp::testing::text_response;
///
/// let ok = json!({"jsonrpc": "2.0", "id": 1,
///                 "result": {"content": [{"type": "text", "text": "done"}], "isError": false}});
/// assert_eq!(text_response(&ok).unwrap(), "done");
///
/// let refused = json!({"result": {"content": [{"type": "text", "text": "{}"}], "isError": true}});
/// assert!(text_response(&refused).unwrap_err().message().starts_with("expected success, got error"));
/// ```
pub fn text_response(response: &Value) -> Result<String, Mismatch> {
    let result = call_result(response)?;
    if is_error(result) {
        return Err(Mismatch::new(format!(
            "expected success, got error: {result}"
        )));
    }
    Ok(unwrap_text(&result_content(result)?)?.to_owned())
}

/// [`text_response`], parsed as JSON.
pub fn json_response(response: &Value) -> Result<Value, Mismatch> {
    let text = text_response(response)?;
    serde_json::from_str(&text)
        .map_err(|e| Mismatch::new(format!("expected JSON text, got {text:?}: {e}")))
}

/// The text of an `isError: true` `tools/call` response (gate refusals are such results).
///
/// ```
/// use serde_json::json;
/// use wymcp::testing::error_response;
///
/// let ok = json!({"result": {"content": [{"type": "text", "text": "done"}], "isError": false}});
/// assert!(error_response(&ok).unwrap_err().message().starts_with("expected error, got success"));
/// ```
pub fn error_response(response: &Value) -> Result<String, Mismatch> {
    let result = call_result(response)?;
    if !is_error(result) {
        return Err(Mismatch::new(format!(
            "expected error, got success: {result}"
        )));
    }
    Ok(unwrap_text(&result_content(result)?)?.to_owned())
}

fn media_response(response: &Value, kind: &str) -> Result<Content, Mismatch> {
    let result = call_result(response)?;
    if is_error(result) {
        return Err(Mismatch::new(format!(
            "expected success, got error: {result}"
        )));
    }
    let content = result_content(result)?;
    let item = unwrap_single(&content)?.clone();
    let matches = matches!(
        (&item, kind),
        (Content::Image { .. }, "image") | (Content::Audio { .. }, "audio")
    );
    if matches {
        Ok(item)
    } else {
        Err(Mismatch::new(format!(
            "expected an {kind} item, got: {item:?}"
        )))
    }
}

/// The single image item of a successful response.
pub fn image_response(response: &Value) -> Result<Content, Mismatch> {
    media_response(response, "image")
}

/// The single audio item of a successful response.
pub fn audio_response(response: &Value) -> Result<Content, Mismatch> {
    media_response(response, "audio")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn action_arguments_leave_out_empty_data() {
        assert_eq!(
            action_arguments("list", json!({})),
            json!({"action": "list"})
        );
        assert_eq!(
            action_arguments("list", Value::Null),
            json!({"action": "list"})
        );
        assert_eq!(
            action_arguments("get", json!({"id": 1})),
            json!({"action": "get", "data": {"id": 1}})
        );
    }

    #[test]
    fn responses_are_told_apart() {
        let image = json!({"result": {"content": [{"type": "image", "data": "AA==", "mimeType": "image/png"}], "isError": false}});
        assert!(image_response(&image).is_ok());
        assert!(audio_response(&image).is_err());
        let rpc_error =
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "x"}});
        assert!(text_response(&rpc_error).is_err());
        let ok = json!({"result": {"content": [{"type": "text", "text": "{\"id\":7}"}]}});
        assert_eq!(json_response(&ok), Ok(json!({"id": 7})));
    }
}
