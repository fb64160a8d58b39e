//! [`StreamableHttp`]: the builder of the Streamable HTTP service and its settings.

use std::sync::Arc;
use std::time::Duration;

use super::auth::Authenticate;
use crate::protocol::stateless::CacheHints;
use crate::serve::Server;
use crate::serve::{
    Bus, EventLog, InMemoryEventLog, InMemorySessionStore, SessionHooks, SessionStore,
};

/// Default request body limit: 4 MiB.
pub const DEFAULT_BODY_LIMIT: usize = 4 * 1024 * 1024;
/// Default idle time after which a session expires: 30 minutes.
pub const DEFAULT_SESSION_TTL: Duration = Duration::from_secs(30 * 60);
/// Default cap on live sessions.
pub const DEFAULT_MAX_SESSIONS: usize = 10_000;
/// Default interval between SSE keepalive comments: 15 seconds.
pub const DEFAULT_KEEPALIVE: Duration = Duration::from_secs(15);
/// Default cap on open `subscriptions/listen` streams (2026-07-28).
pub const DEFAULT_MAX_LISTEN_STREAMS: usize = 1_000;
/// Default cap on the `subscriptions/listen` streams one client holds open: 16.
pub const DEFAULT_MAX_LISTEN_STREAMS_PER_CLIENT: usize = 16;
/// Default cap on the GET streams (session streams) one client holds open: 16.
pub const DEFAULT_MAX_GET_STREAMS_PER_CLIENT: usize = 16;
/// Default most bytes of events waiting to be written to one GET stream: 16 MiB.
pub const DEFAULT_MAX_STREAM_QUEUE_BYTES: usize = 16 * 1024 * 1024;

/// The transport's settings, fixed when the service is built.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// Largest accepted POST body in bytes; larger bodies are answered 413.
    pub body_limit: usize,
    /// Idle time after which a session expires.
    pub session_ttl: Duration,
    /// Most live sessions; an `initialize` beyond it is refused with 503.
    pub max_sessions: usize,
    /// Exact `Origin` values allowed. `None`: an `Origin` is allowed when its host is an
    /// allowed `Host` name ([`allowed_hosts`](Self::allowed_hosts), else the loopback names).
    /// A present `Origin` that is not allowed is refused with 403 whatever the bind address and
    /// whether or not DNS-rebinding protection is on; a request without one passes.
    pub allowed_origins: Option<Vec<String>>,
    /// `Host` names (port ignored) allowed when DNS-rebinding protection is on, and the hosts
    /// of the origins allowed when `allowed_origins` is not set; `None` means the loopback
    /// names `localhost`, `127.0.0.1` and `[::1]`.
    pub allowed_hosts: Option<Vec<String>>,
    /// DNS-rebinding protection of `Host`: refuse (403) a `Host` outside the host allowlist.
    /// `None` means "on", except that [`HttpServer::bind`](super::HttpServer::bind) turns it
    /// off when the listener is not bound to a loopback address. Whatever this says, `Host` is
    /// parsed strictly (one header, a valid authority, else 400) and `Origin` is validated.
    pub dns_rebinding_protection: Option<bool>,
    /// Interval between SSE keepalive comments on the GET stream and on
    /// `subscriptions/listen` streams (a client gone away is noticed at the latest at the next
    /// one).
    pub keepalive: Duration,
    /// Most `subscriptions/listen` streams (2026-07-28) open at once; one more is refused
    /// with 503. A stream's slot is freed when it ends or its client goes away.
    pub max_listen_streams: usize,
    /// Most `subscriptions/listen` streams one client holds open at once; one more is
    /// refused with 429 and `Retry-After`. A client is its principal when the request is
    /// authenticated, else its address (behind a [trusted proxy](Self::trusted_proxies), the
    /// forwarded one; an IPv6 address by its /64), loopback included.
    pub max_listen_streams_per_client: usize,
    /// Most GET streams (session-era standalone streams, and GETs resuming a POST stream) one
    /// client holds open at once, counted as
    /// [`max_listen_streams_per_client`](Self::max_listen_streams_per_client) is; one more is
    /// refused with 429 and `Retry-After`.
    pub max_get_streams_per_client: usize,
    /// Most bytes of events waiting to be written to one GET stream while its client reads
    /// slower than the server sends (each event counted with 64 bytes besides). Past it the
    /// stream is closed, its waiting events dropped, with a warning naming this limit; the
    /// events are in the event log, so the client resumes them with `Last-Event-ID`.
    pub max_stream_queue_bytes: usize,
    /// The SSE `retry` field (milliseconds the client waits before reconnecting), if any.
    pub sse_retry: Option<Duration>,
    /// SSE polling (SEP-1699): a POST answered as an SSE stream opens with a priming event
    /// (an id, empty data, and `retry` when [`sse_retry`](Self::sse_retry) is set), and a tool
    /// may end that stream mid-call with
    /// [`Context::close_sse_stream`](crate::Context::close_sse_stream); what the call sends
    /// afterwards, its response included, is kept in the event log and delivered to a GET
    /// stream that resumes with `Last-Event-ID`. Off by default.
    pub sse_polling: bool,
    /// Refuse (400) a request whose `MCP-Protocol-Version` header names a supported revision
    /// other than the session's (2025-06-18 and later sessions). Off by default: as the
    /// specification requires, only an invalid or unsupported revision is refused.
    pub strict_version_header: bool,
    /// Auth-params appended to the `WWW-Authenticate: Bearer` challenge of a 401, in order
    /// (for example `resource_metadata` and `scope`).
    pub www_authenticate: Vec<(String, String)>,
    /// RFC 9728 protected-resource metadata, served by [`HttpServer`](super::HttpServer) at
    /// `/.well-known/oauth-protected-resource/mcp` (and without the path suffix).
    pub protected_resource: Option<serde_json::Value>,
    /// Reverse proxies whose `X-Forwarded-For` is believed: a session opened through one of
    /// them is counted against the right-most forwarded address that is not itself listed
    /// ([`Limits::max_sessions_per_client`](crate::Limits::max_sessions_per_client) without
    /// auth), and so are its GET and listen streams
    /// ([`max_get_streams_per_client`](Self::max_get_streams_per_client),
    /// [`max_listen_streams_per_client`](Self::max_listen_streams_per_client)); its
    /// connections are not counted against any client
    /// ([`ConnectionLimits::max_connections_per_client`](super::ConnectionLimits::max_connections_per_client)).
    /// Empty by default: the header is ignored, and a session counts against the
    /// connection's address (a loopback address counts against no one for sessions; it does
    /// for connections and streams, so a proxy in front must be listed here).
    pub trusted_proxies: Vec<std::net::IpAddr>,
    /// The cache hints (`ttlMs`, `cacheScope`) the stateless era (2026-07-28) puts on list
    /// results, `resources/read` and `server/discover`; `{0, "private"}` unless set.
    pub cache_hints: CacheHints,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            body_limit: DEFAULT_BODY_LIMIT,
            session_ttl: DEFAULT_SESSION_TTL,
            max_sessions: DEFAULT_MAX_SESSIONS,
            allowed_origins: None,
            allowed_hosts: None,
            dns_rebinding_protection: None,
            keepalive: DEFAULT_KEEPALIVE,
            max_listen_streams: DEFAULT_MAX_LISTEN_STREAMS,
            max_listen_streams_per_client: DEFAULT_MAX_LISTEN_STREAMS_PER_CLIENT,
            max_get_streams_per_client: DEFAULT_MAX_GET_STREAMS_PER_CLIENT,
            max_stream_queue_bytes: DEFAULT_MAX_STREAM_QUEUE_BYTES,
            sse_retry: None,
            sse_polling: false,
            strict_version_header: false,
            www_authenticate: Vec::new(),
            protected_resource: None,
            trusted_proxies: Vec::new(),
            cache_hints: CacheHints::default(),
        }
    }
}

/// Builds a [`StreamableHttpService`](super::StreamableHttpService) from a [`Server`].
///
/// ```
/// use wymcp::Server;
/// use wymcp::transport::http::StreamableHttp;
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let server = Server::builder().name("demo").build().unwrap();
/// let service = StreamableHttp::builder(server)
///     .max_sessions(100)
///     .build();
/// let app: axum::Router = axum::Router::new().nest_service("/mcp", service);
/// # let _ = app; }
/// ```
#[must_use]
pub struct StreamableHttp {
    pub(crate) server: Server,
    pub(crate) config: HttpConfig,
    pub(crate) store: Arc<dyn SessionStore>,
    pub(crate) events: Arc<dyn EventLog>,
    pub(crate) auth: Option<Arc<dyn Authenticate>>,
    /// The auth hook's type name, for the `auth_module` field of the auth events.
    pub(crate) auth_module: &'static str,
    pub(crate) hooks: Option<Arc<dyn SessionHooks>>,
    /// This node's id (the process's [`node_id`](crate::backend::node_id) by default).
    pub(crate) node: Arc<str>,
    pub(crate) bus: Option<Arc<dyn Bus>>,
}

impl std::fmt::Debug for StreamableHttp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamableHttp")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl StreamableHttp {
    /// Starts a builder with the default settings. Sessions, their events and the bus are the
    /// server's [`backends`](crate::ServerBuilder::backends); those it leaves unset are an
    /// in-memory session store and event log of this service's own, and no bus.
    pub fn builder(server: Server) -> StreamableHttp {
        let backends = server.backends();
        let store = backends
            .sessions
            .clone()
            .unwrap_or_else(|| Arc::new(InMemorySessionStore::new()));
        let events = backends.events.clone().unwrap_or_else(|| {
            let limits = server.limits();
            Arc::new(
                InMemoryEventLog::with_limits(limits.max_logged_events, limits.max_logged_bytes)
                    .max_total_bytes(limits.max_logged_bytes_total),
            )
        });
        let bus = backends.bus.clone();
        StreamableHttp {
            server,
            config: HttpConfig::default(),
            store,
            events,
            auth: None,
            auth_module: "",
            hooks: None,
            node: crate::serve::node_id().into(),
            bus,
        }
    }

    /// Replaces every setting.
    pub fn config(mut self, config: HttpConfig) -> Self {
        self.config = config;
        self
    }

    /// Largest accepted POST body in bytes (default 4 MiB).
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.config.body_limit = bytes;
        self
    }

    /// Idle time after which a session expires (default 30 minutes).
    pub fn session_ttl(mut self, ttl: Duration) -> Self {
        self.config.session_ttl = ttl;
        self
    }

    /// Most live sessions (default 10,000).
    pub fn max_sessions(mut self, max: usize) -> Self {
        self.config.max_sessions = max;
        self
    }

    /// Exact `Origin` values allowed (see [`HttpConfig::allowed_origins`]).
    pub fn allowed_origins<I, S>(mut self, origins: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.config.allowed_origins = Some(origins.into_iter().map(Into::into).collect());
        self
    }

    /// Reverse proxies whose `X-Forwarded-For` names the client (see
    /// [`HttpConfig::trusted_proxies`]): behind nginx on the same host,
    /// `.trusted_proxies([std::net::Ipv4Addr::LOCALHOST.into()])`.
    pub fn trusted_proxies(mut self, proxies: impl IntoIterator<Item = std::net::IpAddr>) -> Self {
        self.config.trusted_proxies = proxies.into_iter().collect();
        self
    }

    /// `Host` names (port ignored) allowed under DNS-rebinding protection, also the hosts of
    /// the allowed origins unless [`allowed_origins`](Self::allowed_origins) is set.
    pub fn allowed_hosts<I, S>(mut self, hosts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.config.allowed_hosts = Some(hosts.into_iter().map(Into::into).collect());
        self
    }

    /// Turns the `Host` allowlist (DNS-rebinding protection) on or off explicitly; `Origin` is
    /// validated either way (see [`HttpConfig::dns_rebinding_protection`]).
    pub fn dns_rebinding_protection(mut self, on: bool) -> Self {
        self.config.dns_rebinding_protection = Some(on);
        self
    }

    /// Most bytes of events waiting to be written to one GET stream (default 16 MiB; see
    /// [`HttpConfig::max_stream_queue_bytes`]): past it the stream is closed and its client
    /// resumes with `Last-Event-ID`.
    pub fn max_stream_queue_bytes(mut self, bytes: usize) -> Self {
        self.config.max_stream_queue_bytes = bytes;
        self
    }

    /// Interval between SSE keepalive comments on GET and listen streams (default 15
    /// seconds).
    pub fn keepalive(mut self, interval: Duration) -> Self {
        self.config.keepalive = interval;
        self
    }

    /// Most `subscriptions/listen` streams open at once (default 1,000; see
    /// [`HttpConfig::max_listen_streams`]).
    ///
    /// ```
    /// use wymcp::Server;
    /// use wymcp::transport::http::StreamableHttp;
    ///
    /// let server = Server::builder().list_changed(true).build().unwrap();
    /// let http = StreamableHttp::builder(server).max_listen_streams(64);
    /// assert_eq!(http.settings().max_listen_streams, 64);
    /// ```
    pub fn max_listen_streams(mut self, max: usize) -> Self {
        self.config.max_listen_streams = max;
        self
    }

    /// Most `subscriptions/listen` streams one client holds open at once (default 16; see
    /// [`HttpConfig::max_listen_streams_per_client`]).
    ///
    /// ```
    /// use wymcp::Server;
    /// use wymcp::transport::http::StreamableHttp;
    ///
    /// let server = Server::builder().list_changed(true).build().unwrap();
    /// let http = StreamableHttp::builder(server).max_listen_streams_per_client(4);
    /// assert_eq!(http.settings().max_listen_streams_per_client, 4);
    /// ```
    pub fn max_listen_streams_per_client(mut self, max: usize) -> Self {
        self.config.max_listen_streams_per_client = max;
        self
    }

    /// Most GET streams one client holds open at once (default 16; see
    /// [`HttpConfig::max_get_streams_per_client`]).
    pub fn max_get_streams_per_client(mut self, max: usize) -> Self {
        self.config.max_get_streams_per_client = max;
        self
    }

    /// The SSE `retry` field sent with the priming event.
    pub fn sse_retry(mut self, retry: Duration) -> Self {
        self.config.sse_retry = Some(retry);
        self
    }

    /// SSE polling (SEP-1699, see [`HttpConfig::sse_polling`]): POST streams open with a
    /// priming event and a tool may close its stream mid-call; the client resumes on GET.
    pub fn sse_polling(mut self, on: bool) -> Self {
        self.config.sse_polling = on;
        self
    }

    /// Refuse a supported `MCP-Protocol-Version` header that differs from the session's
    /// revision (see [`HttpConfig::strict_version_header`]).
    pub fn strict_version_header(mut self, on: bool) -> Self {
        self.config.strict_version_header = on;
        self
    }

    /// Authenticates every request with `auth` (see [`Authenticate`]; [`BearerAuth`](super::BearerAuth)
    /// is ready to use).
    pub fn auth<A: Authenticate>(mut self, auth: A) -> Self {
        self.auth_module = std::any::type_name::<A>();
        self.auth = Some(Arc::new(auth));
        self
    }

    /// Auth-params for the `WWW-Authenticate: Bearer` challenge, such as
    /// `[("resource_metadata", "https://…/.well-known/oauth-protected-resource/mcp")]`.
    pub fn www_authenticate<I, K, V>(mut self, params: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        self.config.www_authenticate = params
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        self
    }

    /// RFC 9728 protected-resource metadata (a JSON object with `resource`,
    /// `authorization_servers`, …) for [`HttpServer`](super::HttpServer) to serve.
    pub fn protected_resource(mut self, metadata: serde_json::Value) -> Self {
        self.config.protected_resource = Some(metadata);
        self
    }

    /// Runs `hooks` when sessions start and end.
    pub fn session_hooks(mut self, hooks: impl SessionHooks) -> Self {
        self.hooks = Some(Arc::new(hooks));
        self
    }

    /// This node's id among the nodes sharing a [bus](crate::backend::Backends::bus):
    /// server→client request
    /// ids carry it, so that the answer reaches this node. Defaults to the process's
    /// [`node_id`](crate::backend::node_id); set it when several services of one process
    /// are nodes of one cluster. A `.` in `id` is replaced by `_` (request ids use `.` as
    /// their separator).
    pub fn node_id(mut self, id: &str) -> Self {
        self.node = id.replace('.', "_").into();
        self
    }

    /// The cache hints of the stateless era (see [`HttpConfig::cache_hints`]).
    pub fn cache_hints(mut self, hints: CacheHints) -> Self {
        self.config.cache_hints = hints;
        self
    }

    /// The settings so far.
    pub fn settings(&self) -> &HttpConfig {
        &self.config
    }
}
