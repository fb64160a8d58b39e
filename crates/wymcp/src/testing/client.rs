//! [`TestClient`]: an in-process client over a built [`Server`], no transport.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value, json};

use super::{ToolResult, test_context};
use crate::context::{ContextBuilder, Notifier};
use crate::dispatch::CallToolResult;
use crate::protocol::{Method, ProtocolVersion, RpcError};
use crate::server::Server;
use crate::tool::{Content, ErrorKind};

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

    /// Speaks `version` (what [`Context::protocol_version`](crate::Context::protocol_version) tells the tools).
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

    /// Sends one request as a client would and answers its wire `result`, or the JSON-RPC
    /// error a transport would send: `tools/list`, `tools/call`, `resources/list`,
    /// `resources/templates/list`, `resources/read`, `resources/subscribe`,
    /// `resources/unsubscribe`, `prompts/list`, `prompts/get`, `completion/complete`. Any
    /// other method is "Method not found" (`-32601`). `params` is the request's `params`
    /// (`None` when it has none).
    ///
    /// ```
    /// use serde_json::json;
    /// use wymcp::testing::TestClient;
    /// use wymcp::{Resource, RpcError, Server};
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let server = Server::builder()
    ///     .resource(Resource::text("notes://readme", "readme", "Read me first."))
    ///     .build()
    ///     .unwrap();
    /// let client = TestClient::new(server);
    ///
    /// let list = client.request("resources/list", None).await.unwrap();
    /// assert_eq!(list["resources"][0]["uri"], "notes://readme");
    ///
    /// let read = client
    ///     .request("resources/read", Some(json!({"uri": "notes://readme"})))
    ///     .await
    ///     .unwrap();
    /// assert_eq!(read["contents"][0]["text"], "Read me first.");
    ///
    /// let bad = client.request("resources/read", Some(json!([1]))).await.unwrap_err();
    /// assert_eq!(bad.code(), RpcError::INVALID_PARAMS);
    /// # }
    /// ```
    pub async fn request(&self, method: &str, params: Option<Value>) -> Result<Value, RpcError> {
        self.request_with(method, params, |ctx| ctx).await
    }

    /// [`request`](Self::request) with the request's context adjusted by `configure` (another
    /// session id, revision, assigns, ...).
    ///
    /// ```
    /// use serde_json::json;
    /// use wymcp::testing::TestClient;
    /// use wymcp::{Resource, Server};
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let server = Server::builder()
    ///     .resource(Resource::text("notes://readme", "readme", "Read me first."))
    ///     .build()
    ///     .unwrap();
    /// let client = TestClient::new(server);
    /// let watch = Some(json!({"uri": "notes://readme"}));
    /// let ok = client
    ///     .request_with("resources/subscribe", watch, |ctx| ctx.session_id("s1"))
    ///     .await
    ///     .unwrap();
    /// assert_eq!(ok, json!({}));
    /// assert_eq!(client.server().subscriptions(Some("s1")).await.unwrap(), ["notes://readme"]);
    /// # }
    /// ```
    pub async fn request_with(
        &self,
        method: &str,
        params: Option<Value>,
        configure: impl FnOnce(ContextBuilder) -> ContextBuilder,
    ) -> Result<Value, RpcError> {
        let ctx = configure(self.context()).build();
        let version = ctx.protocol_version();
        match Method::parse(method) {
            Some(Method::ToolsList) => {
                let server = self.server.clone();
                let serve = move |_, _| async move { Ok(server.list_tools(version)) };
                self.server
                    .through_layers(Method::ToolsList, params, ctx, serve)
                    .await
            }
            Some(Method::ToolsCall) => {
                let result = self.server.tools_call(params, ctx).await?;
                Ok(result.into_value(version))
            }
            Some(method) => self.server.feature(method, params, ctx).await,
            None => Err(RpcError::method_not_found()),
        }
    }

    /// Reads a resource (`resources/read`): the wire result, `{"contents": [...]}`.
    pub async fn read_resource(&self, uri: &str) -> Result<Value, RpcError> {
        self.request("resources/read", Some(json!({ "uri": uri })))
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
        self.request("prompts/get", Some(Value::Object(params)))
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
                scopes_needed: None,
            }),
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `{"action": action, "data": data}`, `data` left out when `null` or `{}`.
pub(super) fn action_arguments(action: &str, data: Value) -> Value {
    let mut arguments = Map::new();
    arguments.insert("action".into(), Value::String(action.to_owned()));
    let empty = data.is_null() || data.as_object().is_some_and(Map::is_empty);
    if !empty {
        arguments.insert("data".into(), data);
    }
    Value::Object(arguments)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::action_arguments;

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
}
