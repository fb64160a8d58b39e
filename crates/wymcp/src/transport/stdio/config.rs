//! [`StdioConfig`]: the stdio transport's settings.

use std::time::Duration;

use crate::protocol::stateless::CacheHints;

/// Default longest line read from stdin: 4 MiB.
pub const DEFAULT_MAX_LINE: usize = 4 * 1024 * 1024;

/// Default most `subscriptions/listen` streams open at once on one connection.
pub const DEFAULT_MAX_LISTEN_STREAMS: usize = 1_000;

/// Default longest wait, once input ends, for the calls already read to be answered: the
/// default call timeout (each call is bounded by its own timeout first).
pub const DEFAULT_SHUTDOWN_GRACE: Duration = crate::limits::DEFAULT_CALL_TIMEOUT;

/// Default most bytes of lines waiting to be written to stdout: 64 MiB.
pub const DEFAULT_MAX_STDOUT_QUEUE_BYTES: usize = 64 * 1024 * 1024;

/// Settings of the stdio transport.
///
/// ```
/// use std::time::Duration;
/// use wymcp::protocol::stateless::{CacheHint, CacheHints, CacheScope};
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
    /// Once input ends, how long the calls already read (both eras) may run to be answered
    /// before they are cancelled (default 5 minutes; each call's own timeout applies first).
    pub shutdown_grace: Duration,
    /// The most bytes of lines waiting to be written to stdout while the client does not read
    /// it (each line counted with 64 bytes besides). Past it the connection ends: the lines
    /// still waiting are dropped, a warning names this limit, and `serve` returns; a client
    /// that reads its stdout never meets it.
    pub max_stdout_queue_bytes: usize,
}

impl Default for StdioConfig {
    fn default() -> Self {
        StdioConfig {
            max_line: DEFAULT_MAX_LINE,
            cache_hints: CacheHints::default(),
            max_listen_streams: DEFAULT_MAX_LISTEN_STREAMS,
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            max_stdout_queue_bytes: DEFAULT_MAX_STDOUT_QUEUE_BYTES,
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

    /// The most bytes of lines waiting to be written to stdout (default 64 MiB); past it the
    /// connection ends (see [`max_stdout_queue_bytes`](Self::max_stdout_queue_bytes)'s field).
    #[must_use]
    pub fn max_stdout_queue_bytes(mut self, bytes: usize) -> Self {
        self.max_stdout_queue_bytes = bytes;
        self
    }
}
