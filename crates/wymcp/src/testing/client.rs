//! [`TestClient`]: an in-process client of a built [`Server`], served through the serving core
//! as a transport's client is: the session's lifecycle, the eras, the layers and the gates.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value, json};
use tokio::sync::OnceCell;

use super::ToolResult;
use crate::context::Identity;
use crate::protocol::stateless::{CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, PROTOCOL_VERSION_KEY};
use crate::protocol::{ProtocolVersion, RpcError};
use crate::serve::{Answer, Core, Era, Event, Inbound, Outcome, Refusal, Related, SharedAssigns};
use crate::server::Server;
use crate::tool::CallToolResult;

/// The name of a test client's request streams (in server→client request ids).
const STREAM: &str = "test";

/// An in-process client of a built [`Server`]: every request goes through the serving core as
/// a transport's would, without a transport. In a session-era revision (the default, the
/// latest) the client opens a session with `initialize` on its first request and sends each
/// request in it; at 2026-07-28 every request carries the era's envelope instead. The gates,
/// the middleware, the session's tool list, visibility and scopes all apply.
///
/// Calls share the session's assigns ([`with_assign`](Self::with_assign)) and record what the
/// server sends beside their answers ([`notifications`](Self::notifications)), such as
/// progress. The client declares no capabilities: a tool that asks it for sampling,
/// elicitation or roots is told the client does not support them.
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
#[derive(Clone)]
pub struct TestClient {
    core: Core,
    version: ProtocolVersion,
    identity: Option<Identity>,
    /// The session the first request opened (session era); a client with another identity
    /// or revision opens its own.
    session: Arc<OnceCell<Opened>>,
    /// The assigns set before the session opened (then seeded into it).
    assigns: Arc<Mutex<Map<String, Value>>>,
    notifications: Arc<Mutex<Vec<Value>>>,
    next_id: Arc<AtomicU64>,
}

impl std::fmt::Debug for TestClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestClient")
            .field("server", &self.core.server().info().name)
            .field("version", &self.version)
            .field("session", &self.session_id())
            .finish_non_exhaustive()
    }
}

impl TestClient {
    /// A client of `server`, speaking the latest session-era revision. Its sessions live in
    /// memory, never expire, and are counted against no quota.
    pub fn new(server: Server) -> Self {
        TestClient {
            core: Core::direct(server, STREAM),
            version: ProtocolVersion::LATEST_SESSION_ERA,
            identity: None,
            session: Arc::default(),
            assigns: Arc::default(),
            notifications: Arc::default(),
            next_id: Arc::new(AtomicU64::new(1)),
        }
    }

    /// Speaks `version` (what [`Context::protocol_version`](crate::Context::protocol_version)
    /// tells the tools): a session-era revision opens a session of it; 2026-07-28 sends every
    /// request with the era's envelope. The client opens a new session.
    #[must_use]
    pub fn with_version(mut self, version: ProtocolVersion) -> Self {
        self.version = version;
        self.session = Arc::default();
        self
    }

    /// Calls as `identity` (as an authenticated transport would: scopes, visibility, the
    /// principal of tasks and user state). The client opens a new session, owned by it.
    ///
    /// ```
    /// use serde_json::json;
    /// use wymcp::testing::TestClient;
    /// use wymcp::{Identity, Server};
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let client = TestClient::new(Server::builder().build().unwrap());
    /// let alice = client.clone().with_identity(Identity::new("alice").claim("scope", json!("notes:read")));
    /// assert!(!alice.call_tool("help", json!({})).await.unwrap().is_error());
    /// # }
    /// ```
    #[must_use]
    pub fn with_identity(mut self, identity: Identity) -> Self {
        self.identity = Some(identity);
        self.session = Arc::default();
        self
    }

    /// Sets an assign every later call sees (as auth middleware or a session hook would).
    #[must_use]
    pub fn with_assign(self, key: impl Into<String>, value: Value) -> Self {
        match self.session.get() {
            Some(opened) => lock(&opened.assigns).insert(key.into(), value),
            None => lock(&self.assigns).insert(key.into(), value),
        };
        self
    }

    /// The server under test.
    pub fn server(&self) -> &Server {
        self.core.server()
    }

    /// The session the client's requests are sent in, opened by its first request (`None`
    /// before, and at 2026-07-28).
    pub fn session_id(&self) -> Option<&str> {
        self.session.get().map(|opened| opened.id.as_str())
    }

    /// The assigns as the last call left them.
    pub fn assigns(&self) -> Map<String, Value> {
        match self.session.get() {
            Some(opened) => lock(&opened.assigns).clone(),
            None => lock(&self.assigns).clone(),
        }
    }

    /// The notifications the server sent beside the answers so far (`{"jsonrpc", "method",
    /// "params"}`), oldest first.
    pub fn notifications(&self) -> Vec<Value> {
        lock(&self.notifications).clone()
    }

    /// Returns and forgets the notifications sent so far.
    pub fn take_notifications(&self) -> Vec<Value> {
        std::mem::take(&mut *lock(&self.notifications))
    }

    /// The `tools/list` result for `version` (the server's own list, as a client without
    /// scopes sees it; [`request`](Self::request)`("tools/list", None)` asks the session).
    pub fn list_tools(&self, version: ProtocolVersion) -> Value {
        self.core.server().list_tools(version)
    }

    /// Calls a tool with `arguments` (an object, or `null` for none). A protocol error
    /// (unknown tool, arguments that are not an object) is the `Err`; everything else,
    /// refusals included, is a [`ToolResult`].
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<ToolResult, RpcError> {
        self.tools_call(name, arguments, None).await
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
        let arguments = action_arguments(action, data);
        self.tools_call(tool, arguments, Some(token)).await
    }

    /// Sends one request as a client would and answers its wire `result`, or the JSON-RPC
    /// error the server answered. `params` is the request's `params` (`None`, or `null`, when
    /// it has none). Every method the server serves in the client's revision is served, the
    /// extensions' at 2026-07-28 included; any other is "Method not found" (`-32601`).
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
    /// let bad = client.request("resources/read", Some(json!({"uri": 1}))).await.unwrap_err();
    /// assert_eq!(bad.code(), RpcError::INVALID_PARAMS);
    ///
    /// // The subscription belongs to the client's session.
    /// let watch = Some(json!({"uri": "notes://readme"}));
    /// assert_eq!(client.request("resources/subscribe", watch).await.unwrap(), json!({}));
    /// let session = client.session_id();
    /// assert_eq!(client.server().subscriptions(session).await.unwrap(), ["notes://readme"]);
    /// # }
    /// ```
    pub async fn request(&self, method: &str, params: Option<Value>) -> Result<Value, RpcError> {
        match self.send(method, params).await? {
            Answer::Call {
                result, version, ..
            } => Ok(result.into_value(version)),
            answer => wire_result(answer.into_value()),
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
        match self.call_tool("help", Value::Object(arguments)).await {
            Ok(result) => result,
            // Every server has help and the arguments are an object: a protocol error here
            // is the server's (a layer refused it); a result keeps the signature honest.
            Err(error) => ToolResult::new(CallToolResult {
                content: vec![crate::tool::Content::text(error.to_string())],
                is_error: true,
                structured: None,
                error_kind: Some(crate::tool::ErrorKind::Dispatch),
                scopes_needed: None,
            }),
        }
    }

    /// `tools/call` of `name`, with a progress token when given: the typed result the core
    /// answered, or its JSON-RPC error.
    async fn tools_call(
        &self,
        name: &str,
        arguments: Value,
        progress: Option<Value>,
    ) -> Result<ToolResult, RpcError> {
        let mut params = Map::new();
        params.insert("name".into(), Value::String(name.to_owned()));
        params.insert("arguments".into(), arguments);
        if let Some(token) = progress {
            params.insert("_meta".into(), json!({ "progressToken": token }));
        }
        match self.send("tools/call", Some(Value::Object(params))).await? {
            Answer::Call { result, .. } | Answer::Stateless { result, .. } => {
                Ok(ToolResult::new(result))
            }
            answer => {
                let result = wire_result(answer.into_value())?;
                Err(RpcError::new(
                    RpcError::INTERNAL_ERROR,
                    format!(
                        "tools/call answered something other than a tool's result: {}",
                        wymcp_core::bound::echo(&result.to_string())
                    ),
                    None,
                ))
            }
        }
    }

    /// Serves request `method` through the core and drives it to its answer, recording what
    /// the server sent beside it.
    async fn send(&self, method: &str, params: Option<Value>) -> Result<Answer, RpcError> {
        let stateless = self.version.is_stateless();
        let session = if stateless {
            None
        } else {
            Some(self.session().await?)
        };
        let id = json!(self.next_id.fetch_add(1, Ordering::Relaxed));
        let mut message = json!({ "jsonrpc": "2.0", "id": id, "method": method });
        // `null` params are sent as none.
        let mut params = params.filter(|p| !p.is_null());
        if stateless {
            params = Some(self.with_envelope(params));
        }
        if let Some(params) = params {
            message["params"] = params;
        }
        let era = if stateless {
            Era::Stateless
        } else {
            Era::Session
        };
        let outcome = self.serve(message, era, session).await;
        self.answer(outcome).await
    }

    /// The client's session, opened on first use: `initialize`, then
    /// `notifications/initialized`, then the assigns set on the client seeded into it.
    async fn session(&self) -> Result<&str, RpcError> {
        let opened = self
            .session
            .get_or_try_init(|| async {
                let initialize = json!({
                    "jsonrpc": "2.0",
                    "id": 0,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": self.version.as_str(),
                        "capabilities": {},
                        "clientInfo": CLIENT_INFO.clone(),
                    },
                });
                let session = match self.serve(initialize, Era::Session, None).await {
                    Ok(Outcome::Started { session, .. }) => session,
                    Ok(_) => return Err(internal("initialize opened no session")),
                    Err(refusal) => return Err(rpc_error(&refusal.to_message())),
                };
                let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
                if let Err(refusal) = self.serve(initialized, Era::Session, Some(&session)).await {
                    return Err(rpc_error(&refusal.to_message()));
                }
                let assigns = self.seed_assigns(&session).await?;
                Ok(Opened {
                    id: session,
                    assigns,
                })
            })
            .await?;
        Ok(opened.id.as_str())
    }

    /// Seeds session `id`'s shared assigns (which its calls read and write) with the assigns
    /// set on the client so far; answers them.
    async fn seed_assigns(&self, id: &str) -> Result<SharedAssigns, RpcError> {
        let sessions = self.core.sessions();
        let record = sessions
            .store()
            .load(id, sessions.ttl())
            .await
            .map_err(|error| internal(&error.to_string()))?
            .ok_or_else(|| internal("the session just opened is gone"))?;
        let shared = sessions.live().assigns(&record);
        lock(&shared).extend(lock(&self.assigns).clone());
        Ok(shared)
    }

    /// `params` with the stateless era's envelope in `_meta`: the client's revision, no
    /// capabilities, its info.
    fn with_envelope(&self, params: Option<Value>) -> Value {
        let mut params = match params {
            Some(Value::Object(map)) => map,
            // Params of another type are the server's to refuse: sent as they are.
            Some(other) => return other,
            None => Map::new(),
        };
        let meta = params
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(meta) = meta.as_object_mut() {
            meta.insert(PROTOCOL_VERSION_KEY.into(), json!(self.version.as_str()));
            meta.insert(CLIENT_CAPABILITIES_KEY.into(), json!({}));
            meta.insert(CLIENT_INFO_KEY.into(), CLIENT_INFO.clone());
        }
        Value::Object(params)
    }

    async fn serve(
        &self,
        message: Value,
        era: Era,
        session: Option<&str>,
    ) -> Result<Outcome, Refusal> {
        let inbound = Inbound {
            message,
            era,
            session,
            identity: self.identity.as_ref(),
            related: Related::Stream {
                name: Arc::from(STREAM),
                polling: false,
            },
            requested: None,
            headers: None,
            client: None,
            loaded: None,
            raw: None,
        };
        self.core.serve(inbound).await
    }

    /// What a request's outcome answered, its related messages recorded on the way.
    async fn answer(&self, outcome: Result<Outcome, Refusal>) -> Result<Answer, RpcError> {
        let mut call = match outcome {
            Ok(Outcome::Message(answer)) => return Ok(answer),
            Ok(Outcome::Call(call)) => call,
            Ok(Outcome::Started { message, .. }) => return Ok(Answer::Message(message)),
            Ok(Outcome::Accepted) => {
                return Err(internal("the request was taken as a notification"));
            }
            Ok(Outcome::Listen(_)) => {
                return Err(internal(
                    "subscriptions/listen opens a stream: the test client does not hold one",
                ));
            }
            Err(refusal) => return Err(rpc_error(&refusal.to_message())),
        };
        loop {
            match call.next().await {
                Event::Note(note) => lock(&self.notifications).push(note),
                Event::Finished(Ok(answer)) => return Ok(answer),
                Event::Finished(Err(refusal)) => return Err(rpc_error(&refusal.to_message())),
                Event::Cancelled => return Err(internal("the call was cancelled")),
                Event::Closed => {}
            }
        }
    }
}

/// A session the client opened: its id and the assigns its calls share.
#[derive(Debug)]
struct Opened {
    id: String,
    assigns: SharedAssigns,
}

/// The client's `clientInfo`.
static CLIENT_INFO: std::sync::LazyLock<Value> =
    std::sync::LazyLock::new(|| json!({"name": "wymcp-test-client", "version": "1.0"}));

/// The `result` of a JSON-RPC response, or its `error` as an [`RpcError`].
fn wire_result(message: Value) -> Result<Value, RpcError> {
    match message {
        Value::Object(mut map) => match map.remove("result") {
            Some(result) => Ok(result),
            None => Err(rpc_error(&Value::Object(map))),
        },
        other => Err(internal(&format!("not a JSON-RPC response: {other}"))),
    }
}

/// The `error` of a JSON-RPC error response.
fn rpc_error(message: &Value) -> RpcError {
    let error = &message["error"];
    RpcError::new(
        error["code"].as_i64().unwrap_or(RpcError::INTERNAL_ERROR),
        error["message"]
            .as_str()
            .unwrap_or("error without a message"),
        error.get("data").cloned(),
    )
}

fn internal(reason: &str) -> RpcError {
    RpcError::new(RpcError::INTERNAL_ERROR, reason, None)
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
