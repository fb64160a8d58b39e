//! An MCP client over Streamable HTTP (the `client` feature): connects to a URL, negotiates
//! the era, lists and calls tools, with a timeout on every request and limits on what a
//! server can make it hold. The guide's page is `docs/client.md`.
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
//! Not in this client yet: stdio, resources, prompts and completion, the server's requests
//! (sampling, elicitation, roots: skipped when seen on a stream), the GET stream and its
//! resumption, cancellation, `Mcp-Param-*` headers, multi round-trip results.

mod builder;
mod era;
mod error;
mod http;
mod notifications;
mod sse;
mod tools;

use std::sync::atomic::{AtomicI64, Ordering};

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value, json};

use crate::protocol::ProtocolVersion;

pub use builder::{
    ClientBuilder, DEFAULT_MAX_ANSWER_BYTES, DEFAULT_MAX_EVENT_BYTES, DEFAULT_MAX_NOTIFICATIONS,
    DEFAULT_MAX_PAGES, DEFAULT_TIMEOUT,
};
pub use error::{ClientError, Limit, Malformed, TransportError};
pub use notifications::Notification;
pub use tools::{ToolInfo, ToolResult};

use era::Era;
use http::Connection;
use notifications::Queue;

/// A connection to one MCP server over Streamable HTTP; [`Client::builder`] makes one.
/// Calls take `&self`: several may run at once.
#[derive(Debug)]
pub struct Client {
    conn: Connection,
    era: Era,
    handshake: Value,
    next_id: AtomicI64,
}

impl Client {
    /// A builder for a client of the MCP endpoint at `url` (`http://` or `https://`).
    pub fn builder(url: impl Into<String>) -> ClientBuilder {
        ClientBuilder::new(url)
    }

    pub(crate) async fn connect(builder: ClientBuilder) -> Result<Client, ClientError> {
        let ClientBuilder {
            url,
            headers,
            settings,
        } = builder;
        let parsed = reqwest::Url::parse(&url)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https"))
            .ok_or_else(|| ClientError::InvalidUrl { url: url.clone() })?;
        let mut map = HeaderMap::new();
        for (name, value, sensitive) in headers {
            let invalid = || ClientError::InvalidHeader { name: name.clone() };
            let key = HeaderName::from_bytes(name.as_bytes()).map_err(|_| invalid())?;
            let mut value = HeaderValue::from_str(&value).map_err(|_| invalid())?;
            value.set_sensitive(sensitive);
            map.append(key, value);
        }
        let http = reqwest::Client::builder()
            .build()
            .map_err(|e| ClientError::Transport {
                method: "connect".to_owned(),
                source: TransportError::new(e),
            })?;
        let conn = Connection {
            http,
            url: parsed,
            headers: map,
            notes: Queue::new(settings.max_notifications),
            settings,
        };
        let (era, handshake) = era::negotiate(&conn).await?;
        Ok(Client {
            conn,
            era,
            handshake,
            next_id: AtomicI64::new(1),
        })
    }

    /// The revision negotiated.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.era.version()
    }

    /// The session's id (session era, when the server gave one); `None` when stateless.
    pub fn session_id(&self) -> Option<&str> {
        match &self.era {
            Era::Session { session_id, .. } => session_id.as_deref(),
            Era::Stateless(_) => None,
        }
    }

    /// The server's capabilities, as its `initialize` or `server/discover` result gave them.
    pub fn server_capabilities(&self) -> &Value {
        self.handshake.get("capabilities").unwrap_or(&Value::Null)
    }

    /// Every tool the server lists, following `nextCursor` for at most
    /// [`ClientBuilder::max_pages`] pages.
    pub async fn list_tools(&self) -> Result<Vec<ToolInfo>, ClientError> {
        const METHOD: &str = "tools/list";
        let max = self.conn.settings.max_pages;
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..max {
            let mut params = Map::new();
            if let Some(cursor) = cursor.take() {
                params.insert("cursor".to_owned(), Value::String(cursor));
            }
            let mut page = self.request(METHOD, params, None).await?;
            let Some(Value::Array(items)) = page.get_mut("tools").map(Value::take) else {
                return Err(ClientError::Malformed {
                    method: METHOD.to_owned(),
                    what: Malformed::ResultShape,
                });
            };
            tools.extend(items.into_iter().filter_map(ToolInfo::of));
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(next) => cursor = Some(next.to_owned()),
                None => return Ok(tools),
            }
        }
        Err(ClientError::LimitExceeded {
            method: METHOD.to_owned(),
            limit: Limit::Pages { max },
        })
    }

    /// Calls the tool `name` with `arguments` (a JSON object; anything else is sent as no
    /// arguments). A tool's refusal is a result with [`ToolResult::is_error`], not an `Err`.
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<ToolResult, ClientError> {
        let mut params = Map::new();
        params.insert("name".to_owned(), json!(name));
        if arguments.is_object() {
            params.insert("arguments".to_owned(), arguments);
        }
        let result = self.request("tools/call", params, Some(name)).await?;
        Ok(ToolResult::of(result))
    }

    /// Checks the server answers: `ping` in the session era; `server/discover` in the
    /// stateless one, which has no `ping`.
    pub async fn ping(&self) -> Result<(), ClientError> {
        let method = match self.era {
            Era::Stateless(_) => "server/discover",
            Era::Session { .. } => "ping",
        };
        self.request(method, Map::new(), None).await.map(drop)
    }

    /// The notifications the server sent on answers' streams since the last drain, oldest
    /// first (at most [`ClientBuilder::max_notifications`]).
    pub fn drain_notifications(&self) -> Vec<Notification> {
        self.conn.notes.drain()
    }

    /// How many notifications were dropped because the queue was full.
    pub fn dropped_notifications(&self) -> u64 {
        self.conn.notes.dropped()
    }

    /// Ends the session (a DELETE with its id; a server that answers 405 keeps it until it
    /// expires). Stateless, there is nothing to end. Dropping a client without `close` leaves
    /// its session to expire on the server.
    pub async fn close(self) -> Result<(), ClientError> {
        if self.session_id().is_none() {
            return Ok(());
        }
        let headers = self.era.headers("DELETE", None)?;
        self.conn.delete(headers).await
    }

    /// One request in the negotiated era: its `result`.
    async fn request(
        &self,
        method: &str,
        params: Map<String, Value>,
        name: Option<&str>,
    ) -> Result<Value, ClientError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let body = self.era.body(&self.conn, Some(id), method, params);
        let headers = self.era.headers(method, name)?;
        let answer = self.conn.post(method, Some(id), &body, headers).await?;
        Ok(answer.result)
    }
}
