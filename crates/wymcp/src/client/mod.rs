//! An MCP client (the `client` feature) over Streamable HTTP or over the stdio of a command it
//! spawns: negotiates the era; lists and calls tools, resources, prompts and completion; answers
//! the server's requests with the handlers installed; with a timeout on every request and
//! limits on what a server can make it hold. The guide's page is `docs/client.md`.
//!
//! ```no_run
//! use serde_json::json;
//! use wymcp::client::Client;
//!
//! # async fn run() -> Result<(), wymcp::client::ClientError> {
//! let client = Client::builder("http://127.0.0.1:8080/mcp")
//!     .bearer_token("s3cret")
//!     .connect()
//!     .await?;
//! println!("speaking {}", client.protocol_version());
//! for tool in client.list_tools().await? {
//!     println!("{}", tool.name());
//! }
//! let result = client.call_tool("echo", json!({"text": "hi"})).await?;
//! println!("{} (error: {})", result.text(), result.is_error());
//! client.close().await?;
//! # Ok(()) }
//! ```
//!
//! The era: MCP 2026-07-28 (stateless: every request carries the `_meta` envelope and the
//! `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers) when the server's
//! `server/discover` offers it; else `initialize` at the newest session-era revision both
//! speak (2025-11-25 down to 2025-03-26), `notifications/initialized`, the `Mcp-Session-Id`
//! and `MCP-Protocol-Version` headers, and a DELETE at [`Client::close`].
//!
//! Over stdio ([`Client::stdio`]) the same negotiation runs on the child's stdin and stdout.
//!
//! In the session era over HTTP the client opens the session's GET stream at connect and reads
//! it while it lives; a dropped stream (the GET, or a call's stream before its answer) is
//! reopened with `Last-Event-ID`, so what the server sent meanwhile arrives once, in order.
//!
//! Not in this client yet: `Mcp-Param-*` headers.

mod builder;
mod era;
mod error;
mod handlers;
mod http;
mod input;
mod link;
mod listen;
#[cfg(feature = "otel")]
mod metrics;
mod notifications;
mod outgoing;
pub(crate) mod sse;
mod stdio;
mod subscriptions;
mod tasks;
mod tools;
mod trace;

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value, json};
use tracing::Instrument as _;

use crate::protocol::LogLevel;
use crate::protocol::ProtocolVersion;
use crate::protocol::stateless::LOG_LEVEL_KEY;

pub use builder::{
    ClientBuilder, DEFAULT_MAX_ANSWER_BYTES, DEFAULT_MAX_EVENT_BYTES, DEFAULT_MAX_INPUT_ROUNDS,
    DEFAULT_MAX_LINE_BYTES, DEFAULT_MAX_NOTIFICATIONS, DEFAULT_MAX_PAGES, DEFAULT_MAX_RECONNECTS,
    DEFAULT_MAX_STDERR_LINE_BYTES, DEFAULT_RECONNECT_DELAY, DEFAULT_TIMEOUT,
};
pub use error::{ClientError, Limit, Malformed, TransportError};
pub use handlers::{related_input_key, related_progress_token};
pub use notifications::Notification;
pub use subscriptions::{Subscription, Subscriptions};
pub use tools::{ToolInfo, ToolResult};

use builder::Target;
use era::Era;
use http::Connection;
use link::Link;
use notifications::Queue;
use stdio::Process;

/// A connection to one MCP server, over Streamable HTTP ([`Client::builder`]) or a spawned
/// command's stdio ([`Client::stdio`]). Calls take `&self`: several may run at once.
#[derive(Debug)]
pub struct Client {
    shared: Arc<Shared>,
    handshake: Value,
    /// The session's GET stream, read while the client lives (HTTP, session era).
    listener: Option<listen::Listener>,
}

/// What a call's cancellation guard needs after the call's future is gone.
#[derive(Debug)]
struct Shared {
    link: Link,
    era: Era,
    /// The handlers of the server's requests, for those an `input_required` result carries.
    handlers: handlers::Handlers,
    /// The log level every stateless request asks for (`set_logging_level`).
    log_level: Mutex<Option<LogLevel>>,
    /// The id of the next request (the client's calls and its listen streams').
    next_id: AtomicI64,
}

impl Client {
    /// A builder for a client of the MCP endpoint at `url` (`http://` or `https://`).
    pub fn builder(url: impl Into<String>) -> ClientBuilder {
        ClientBuilder::new(Target::Http { url: url.into() })
    }

    /// A builder for a client of the MCP server `program` spawned at
    /// [`connect`](ClientBuilder::connect) (found on `PATH` as [`std::process::Command`]
    /// finds it), speaking JSON-RPC on its stdin and stdout, its stderr logged; with
    /// [`arg`](ClientBuilder::arg), [`env`](ClientBuilder::env) and
    /// [`current_dir`](ClientBuilder::current_dir). The child is killed when the client is
    /// dropped; [`Client::close`] ends it gracefully.
    ///
    /// ```no_run
    /// use wymcp::client::Client;
    ///
    /// # async fn run() -> Result<(), wymcp::client::ClientError> {
    /// let client = Client::stdio("npx")
    ///     .args(["-y", "@modelcontextprotocol/server-everything"])
    ///     .env("LOG_LEVEL", "debug")
    ///     .connect()
    ///     .await?;
    /// println!("{} tools", client.list_tools().await?.len());
    /// client.close().await?;
    /// # Ok(()) }
    /// ```
    pub fn stdio(program: impl Into<String>) -> ClientBuilder {
        ClientBuilder::new(Target::Stdio {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            current_dir: None,
        })
    }

    pub(crate) async fn connect(builder: ClientBuilder) -> Result<Client, ClientError> {
        let ClientBuilder {
            target,
            headers,
            settings,
            handlers,
        } = builder;
        let kept = handlers.clone();
        let link = match target {
            Target::Http { url } => Link::Http(http_connection(&url, headers, settings, handlers)?),
            Target::Stdio {
                program,
                args,
                env,
                current_dir,
            } => Link::Stdio(Process::spawn(
                &program,
                &args,
                &env,
                current_dir.as_deref(),
                settings,
                handlers,
            )?),
        };
        let (era, handshake) = era::negotiate(&link).await?;
        let shared = Arc::new(Shared {
            link,
            era,
            handlers: kept,
            log_level: Mutex::new(None),
            next_id: AtomicI64::new(1),
        });
        let listener = listen::start(&shared).await;
        Ok(Client {
            shared,
            handshake,
            listener,
        })
    }

    /// The revision negotiated.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.shared.era.version()
    }

    /// The session's id (HTTP session era, when the server gave one); `None` when stateless
    /// or over stdio.
    pub fn session_id(&self) -> Option<&str> {
        match &self.shared.era {
            Era::Session { session_id, .. } => session_id.as_deref(),
            Era::Stateless { .. } => None,
        }
    }

    /// The server's capabilities, as its `initialize` or `server/discover` result gave them.
    pub fn server_capabilities(&self) -> &Value {
        self.handshake.get("capabilities").unwrap_or(&Value::Null)
    }

    /// Every tool the server lists, following `nextCursor` for at most
    /// [`ClientBuilder::max_pages`] pages.
    pub async fn list_tools(&self) -> Result<Vec<ToolInfo>, ClientError> {
        let items = self.list_all("tools/list", "tools").await?;
        Ok(items.into_iter().filter_map(ToolInfo::of).collect())
    }

    /// Calls the tool `name` with `arguments` (a JSON object; anything else is sent as no
    /// arguments). A tool's refusal is a result with [`ToolResult::is_error`], not an `Err`.
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<ToolResult, ClientError> {
        self.call(name, arguments, None).await
    }

    /// [`call_tool`](Self::call_tool) with `_meta.progressToken` set to `token`: the
    /// server's `notifications/progress` for the call (`params.progressToken` equal to
    /// `token`) are delivered to the queue ([`drain_notifications`](Self::drain_notifications)).
    ///
    /// ```no_run
    /// # async fn run(client: wymcp::client::Client) -> Result<(), wymcp::client::ClientError> {
    /// let result = client.call_tool_with_progress("build", serde_json::json!({}), "build-1").await?;
    /// for note in client.drain_notifications() {
    ///     if note.method() == "notifications/progress" {
    ///         println!("{:?}", note.params());
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn call_tool_with_progress(
        &self,
        name: &str,
        arguments: Value,
        token: &str,
    ) -> Result<ToolResult, ClientError> {
        self.call(name, arguments, Some(token)).await
    }

    async fn call(
        &self,
        name: &str,
        arguments: Value,
        token: Option<&str>,
    ) -> Result<ToolResult, ClientError> {
        let mut params = Map::new();
        params.insert("name".to_owned(), json!(name));
        if arguments.is_object() {
            params.insert("arguments".to_owned(), arguments);
        }
        if let Some(token) = token {
            params.insert("_meta".to_owned(), json!({"progressToken": token}));
        }
        let result = self.perform("tools/call", params, Some(name)).await?;
        Ok(ToolResult::from_raw(result))
    }

    /// Every resource the server lists (`resources/list`, each entry as sent: `uri`, `name`,
    /// `mimeType`, ...), following `nextCursor` for at most [`ClientBuilder::max_pages`] pages.
    pub async fn list_resources(&self) -> Result<Vec<Value>, ClientError> {
        self.list_all("resources/list", "resources").await
    }

    /// Every resource template the server lists (`resources/templates/list`, each as sent:
    /// `uriTemplate`, `name`, ...), paged as [`list_resources`](Self::list_resources).
    pub async fn list_resource_templates(&self) -> Result<Vec<Value>, ClientError> {
        self.list_all("resources/templates/list", "resourceTemplates")
            .await
    }

    /// `resources/read` of `uri`: the result as sent (its `contents` array, each with `uri`
    /// and `text` or `blob`).
    pub async fn read_resource(&self, uri: &str) -> Result<Value, ClientError> {
        self.request_with("resources/read", json!({"uri": uri}), Some(uri))
            .await
    }

    /// `resources/subscribe` to `uri`: the server's `notifications/resources/updated` for it
    /// are delivered to the queue (session era; over HTTP, on the streams the client reads).
    pub async fn subscribe(&self, uri: &str) -> Result<(), ClientError> {
        self.request_with("resources/subscribe", json!({"uri": uri}), Some(uri))
            .await
            .map(drop)
    }

    /// `resources/unsubscribe` from `uri`.
    pub async fn unsubscribe(&self, uri: &str) -> Result<(), ClientError> {
        self.request_with("resources/unsubscribe", json!({"uri": uri}), Some(uri))
            .await
            .map(drop)
    }

    /// Every prompt the server lists (`prompts/list`, each as sent: `name`, `arguments`,
    /// ...), paged as [`list_resources`](Self::list_resources).
    pub async fn list_prompts(&self) -> Result<Vec<Value>, ClientError> {
        self.list_all("prompts/list", "prompts").await
    }

    /// Every skill the server lists (`skills/list` of the skills extension, SEP-2640; each
    /// entry as sent: `uri` of its `SKILL.md`, `frontmatter`, `resources` with `digest` and
    /// `size`), paged as [`list_resources`](Self::list_resources). The server must declare
    /// `io.modelcontextprotocol/skills` under `capabilities.extensions`
    /// ([`server_capabilities`](Self::server_capabilities)); the files are read with
    /// [`read_resource`](Self::read_resource).
    pub async fn list_skills(&self) -> Result<Vec<Value>, ClientError> {
        self.list_all("skills/list", "skills").await
    }

    /// `prompts/get` of `name` with `arguments` (a JSON object of strings; anything else is
    /// sent as none): the result as sent (`description`, `messages`).
    pub async fn get_prompt(&self, name: &str, arguments: Value) -> Result<Value, ClientError> {
        let mut params = json!({"name": name});
        if arguments.is_object() {
            params["arguments"] = arguments;
        }
        self.request_with("prompts/get", params, Some(name)).await
    }

    /// `completion/complete` for the argument `argument` being typed as `value`, of
    /// `reference` (`{"type": "ref/prompt", "name": ...}` or `{"type": "ref/resource", "uri":
    /// ...}`): the result's `completion` as sent (`values`, `total`, `hasMore`).
    pub async fn complete(
        &self,
        reference: Value,
        argument: &str,
        value: &str,
    ) -> Result<Value, ClientError> {
        let params = json!({"ref": reference, "argument": {"name": argument, "value": value}});
        let mut result = self
            .request_with("completion/complete", params, None)
            .await?;
        match result.get_mut("completion").map(Value::take) {
            Some(completion) if completion.is_object() => Ok(completion),
            _ => Err(ClientError::Malformed {
                method: "completion/complete".to_owned(),
                what: Malformed::ResultShape,
            }),
        }
    }

    /// The server's `notifications/message` at `level` and above are delivered to the queue:
    /// in the session era, `logging/setLevel`; in the stateless era, which has no such method,
    /// every request from now on carries the level in its `_meta`
    /// (`io.modelcontextprotocol/logLevel`), and the server sends the log messages of that
    /// request at or above it (without, it sends none).
    pub async fn set_logging_level(&self, level: LogLevel) -> Result<(), ClientError> {
        if let Era::Stateless { .. } = self.shared.era {
            *self
                .shared
                .log_level
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(level);
            return Ok(());
        }
        self.request_with("logging/setLevel", json!({"level": level.as_str()}), None)
            .await
            .map(drop)
    }

    /// Checks the server answers: `ping` in the session era; `server/discover` in the
    /// stateless one, which has no `ping`.
    pub async fn ping(&self) -> Result<(), ClientError> {
        let method = match self.shared.era {
            Era::Stateless { .. } => "server/discover",
            Era::Session { .. } => "ping",
        };
        self.perform(method, Map::new(), None).await.map(drop)
    }

    /// Any request: `method` with `params` (a JSON object; anything else is sent as no
    /// params), its result as the server sent it. In the stateless era the envelope is added
    /// to `params._meta` and a result asking for input is answered by the handlers, as for
    /// the typed calls, and the `Mcp-Name` header is the `name` of a `tools/call` or
    /// `prompts/get`, the `uri` of a `resources/*` request.
    ///
    /// For a method the typed calls do not cover, or a request carrying `_meta` of its own: a
    /// `progressToken` (as [`call_tool_with_progress`](Self::call_tool_with_progress)), and
    /// in the stateless era a `clientCapabilities` (`io.modelcontextprotocol/clientCapabilities`)
    /// declared for this request instead of the installed handlers' (a client relaying for
    /// another declares what that one declares, so the server asks only for what it can
    /// answer).
    ///
    /// ```no_run
    /// use serde_json::json;
    /// use wymcp::client::ToolResult;
    ///
    /// # async fn run(client: wymcp::client::Client) -> Result<(), wymcp::client::ClientError> {
    /// let raw = client
    ///     .request("tools/call", json!({
    ///         "name": "greet",
    ///         "arguments": {},
    ///         "_meta": {"io.modelcontextprotocol/clientCapabilities": {"sampling": {}}},
    ///     }))
    ///     .await?;
    /// println!("{}", ToolResult::from_raw(raw).text());
    /// # Ok(()) }
    /// ```
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, ClientError> {
        let name = match method {
            "tools/call" | "prompts/get" => params.get("name"),
            _ if method.starts_with("resources/") => params.get("uri"),
            _ => None,
        }
        .and_then(Value::as_str)
        .map(str::to_owned);
        self.request_with(method, params, name.as_deref()).await
    }

    /// The notifications the server sent since the last drain, oldest first (at most
    /// [`ClientBuilder::max_notifications`]): over stdio, all of them; over HTTP, those on
    /// answers' streams and (session era) on the session's GET stream.
    pub fn drain_notifications(&self) -> Vec<Notification> {
        self.shared.link.notes().drain()
    }

    /// The oldest notification queued, waiting until one arrives (list changes, resource
    /// updates, log messages, progress: whatever the server sends, as
    /// [`drain_notifications`](Self::drain_notifications) would answer it). It waits for
    /// as long as it takes: bound it with a timeout, or `select!` it with other work.
    ///
    /// ```no_run
    /// use std::time::Duration;
    ///
    /// # async fn run(client: wymcp::client::Client) {
    /// match tokio::time::timeout(Duration::from_secs(5), client.next_notification()).await {
    ///     Ok(note) if note.method() == "notifications/tools/list_changed" => {
    ///         println!("the tools changed");
    ///     }
    ///     Ok(note) => println!("{}", note.method()),
    ///     Err(_) => println!("nothing for 5 s"),
    /// }
    /// # }
    /// ```
    pub async fn next_notification(&self) -> Notification {
        self.shared.link.notes().next().await
    }

    /// Opens a `subscriptions/listen` stream (MCP 2026-07-28, over HTTP): the server's list
    /// changes and resource updates that `subscriptions` asks for, delivered as the session
    /// era's are (to [`ClientBuilder::on_notification`], else the queue
    /// [`next_notification`](Self::next_notification) reads), for as long as the
    /// [`Subscription`] is kept. Answers once the server acknowledged the stream (within
    /// [`ClientBuilder::timeout`]). A stream the server ends (or that drops) is opened again,
    /// the same way: after [`ClientBuilder::reconnect_delay`], each failed attempt waiting
    /// twice as long as the one before (at most 32 times the delay), at most
    /// [`ClientBuilder::max_reconnects`] failures in a row; a refusal (a JSON-RPC error, an
    /// HTTP 4xx) ends it. What changed while no stream was open is not told.
    ///
    /// To watch other URIs, open a stream with the new set, then drop the old one. In the
    /// session era the server's notifications come on the session's GET stream and resource
    /// updates follow [`subscribe`](Self::subscribe): this refuses with
    /// [`ClientError::Unavailable`], as it does over stdio.
    ///
    /// ```no_run
    /// use wymcp::client::{Client, Subscriptions};
    ///
    /// # async fn run() -> Result<(), wymcp::client::ClientError> {
    /// let client = Client::builder("http://127.0.0.1:8080/mcp")
    ///     .on_notification(|note| println!("{}: {:?}", note.method(), note.params()))
    ///     .connect()
    ///     .await?;
    /// let first = client
    ///     .listen(Subscriptions::new().tools_list_changed().resource("file:///notes.txt"))
    ///     .await?;
    /// println!("the server honours {}", first.honoured());
    /// // Later: watch one more file. The new stream is open before the old one ends.
    /// let second = client
    ///     .listen(
    ///         Subscriptions::new()
    ///             .tools_list_changed()
    ///             .resource("file:///notes.txt")
    ///             .resource("file:///todo.txt"),
    ///     )
    ///     .await?;
    /// drop(first);
    /// # drop(second);
    /// # Ok(()) }
    /// ```
    pub async fn listen(&self, subscriptions: Subscriptions) -> Result<Subscription, ClientError> {
        subscriptions::open(&self.shared, subscriptions).await
    }

    /// How many notifications were dropped: the queue was full, or (the GET stream) the event
    /// carrying one was over [`ClientBuilder::max_event_bytes`].
    pub fn dropped_notifications(&self) -> u64 {
        self.shared.link.notes().dropped()
    }

    /// Ends the connection. HTTP: the session (a DELETE with its id; a server that answers
    /// 405 keeps it until it expires; stateless, there is nothing to end); dropping a client
    /// without `close` leaves its session to expire on the server. Stdio: the child's stdin
    /// is closed, the child given up to [`ClientBuilder::timeout`] to exit, then killed, and
    /// reaped; dropping the client kills it.
    pub async fn close(mut self) -> Result<(), ClientError> {
        drop(self.listener.take());
        match &self.shared.link {
            Link::Stdio(process) => {
                process.close().await;
                Ok(())
            }
            Link::Http(conn) => {
                if self.session_id().is_none() {
                    return Ok(());
                }
                let headers = self.shared.era.headers("DELETE", None)?;
                conn.delete(headers).await
            }
        }
    }

    /// Every item of a paged listing, at most [`ClientBuilder::max_pages`] pages.
    async fn list_all(&self, method: &str, key: &str) -> Result<Vec<Value>, ClientError> {
        let max = self.shared.link.settings().max_pages;
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..max {
            let mut params = Map::new();
            if let Some(cursor) = cursor.take() {
                params.insert("cursor".to_owned(), Value::String(cursor));
            }
            let mut page = self.perform(method, params, None).await?;
            let Some(Value::Array(page_items)) = page.get_mut(key).map(Value::take) else {
                return Err(ClientError::Malformed {
                    method: method.to_owned(),
                    what: Malformed::ResultShape,
                });
            };
            items.extend(page_items);
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(next) => cursor = Some(next.to_owned()),
                None => return Ok(items),
            }
        }
        Err(ClientError::LimitExceeded {
            method: method.to_owned(),
            limit: Limit::Pages { max },
        })
    }

    /// [`perform`](Self::perform) with `params` given as a JSON object.
    async fn request_with(
        &self,
        method: &str,
        params: Value,
        name: Option<&str>,
    ) -> Result<Value, ClientError> {
        let params = match params {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        self.perform(method, params, name).await
    }

    /// One request in the negotiated era: its `result`. In the stateless era a result asking
    /// for input (`input_required`) is answered by the handlers and the request sent again,
    /// for at most [`ClientBuilder::max_input_rounds`] rounds.
    async fn perform(
        &self,
        method: &str,
        params: Map<String, Value>,
        name: Option<&str>,
    ) -> Result<Value, ClientError> {
        let max = self.shared.link.settings().max_input_rounds;
        let mut params = params;
        let mut round = 0;
        loop {
            let result = self.send_request(method, &params, name).await?;
            if !matches!(self.shared.era, Era::Stateless { .. })
                || !input::is_input_required(&result)
            {
                return Ok(result);
            }
            if round == max {
                return Err(ClientError::LimitExceeded {
                    method: method.to_owned(),
                    limit: Limit::InputRounds { max },
                });
            }
            round += 1;
            params = input::next_round(&self.shared.handlers, method, &result, params).await?;
        }
    }

    /// One message of a request: its `result`. A request that times out, or whose future is
    /// dropped before its answer, is cancelled (`notifications/cancelled`).
    async fn send_request(
        &self,
        method: &str,
        params: &Map<String, Value>,
        name: Option<&str>,
    ) -> Result<Value, ClientError> {
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        let shared = &self.shared;
        let http = matches!(shared.link, Link::Http(_));
        let span = trace::request_span(method, name, id, shared.era.version(), http);
        #[cfg(feature = "otel")]
        let measure = {
            let server = match &shared.link {
                Link::Http(conn) => conn.url.host_str().zip(conn.url.port_or_known_default()),
                Link::Stdio(_) => None,
            };
            metrics::Measure::start(method, name, shared.era.version(), server)
        };
        // What `params._meta` gets besides the envelope: the trace context, the log level.
        let mut meta = Map::new();
        trace::inject(&span, &mut meta);
        let level = *shared
            .log_level
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(level) = level {
            meta.insert(LOG_LEVEL_KEY.to_owned(), json!(level.as_str()));
        }
        let body = shared.era.body(Some(id), method, params, &meta)?;
        let headers = shared.era.headers(method, name)?;
        let mut guard = Cancel {
            shared: Some(shared.clone()),
            id,
            exchange: None,
        };
        let answer = match (&shared.link, &shared.era) {
            (Link::Http(conn), Era::Session { .. }) => {
                // The exchange runs in a task of its own, so that a call timed out or dropped
                // keeps its connection open until the server has been told: a server that
                // ends a call when its connection closes would end it before reading the
                // cancellation, and the tool would never see its cancellation token fire.
                let owner = shared.clone();
                let named = method.to_owned();
                let exchange = tokio::spawn(
                    async move {
                        match &owner.link {
                            Link::Http(conn) => {
                                conn.exchange(&named, Some(id), &body, headers).await
                            }
                            Link::Stdio(_) => Err(ClientError::Closed { method: named }),
                        }
                    }
                    .instrument(span.clone()),
                );
                guard.exchange = Some(exchange.abort_handle());
                let after = conn.settings.timeout;
                match tokio::time::timeout(after, exchange).await {
                    Ok(Ok(answer)) => answer,
                    Ok(Err(failed)) => Err(ClientError::Transport {
                        method: method.to_owned(),
                        source: TransportError::new(failed),
                    }),
                    Err(_) => Err(ClientError::Timeout {
                        method: method.to_owned(),
                        after,
                    }),
                }
            }
            _ => {
                let send = shared.link.send(method, Some(id), &body, headers);
                send.instrument(span.clone()).await
            }
        };
        if !matches!(answer, Err(ClientError::Timeout { .. })) {
            guard.shared = None; // answered (or failed): nothing to cancel
        }
        drop(guard);
        if let Err(error) = &answer {
            trace::failed(&span, error);
        }
        #[cfg(feature = "otel")]
        measure.finish(answer.as_ref().map(|answer| &answer.result));
        Ok(answer?.result)
    }
}

/// Cancels request `id` when dropped armed: the call timed out or its future was dropped.
struct Cancel {
    shared: Option<Arc<Shared>>,
    id: i64,
    /// The task of the request's HTTP exchange (a session's), ended once the server is told.
    exchange: Option<tokio::task::AbortHandle>,
}

impl Drop for Cancel {
    fn drop(&mut self) {
        let exchange = self.exchange.take();
        let Some(shared) = self.shared.take() else {
            return;
        };
        const CANCELLED: &str = "notifications/cancelled";
        let mut params = Map::new();
        params.insert("requestId".to_owned(), json!(self.id));
        params.insert(
            "reason".to_owned(),
            json!("the client stopped waiting (timeout or call dropped)"),
        );
        let Ok(body) = shared.era.body(None, CANCELLED, &params, &Map::new()) else {
            if let Some(exchange) = exchange {
                exchange.abort();
            }
            return;
        };
        match &shared.link {
            Link::Stdio(process) => process.notify(&body),
            // Stateless over HTTP, the request's connection closed with its future is the
            // cancellation; in a session the server is told.
            Link::Http(_) if matches!(shared.era, Era::Stateless { .. }) => {}
            Link::Http(_) => {
                let (Ok(runtime), Ok(headers)) = (
                    tokio::runtime::Handle::try_current(),
                    shared.era.headers(CANCELLED, None),
                ) else {
                    if let Some(exchange) = exchange {
                        exchange.abort();
                    }
                    return;
                };
                runtime.spawn(async move {
                    let _ = shared.link.send(CANCELLED, None, &body, headers).await;
                    // Told: the request's connection may close now.
                    if let Some(exchange) = exchange {
                        exchange.abort();
                    }
                });
            }
        }
    }
}

/// The HTTP connection to `url`, with the user's headers checked.
fn http_connection(
    url: &str,
    headers: Vec<(String, String, bool)>,
    settings: builder::Settings,
    handlers: handlers::Handlers,
) -> Result<Connection, ClientError> {
    let parsed = reqwest::Url::parse(url)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .ok_or_else(|| ClientError::InvalidUrl {
            url: url.to_owned(),
        })?;
    let mut map = HeaderMap::new();
    for (name, value, sensitive) in headers {
        let invalid = || ClientError::InvalidHeader { name: name.clone() };
        let key = HeaderName::from_bytes(name.as_bytes()).map_err(|_| invalid())?;
        let mut value = HeaderValue::from_str(&value).map_err(|_| invalid())?;
        value.set_sensitive(sensitive);
        map.append(key, value);
    }
    let mut post_headers = map.clone();
    post_headers.append(
        ACCEPT,
        HeaderValue::from_static("application/json, text/event-stream"),
    );
    post_headers.append(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    let http = reqwest::Client::builder()
        .build()
        .map_err(|e| ClientError::Transport {
            method: "connect".to_owned(),
            source: TransportError::new(e),
        })?;
    Ok(Connection {
        http,
        url: parsed,
        headers: map,
        post_headers,
        notes: Arc::new(Queue::new(
            settings.max_notifications,
            handlers.notification.clone(),
        )),
        settings,
        handlers,
    })
}
