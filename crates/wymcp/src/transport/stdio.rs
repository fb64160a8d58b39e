//! The stdio transport: newline-delimited JSON-RPC over stdin and stdout: one session of the
//! session era (`initialize`), and MCP 2026-07-28 (the stateless era) decided per message.
//!
//! ```no_run
//! use wymcp::Server;
//!
//! # #[tokio::main] async fn main() -> std::io::Result<()> {
//! let server = Server::builder().name("demo").build().unwrap();
//! wymcp::transport::stdio::serve(server).await
//! # }
//! ```
//!
//! * stdout carries JSON-RPC messages only, one per line; wymcp's own logs are `tracing`
//!   events: install a subscriber writing to **stderr** (never stdout).
//! * A line that is not JSON is answered with a parse error (`-32700`), a line longer than the
//!   limit ([`DEFAULT_MAX_LINE`] unless [`StdioConfig::max_line`] says otherwise) with an
//!   invalid request (`-32600`), both with `id: null`; the server reads on.
//! * End of input (the client closed stdin) or SIGTERM ends the session cleanly: running
//!   calls are cancelled, stdout is flushed, [`serve`] returns `Ok(())`.
//! * Tools reach the client while they run: progress, log messages (filtered by
//!   `logging/setLevel`), sampling and elicitation round trips, and
//!   `notifications/tools/list_changed` when runtime tools change the list.
//! * A request whose `params._meta` carries the 2026-07-28 envelope (or `server/discover`,
//!   `subscriptions/listen`) is served statelessly, exactly as over Streamable HTTP minus the
//!   header checks, each in its own task: `server/discover`, `input_required` round trips,
//!   `subscriptions/listen` streams tagged with their subscription id, cancellation by
//!   `notifications/cancelled` ([`StdioConfig`] has this era's settings). The session is
//!   neither needed nor touched.

mod listen;
mod stateless;

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader};
use tokio::sync::{broadcast, mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::dispatch::WireResult;
use crate::protocol::modern::CacheHints;
use crate::protocol::{Kind, Method, RpcError, failure, initialize_result, success, success_text};
use crate::resource::ServerNotification;
use crate::session::engine::{Engine, Step, call_context, new_record};
use crate::session::{InMemorySessionStore, SessionHandle, SessionRecord, SessionStore};
use crate::{Delivery, Notifier, Server};

/// Default longest line read from stdin: 4 MiB.
pub const DEFAULT_MAX_LINE: usize = 4 * 1024 * 1024;

/// Default most `subscriptions/listen` streams open at once on one connection.
pub const DEFAULT_MAX_LISTEN_STREAMS: usize = 1_000;

/// Default longest wait, once input ends, for stateless requests already read to be answered.
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// The stream name stdio messages carry in server request ids.
const STREAM: &str = "stdio";

/// Settings of the stdio transport.
///
/// ```
/// use std::time::Duration;
/// use wymcp::protocol::modern::{CacheHint, CacheHints, CacheScope};
/// use wymcp::transport::stdio::StdioConfig;
///
/// let config = StdioConfig::default()
///     .max_line(1 << 20)
///     .max_listen_streams(10)
///     .shutdown_grace(Duration::from_secs(1))
///     .cache_hints(CacheHints::default().set(
///         "tools/list",
///         CacheHint { ttl_ms: 60_000, scope: CacheScope::Public },
///     ));
/// assert_eq!(config.max_listen_streams, 10);
/// assert_eq!(config.cache_hints.get("tools/list").unwrap().ttl_ms, 60_000);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct StdioConfig {
    /// The longest line accepted, in bytes (newline excluded); longer lines are answered with
    /// an error and skipped.
    pub max_line: usize,
    /// The cache hints (`ttlMs`, `cacheScope`) of the stateless era's results.
    pub cache_hints: CacheHints,
    /// The most `subscriptions/listen` streams open at once; one more is refused (`-32600`).
    pub max_listen_streams: usize,
    /// Once input ends, how long stateless requests already read may run to be answered
    /// before they are cancelled.
    pub shutdown_grace: Duration,
}

impl Default for StdioConfig {
    fn default() -> Self {
        StdioConfig {
            max_line: DEFAULT_MAX_LINE,
            cache_hints: CacheHints::default(),
            max_listen_streams: DEFAULT_MAX_LISTEN_STREAMS,
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
        }
    }
}

impl StdioConfig {
    /// The longest line accepted, in bytes.
    #[must_use]
    pub fn max_line(mut self, bytes: usize) -> Self {
        self.max_line = bytes;
        self
    }

    /// The cache hints of the stateless era's results (every one `{ttlMs: 0, cacheScope:
    /// "private"}` unless set).
    #[must_use]
    pub fn cache_hints(mut self, hints: CacheHints) -> Self {
        self.cache_hints = hints;
        self
    }

    /// The most `subscriptions/listen` streams open at once ([`DEFAULT_MAX_LISTEN_STREAMS`]).
    #[must_use]
    pub fn max_listen_streams(mut self, max: usize) -> Self {
        self.max_listen_streams = max;
        self
    }

    /// Once input ends, how long stateless requests already read may run to be answered
    /// ([`DEFAULT_SHUTDOWN_GRACE`]); then they are cancelled.
    #[must_use]
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }
}

/// Serves `server` on this process's stdin and stdout until stdin ends or SIGTERM (or
/// Ctrl-C) arrives.
pub async fn serve(server: Server) -> std::io::Result<()> {
    serve_with(server, StdioConfig::default()).await
}

/// [`serve`] with settings.
pub async fn serve_with(server: Server, config: StdioConfig) -> std::io::Result<()> {
    let stop = CancellationToken::new();
    // Listening starts before the first message is read, so an early SIGTERM is not fatal.
    let signal = shutdown_signal();
    let signals = stop.clone();
    tokio::spawn(async move {
        signal.await;
        signals.cancel();
    });
    serve_io(server, config, stdin(), tokio::io::stdout(), stop, |_| {}).await
}

#[cfg(unix)]
fn shutdown_signal() -> impl Future<Output = ()> + Send {
    use tokio::signal::unix::{SignalKind, signal};
    let term = signal(SignalKind::terminate());
    async move {
        match term {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(err) => {
                tracing::warn!(%err, "cannot listen for SIGTERM");
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
}

#[cfg(not(unix))]
fn shutdown_signal() -> impl Future<Output = ()> + Send {
    async {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// stdin as an async reader fed by a detached thread: a blocking read of stdin cannot be
/// cancelled, and on tokio's blocking pool it would hold the runtime's shutdown (after
/// SIGTERM) until the client writes or closes stdin.
fn stdin() -> tokio::io::DuplexStream {
    let (mut feed, reader) = tokio::io::duplex(64 * 1024);
    let (chunks_tx, mut chunks) = mpsc::channel::<Vec<u8>>(4);
    let spawned = std::thread::Builder::new()
        .name("wymcp-stdin".into())
        .spawn(move || {
            use std::io::Read as _;
            let mut stdin = std::io::stdin().lock();
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                match stdin.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        if chunks_tx.blocking_send(buf[..n].to_vec()).is_err() {
                            break;
                        }
                    }
                    Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(err) => {
                        tracing::warn!(%err, "stdio: reading stdin failed");
                        break;
                    }
                }
            }
        });
    if let Err(err) = spawned {
        tracing::error!(%err, "stdio: cannot start the stdin reader");
    }
    tokio::spawn(async move {
        while let Some(chunk) = chunks.recv().await {
            if feed.write_all(&chunk).await.is_err() {
                break;
            }
        }
        // Dropping the feed is the reader's end of input.
    });
    reader
}

/// Serves `server` over any reader and writer (a pipe, a socket, an in-memory duplex in
/// tests) until the input ends or `stop` is cancelled. `on_session` receives the session's
/// live handle when `initialize` creates it (to register runtime tools from the server side).
pub async fn serve_io<R, W>(
    server: Server,
    config: StdioConfig,
    input: R,
    output: W,
    stop: CancellationToken,
    on_session: impl FnMut(&SessionHandle) + Send,
) -> std::io::Result<()>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (out_tx, out_rx) = mpsc::unbounded_channel::<String>();
    let (done_tx, mut done_rx) = watch::channel(false);
    let writer = tokio::spawn(write_lines(output, out_rx, done_tx));
    let announced = Arc::new(OnceLock::new());
    let drain = tokio::spawn(drain(
        server.notifications(),
        out_tx.clone(),
        announced.clone(),
    ));
    let stateless = stateless::Stateless::new(
        server.clone(),
        out_tx.clone(),
        config.cache_hints.clone(),
        config.max_listen_streams,
    );
    let mut conn = Connection {
        server,
        stateless,
        store: InMemorySessionStore::new(),
        out: out_tx,
        session: None,
        announced,
        on_session,
    };
    let mut reader = BufReader::new(input);
    let mut line = Vec::new();
    let mut eof = false;
    let result = loop {
        let read = tokio::select! {
            biased;
            () = stop.cancelled() => break Ok(()),
            _ = done_rx.changed() => break Ok(()),
            read = read_line(&mut reader, &mut line, config.max_line) => read,
        };
        match read {
            Ok(Line::Eof) => {
                eof = true;
                break Ok(());
            }
            Ok(Line::TooLong) => conn.write(&failure(
                Value::Null,
                &RpcError::new(
                    RpcError::INVALID_REQUEST,
                    format!(
                        "Request too large: the line limit is {} bytes",
                        config.max_line
                    ),
                    None,
                ),
            )),
            Ok(Line::Complete) => {
                let text = trim_line(&line);
                if text.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                match serde_json::from_slice::<Value>(text) {
                    Ok(message) => conn.handle(message).await,
                    Err(_) => conn.write(&failure(
                        Value::Null,
                        &RpcError::new(RpcError::PARSE_ERROR, "Parse error: malformed JSON", None),
                    )),
                }
            }
            Err(err) => break Err(err),
        }
    };
    if eof {
        conn.stateless.drain(config.shutdown_grace, &stop).await;
    }
    conn.stateless.end();
    conn.end();
    drain.abort();
    drop(conn);
    // Everything sent before the end is written and flushed.
    match writer.await {
        Ok(Ok(())) | Err(_) => {}
        Ok(Err(err)) => tracing::warn!(%err, "stdio: writing stdout failed"),
    }
    result
}

fn trim_line(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

enum Line {
    Complete,
    TooLong,
    Eof,
}

/// Reads one line into `buf` (newline included), refusing more than `max` bytes without
/// buffering them: the rest of an oversize line is skipped.
async fn read_line<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Line> {
    buf.clear();
    let mut too_long = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(if too_long {
                Line::TooLong
            } else if buf.is_empty() {
                Line::Eof
            } else {
                Line::Complete
            });
        }
        let (chunk, found) = match available.iter().position(|&b| b == b'\n') {
            Some(at) => (&available[..=at], true),
            None => (available, false),
        };
        let taken = chunk.len();
        if !too_long {
            if buf.len() + taken > max.saturating_add(2) {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(chunk);
            }
        }
        reader.consume(taken);
        if found {
            if !too_long && trim_line(buf).len() > max {
                too_long = true;
            }
            return Ok(if too_long {
                Line::TooLong
            } else {
                Line::Complete
            });
        }
    }
}

async fn write_lines<W: AsyncWrite + Unpin>(
    mut output: W,
    mut rx: mpsc::UnboundedReceiver<String>,
    done: watch::Sender<bool>,
) -> std::io::Result<()> {
    let result = async {
        while let Some(mut line) = rx.recv().await {
            line.push('\n');
            output.write_all(line.as_bytes()).await?;
            output.flush().await?;
        }
        Ok(())
    }
    .await;
    // stdout is gone (or every sender is): the reader stops too.
    let _ = done.send(true);
    result
}

/// Writes the server's notifications (`notifications/resources/updated`, `list_changed`) to
/// stdout once the session exists: those naming it, and those naming no session.
async fn drain(
    mut notifications: broadcast::Receiver<ServerNotification>,
    out: mpsc::UnboundedSender<String>,
    session: Arc<OnceLock<String>>,
) {
    loop {
        let notification = match notifications.recv().await {
            Ok(notification) => notification,
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                tracing::warn!(missed, "stdio: server notifications dropped: stdout lagged");
                continue;
            }
            Err(broadcast::error::RecvError::Closed) => return,
        };
        let Some(live) = session.get() else { continue };
        if notification.session_id.as_ref().is_none_or(|id| id == live)
            && out.send(notification.message.to_string()).is_err()
        {
            return;
        }
    }
}

struct Live {
    id: String,
    handle: SessionHandle,
    assigns: Arc<Mutex<Map<String, Value>>>,
}

struct Connection<F> {
    server: Server,
    /// The stateless era's requests, decided per message.
    stateless: stateless::Stateless,
    store: InMemorySessionStore,
    out: mpsc::UnboundedSender<String>,
    session: Option<Live>,
    /// The session id, once `initialize` created the session (the notification drain reads it).
    announced: Arc<OnceLock<String>>,
    on_session: F,
}

/// Sessions on stdio never expire while the process runs.
const NEVER: Duration = Duration::MAX;

impl<F: FnMut(&SessionHandle) + Send> Connection<F> {
    fn write(&self, message: &Value) {
        let _ = self.out.send(message.to_string());
    }

    fn notifier(&self) -> Notifier {
        let out = self.out.clone();
        Notifier::with_delivery(STREAM, move |message: Value| {
            match out.send(message.to_string()) {
                Ok(()) => Delivery::Sent,
                Err(_) => Delivery::Disconnected,
            }
        })
    }

    async fn handle(&mut self, message: Value) {
        if message.is_array() {
            self.write(&failure(
                Value::Null,
                &RpcError::new(
                    RpcError::INVALID_REQUEST,
                    "JSON-RPC batches are not supported on stdio. Send one message per line.",
                    None,
                ),
            ));
            return;
        }
        let kind = Kind::of(&message);
        match &kind {
            Kind::Request { id, method } if crate::stateless::names_era(method, &message) => {
                self.stateless.serve(id.clone(), method.clone(), message);
                return;
            }
            // Stateless requests first; a session call of that id (if any) is cancelled too.
            Kind::Notification { method } if method == "notifications/cancelled" => {
                self.stateless.cancel(message.get("params"));
            }
            _ => {}
        }
        let Some(live) = &self.session else {
            self.before_initialize(kind, &message).await;
            return;
        };
        let record = match self.store.load(&live.id, NEVER).await {
            Ok(Some(record)) => record,
            _ => return,
        };
        let handle = live.handle.clone();
        let assigns = live.assigns.clone();
        let engine = Engine { store: &self.store };
        let is_notification = matches!(kind, Kind::Notification { .. });
        match engine.in_session(&record, &handle, kind, message).await {
            Ok(Step::Reply(body)) => self.write(&body),
            Ok(Step::Accepted) => {}
            Ok(Step::Initialize { id, .. }) => self.write(&failure(
                id,
                &RpcError::new(
                    RpcError::INVALID_REQUEST,
                    "The session is already initialized: stdio serves one session.",
                    None,
                ),
            )),
            Ok(Step::Call { id, params }) => self.spawn_call(&record, handle, assigns, id, params),
            Err(rejected) if !is_notification => self.write(&rejected.to_response()),
            Err(_) => {}
        }
    }

    async fn before_initialize(&mut self, kind: Kind, message: &Value) {
        let Kind::Request { id, method } = kind else {
            // Notifications and answers before initialize are ignored.
            return;
        };
        match Method::parse(&method) {
            Some(Method::Initialize) => {
                if let Err(reason) = crate::protocol::validate_envelope(message) {
                    self.write(&failure(
                        id,
                        &RpcError::new(RpcError::INVALID_REQUEST, reason.to_string(), None),
                    ));
                    return;
                }
                let record = new_record(message.get("params"), Map::new(), None);
                let version = record.version;
                let handle = SessionHandle::new(
                    record.id.clone(),
                    self.server.clone(),
                    version,
                    None,
                    Some(self.notifier()),
                );
                let live = Live {
                    id: record.id.clone(),
                    handle,
                    assigns: Arc::new(Mutex::new(record.assigns.clone())),
                };
                let client_info = wymcp_core::bound::echo(&record.client_info.to_string());
                if let Err(err) = self.store.create(record, 1, NEVER).await {
                    tracing::error!(%err, "stdio: could not start the session");
                    self.write(&failure(
                        id,
                        &RpcError::new(RpcError::INTERNAL_ERROR, "Internal error", None),
                    ));
                    return;
                }
                (self.on_session)(&live.handle);
                let _ = self.announced.set(live.id.clone());
                tracing::info!(
                    name: "wymcp.session.start",
                    session_id = live.id.as_str(),
                    client_info = %client_info,
                    version = version.as_str(),
                    "MCP stdio session started"
                );
                self.session = Some(live);
                self.write(&success(id, initialize_result(&self.server, version)));
            }
            Some(Method::Ping) => self.write(&success(id, json!({}))),
            _ => self.write(&failure(
                id,
                &RpcError::new(
                    RpcError::INVALID_REQUEST,
                    "Session not initialized. Send initialize first.",
                    None,
                ),
            )),
        }
    }

    /// Runs a call concurrently with reading (its answer, and the client's answers to its
    /// server requests, arrive while it runs).
    fn spawn_call(
        &self,
        record: &SessionRecord,
        handle: SessionHandle,
        assigns: Arc<Mutex<Map<String, Value>>>,
        id: Value,
        params: Option<Value>,
    ) {
        let (registration, token) = handle.start_call(&id);
        let ctx = call_context(
            record,
            &handle,
            &id,
            params.as_ref(),
            assigns,
            token.clone(),
        )
        .notifier(self.notifier())
        .build();
        let server = self.server.clone();
        let out = self.out.clone();
        let version = record.version;
        tokio::spawn(async move {
            let answer = tokio::select! {
                biased;
                // A cancelled call gets no response.
                () = token.cancelled() => None,
                result = server.tools_call(params, ctx.clone()) => Some(result),
            };
            ctx.complete();
            drop(registration);
            if let Some(result) = answer {
                // The result is written straight from its parts, as on HTTP: no `Value` tree
                // of it (nor a copy of its text) is built.
                let line = match result {
                    Ok(result) => success_text(
                        &id,
                        &WireResult {
                            result: &result,
                            version,
                        },
                    ),
                    Err(error) => failure(id, &error).to_string(),
                };
                let _ = out.send(line);
            }
        });
    }

    /// The input ended: running calls are cancelled, waiting server requests fail.
    fn end(&mut self) {
        if let Some(live) = self.session.take() {
            // Closing the handle cancels the session's running calls.
            live.handle.close();
            self.server.forget_session(Some(&live.id));
            tracing::info!("MCP stdio session ended");
        }
    }
}
