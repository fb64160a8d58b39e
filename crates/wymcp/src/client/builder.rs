//! [`ClientBuilder`]: where a client connects, with what headers, speaking which revisions,
//! and the limits on what a server can make it hold.

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::protocol::{ProtocolVersion, RpcError};

use super::handlers::{Handlers, handler};
use super::{Client, ClientError, Notification};

/// The default [`ClientBuilder::timeout`]: 30 seconds.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// The default [`ClientBuilder::max_answer_bytes`]: 16 MiB.
pub const DEFAULT_MAX_ANSWER_BYTES: usize = 16 * 1024 * 1024;
/// The default [`ClientBuilder::max_event_bytes`]: 4 MiB.
pub const DEFAULT_MAX_EVENT_BYTES: usize = 4 * 1024 * 1024;
/// The default [`ClientBuilder::max_notifications`]: 1024.
pub const DEFAULT_MAX_NOTIFICATIONS: usize = 1024;
/// The default [`ClientBuilder::max_pages`]: 100.
pub const DEFAULT_MAX_PAGES: usize = 100;
/// The default [`ClientBuilder::max_line_bytes`]: 16 MiB.
pub const DEFAULT_MAX_LINE_BYTES: usize = 16 * 1024 * 1024;
/// The default [`ClientBuilder::max_stderr_line_bytes`]: 4 KiB.
pub const DEFAULT_MAX_STDERR_LINE_BYTES: usize = 4 * 1024;
/// The default [`ClientBuilder::reconnect_delay`]: 1 second.
pub const DEFAULT_RECONNECT_DELAY: Duration = Duration::from_secs(1);
/// The default [`ClientBuilder::max_reconnects`]: 5.
pub const DEFAULT_MAX_RECONNECTS: usize = 5;
/// The default [`ClientBuilder::max_input_rounds`]: 8.
pub const DEFAULT_MAX_INPUT_ROUNDS: usize = 8;

/// What a [`Client`] is built with; [`Client::builder`] starts one.
///
/// ```no_run
/// use std::time::Duration;
/// use wymcp::client::Client;
///
/// # async fn run() -> Result<(), wymcp::client::ClientError> {
/// let client = Client::builder("http://127.0.0.1:8080/mcp")
///     .bearer_token("s3cret")
///     .header("x-tenant", "acme")
///     .timeout(Duration::from_secs(10))
///     .max_answer_bytes(1 << 20)
///     .connect()
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
#[must_use = "a builder does nothing until `connect`"]
pub struct ClientBuilder {
    pub(crate) target: Target,
    /// Name, value, and whether the value is a secret (kept out of `Debug`).
    pub(crate) headers: Vec<(String, String, bool)>,
    pub(crate) settings: Settings,
    pub(crate) handlers: Handlers,
}

/// Where the client connects.
#[derive(Clone)]
pub(crate) enum Target {
    /// A Streamable HTTP endpoint.
    Http { url: String },
    /// A command spawned, speaking over its stdin and stdout.
    Stdio {
        program: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
        current_dir: Option<PathBuf>,
    },
}

impl std::fmt::Debug for Target {
    /// The environment's names only: its values are often secrets (API keys).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Http { url } => f.debug_struct("Http").field("url", url).finish(),
            Target::Stdio {
                program,
                args,
                env,
                current_dir,
            } => {
                let names: Vec<&str> = env.iter().map(|(name, _)| name.as_str()).collect();
                f.debug_struct("Stdio")
                    .field("program", program)
                    .field("args", args)
                    .field("env", &names)
                    .field("current_dir", current_dir)
                    .finish()
            }
        }
    }
}

impl std::fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(name, value, secret)| (name.as_str(), if *secret { "<secret>" } else { value }))
            .collect();
        f.debug_struct("ClientBuilder")
            .field("target", &self.target)
            .field("headers", &headers)
            .field("settings", &self.settings)
            .field("handlers", &self.handlers)
            .finish()
    }
}

/// The settings a connected client keeps.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub(crate) timeout: Duration,
    pub(crate) max_answer_bytes: usize,
    pub(crate) max_event_bytes: usize,
    pub(crate) max_notifications: usize,
    pub(crate) max_pages: usize,
    pub(crate) max_line_bytes: usize,
    pub(crate) max_stderr_line_bytes: usize,
    pub(crate) reconnect_delay: Duration,
    pub(crate) max_reconnects: usize,
    pub(crate) max_input_rounds: usize,
    /// The client's `capabilities`, from the handlers installed.
    pub(crate) capabilities: Value,
    /// Newest first.
    pub(crate) versions: Vec<ProtocolVersion>,
    pub(crate) name: String,
    pub(crate) version: String,
}

impl ClientBuilder {
    pub(crate) fn new(target: Target) -> Self {
        ClientBuilder {
            target,
            handlers: Handlers::default(),
            headers: Vec::new(),
            settings: Settings {
                timeout: DEFAULT_TIMEOUT,
                max_answer_bytes: DEFAULT_MAX_ANSWER_BYTES,
                max_event_bytes: DEFAULT_MAX_EVENT_BYTES,
                max_notifications: DEFAULT_MAX_NOTIFICATIONS,
                max_pages: DEFAULT_MAX_PAGES,
                max_line_bytes: DEFAULT_MAX_LINE_BYTES,
                max_stderr_line_bytes: DEFAULT_MAX_STDERR_LINE_BYTES,
                reconnect_delay: DEFAULT_RECONNECT_DELAY,
                max_reconnects: DEFAULT_MAX_RECONNECTS,
                max_input_rounds: DEFAULT_MAX_INPUT_ROUNDS,
                capabilities: Value::Object(serde_json::Map::new()),
                versions: ProtocolVersion::ALL.into_iter().rev().collect(),
                name: "wymcp-client".to_owned(),
                version: env!("CARGO_PKG_VERSION").to_owned(),
            },
        }
    }

    /// An argument of the command (stdio; ignored for an HTTP client).
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        if let Target::Stdio { args, .. } = &mut self.target {
            args.push(arg.into());
        }
        self
    }

    /// Arguments of the command, after those given before (stdio; ignored for an HTTP client).
    pub fn args<I, S>(mut self, more: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        if let Target::Stdio { args, .. } = &mut self.target {
            args.extend(more.into_iter().map(Into::into));
        }
        self
    }

    /// An environment variable of the command, added to those it inherits (stdio; ignored for
    /// an HTTP client). Values stay out of `Debug` output.
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        if let Target::Stdio { env, .. } = &mut self.target {
            env.push((name.into(), value.into()));
        }
        self
    }

    /// The command's working directory (stdio; ignored for an HTTP client; default: this
    /// process's).
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        if let Target::Stdio { current_dir, .. } = &mut self.target {
            *current_dir = Some(dir.into());
        }
        self
    }

    /// The most bytes of one line the server writes on its stdout (one JSON-RPC message);
    /// a longer line is refused with [`Limit::LineBytes`](super::Limit::LineBytes) and ends
    /// the connection (the line cannot be skipped without reading it). Default
    /// [`DEFAULT_MAX_LINE_BYTES`]. Stdio only: over HTTP, [`max_answer_bytes`](Self::max_answer_bytes)
    /// and [`max_event_bytes`](Self::max_event_bytes) bound what is read.
    pub fn max_line_bytes(mut self, bytes: usize) -> Self {
        self.settings.max_line_bytes = bytes;
        self
    }

    /// The most bytes of one line of the server's stderr logged (through `tracing`, target
    /// `wymcp::client::stderr`); the rest of a longer line is read and dropped, the line
    /// logged marked `truncated`. Default [`DEFAULT_MAX_STDERR_LINE_BYTES`]. Stdio only.
    pub fn max_stderr_line_bytes(mut self, bytes: usize) -> Self {
        self.settings.max_stderr_line_bytes = bytes;
        self
    }

    /// Answers the server's `sampling/createMessage` requests with `handler` (its params in,
    /// the `CreateMessageResult` out) and declares the `sampling` capability. Without one, the
    /// server's request is answered `-32601`. Over stdio and the HTTP session era (a request
    /// arriving on an answer's stream).
    ///
    /// ```no_run
    /// use serde_json::json;
    /// use wymcp::client::Client;
    ///
    /// let builder = Client::stdio("my-server").on_sampling(|params| async move {
    ///     let _ = params["messages"].clone();
    ///     Ok(json!({"role": "assistant", "model": "echo",
    ///               "content": {"type": "text", "text": "hello"}}))
    /// });
    /// ```
    pub fn on_sampling<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, RpcError>> + Send + 'static,
    {
        self.handlers.sampling = Some(handler(f));
        self
    }

    /// Answers the server's `elicitation/create` requests with `handler` (its params in, the
    /// `ElicitResult` out: `{"action": "accept", "content": {...}}`) and declares the
    /// `elicitation` capability; as [`on_sampling`](Self::on_sampling).
    pub fn on_elicitation<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, RpcError>> + Send + 'static,
    {
        self.handlers.elicitation = Some(handler(f));
        self
    }

    /// Answers the server's `roots/list` requests with `handler` (`{"roots": [...]}`) and
    /// declares the `roots` capability; as [`on_sampling`](Self::on_sampling).
    pub fn on_roots<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, RpcError>> + Send + 'static,
    {
        self.handlers.roots = Some(handler(f));
        self
    }

    /// Hands each notification of the server to `observer` as it arrives, in the order sent,
    /// instead of queueing it for [`Client::next_notification`](super::Client::next_notification)
    /// and [`Client::drain_notifications`](super::Client::drain_notifications) (which then see
    /// none). The observer runs on the connection's reader before it reads on: a request's
    /// progress and log messages are observed before the request's answer is returned, which a
    /// task draining the queue cannot promise. It must be quick and must not block (hand the
    /// work to a channel or a task).
    ///
    /// ```
    /// use wymcp::client::Client;
    ///
    /// let builder = Client::stdio("my-server").on_notification(|note| {
    ///     if note.method() == "notifications/progress" {
    ///         println!("progress: {:?}", note.params());
    ///     }
    /// });
    /// ```
    pub fn on_notification<F>(mut self, observer: F) -> Self
    where
        F: Fn(&Notification) + Send + Sync + 'static,
    {
        self.handlers.notification = Some(Arc::new(observer));
        self
    }

    /// Tells `observer` each time the server ends a request's SSE response stream before the
    /// request's answer and the client resumes it (SEP-1699 polling: the server frees the
    /// connection of a long call; the client reconnects with `Last-Event-ID` after the
    /// stream's `retry` and reads the answer there), with the request's `_meta.progressToken`
    /// (`None` when it carried none). The request's own future goes on waiting for its answer;
    /// the observer only learns of the close. A relay passes it on to its own caller (a
    /// gateway ends its caller's stream too, [`Context::close_sse_stream`](crate::Context::close_sse_stream)).
    /// Streamable HTTP only: stdio has no streams to close. It runs on the request's task and
    /// must be quick.
    ///
    /// ```
    /// use wymcp::client::Client;
    ///
    /// let builder = Client::builder("http://127.0.0.1:8080/mcp").on_stream_closed(|token| {
    ///     println!("the server closed the stream of the request with token {token:?}");
    /// });
    /// ```
    pub fn on_stream_closed<F>(mut self, observer: F) -> Self
    where
        F: Fn(Option<&Value>) + Send + Sync + 'static,
    {
        self.handlers.stream_closed = Some(Arc::new(observer));
        self
    }

    /// A header sent on every request (HTTP; checked at [`connect`](Self::connect): an invalid one
    /// is [`ClientError::InvalidHeader`]).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into(), false));
        self
    }

    /// `Authorization: Bearer <token>` on every request (HTTP; kept out of `Debug` output: the
    /// builder's and the HTTP library's, where the value is marked sensitive).
    pub fn bearer_token(mut self, token: impl AsRef<str>) -> Self {
        let value = format!("Bearer {}", token.as_ref());
        self.headers.push(("authorization".to_owned(), value, true));
        self
    }

    /// The time each request may take, from sending it to reading its answer (the handshake's
    /// requests included); past it the call fails with [`ClientError::Timeout`]. Default
    /// [`DEFAULT_TIMEOUT`].
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.settings.timeout = timeout;
        self
    }

    /// The most bytes of one answer's body the client reads (for an SSE answer, the stream up
    /// to the response); more is refused with [`Limit::AnswerBytes`](super::Limit::AnswerBytes).
    /// Default [`DEFAULT_MAX_ANSWER_BYTES`].
    pub fn max_answer_bytes(mut self, bytes: usize) -> Self {
        self.settings.max_answer_bytes = bytes;
        self
    }

    /// The most bytes of one SSE event the client holds; more is refused with
    /// [`Limit::EventBytes`](super::Limit::EventBytes). Default [`DEFAULT_MAX_EVENT_BYTES`].
    pub fn max_event_bytes(mut self, bytes: usize) -> Self {
        self.settings.max_event_bytes = bytes;
        self
    }

    /// The most notifications queued until [`Client::drain_notifications`]; later ones are
    /// dropped and counted ([`Client::dropped_notifications`]), the calls they came with still
    /// answered. Default [`DEFAULT_MAX_NOTIFICATIONS`].
    pub fn max_notifications(mut self, max: usize) -> Self {
        self.settings.max_notifications = max;
        self
    }

    /// The most pages one listing ([`Client::list_tools`], [`Client::list_resources`], ...) follows; a server with more is
    /// refused with [`Limit::Pages`](super::Limit::Pages). Default [`DEFAULT_MAX_PAGES`].
    pub fn max_pages(mut self, max: usize) -> Self {
        self.settings.max_pages = max;
        self
    }

    /// How long the client waits before reopening a dropped SSE stream (the session's GET
    /// stream, or a call's stream ended before its answer) when the server's stream set no
    /// `retry:` delay. Default [`DEFAULT_RECONNECT_DELAY`]. HTTP only.
    pub fn reconnect_delay(mut self, delay: Duration) -> Self {
        self.settings.reconnect_delay = delay;
        self
    }

    /// The most attempts in a row to reopen a dropped SSE stream with `Last-Event-ID`. A
    /// call's stream that cannot be reopened fails the call (with the error of the last
    /// attempt); the session's GET stream is given up (logged), its notifications then seen
    /// only on answers' streams. An attempt answered 404 (the session is gone) or 405 (the
    /// server offers no GET stream) ends them at once. Default [`DEFAULT_MAX_RECONNECTS`].
    /// HTTP only.
    pub fn max_reconnects(mut self, max: usize) -> Self {
        self.settings.max_reconnects = max;
        self
    }

    /// The most rounds of one request answered `input_required` (MCP 2026-07-28: the server
    /// asks for sampling, elicitation or roots, the handlers answer, the request is sent again
    /// with the answers and the `requestState`); a server asking more is refused with
    /// [`Limit::InputRounds`](super::Limit::InputRounds). Default [`DEFAULT_MAX_INPUT_ROUNDS`].
    pub fn max_input_rounds(mut self, max: usize) -> Self {
        self.settings.max_input_rounds = max;
        self
    }

    /// The revisions the client may speak (default: every one wymcp speaks). With a stateless
    /// one (2026-07-28) the client asks `server/discover` first; without, it goes straight to
    /// `initialize` with the newest session-era one given.
    ///
    /// ```
    /// use wymcp::ProtocolVersion;
    /// use wymcp::client::Client;
    ///
    /// // Pinned to the session era, whatever the server offers.
    /// let builder = Client::builder("http://127.0.0.1:8080/mcp").versions(ProtocolVersion::SESSION_ERA);
    /// ```
    pub fn versions(mut self, versions: impl IntoIterator<Item = ProtocolVersion>) -> Self {
        let mut versions: Vec<ProtocolVersion> = versions.into_iter().collect();
        versions.sort_unstable_by(|a, b| b.cmp(a));
        versions.dedup();
        self.settings.versions = versions;
        self
    }

    /// The `clientInfo` sent (default `wymcp-client` and wymcp's version).
    pub fn client_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.settings.name = name.into();
        self.settings.version = version.into();
        self
    }

    /// Connects (for stdio: spawns the command), negotiates the era and, in the session era,
    /// opens the session.
    pub async fn connect(mut self) -> Result<Client, ClientError> {
        self.settings.capabilities = self.handlers.capabilities();
        Client::connect(self).await
    }
}

#[cfg(test)]
mod tests {
    use super::ClientBuilder;

    #[test]
    fn a_bearer_token_stays_out_of_debug_output() {
        let builder = ClientBuilder::new(super::Target::Http {
            url: "http://127.0.0.1:1/mcp".to_owned(),
        })
        .bearer_token("s3cret")
        .header("x-tenant", "acme");
        let shown = format!("{builder:?}");
        assert!(!shown.contains("s3cret"), "{shown}");
        assert!(
            shown.contains("acme") && shown.contains("<secret>"),
            "{shown}"
        );
    }

    #[test]
    fn environment_values_stay_out_of_debug_output() {
        let builder = super::super::Client::stdio("server")
            .arg("--stdio")
            .env("API_KEY", "s3cret")
            .max_line_bytes(1024);
        let shown = format!("{builder:?}");
        assert!(!shown.contains("s3cret"), "{shown}");
        assert!(
            shown.contains("API_KEY") && shown.contains("--stdio") && shown.contains("1024"),
            "{shown}"
        );
    }
}
