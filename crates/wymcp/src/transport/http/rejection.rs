//! [`Rejection`]: every refusal the Streamable HTTP endpoint answers, one type each, and the
//! one writer that turns a refusal into an [`HttpError`] in the dialect of its route.
//!
//! Each refusal type knows its HTTP status, its JSON-RPC code and its text (its `Display`);
//! most are declared by [`define_refusal!`], in the shape of axum's `define_rejection!`. They
//! are variants of one enum rather than of one enum per route because the routes share most
//! of them: the wire checks (Origin, Host, auth, the singleton headers) run on POST, GET and
//! DELETE alike, and an unsupported version header, an unknown session or an unavailable
//! store are refused by several routes. What a route decides is only the dialect
//! ([`Dialect`]): POST writes JSON-RPC envelopes, GET and DELETE `{"error": "<text>"}`
//! (behaviour-spec.md §6.4), the method router a bare status. So each refusal is written
//! once, by [`Rejection::write`], whichever route refuses.
//!
//! In the JSON-RPC dialect the code decides the envelope: `-32600` "Invalid Request" with
//! `data.error` = the text, `-32700` "Parse error" with `data.reason` = the text, `-32001`
//! "Session terminated" without `data` (and no body at all when the rejection id is `null`,
//! behaviour-spec.md §6.7); a refusal the serving core worded keeps its own error object.

use std::fmt;

use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use serde_json::{Value, json};

use super::error::{ErrorBody, HttpError};
use super::framed::BodyTimedOut;
use crate::protocol::{ProtocolVersion, RpcError};
use crate::serve::{Class, Refusal};

/// `-32001`: the session named does not exist (any more).
pub(crate) const SESSION_TERMINATED: i64 = -32001;

/// The body dialect of the route that refuses.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Dialect {
    /// POST: a JSON-RPC error envelope carrying the rejection id (`null` unless the message
    /// was read and is a request).
    JsonRpc(Value),
    /// GET and DELETE: `{"error": "<text>"}`.
    Plain,
    /// The endpoint's method router: the status and its header, no body.
    Bare,
}

/// What a refusal type says about itself; the writer asks nothing else.
pub(crate) trait Refuse: fmt::Display {
    /// The HTTP status it is answered with.
    fn status(&self) -> StatusCode;
    /// Its JSON-RPC error code (the POST envelope's `error.code`).
    fn code(&self) -> i64;
    /// Its text in the JSON-RPC dialect, where the contract words it differently from the
    /// plain one (its `Display`).
    fn rpc_text(&self) -> Option<&'static str> {
        None
    }
    /// A header the refusal is sent with (`Allow`, `WWW-Authenticate`).
    fn header(&self) -> Option<(HeaderName, HeaderValue)> {
        None
    }
}

impl<T: Refuse + ?Sized> Refuse for Box<T> {
    fn status(&self) -> StatusCode {
        (**self).status()
    }
    fn code(&self) -> i64 {
        (**self).code()
    }
    fn rpc_text(&self) -> Option<&'static str> {
        (**self).rpc_text()
    }
    fn header(&self) -> Option<(HeaderName, HeaderValue)> {
        (**self).header()
    }
}

/// Declares one refusal type: a unit struct or one with named fields, its status, its
/// JSON-RPC code and its text (a format string over its fields); optionally its text in the
/// JSON-RPC dialect (`rpc_text = "..";`) and the `Allow` header it is sent with
/// (`allow = "..";`) or its `Retry-After` in seconds (`retry_after = "..";`).
macro_rules! define_refusal {
    (
        #[status = $status:ident]
        #[code = $code:expr]
        #[text = $text:literal]
        $(rpc_text = $rpc:literal;)?
        $(allow = $allow:literal;)?
        $(retry_after = $retry:literal;)?
        $(#[$meta:meta])*
        struct $name:ident;
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) struct $name;

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str($text)
            }
        }

        define_refusal!(@refuse $name, $status, $code $(, rpc = $rpc)? $(, allow = $allow)? $(, retry = $retry)?);
    };
    (
        #[status = $status:ident]
        #[code = $code:expr]
        #[text = $text:literal]
        $(rpc_text = $rpc:literal;)?
        $(allow = $allow:literal;)?
        $(retry_after = $retry:literal;)?
        $(#[$meta:meta])*
        struct $name:ident { $($(#[$fmeta:meta])* $field:ident: $ty:ty),+ $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq)]
        pub(crate) struct $name {
            $($(#[$fmeta])* pub(crate) $field: $ty),+
        }

        impl fmt::Display for $name {
            #[allow(unused_variables)]
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let Self { $($field),+ } = self;
                write!(f, $text)
            }
        }

        define_refusal!(@refuse $name, $status, $code $(, rpc = $rpc)? $(, allow = $allow)? $(, retry = $retry)?);
    };
    (@refuse $name:ident, $status:ident, $code:expr $(, rpc = $rpc:literal)? $(, allow = $allow:literal)? $(, retry = $retry:literal)?) => {
        impl Refuse for $name {
            fn status(&self) -> StatusCode {
                StatusCode::$status
            }
            fn code(&self) -> i64 {
                $code
            }
            $(
                fn rpc_text(&self) -> Option<&'static str> {
                    Some($rpc)
                }
            )?
            $(
                fn header(&self) -> Option<(HeaderName, HeaderValue)> {
                    Some((header::ALLOW, HeaderValue::from_static($allow)))
                }
            )?
            $(
                fn header(&self) -> Option<(HeaderName, HeaderValue)> {
                    Some((header::RETRY_AFTER, HeaderValue::from_static($retry)))
                }
            )?
        }
    };
}

// ---------------------------------------------------------------------------------------------
// The wire checks (every route)

define_refusal! {
    #[status = BAD_REQUEST]
    #[code = RpcError::INVALID_REQUEST]
    #[text = "Duplicated {name} header. Send exactly one {name} header."]
    /// A header that must appear at most once came twice (behaviour-spec.md §6.24).
    struct DuplicatedHeader {
        /// The header, as the text names it (`Mcp-Session-Id`).
        name: &'static str,
    }
}

define_refusal! {
    #[status = FORBIDDEN]
    #[code = RpcError::INVALID_REQUEST]
    #[text = "Origin not allowed: {origin}"]
    /// A present `Origin` that is not allowed (DNS-rebinding protection).
    struct OriginNotAllowed {
        /// The origin, bounded for echoing ([`wymcp_core::bound::echo`]).
        origin: String,
    }
}

define_refusal! {
    #[status = FORBIDDEN]
    #[code = RpcError::INVALID_REQUEST]
    #[text = "Missing Host header"]
    /// No `Host` while DNS-rebinding protection is on.
    struct MissingHost;
}

define_refusal! {
    #[status = BAD_REQUEST]
    #[code = RpcError::INVALID_REQUEST]
    #[text = "Invalid Host header: expected host[:port], got {host}"]
    /// A `Host` that is not an authority.
    struct InvalidHost {
        /// The header's value, bounded for echoing.
        host: String,
    }
}

define_refusal! {
    #[status = FORBIDDEN]
    #[code = RpcError::INVALID_REQUEST]
    #[text = "Host not allowed: {host}"]
    /// A `Host` whose name is not allowed while DNS-rebinding protection is on.
    struct HostNotAllowed {
        /// The host name, lower-cased and bounded for echoing.
        host: String,
    }
}

/// Why auth refused a request: what decides its status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AuthDenial {
    /// The credentials could not be checked now
    /// ([`AuthRefusal::unavailable`](super::AuthRefusal::unavailable)): 503.
    Unavailable,
    /// A malformed `Authorization` header: 400 `invalid_request` (RFC 6750 §3.1).
    Malformed,
    /// Credentials missing, refused, or a panicking hook: 401.
    Unauthorized,
}

/// Why auth refused a request, for the auth events.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AuthFailure {
    pub(crate) auth_module: &'static str,
    /// `None`: the hook answered a refusal; `Some(message)`: the hook panicked.
    pub(crate) panic: Option<String>,
    pub(crate) reason: String,
}

/// A request auth refused: its text is the hook's reason (or why the header is malformed),
/// sent with the `WWW-Authenticate` challenge of a 400 or 401.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AuthRefused {
    pub(crate) denial: AuthDenial,
    pub(crate) text: String,
    pub(crate) challenge: Option<HeaderValue>,
    /// What the route reports as `wymcp.auth.reject` or `wymcp.auth.error`.
    pub(crate) failure: AuthFailure,
}

impl fmt::Display for AuthRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Refuse for AuthRefused {
    fn status(&self) -> StatusCode {
        match self.denial {
            AuthDenial::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            AuthDenial::Malformed => StatusCode::BAD_REQUEST,
            AuthDenial::Unauthorized => StatusCode::UNAUTHORIZED,
        }
    }
    fn code(&self) -> i64 {
        RpcError::INVALID_REQUEST
    }
    fn header(&self) -> Option<(HeaderName, HeaderValue)> {
        let challenge = self.challenge.clone()?;
        Some((header::WWW_AUTHENTICATE, challenge))
    }
}

impl AuthRefused {
    /// Emits `wymcp.auth.reject` (or `wymcp.auth.error` for a panicking hook); `request_id`
    /// and `method` are the body's, when the route read one.
    fn report(&self, http_method: &str, request_id: Option<&Value>, method: Option<&str>) {
        let failure = &self.failure;
        let request_id = request_id.map(|id| wymcp_core::bound::echo(&id.to_string()));
        let method = method.map(wymcp_core::bound::echo);
        match &failure.panic {
            None => tracing::warn!(
                name: "wymcp.auth.reject",
                auth_module = failure.auth_module,
                reason = %wymcp_core::bound::echo(&failure.reason),
                request_id = request_id.as_deref(),
                method = method.as_deref(),
                http_method,
                "MCP request refused by auth"
            ),
            Some(error) => tracing::error!(
                name: "wymcp.auth.error",
                auth_module = failure.auth_module,
                exception = "panic",
                error = %wymcp_core::bound::echo(error).escape_debug(),
                request_id = request_id.as_deref(),
                method = method.as_deref(),
                http_method,
                "the auth hook panicked"
            ),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Reading a request

define_refusal! {
    #[status = NOT_ACCEPTABLE]
    #[code = RpcError::INVALID_REQUEST]
    #[text = "Not Acceptable: the client must accept application/json (and text/event-stream)"]
    /// A POST whose `Accept` does not take JSON answers.
    struct JsonNotAccepted;
}

define_refusal! {
    #[status = NOT_ACCEPTABLE]
    #[code = RpcError::INVALID_REQUEST]
    #[text = "Not Acceptable: {request} is answered as a text/event-stream; the client must accept it"]
    /// A request answered only as SSE (a GET, `subscriptions/listen`) whose `Accept` does not
    /// take `text/event-stream`.
    struct StreamNotAccepted {
        /// The request, as the text names it (`GET`, `subscriptions/listen`).
        request: &'static str,
    }
}

define_refusal! {
    #[status = UNSUPPORTED_MEDIA_TYPE]
    #[code = RpcError::INVALID_REQUEST]
    #[text = "Unsupported Media Type: the body must be application/json"]
    /// A POST whose `Content-Type` is not `application/json`.
    struct UnsupportedMediaType;
}

define_refusal! {
    #[status = PAYLOAD_TOO_LARGE]
    #[code = RpcError::INVALID_REQUEST]
    #[text = "Payload Too Large: the body limit is {limit} bytes (StreamableHttp::body_limit)"]
    /// A body over the limit, declared or streamed.
    struct PayloadTooLarge {
        /// [`HttpConfig::body_limit`](super::HttpConfig::body_limit).
        limit: usize,
    }
}

define_refusal! {
    #[status = REQUEST_TIMEOUT]
    #[code = RpcError::INVALID_REQUEST]
    #[text = "Request Timeout: {timed_out}"]
    /// The body stopped arriving.
    struct BodyTimeout {
        /// What the body answered ([`ConnectionLimits::body_read_timeout`] says how long it
        /// waited).
        ///
        /// [`ConnectionLimits::body_read_timeout`]: super::ConnectionLimits::body_read_timeout
        timed_out: BodyTimedOut,
    }
}

define_refusal! {
    #[status = BAD_REQUEST]
    #[code = RpcError::INVALID_REQUEST]
    #[text = "Could not read the request body"]
    /// The body failed otherwise (the connection broke, say).
    struct UnreadableBody;
}

define_refusal! {
    #[status = BAD_REQUEST]
    #[code = RpcError::PARSE_ERROR]
    #[text = "Malformed JSON"]
    /// A body that is not JSON: `-32700` "Parse error" with `data.reason`, id `null`.
    struct MalformedJson;
}

define_refusal! {
    #[status = BAD_REQUEST]
    #[code = RpcError::INVALID_REQUEST]
    #[text = "Unsupported MCP-Protocol-Version header: {version}. Supported: {supported}."]
    /// A version header naming no session-era revision (POST and GET word it alike).
    struct UnsupportedVersion {
        /// The header's value, bounded for echoing.
        version: String,
        supported: SessionEraVersions,
    }
}

impl UnsupportedVersion {
    /// The refusal of the version header `raw`.
    pub(crate) fn new(raw: &str) -> Self {
        UnsupportedVersion {
            version: wymcp_core::bound::echo(raw),
            supported: SessionEraVersions,
        }
    }
}

/// The session-era revisions, newest first: `2025-11-25, 2025-06-18, 2025-03-26`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SessionEraVersions;

impl fmt::Display for SessionEraVersions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, version) in ProtocolVersion::SESSION_ERA.iter().rev().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(version.as_str())?;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Sessions and streams

define_refusal! {
    #[status = BAD_REQUEST]
    #[code = RpcError::INVALID_REQUEST]
    #[text = "Missing mcp-session-id header"]
    rpc_text = "Missing Mcp-Session-Id header. Initialize first.";
    /// A request that needs a session names none. The contract fixes both wordings: POST's
    /// (behaviour-spec.md §6.7) and GET's and DELETE's (§6.17, §6.18).
    struct MissingSessionId;
}

define_refusal! {
    #[status = NOT_FOUND]
    #[code = SESSION_TERMINATED]
    #[text = "Session not found"]
    /// The session named does not exist (any more), or is another caller's. POST answers
    /// `-32001` "Session terminated" (§6.7), GET and DELETE `{"error":"Session not found"}`.
    struct SessionNotFound;
}

define_refusal! {
    #[status = SERVICE_UNAVAILABLE]
    #[code = RpcError::INVALID_REQUEST]
    #[text = "Session store unavailable: try again shortly"]
    /// The session store failed while a GET or DELETE read it (a POST gets the core's
    /// `-32603`, [`Rejection::Core`]).
    struct SessionStoreUnavailable;
}

define_refusal! {
    #[status = SERVICE_UNAVAILABLE]
    #[code = RpcError::INVALID_REQUEST]
    #[text = "Event log unavailable: try again shortly"]
    /// The event log failed to record a stream's priming event.
    struct EventLogUnavailable;
}

define_refusal! {
    #[status = SERVICE_UNAVAILABLE]
    #[code = RpcError::INVALID_REQUEST]
    #[text = "Too many listen streams: the limit of {max} open subscriptions/listen streams is reached. Close one or try again later."]
    /// [`HttpConfig::max_listen_streams`](super::HttpConfig::max_listen_streams) are open.
    struct TooManyListenStreams {
        max: usize,
    }
}

// A client at one of its own caps is answered 429 (it holds too much; the others do not),
// with `Retry-After`: the seconds after which a retry may find a place, if the client closed
// one meanwhile. The server-wide caps stay 503.

define_refusal! {
    #[status = TOO_MANY_REQUESTS]
    #[code = RpcError::INVALID_REQUEST]
    #[text = "Too many listen streams for this client: the limit of {max} open subscriptions/listen streams per client is reached (StreamableHttp::max_listen_streams_per_client). Close one or try again later."]
    retry_after = "5";
    /// The caller holds
    /// [`HttpConfig::max_listen_streams_per_client`](super::HttpConfig::max_listen_streams_per_client)
    /// listen streams.
    struct TooManyListenStreamsForClient {
        max: usize,
    }
}

define_refusal! {
    #[status = TOO_MANY_REQUESTS]
    #[code = RpcError::INVALID_REQUEST]
    #[text = "Too many GET streams for this client: the limit of {max} open GET streams per client is reached (StreamableHttp::max_get_streams_per_client). Close one or try again later."]
    retry_after = "5";
    /// The caller holds
    /// [`HttpConfig::max_get_streams_per_client`](super::HttpConfig::max_get_streams_per_client)
    /// GET streams.
    struct TooManyGetStreams {
        max: usize,
    }
}

define_refusal! {
    #[status = TOO_MANY_REQUESTS]
    #[code = RpcError::INVALID_REQUEST]
    #[text = "Too many connections from this client: the limit of {max} open connections per client is reached (ConnectionLimits::max_connections_per_client). Close one or try again later."]
    retry_after = "1";
    /// The connection's address holds
    /// [`ConnectionLimits::max_connections_per_client`](super::ConnectionLimits::max_connections_per_client)
    /// connections: the connection's first request is answered with this (written plain:
    /// the request is not read), then the connection is closed.
    struct TooManyConnections {
        max: usize,
    }
}

define_refusal! {
    #[status = METHOD_NOT_ALLOWED]
    #[code = RpcError::INVALID_REQUEST]
    #[text = "Method Not Allowed: MCP 2026-07-28 is served by POST only"]
    allow = "POST";
    /// A GET or DELETE of the stateless era: there is no session stream to open or end.
    struct StatelessMethodNotAllowed;
}

define_refusal! {
    #[status = METHOD_NOT_ALLOWED]
    #[code = RpcError::INVALID_REQUEST]
    #[text = "Method Not Allowed"]
    allow = "GET, POST, DELETE";
    /// An HTTP method the endpoint does not serve (written [`Dialect::Bare`]: no body).
    struct MethodNotAllowed;
}

/// A refusal the serving core worded: its JSON-RPC error object is sent as it is, with the
/// status of its class.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CoreRefused {
    pub(crate) status: StatusCode,
    pub(crate) error: RpcError,
}

impl fmt::Display for CoreRefused {
    /// Its reason: `data.error` when the error carries one, else its message.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self
            .error
            .data()
            .and_then(|d| d.get("error"))
            .and_then(Value::as_str)
        {
            Some(reason) => f.write_str(reason),
            None => f.write_str(self.error.message()),
        }
    }
}

impl Refuse for CoreRefused {
    fn status(&self) -> StatusCode {
        self.status
    }
    fn code(&self) -> i64 {
        self.error.code()
    }
}

// ---------------------------------------------------------------------------------------------
// The enum and its writer

/// Declares [`Rejection`]: one variant per refusal type, `From` each, and `Refuse` by
/// delegation (axum's `composite_rejection!`).
macro_rules! composite_rejection {
    ($(#[$meta:meta])* enum $name:ident { $($(#[$vmeta:meta])* $variant:ident($ty:ty)),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq)]
        pub(crate) enum $name {
            $($(#[$vmeta])* $variant($ty)),+
        }

        $(
            impl From<$ty> for $name {
                fn from(refusal: $ty) -> Self {
                    $name::$variant(refusal)
                }
            }
        )+

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self {
                    $($name::$variant(refusal) => fmt::Display::fmt(refusal, f)),+
                }
            }
        }

        impl Refuse for $name {
            fn status(&self) -> StatusCode {
                match self {
                    $($name::$variant(refusal) => refusal.status()),+
                }
            }
            fn code(&self) -> i64 {
                match self {
                    $($name::$variant(refusal) => refusal.code()),+
                }
            }
            fn rpc_text(&self) -> Option<&'static str> {
                match self {
                    $($name::$variant(refusal) => refusal.rpc_text()),+
                }
            }
            fn header(&self) -> Option<(HeaderName, HeaderValue)> {
                match self {
                    $($name::$variant(refusal) => refusal.header()),+
                }
            }
        }
    };
}

composite_rejection! {
    /// Every refusal of the Streamable HTTP endpoint. Written by [`Rejection::write`] in the
    /// dialect of the route that refuses.
    enum Rejection {
        DuplicatedHeader(DuplicatedHeader),
        OriginNotAllowed(OriginNotAllowed),
        MissingHost(MissingHost),
        InvalidHost(InvalidHost),
        HostNotAllowed(HostNotAllowed),
        /// Boxed: the largest refusal, and the rarest on a hot path.
        Auth(Box<AuthRefused>),
        JsonNotAccepted(JsonNotAccepted),
        StreamNotAccepted(StreamNotAccepted),
        UnsupportedMediaType(UnsupportedMediaType),
        PayloadTooLarge(PayloadTooLarge),
        BodyTimeout(BodyTimeout),
        UnreadableBody(UnreadableBody),
        MalformedJson(MalformedJson),
        UnsupportedVersion(UnsupportedVersion),
        MissingSessionId(MissingSessionId),
        SessionNotFound(SessionNotFound),
        SessionStoreUnavailable(SessionStoreUnavailable),
        EventLogUnavailable(EventLogUnavailable),
        TooManyListenStreams(TooManyListenStreams),
        TooManyListenStreamsForClient(TooManyListenStreamsForClient),
        TooManyGetStreams(TooManyGetStreams),
        TooManyConnections(TooManyConnections),
        StatelessMethodNotAllowed(StatelessMethodNotAllowed),
        MethodNotAllowed(MethodNotAllowed),
        /// Boxed: an error object is larger than every other refusal.
        Core(Box<CoreRefused>),
    }
}

impl From<AuthRefused> for Rejection {
    fn from(refusal: AuthRefused) -> Self {
        Rejection::Auth(Box::new(refusal))
    }
}

impl From<CoreRefused> for Rejection {
    fn from(refusal: CoreRefused) -> Self {
        Rejection::Core(Box::new(refusal))
    }
}

impl Rejection {
    /// The one writer: this refusal in `dialect`, with its header.
    pub(crate) fn write(self, dialect: Dialect) -> HttpError {
        let status = self.status();
        let header = self.header();
        let error = match dialect {
            Dialect::Plain => HttpError::plain(status, self.to_string()),
            Dialect::Bare => HttpError::new(status, ErrorBody::Empty),
            Dialect::JsonRpc(id) => self.envelope(status, id),
        };
        match header {
            Some((name, value)) => error.with_header(name, value),
            None => error,
        }
    }

    /// The JSON-RPC dialect: the envelope the code calls for (the module's documentation).
    fn envelope(self, status: StatusCode, id: Value) -> HttpError {
        if let Rejection::Core(core) = self {
            return HttpError::rpc(status, id, core.error);
        }
        let error = match self.code() {
            RpcError::INVALID_REQUEST => {
                let text = self
                    .rpc_text()
                    .map_or_else(|| self.to_string(), str::to_owned);
                return HttpError::invalid_request(status, id, text);
            }
            RpcError::PARSE_ERROR => {
                let data = json!({ "reason": self.to_string() });
                RpcError::new(RpcError::PARSE_ERROR, "Parse error", Some(data))
            }
            SESSION_TERMINATED if id.is_null() => return HttpError::new(status, ErrorBody::Empty),
            SESSION_TERMINATED => RpcError::new(SESSION_TERMINATED, "Session terminated", None),
            code => RpcError::new(code, self.to_string(), None),
        };
        HttpError::rpc(status, id, error)
    }

    /// Emits the auth events when auth refused the request (see [`AuthRefused`]); nothing
    /// for any other refusal.
    pub(crate) fn report_auth(
        &self,
        http_method: &str,
        request_id: Option<&Value>,
        method: Option<&str>,
    ) {
        if let Rejection::Auth(refused) = self {
            refused.report(http_method, request_id, method);
        }
    }

    /// A refusal of the serving core as POST answers it: a missing session is the header's
    /// refusal, a gone session `-32001`; the others keep the core's error with the status of
    /// their class.
    pub(crate) fn of_post(class: Class, error: RpcError) -> Rejection {
        let status = match class {
            Class::NoSession => return MissingSessionId.into(),
            Class::SessionGone => return SessionNotFound.into(),
            Class::Invalid => StatusCode::BAD_REQUEST,
            Class::MethodNotFound => StatusCode::NOT_FOUND,
            // The store (Redis, say) is unreachable: the request can be retried.
            Class::Store | Class::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            Class::Handler => StatusCode::OK,
        };
        CoreRefused { status, error }.into()
    }

    /// A refusal of the session's resolution as GET answers it: the plain dialect has no
    /// error object, so a gone session and a failed store are the route's own refusals and
    /// any other is a 400 with its reason.
    pub(crate) fn of_stream(refusal: Refusal) -> Rejection {
        match refusal.class {
            Class::SessionGone => SessionNotFound.into(),
            Class::Store => SessionStoreUnavailable.into(),
            _ => CoreRefused {
                status: StatusCode::BAD_REQUEST,
                error: refusal.error,
            }
            .into(),
        }
    }
}

/// A refusal of the serving core, in the JSON-RPC dialect with its own id.
impl From<Refusal> for HttpError {
    fn from(refusal: Refusal) -> Self {
        let Refusal { id, error, class } = refusal;
        Rejection::of_post(class, error).write(Dialect::JsonRpc(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_of_each_code_is_written_in_each_dialect() {
        let plain = Rejection::from(MalformedJson).write(Dialect::Plain);
        assert_eq!(plain.body(), &ErrorBody::Plain("Malformed JSON".into()));
        let rpc = Rejection::from(MalformedJson).write(Dialect::JsonRpc(Value::Null));
        let data = json!({ "reason": "Malformed JSON" });
        let parse = RpcError::new(RpcError::PARSE_ERROR, "Parse error", Some(data));
        assert_eq!(
            rpc,
            HttpError::rpc(StatusCode::BAD_REQUEST, Value::Null, parse)
        );
        let gone = Rejection::from(SessionNotFound).write(Dialect::JsonRpc(Value::Null));
        assert_eq!(gone.body(), &ErrorBody::Empty);
        assert_eq!(gone.status(), StatusCode::NOT_FOUND);
        let bare = Rejection::from(MethodNotAllowed).write(Dialect::Bare);
        assert_eq!(bare.body(), &ErrorBody::Empty);
        assert_eq!(bare.status(), StatusCode::METHOD_NOT_ALLOWED);
    }

    /// The session store failing under a GET: hard to provoke over HTTP without a failing
    /// store, so the refusal's type answers here.
    #[test]
    fn a_failed_store_under_a_stream_is_a_503_in_plain_words() {
        let refusal = Refusal::store(
            Value::Null,
            &crate::session::StoreError::unavailable("down"),
        );
        let error = Rejection::of_stream(refusal).write(Dialect::Plain);
        assert_eq!(error.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(
            error.body(),
            &ErrorBody::Plain("Session store unavailable: try again shortly".into())
        );
    }

    #[test]
    fn the_event_log_and_an_unreadable_body_have_their_own_words() {
        assert_eq!(
            Rejection::from(EventLogUnavailable)
                .write(Dialect::Plain)
                .body(),
            &ErrorBody::Plain("Event log unavailable: try again shortly".into())
        );
        let unreadable = Rejection::from(UnreadableBody).write(Dialect::JsonRpc(Value::Null));
        assert_eq!(
            unreadable,
            HttpError::invalid_request(
                StatusCode::BAD_REQUEST,
                Value::Null,
                "Could not read the request body"
            )
        );
    }

    #[test]
    fn a_core_refusal_keeps_its_error_object_and_the_status_of_its_class() {
        let error = RpcError::new(RpcError::SERVER_BUSY, "Too many calls running", None);
        let written =
            Rejection::of_post(Class::Unavailable, error.clone()).write(Dialect::JsonRpc(json!(3)));
        assert_eq!(
            written,
            HttpError::rpc(StatusCode::SERVICE_UNAVAILABLE, json!(3), error)
        );
    }
}
