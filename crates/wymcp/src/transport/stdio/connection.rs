//! One stdio connection: each line handed to the serving core (its era read from the body),
//! what comes back written to stdout, one message per line; calls and listen streams run in
//! their own tasks, so a slow tool never holds the read loop.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::StdioConfig;
use super::lines::{self, Line, Stdout};
use super::listen::Listens;
use crate::protocol::{Kind, RpcError, failure};
use crate::serve::Server;
use crate::serve::{
    Call, Cluster, Core, EndReason, Era, Event, InMemorySessionStore, Inbound, Outcome, Refusal,
    Related, SessionHandle, SessionsConfig, Settings,
};

/// The stream name stdio messages carry in server request ids.
const STREAM: &str = "stdio";

/// Sessions on stdio never expire while the process runs.
const NEVER: Duration = Duration::MAX;

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
    let (out_tx, out_rx) = crate::serve::stream_queue(
        config.max_stdout_queue_bytes,
        "StdioConfig::max_stdout_queue_bytes",
    );
    let out_tx = Stdout(out_tx);
    let (done_tx, mut done_rx) = watch::channel(false);
    let writer = tokio::spawn(lines::write_lines(output, out_rx, done_tx));
    let mut conn = Connection::new(server, &config, out_tx, on_session);
    let mut reader = BufReader::new(input);
    let mut line = Vec::new();
    let mut eof = false;
    let result = loop {
        let read = tokio::select! {
            biased;
            () = stop.cancelled() => break Ok(()),
            _ = done_rx.changed() => break Ok(()),
            read = lines::read_line(&mut reader, &mut line, config.max_line) => read,
        };
        match read {
            Ok(Line::Eof) => {
                eof = true;
                break Ok(());
            }
            Ok(Line::TooLong) => conn.write(&too_long(config.max_line)),
            Ok(Line::Complete) => conn.line(lines::trim_line(&line)).await,
            Err(err) => break Err(err),
        }
    };
    if eof {
        conn.drain(config.shutdown_grace, &stop).await;
    }
    conn.end().await;
    drop(conn);
    // Everything sent before the end is written and flushed.
    match writer.await {
        Ok(Ok(())) | Err(_) => {}
        Ok(Err(err)) => tracing::warn!(%err, "stdio: writing stdout failed"),
    }
    result
}

/// The answer to a line longer than the limit.
fn too_long(max_line: usize) -> Value {
    let reason = format!("Request too large: the line limit is {max_line} bytes");
    failure(
        Value::Null,
        &RpcError::new(RpcError::INVALID_REQUEST, reason, None),
    )
}

struct Connection<F> {
    core: Core,
    listens: Listens,
    out: Stdout,
    /// Where a request's related messages go: stdout, under the stream name `stdio`.
    related: Arc<str>,
    /// The session id, once `initialize` created the session.
    session: Option<String>,
    on_session: F,
}

impl<F: FnMut(&SessionHandle) + Send> Connection<F> {
    fn new(server: Server, config: &StdioConfig, out: Stdout, on_session: F) -> Self {
        let settings = Settings {
            strict_version_header: false,
            cache_hints: config.cache_hints.clone(),
            one_session: true,
            transport: crate::serve::TransportKind::Stdio,
        };
        // One session, never expiring, resumed by nothing: the server's notifications reach
        // it through its standalone stream, stdout (attached when `initialize` made it).
        let sessions = SessionsConfig {
            store: Arc::new(InMemorySessionStore::new()),
            hooks: None,
            events: None,
            ttl: NEVER,
            max: 1,
            standalone: STREAM,
            cluster: Cluster::alone(),
        };
        let core = Core::new(server, sessions, settings, true);
        Connection {
            listens: Listens::new(core.clone(), out.clone(), config.max_listen_streams),
            core,
            out,
            related: Arc::from(STREAM),
            session: None,
            on_session,
        }
    }

    fn write(&self, message: &Value) {
        self.out.line(message.to_string());
    }

    /// One line of input: a message, a parse error, or nothing (a blank line).
    async fn line(&mut self, text: &[u8]) {
        if text.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        match serde_json::from_slice::<Value>(text) {
            Ok(message) => self.handle(message).await,
            Err(_) => self.write(&failure(
                Value::Null,
                &RpcError::new(RpcError::PARSE_ERROR, "Parse error: malformed JSON", None),
            )),
        }
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
        let era = Era::of(false, &message);
        if let Kind::Notification { method } = &kind
            && method == "notifications/cancelled"
        {
            // Stateless requests first; a session call of that id (if any) is cancelled too.
            self.core.cancel_request(message.get("params"));
        }
        let is_request = matches!(kind, Kind::Request { .. });
        // Before `initialize`, notifications and answers are ignored.
        if era == Era::Session && self.session.is_none() && !is_request {
            return;
        }
        let inbound = Inbound {
            message,
            era,
            session: self.session.as_deref(),
            identity: None,
            related: Related::Stream {
                name: self.related.clone(),
                polling: false,
            },
            requested: None,
            headers: None,
            client: None,
            loaded: None,
            // A line is parsed where it is read: nothing of it is kept.
            raw: None,
        };
        let served = self.core.serve(inbound).await;
        let notification = matches!(kind, Kind::Notification { .. });
        self.deliver(served, notification).await;
    }

    /// Writes what serving a message produced: an answer, a call's lines as they come, a
    /// listen stream, or a refusal (never to a notification).
    async fn deliver(&mut self, served: Result<Outcome, Refusal>, notification: bool) {
        match served {
            Ok(Outcome::Accepted) => {}
            Ok(Outcome::Message(answer)) => {
                self.out.line(answer.into_text());
            }
            Ok(Outcome::Started { session, message }) => self.started(session, &message).await,
            Ok(Outcome::Call(call)) => {
                tokio::spawn(run_call(call, self.out.clone()));
            }
            Ok(Outcome::Listen(listen)) => self.listens.open(listen),
            // Notifications are never answered, not even with a refusal.
            Err(refusal) if !notification => self.write(&refusal.to_message()),
            Err(_) => {}
        }
    }

    /// `initialize` started the connection's session.
    async fn started(&mut self, session: String, message: &Value) {
        self.attach_stdout(&session);
        match self.core.sessions().session_handle(&session).await {
            Ok(Some(handle)) => (self.on_session)(&handle),
            _ => tracing::error!("stdio: the session just started is not in its store"),
        }
        self.session = Some(session);
        self.write(message);
    }

    /// End of input: waits (at most `grace`, or until `stop`) for the stateless requests
    /// already read to be answered.
    /// Input ended: the calls already read (both eras) run to their answers, each bounded by
    /// its call timeout and all by `grace`; server requests waiting for the client fail.
    async fn drain(&self, grace: Duration, stop: &CancellationToken) {
        let handle = self
            .session
            .as_deref()
            .and_then(|id| self.core.sessions().live().existing(id));
        if let Some(handle) = &handle {
            handle.input_ended();
        }
        let drained = async {
            if let Some(requests) = self.core.requests() {
                requests.drained().await;
            }
            if let Some(handle) = &handle {
                handle.drained().await;
            }
        };
        tokio::select! {
            () = drained => {}
            () = stop.cancelled() => {}
            () = tokio::time::sleep(grace) => {
                tracing::warn!("stdio: input ended; cancelling the calls still running");
            }
        }
    }

    /// The connection ends: listen streams end with their closing response, running
    /// requests are cancelled (nothing more is written for them), the session ends.
    async fn end(&mut self) {
        self.listens.close();
        if let Some(requests) = self.core.requests() {
            requests.cancel_calls();
        }
        if let Some(session) = self.session.take() {
            let ended = self.core.sessions().end(&session, EndReason::Deleted);
            if let Err(err) = ended.await {
                tracing::warn!(%err, "stdio: could not end the session");
            }
            tracing::info!("MCP stdio session ended");
        }
    }
}

impl<F> Connection<F> {
    /// Attaches stdout as the session's standalone stream: what the sessions send it (the
    /// server's notifications, messages no request owns) is written as lines, until the
    /// session ends.
    fn attach_stdout(&self, session: &str) {
        let streams = self.core.sessions().streams();
        // Nothing stops stdout but the connection's end: the token is never cancelled.
        streams.attach_stream(session, self.out.0.clone(), CancellationToken::new(), None);
    }
}

/// Runs a call concurrently with reading (its answer, and the client's answers to its server
/// requests, arrive while it runs): its related messages, then its answer, each a line.
async fn run_call(mut call: Call, out: Stdout) {
    loop {
        let line = match call.next().await {
            Event::Note(note) => note.to_string(),
            Event::Finished(Ok(answer)) => {
                out.line(answer.into_text());
                return;
            }
            Event::Finished(Err(refusal)) => {
                out.line(refusal.to_message().to_string());
                return;
            }
            // A cancelled call gets no answer.
            Event::Cancelled => return,
            // stdio has no stream to close.
            Event::Closed => continue,
        };
        if !out.line(line) {
            return;
        }
    }
}
