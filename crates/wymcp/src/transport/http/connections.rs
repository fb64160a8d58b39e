//! [`ConnectionLimits`]: what one TCP connection of [`HttpServer`](super::HttpServer) may
//! hold, and the accept loop that enforces them with the HTTP stack's own facilities (hyper's
//! header read timeout and keep-alive, a body read timeout armed only while a body is waited
//! for (`framed.rs`), a semaphore around `accept`, hyper-util's graceful shutdown).

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use super::framed::Framed;
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::time::Instant;

/// Default time a connection has to send a whole request head: 10 seconds.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Default longest wait for the next piece of a request body: 30 seconds.
pub const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);
/// Default cap on open connections: 1,024.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;

/// The first pause after a failed `accept`; it doubles on each failure in a row.
const ACCEPT_BACKOFF_MIN: Duration = Duration::from_millis(10);
/// The longest pause after failed `accept`s.
const ACCEPT_BACKOFF_MAX: Duration = Duration::from_secs(1);
/// At most one accept-error log line in this long.
const ACCEPT_LOG_EVERY: Duration = Duration::from_secs(60);

/// The limits of the connections [`HttpServer`](super::HttpServer) accepts, each enforced by
/// the HTTP stack (see `docs/limits.md`, "Connections (Streamable HTTP)").
///
/// * **Header read timeout** (default 10 s): the time a connection has to send a whole request
///   head, counted from the moment it waits for one: when it opens, and after each answer on a
///   kept-alive connection. It is therefore also the **keep-alive idle timeout**: hyper waits
///   for the next request head under the same timer. A connection past it is closed without an
///   answer (a slowloris client trickling headers, an idle keep-alive connection).
/// * **Body read timeout** (default 30 s): the longest wait for the next piece of a request
///   body; past it, reading the body fails and the request is answered 400 `Could not read the
///   request body`, then the connection is closed.
/// * **Keep-alive** (default on): off closes every connection after its first answer.
/// * **Maximum connections** (default 1,024): one more connection is not accepted until an
///   open one closes; it waits in the listen backlog (the kernel's queue), using no file
///   descriptor and no memory of the server. Keep it below the process's file-descriptor
///   limit (`ulimit -n`); a failed `accept` (`EMFILE`) is retried with a pause doubling from
///   10 ms to 1 s, and logged at most once a minute.
///
/// ```
/// use std::time::Duration;
/// use wymcp::transport::http::ConnectionLimits;
///
/// let limits = ConnectionLimits::new()
///     .header_read_timeout(Duration::from_secs(5))
///     .body_read_timeout(Duration::from_secs(20))
///     .max_connections(256);
/// assert_eq!(limits.max_connections, 256);
/// assert_eq!(ConnectionLimits::default().max_connections, 1024);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
#[non_exhaustive]
pub struct ConnectionLimits {
    /// The time a connection has to send a whole request head, also the keep-alive idle
    /// timeout ([`DEFAULT_HEADER_READ_TIMEOUT`]).
    pub header_read_timeout: Duration,
    /// The longest wait for the next piece of a request body ([`DEFAULT_BODY_READ_TIMEOUT`]).
    pub body_read_timeout: Duration,
    /// Whether connections are kept open between requests (on).
    pub keep_alive: bool,
    /// Most connections open at once ([`DEFAULT_MAX_CONNECTIONS`]).
    pub max_connections: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            body_read_timeout: DEFAULT_BODY_READ_TIMEOUT,
            keep_alive: true,
            max_connections: DEFAULT_MAX_CONNECTIONS,
        }
    }
}

impl ConnectionLimits {
    /// The defaults (see the type's documentation).
    pub fn new() -> Self {
        Self::default()
    }

    /// The time a connection has to send a whole request head, also the keep-alive idle
    /// timeout (default 10 s). Zero is raised to one millisecond.
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// The longest wait for the next piece of a request body (default 30 s). Zero is raised
    /// to one millisecond.
    pub fn body_read_timeout(mut self, timeout: Duration) -> Self {
        self.body_read_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// Keeps connections open between requests (default on).
    pub fn keep_alive(mut self, on: bool) -> Self {
        self.keep_alive = on;
        self
    }

    /// Most connections open at once (default 1,024; at least 1).
    pub fn max_connections(mut self, max: usize) -> Self {
        self.max_connections = max.max(1);
        self
    }
}

/// Serves `app` on `listener` under `limits` until `shutdown` completes; then `on_shutdown`
/// runs (it closes the long-lived streams), no connection is accepted any more, and the open
/// ones finish their requests (idle ones are closed at once).
pub(crate) async fn serve_connections(
    listener: TcpListener,
    app: Router,
    limits: &ConnectionLimits,
    shutdown: impl Future<Output = ()>,
    on_shutdown: impl FnOnce(),
) {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout.max(Duration::from_millis(1)))
        .keep_alive(limits.keep_alive);
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let graceful = GracefulShutdown::new();
    let mut backoff = AcceptBackoff::default();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            () = &mut shutdown => break,
            accepted = accept(&listener, &slots) => accepted,
        };
        let (tcp, peer, slot) = match accepted {
            Ok(accepted) => accepted,
            Err(err) => {
                if let Some(pause) = backoff.failed(&err, Instant::now()) {
                    tokio::select! {
                        () = &mut shutdown => break,
                        () = tokio::time::sleep(pause) => {}
                    }
                }
                continue;
            }
        };
        backoff.succeeded();
        if let Err(err) = tcp.set_nodelay(true) {
            tracing::warn!(%err, "could not set TCP_NODELAY");
        }
        // Per connection: the body's read timeout (a timer only when a read has to wait) and
        // the peer address for the requests that may open a session (see `framed.rs`).
        let service = TowerToHyperService::new(Framed {
            inner: app.clone(),
            peer,
            body_timeout: limits.body_read_timeout,
        });
        let connection = graceful.watch(http.serve_connection(TokioIo::new(tcp), service));
        tokio::spawn(async move {
            // A connection's errors (a client gone, a header timeout) are the client's.
            let _ = connection.await;
            drop(slot);
        });
    }
    on_shutdown();
    drop(listener);
    graceful.shutdown().await;
}

/// One accepted connection and its slot: the slot is taken first, so over the cap nothing is
/// accepted and new connections wait in the listen backlog.
async fn accept(
    listener: &TcpListener,
    slots: &Arc<Semaphore>,
) -> io::Result<(TcpStream, SocketAddr, tokio::sync::OwnedSemaphorePermit)> {
    // The semaphore is never closed.
    let slot = slots
        .clone()
        .acquire_owned()
        .await
        .map_err(|_| io::Error::other("connection slots closed"))?;
    let (tcp, peer) = listener.accept().await?;
    Ok((tcp, peer, slot))
}

/// The pause after failed `accept`s and the rate of their log lines.
#[derive(Debug)]
struct AcceptBackoff {
    pause: Duration,
    failures: u64,
    /// When the last accept-error line was logged.
    logged_at: Option<Instant>,
    /// Failures since that line.
    unlogged: u64,
}

impl Default for AcceptBackoff {
    fn default() -> Self {
        AcceptBackoff {
            pause: ACCEPT_BACKOFF_MIN,
            failures: 0,
            logged_at: None,
            unlogged: 0,
        }
    }
}

impl AcceptBackoff {
    /// A failed `accept` at `now`: the pause before the next one (`None` for an error of that
    /// one connection, such as a reset before it was accepted), logged at most once a minute.
    fn failed(&mut self, err: &io::Error, now: Instant) -> Option<Duration> {
        if matches!(
            err.kind(),
            io::ErrorKind::ConnectionAborted
                | io::ErrorKind::ConnectionReset
                | io::ErrorKind::ConnectionRefused
        ) {
            return None;
        }
        let pause = self.pause;
        self.failures += 1;
        self.pause = (self.pause * 2).min(ACCEPT_BACKOFF_MAX);
        let due = self
            .logged_at
            .is_none_or(|at| now.duration_since(at) >= ACCEPT_LOG_EVERY);
        if due {
            tracing::error!(
                name: "wymcp.http.accept_error",
                %err,
                failures_since_last_log = self.unlogged + 1,
                retry_in_ms = u64::try_from(pause.as_millis()).unwrap_or(u64::MAX),
                "could not accept a connection (at the file-descriptor limit?): retrying"
            );
            self.logged_at = Some(now);
            self.unlogged = 0;
        } else {
            self.unlogged += 1;
        }
        Some(pause)
    }

    /// A connection was accepted: the next failure pauses the shortest time again.
    fn succeeded(&mut self) {
        if self.failures > 0 {
            self.failures = 0;
            self.pause = ACCEPT_BACKOFF_MIN;
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_pause_doubles_to_a_second_and_resets_on_success() {
        let mut backoff = AcceptBackoff::default();
        let now = Instant::now();
        let emfile = io::Error::other("Too many open files");
        let pauses: Vec<u128> = (0..9)
            .map(|_| backoff.failed(&emfile, now).unwrap().as_millis())
            .collect();
        assert_eq!(pauses, [10, 20, 40, 80, 160, 320, 640, 1000, 1000]);
        backoff.succeeded();
        assert_eq!(backoff.failed(&emfile, now), Some(ACCEPT_BACKOFF_MIN));
    }

    #[test]
    fn errors_are_logged_once_a_minute_and_a_connections_own_error_is_not_a_failure() {
        let mut backoff = AcceptBackoff::default();
        let start = Instant::now();
        let emfile = io::Error::other("Too many open files");
        backoff.failed(&emfile, start);
        assert_eq!(backoff.logged_at, Some(start));
        for second in 1..60 {
            backoff.failed(&emfile, start + Duration::from_secs(second));
        }
        assert_eq!(
            backoff.logged_at,
            Some(start),
            "one line in the first minute"
        );
        assert_eq!(backoff.unlogged, 59);
        backoff.failed(&emfile, start + Duration::from_secs(60));
        assert_eq!(backoff.logged_at, Some(start + Duration::from_secs(60)));
        assert_eq!(backoff.unlogged, 0);
        let reset = io::Error::from(io::ErrorKind::ConnectionReset);
        assert_eq!(backoff.failed(&reset, start), None);
    }

    #[test]
    fn zero_limits_are_raised_to_the_least_that_works() {
        let limits = ConnectionLimits::new()
            .header_read_timeout(Duration::ZERO)
            .body_read_timeout(Duration::ZERO)
            .max_connections(0);
        assert_eq!(limits.header_read_timeout, Duration::from_millis(1));
        assert_eq!(limits.body_read_timeout, Duration::from_millis(1));
        assert_eq!(limits.max_connections, 1);
    }
}
