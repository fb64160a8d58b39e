//! [`ConnectionLimits`]: what one TCP connection of [`HttpServer`](super::HttpServer) may
//! hold, and the accept loop that enforces them with the HTTP stack's own facilities (hyper's
//! header read timeout and keep-alive, body read timeouts armed only while a body is waited
//! for (`framed.rs`), a semaphore around `accept`, a count per client address, hyper-util's
//! graceful shutdown).

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use super::framed::Framed;
use super::rejection::{Dialect, Rejection, TooManyConnections};
use crate::serve::{ClientCounts, ClientSlot, counted_client};
use axum::Router;
use axum::response::IntoResponse as _;
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
/// Default longest wait for a whole request body, from the first wait for it: 60 seconds.
pub const DEFAULT_BODY_DEADLINE: Duration = Duration::from_secs(60);
/// Default cap on open connections: 1,024.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// Default cap on the connections one client address holds open: 64.
pub const DEFAULT_MAX_CONNECTIONS_PER_CLIENT: usize = 64;

/// Connections over their client's cap being answered at once; one more is closed without an
/// answer (a client opening connections faster than they are refused gets resets).
const MAX_REFUSING: usize = 64;
/// The longest a connection over its client's cap is kept to be answered.
const REFUSAL_TIME: Duration = Duration::from_secs(2);

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
/// * **Body deadline** (default 60 s): the longest a whole request body may take, counted from
///   the first wait for it, however steadily it trickles; past it the request is answered 408
///   `Request Timeout: the request body did not arrive whole within 60s
///   (ConnectionLimits::body_deadline)`, then the connection is closed.
/// * **Keep-alive** (default on): off closes every connection after its first answer.
/// * **Maximum connections** (default 1,024): one more connection is not accepted until an
///   open one closes; it waits in the listen backlog (the kernel's queue), using no file
///   descriptor and no memory of the server. Keep it below the process's file-descriptor
///   limit (`ulimit -n`); a failed `accept` (`EMFILE`) is retried with a pause doubling from
///   10 ms to 1 s, and logged at most once a minute.
/// * **Maximum connections per client** (default 64): the connections one client address
///   holds open at once (an IPv6 address by its /64; loopback included). One more is answered
///   at once, whatever its request, 429 with `Retry-After: 1` and `{"error": "Too many
///   connections from this client: the limit of 64 open connections per client is reached
///   (ConnectionLimits::max_connections_per_client). Close one or try again later."}`, and
///   closed; it holds none of the server's connection slots meanwhile. Connections from a
///   [trusted proxy](super::HttpConfig::trusted_proxies) are not counted: they carry many
///   clients (the proxy caps its clients' connections; their streams are still counted per
///   forwarded client).
///
/// ```
/// use std::time::Duration;
/// use wymcp::transport::http::ConnectionLimits;
///
/// let limits = ConnectionLimits::new()
///     .header_read_timeout(Duration::from_secs(5))
///     .body_read_timeout(Duration::from_secs(20))
///     .body_deadline(Duration::from_secs(120))
///     .max_connections(256)
///     .max_connections_per_client(16);
/// assert_eq!(limits.max_connections, 256);
/// assert_eq!(ConnectionLimits::default().max_connections, 1024);
/// assert_eq!(ConnectionLimits::default().max_connections_per_client, 64);
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
    /// The longest wait for a whole request body, from the first wait for it
    /// ([`DEFAULT_BODY_DEADLINE`]).
    pub body_deadline: Duration,
    /// Whether connections are kept open between requests (on).
    pub keep_alive: bool,
    /// Most connections open at once ([`DEFAULT_MAX_CONNECTIONS`]).
    pub max_connections: usize,
    /// Most connections one client address holds open at once
    /// ([`DEFAULT_MAX_CONNECTIONS_PER_CLIENT`]).
    pub max_connections_per_client: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            body_read_timeout: DEFAULT_BODY_READ_TIMEOUT,
            body_deadline: DEFAULT_BODY_DEADLINE,
            keep_alive: true,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_connections_per_client: DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
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

    /// The longest wait for a whole request body, counted from the first wait for it
    /// (default 60 s): a body trickled slowly enough to beat the
    /// [body read timeout](Self::body_read_timeout) is still cut here. Zero is raised to one
    /// millisecond.
    pub fn body_deadline(mut self, deadline: Duration) -> Self {
        self.body_deadline = deadline.max(Duration::from_millis(1));
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

    /// Most connections one client address holds open at once (default 64; at least 1).
    /// Connections from a [trusted proxy](super::HttpConfig::trusted_proxies) are not counted.
    pub fn max_connections_per_client(mut self, max: usize) -> Self {
        self.max_connections_per_client = max.max(1);
        self
    }
}

/// Serves `app` on `listener` under `limits` until `shutdown` completes; then `on_shutdown`
/// runs (it closes the long-lived streams), no connection is accepted any more, and the open
/// ones finish their requests (idle ones are closed at once). The connections of `trusted`
/// proxies are not counted against a client.
pub(crate) async fn serve_connections(
    listener: TcpListener,
    app: Router,
    (limits, trusted): (&ConnectionLimits, &[IpAddr]),
    shutdown: impl Future<Output = ()>,
    on_shutdown: impl FnOnce(),
) {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout.max(Duration::from_millis(1)))
        .keep_alive(limits.keep_alive);
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let per_client = ClientCounts::default();
    let refuse = Refuser::new(limits);
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
        // The client's own cap: over it, the connection gives its slot back at once and is
        // answered the refusal; a trusted proxy's connections carry many clients.
        let client_slot = match client_place(&per_client, peer.ip(), trusted, limits) {
            Ok(place) => place,
            Err(()) => {
                drop(slot);
                refuse.refuse(tcp);
                continue;
            }
        };
        if let Err(err) = tcp.set_nodelay(true) {
            tracing::warn!(%err, "could not set TCP_NODELAY");
        }
        // Per connection: the body's read timeout (a timer only when a read has to wait) and
        // the peer address for the requests that may open a session (see `framed.rs`).
        let service = TowerToHyperService::new(Framed {
            inner: app.clone(),
            peer,
            body_timeout: limits.body_read_timeout,
            body_deadline: limits.body_deadline,
        });
        let connection = graceful.watch(http.serve_connection(TokioIo::new(tcp), service));
        tokio::spawn(async move {
            // A connection's errors (a client gone, a header timeout) are the client's.
            let _ = connection.await;
            drop((slot, client_slot));
        });
    }
    on_shutdown();
    drop(listener);
    graceful.shutdown().await;
}

/// The place of a connection from `peer` under its client's cap: `None` for a trusted proxy's
/// (not counted), `Err` when the client holds its most connections.
fn client_place(
    per_client: &ClientCounts,
    peer: IpAddr,
    trusted: &[IpAddr],
    limits: &ConnectionLimits,
) -> Result<Option<ClientSlot>, ()> {
    if trusted.contains(&peer) {
        return Ok(None);
    }
    let Some(client) = counted_client(None, Some(peer)) else {
        return Ok(None);
    };
    let max = limits.max_connections_per_client;
    match per_client.acquire(client, max) {
        Some(place) => Ok(Some(place)),
        None => {
            tracing::warn!(
                name: "wymcp.http.client_connections",
                max,
                "connection refused: the client's connection limit is reached"
            );
            Err(())
        }
    }
}

/// Answers connections over their client's cap: the first request of each is answered
/// [`TooManyConnections`] (429, `Retry-After`) and the connection closed, within
/// [`REFUSAL_TIME`]; at most [`MAX_REFUSING`] at once, the others closed unanswered.
struct Refuser {
    http: hyper::server::conn::http1::Builder,
    max: usize,
    refusing: Arc<Semaphore>,
}

impl Refuser {
    fn new(limits: &ConnectionLimits) -> Self {
        let mut http = hyper::server::conn::http1::Builder::new();
        http.timer(TokioTimer::new())
            .header_read_timeout(limits.header_read_timeout.min(REFUSAL_TIME))
            .keep_alive(false);
        Refuser {
            http,
            max: limits.max_connections_per_client,
            refusing: Arc::new(Semaphore::new(MAX_REFUSING)),
        }
    }

    fn refuse(&self, tcp: TcpStream) {
        let Ok(permit) = self.refusing.clone().try_acquire_owned() else {
            return;
        };
        let max = self.max;
        let service = hyper::service::service_fn(move |_request| async move {
            let refusal = Rejection::from(TooManyConnections { max });
            Ok::<_, Infallible>(refusal.write(Dialect::Plain).into_response())
        });
        let connection = self.http.serve_connection(TokioIo::new(tcp), service);
        tokio::spawn(async move {
            let _ = tokio::time::timeout(REFUSAL_TIME, connection).await;
            drop(permit);
        });
    }
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
            .body_deadline(Duration::ZERO)
            .max_connections(0)
            .max_connections_per_client(0);
        assert_eq!(limits.header_read_timeout, Duration::from_millis(1));
        assert_eq!(limits.body_read_timeout, Duration::from_millis(1));
        assert_eq!(limits.body_deadline, Duration::from_millis(1));
        assert_eq!(limits.max_connections, 1);
        assert_eq!(limits.max_connections_per_client, 1);
    }
}
