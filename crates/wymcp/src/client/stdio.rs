//! The stdio transport: a spawned command speaking newline-delimited JSON-RPC on its stdin and
//! stdout. One task reads stdout (each line bounded by [`Limit::LineBytes`]) and routes what
//! it reads: responses to the calls waiting for them, notifications to the queue, the
//! server's requests to the installed handlers; one writes stdin; one logs stderr line by
//! line through `tracing`. The child is killed when the client is dropped, and ended (stdin
//! closed, then killed past the timeout) and reaped at [`Client::close`](super::Client::close).

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use super::builder::Settings;
use super::handlers::{Handlers, is_request};
use super::http::response_to;
use super::notifications::{Notification, Queue};
use super::outgoing::Outgoing;
use super::{ClientError, Limit};

/// A running server process and the tasks serving its pipes.
#[derive(Debug)]
pub(crate) struct Process {
    pub(crate) settings: Settings,
    pub(crate) notes: Arc<Queue>,
    state: Arc<State>,
    writer: mpsc::UnboundedSender<Vec<u8>>,
    child: tokio::sync::Mutex<Option<Child>>,
    tasks: Vec<JoinHandle<()>>,
}

/// What the reader shares with the calls: who waits for which id, and whether the
/// connection is over.
#[derive(Debug, Default)]
struct State {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    waiting: HashMap<i64, oneshot::Sender<Value>>,
    ended: Option<Ended>,
}

/// Why the connection ended.
#[derive(Debug, Clone, Copy)]
enum Ended {
    /// EOF on stdout, a read error, or the client closed it.
    Closed,
    /// A stdout line past the limit.
    Refused(Limit),
}

impl Ended {
    fn error(self, method: &str) -> ClientError {
        match self {
            Ended::Closed => ClientError::Closed {
                method: method.to_owned(),
            },
            Ended::Refused(limit) => ClientError::LimitExceeded {
                method: method.to_owned(),
                limit,
            },
        }
    }
}

impl State {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Ends the connection: every waiting call is woken (its sender dropped) and fails with
    /// `why`; the first reason stays.
    fn end(&self, why: Ended) {
        let mut inner = self.lock();
        inner.ended.get_or_insert(why);
        inner.waiting.clear();
    }
}

/// Forgets a waiting call when its future ends, answered or not (timed out, dropped).
struct Waiting<'a> {
    state: &'a State,
    id: i64,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.state.lock().waiting.remove(&self.id);
    }
}

impl Process {
    /// Spawns `program` with its pipes and starts the tasks serving them.
    pub(crate) fn spawn(
        program: &str,
        args: &[String],
        env: &[(String, String)],
        current_dir: Option<&std::path::Path>,
        settings: Settings,
        handlers: Handlers,
    ) -> Result<Process, ClientError> {
        let mut command = Command::new(program);
        command
            .args(args)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(dir) = current_dir {
            command.current_dir(dir);
        }
        let spawn_error = |source| ClientError::Spawn {
            command: program.to_owned(),
            source,
        };
        let mut child = command.spawn().map_err(spawn_error)?;
        let missing = || spawn_error(std::io::Error::other("a pipe of the child is missing"));
        let mut stdin = child.stdin.take().ok_or_else(missing)?;
        let stdout = child.stdout.take().ok_or_else(missing)?;
        let stderr = child.stderr.take().ok_or_else(missing)?;

        let state = Arc::new(State::default());
        let notes = Arc::new(Queue::new(
            settings.max_notifications,
            handlers.notification.clone(),
        ));
        let (writer, mut outgoing) = mpsc::unbounded_channel::<Vec<u8>>();
        let write = tokio::spawn(async move {
            while let Some(line) = outgoing.recv().await {
                if stdin.write_all(&line).await.is_err() || stdin.flush().await.is_err() {
                    break;
                }
            }
        });
        let read = tokio::spawn(read_stdout(
            BufReader::new(stdout),
            settings.max_line_bytes,
            state.clone(),
            notes.clone(),
            handlers,
            writer.clone(),
        ));
        let log = tokio::spawn(log_stderr(
            BufReader::new(stderr),
            settings.max_stderr_line_bytes,
            program.to_owned(),
        ));
        Ok(Process {
            settings,
            notes,
            state,
            writer,
            child: tokio::sync::Mutex::new(Some(child)),
            tasks: vec![write, read, log],
        })
    }

    /// Writes `body` (a request with `id`, or a notification) and, for a request, waits for
    /// its response under the timeout: the response's `result`.
    pub(crate) async fn send(
        &self,
        method: &str,
        id: Option<i64>,
        body: &Outgoing,
    ) -> Result<Value, ClientError> {
        let mut line = body.text().to_vec();
        line.push(b'\n');
        let Some(id) = id else {
            if let Some(ended) = self.state.lock().ended {
                return Err(ended.error(method));
            }
            return self
                .writer
                .send(line)
                .map(|()| Value::Null)
                .map_err(|_| Ended::Closed.error(method));
        };
        let (tx, rx) = oneshot::channel();
        {
            let mut inner = self.state.lock();
            if let Some(ended) = inner.ended {
                return Err(ended.error(method));
            }
            inner.waiting.insert(id, tx);
        }
        let _waiting = Waiting {
            state: &self.state,
            id,
        };
        self.writer
            .send(line)
            .map_err(|_| Ended::Closed.error(method))?;
        let after = self.settings.timeout;
        match tokio::time::timeout(after, rx).await {
            Err(_) => Err(ClientError::Timeout {
                method: method.to_owned(),
                after,
            }),
            Ok(Err(_)) => {
                let ended = self.state.lock().ended.unwrap_or(Ended::Closed);
                Err(ended.error(method))
            }
            Ok(Ok(message)) => response_to(method, id, message),
        }
    }

    /// Writes a notification without waiting (a cancellation from a dropped call's guard).
    pub(crate) fn notify(&self, body: &Outgoing) {
        let mut line = body.text().to_vec();
        line.push(b'\n');
        let _ = self.writer.send(line);
    }

    /// Ends the process: its stdin closed, up to the timeout for it to exit, then killed;
    /// reaped either way.
    pub(crate) async fn close(&self) {
        if let Some(write) = self.tasks.first() {
            write.abort(); // drops stdin: EOF for the server
        }
        self.state.end(Ended::Closed);
        let Some(mut child) = self.child.lock().await.take() else {
            return;
        };
        let exited = tokio::time::timeout(self.settings.timeout, child.wait()).await;
        if !matches!(exited, Ok(Ok(_))) {
            let _ = child.kill().await; // kills and waits
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
        // The child (`kill_on_drop`) is killed when dropped with the process; tokio reaps it.
    }
}

/// One line read with [`read_line`].
#[derive(Debug, PartialEq, Eq)]
enum Line {
    /// A line (without its newline) is in the buffer; a last line without a newline counts.
    Read,
    /// The line would exceed the limit: the buffer holds its first `max` bytes, the rest
    /// unread.
    TooLong,
    /// End of input, nothing read.
    End,
}

/// Reads one line into `line` (cleared first), never holding more than `max` bytes of it.
async fn read_line(
    reader: &mut (impl AsyncBufRead + Unpin),
    max: usize,
    line: &mut Vec<u8>,
) -> std::io::Result<Line> {
    line.clear();
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            return Ok(if line.is_empty() {
                Line::End
            } else {
                Line::Read
            });
        }
        let (take, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(at) => (at, true),
            None => (buf.len(), false),
        };
        if line.len() + take > max {
            let room = max - line.len();
            line.extend_from_slice(&buf[..room]);
            reader.consume(room);
            return Ok(Line::TooLong);
        }
        line.extend_from_slice(&buf[..take]);
        reader.consume(if done { take + 1 } else { take });
        if done {
            return Ok(Line::Read);
        }
    }
}

/// Reads and drops the rest of a line (bounded by the input: each step consumes what it
/// sees).
async fn skip_line(reader: &mut (impl AsyncBufRead + Unpin)) -> std::io::Result<()> {
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            return Ok(());
        }
        match buf.iter().position(|&b| b == b'\n') {
            Some(at) => {
                reader.consume(at + 1);
                return Ok(());
            }
            None => {
                let len = buf.len();
                reader.consume(len);
            }
        }
    }
}

/// The stdout task: every line a JSON-RPC message, routed until EOF or a refused line.
async fn read_stdout(
    mut stdout: impl AsyncBufRead + Unpin,
    max: usize,
    state: Arc<State>,
    notes: Arc<Queue>,
    handlers: Handlers,
    writer: mpsc::UnboundedSender<Vec<u8>>,
) {
    let mut line = Vec::new();
    loop {
        match read_line(&mut stdout, max, &mut line).await {
            Ok(Line::Read) => {}
            Ok(Line::TooLong) => {
                tracing::warn!(
                    target: "wymcp::client",
                    max,
                    "a stdout line of the server exceeds ClientBuilder::max_line_bytes: connection ended"
                );
                state.end(Ended::Refused(Limit::LineBytes { max }));
                return;
            }
            Ok(Line::End) | Err(_) => {
                state.end(Ended::Closed);
                return;
            }
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let Ok(message) = serde_json::from_slice::<Value>(&line) else {
            tracing::warn!(target: "wymcp::client", "a stdout line of the server is not JSON: skipped");
            continue;
        };
        if is_request(&message) {
            let handlers = handlers.clone();
            let writer = writer.clone();
            tokio::spawn(async move {
                // Nothing on stdio ties the server's request to one of the client's.
                let answer = handlers.answer(message, None).await;
                let mut line = answer.to_string().into_bytes();
                line.push(b'\n');
                let _ = writer.send(line);
            });
        } else if let Some(id) = message.get("id") {
            let waiting = id.as_i64().and_then(|id| state.lock().waiting.remove(&id));
            match waiting {
                Some(tx) => {
                    let _ = tx.send(message);
                }
                None => {
                    tracing::debug!(target: "wymcp::client", %id, "a response nobody waits for: dropped")
                }
            }
        } else if let Some(note) = Notification::of(message) {
            notes.push(note);
        }
    }
}

/// The stderr task: each line logged (at most `max` bytes of it) until EOF.
async fn log_stderr(mut stderr: impl AsyncBufRead + Unpin, max: usize, command: String) {
    let mut line = Vec::new();
    loop {
        let truncated = match read_line(&mut stderr, max, &mut line).await {
            Ok(Line::Read) => false,
            Ok(Line::TooLong) => true,
            Ok(Line::End) | Err(_) => return,
        };
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches('\r');
        tracing::info!(target: "wymcp::client::stderr", %command, truncated, "{text}");
        if truncated && skip_line(&mut stderr).await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Line, read_line, skip_line};

    #[tokio::test]
    async fn lines_are_read_bounded_and_a_long_one_is_cut_at_the_limit() {
        let mut input: &[u8] = b"short\nthis one is long\nlast";
        let mut line = Vec::new();
        assert_eq!(
            read_line(&mut input, 8, &mut line).await.ok(),
            Some(Line::Read)
        );
        assert_eq!(line, b"short");
        assert_eq!(
            read_line(&mut input, 8, &mut line).await.ok(),
            Some(Line::TooLong)
        );
        assert_eq!(line, b"this one");
        skip_line(&mut input).await.expect("in memory");
        assert_eq!(
            read_line(&mut input, 8, &mut line).await.ok(),
            Some(Line::Read)
        );
        assert_eq!(line, b"last");
        assert_eq!(
            read_line(&mut input, 8, &mut line).await.ok(),
            Some(Line::End)
        );
    }
}
