//! [`StreamableHttpService`]: the tower `Service` serving one MCP endpoint, and the wire
//! checks every route runs before touching session state.

use std::convert::Infallible;
use std::sync::{Arc, Weak};
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::HttpBody;
use axum::extract::{Request, State as AxumState};
use axum::http::header::AsHeaderName;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, future::RouteFuture};
use bytes::Bytes;
use futures_util::future::{BoxFuture, Either};
use serde_json::Value;

use super::auth::{Authenticate, Identity, challenge};
use super::config::{HttpConfig, StreamableHttp};
use super::error::HttpError;
use super::events::EventLog;
use super::hooks::{EndReason, SessionHooks};
use super::session::{Live, SessionRecord, SessionStore, StoreError, StreamEvent};
use super::{delete, get, post};
use crate::resource::ServerNotification;
use crate::session::SessionHandle;
use crate::{Delivery, Notifier, Server};
use tokio::sync::broadcast;

/// The `Mcp-Session-Id` header.
pub const SESSION_HEADER: &str = "mcp-session-id";
/// The `MCP-Protocol-Version` header.
pub const VERSION_HEADER: &str = "mcp-protocol-version";
/// [`SESSION_HEADER`] as a header name: a lookup by `HeaderName` skips parsing the name,
/// which a lookup by `&str` does on every request.
pub(crate) static SESSION_NAME: HeaderName = HeaderName::from_static(SESSION_HEADER);
/// [`VERSION_HEADER`] as a header name.
pub(crate) static VERSION_NAME: HeaderName = HeaderName::from_static(VERSION_HEADER);
/// The stream key of a session's GET stream in event ids.
pub(crate) const GET_STREAM: &str = "get";

/// Shared by every request of one service.
pub(crate) struct State {
    pub(crate) server: Server,
    pub(crate) config: HttpConfig,
    pub(crate) store: Arc<dyn SessionStore>,
    pub(crate) events: Arc<dyn EventLog>,
    pub(crate) auth: Option<Arc<dyn Authenticate>>,
    pub(crate) auth_module: &'static str,
    pub(crate) hooks: Option<Arc<dyn SessionHooks>>,
    pub(crate) live: Live,
    /// The open `subscriptions/listen` streams (2026-07-28).
    pub(crate) listeners: super::listen::Listeners,
}

impl State {
    /// The session's live handle on this node; its standalone stream is the GET stream.
    pub(crate) fn handle(self: &Arc<Self>, record: &SessionRecord) -> SessionHandle {
        let weak = Arc::downgrade(self);
        let session = record.id.clone();
        self.live.handle(record, &self.server, move || {
            Notifier::with_delivery(GET_STREAM, move |message: Value| match weak.upgrade() {
                Some(state) => state.live.deliver(
                    &session,
                    StreamEvent {
                        id: None,
                        data: message.to_string(),
                    },
                ),
                None => Delivery::NoStream,
            })
        })
    }

    /// Ends a session everywhere: record, events, live things.
    pub(crate) async fn end_session(&self, id: &str) -> Result<bool, StoreError> {
        let found = self.store.remove(id).await?;
        self.live.end_session(id);
        self.server.forget_session(Some(id));
        self.events.remove_session(id).await?;
        if found && let Some(hooks) = &self.hooks {
            hooks.on_end(id, EndReason::Deleted).await;
        }
        Ok(found)
    }
}

/// The Streamable HTTP endpoint as a tower `Service` (cheap to clone).
///
/// Mount it in an axum application with `Router::nest_service("/mcp", service)`, or serve it
/// alone with [`HttpServer`](super::HttpServer) / [`serve`](super::serve). Build it with
/// [`StreamableHttp::builder`].
#[derive(Clone)]
pub struct StreamableHttpService {
    state: Arc<State>,
    router: Router,
}

impl std::fmt::Debug for StreamableHttpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamableHttpService")
            .field("config", &self.state.config)
            .finish_non_exhaustive()
    }
}

impl StreamableHttpService {
    pub(crate) fn new(builder: StreamableHttp) -> Self {
        let state = Arc::new(State {
            server: builder.server,
            config: builder.config,
            store: builder.store,
            events: builder.events,
            auth: builder.auth,
            auth_module: builder.auth_module,
            hooks: builder.hooks,
            live: Live::default(),
            listeners: super::listen::Listeners::default(),
        });
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(reap(Arc::downgrade(&state)));
            handle.spawn(drain(Arc::downgrade(&state), state.server.notifications()));
        }
        let router = Router::new()
            .route("/", any(route))
            .fallback(not_found)
            .with_state(state.clone());
        StreamableHttpService { state, router }
    }

    /// The endpoint routed at `path` and `path/` directly, as `nest_service(path, ..)` serves
    /// it there, without the nested router's second routing pass.
    pub(crate) fn endpoint_router(&self, path: &str) -> Router {
        Router::new()
            .route(path, any(route))
            .route(&format!("{path}/"), any(route))
            .with_state(self.state.clone())
    }

    /// The settings the service runs with.
    pub fn config(&self) -> &HttpConfig {
        &self.state.config
    }

    /// The service as an axum [`Router`] (to `merge` or `nest`).
    pub fn into_router(self) -> Router {
        self.router
    }

    /// Sends a JSON-RPC message (a notification, typically) to a session's GET stream. The
    /// event is logged first, so a client that reconnects with `Last-Event-ID` gets it even
    /// when no stream is open now. Answers whether a stream took it.
    pub async fn push(&self, session_id: &str, message: &Value) -> Result<bool, StoreError> {
        let data = message.to_string();
        let id = self
            .state
            .events
            .append(session_id, GET_STREAM, data.clone())
            .await?;
        Ok(self
            .state
            .live
            .send(session_id, StreamEvent { id: Some(id), data }))
    }

    /// The live session `session_id` (on this node): register and unregister runtime tools,
    /// read its tool list. `None` when there is no such session.
    pub async fn session(&self, session_id: &str) -> Result<Option<SessionHandle>, StoreError> {
        if let Some(handle) = self.state.live.existing_handle(session_id) {
            return Ok(Some(handle));
        }
        let record = self
            .state
            .store
            .load(session_id, self.state.config.session_ttl)
            .await?;
        Ok(record.map(|record| self.state.handle(&record)))
    }

    /// Ends every open GET stream, and every open `subscriptions/listen` stream with its
    /// graceful-closure response, so a graceful shutdown is not held open by them.
    pub fn close_streams(&self) {
        self.state.live.close_streams();
        self.state.listeners.close();
    }

    /// Ends a session as DELETE would; `false` when there was none.
    pub async fn end_session(&self, session_id: &str) -> Result<bool, StoreError> {
        self.state.end_session(session_id).await
    }
}

impl<B> tower::Service<axum::http::Request<B>> for StreamableHttpService
where
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = RouteFuture<Infallible>;

    fn poll_ready(&mut self, _cx: &mut TaskContext<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: axum::http::Request<B>) -> Self::Future {
        tower::Service::call(&mut self.router, req)
    }
}

/// Removes idle sessions and ends their live things, until the service is dropped.
async fn reap(state: Weak<State>) {
    let period = match state.upgrade() {
        Some(s) => s
            .config
            .session_ttl
            .clamp(Duration::from_millis(10), Duration::from_secs(60)),
        None => return,
    };
    let mut ticker = tokio::time::interval(period);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        let Some(state) = state.upgrade() else { return };
        match state.store.reap(state.config.session_ttl).await {
            Ok(gone) => {
                for id in gone {
                    state.live.end_session(&id);
                    state.server.forget_session(Some(&id));
                    if let Err(err) = state.events.remove_session(&id).await {
                        tracing::warn!(%err, "could not forget the events of an expired session");
                    }
                    if let Some(hooks) = &state.hooks {
                        hooks.on_end(&id, EndReason::Expired).await;
                    }
                    tracing::info!(
                        name: "wymcp.session.expired",
                        session_id = id.as_str(),
                        "MCP session expired"
                    );
                }
            }
            Err(err) => tracing::warn!(%err, "session reaper failed"),
        }
    }
}

/// Delivers the server's notifications (`notifications/resources/updated`, `list_changed`)
/// to the GET stream of the session they name, or of every session live on this node when
/// they name none; logged first, so a client reconnecting with `Last-Event-ID` still gets
/// them. Runs until the service or the server is dropped.
async fn drain(state: Weak<State>, mut notifications: broadcast::Receiver<ServerNotification>) {
    loop {
        let notification = match notifications.recv().await {
            Ok(notification) => notification,
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                tracing::warn!(missed, "server notifications dropped: the transport lagged");
                continue;
            }
            Err(broadcast::error::RecvError::Closed) => return,
        };
        let Some(state) = state.upgrade() else { return };
        let sessions = match &notification.session_id {
            Some(id) if state.live.existing_handle(id).is_some() => vec![id.clone()],
            // A session another node (or no node) serves.
            Some(_) => Vec::new(),
            None => state.live.session_ids(),
        };
        let data = notification.message.to_string();
        for session in sessions {
            match state
                .events
                .append(&session, GET_STREAM, data.clone())
                .await
            {
                Ok(id) => {
                    state.live.send(
                        &session,
                        StreamEvent {
                            id: Some(id),
                            data: data.clone(),
                        },
                    );
                }
                Err(err) => tracing::warn!(%err, "SSE event log failed"),
            }
        }
    }
}

/// The endpoint's handler. Not an `async fn`: the router boxes the future of every request, and
/// an `async fn` around `post::handle` would add its own copy of the request to that box. A POST
/// runs `post::handle`'s future as it is; GET and DELETE (rarer, and GET's stream outlives
/// its request anyway) run boxed.
fn route(
    AxumState(state): AxumState<Arc<State>>,
    req: Request,
) -> Either<impl Future<Output = Response>, BoxFuture<'static, Response>> {
    match *req.method() {
        Method::POST => Either::Left(post::handle(state, req)),
        Method::GET => Either::Right(Box::pin(get::handle(state, req))),
        Method::DELETE => Either::Right(Box::pin(delete::handle(state, req))),
        _ => {
            let refusal = (
                StatusCode::METHOD_NOT_ALLOWED,
                [(header::ALLOW, "GET, POST, DELETE")],
            )
                .into_response();
            Either::Right(Box::pin(std::future::ready(refusal)))
        }
    }
}

async fn not_found() -> Response {
    (StatusCode::NOT_FOUND, "Not found").into_response()
}

/// A failed check: status and message (the route picks the dialect), and the
/// `WWW-Authenticate` challenge of a 401.
#[derive(Debug)]
pub(crate) struct WireRefusal {
    pub(crate) status: StatusCode,
    pub(crate) message: String,
    pub(crate) challenge: Option<axum::http::HeaderValue>,
    /// Set when auth refused the request: what the route reports as `wymcp.auth.reject` or
    /// `wymcp.auth.error` (see [`WireRefusal::report_auth`]).
    pub(crate) auth: Option<AuthFailure>,
}

/// Why auth refused a request, for the auth events.
#[derive(Debug)]
pub(crate) struct AuthFailure {
    pub(crate) auth_module: &'static str,
    /// `None`: the hook answered a refusal; `Some(message)`: the hook panicked.
    pub(crate) panic: Option<String>,
    pub(crate) reason: String,
}

impl From<(StatusCode, String)> for WireRefusal {
    fn from((status, message): (StatusCode, String)) -> Self {
        WireRefusal {
            status,
            message,
            challenge: None,
            auth: None,
        }
    }
}

impl WireRefusal {
    /// Emits `wymcp.auth.reject` (or `wymcp.auth.error` for a panicking hook) when auth
    /// refused the request; `request_id` and `method` are the body's, when the route read one.
    pub(crate) fn report_auth(
        &self,
        http_method: &str,
        request_id: Option<&Value>,
        method: Option<&str>,
    ) {
        let Some(failure) = &self.auth else { return };
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
                error = %wymcp_core::bound::echo(error),
                request_id = request_id.as_deref(),
                method = method.as_deref(),
                http_method,
                "the auth hook panicked"
            ),
        }
    }

    /// In the plain-JSON dialect (GET, DELETE).
    pub(crate) fn plain(self) -> HttpError {
        let err = HttpError::plain(self.status, self.message);
        match self.challenge {
            Some(c) => err.with_challenge(c),
            None => err,
        }
    }

    /// In the JSON-RPC dialect (POST).
    pub(crate) fn rpc(self, id: Value) -> HttpError {
        let err = HttpError::invalid_request(self.status, id, self.message);
        match self.challenge {
            Some(c) => err.with_challenge(c),
            None => err,
        }
    }
}

/// Runs the auth hook with a panic inside it contained: a panicking hook refuses the request
/// with `Authentication error` (and an error log) instead of taking the connection down.
async fn authenticate_contained(
    auth: &dyn super::auth::Authenticate,
    headers: &HeaderMap,
) -> Result<Identity, (super::auth::AuthRefusal, Option<String>)> {
    use futures_util::FutureExt;
    // A hook may panic while making its future as well as while running it.
    let answer =
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| auth.authenticate(headers)))
        {
            Ok(future) => std::panic::AssertUnwindSafe(future).catch_unwind().await,
            Err(payload) => Err(payload),
        };
    match answer {
        Ok(answer) => answer.map_err(|refusal| (refusal, None)),
        Err(payload) => {
            let message = crate::dispatch::fault::Fault::from_panic(payload.as_ref())
                .whole_message()
                .to_owned();
            Err((
                super::auth::AuthRefusal("Authentication error".to_owned()),
                Some(message),
            ))
        }
    }
}

/// The wire checks, in order, before any session state is touched: Origin and Host
/// (DNS-rebinding protection), auth, then the singleton headers. Answers the caller's identity
/// when auth is configured.
pub(crate) async fn wire_checks(
    state: &State,
    headers: &HeaderMap,
) -> Result<Option<Identity>, WireRefusal> {
    check_origin(&state.config, headers).map_err(WireRefusal::from)?;
    check_host(&state.config, headers).map_err(WireRefusal::from)?;
    let identity = match &state.auth {
        None => None,
        Some(auth) => match authenticate_contained(auth.as_ref(), headers).await {
            Ok(identity) => Some(identity),
            Err((refusal, panic)) => {
                // Credentials were presented and refused (not a hook fault): RFC 6750's
                // `error="invalid_token"`.
                let invalid_token =
                    panic.is_none() && headers.contains_key(axum::http::header::AUTHORIZATION);
                return Err(WireRefusal {
                    status: StatusCode::UNAUTHORIZED,
                    auth: Some(AuthFailure {
                        auth_module: state.auth_module,
                        panic,
                        reason: refusal.0.clone(),
                    }),
                    message: refusal.0,
                    challenge: Some(challenge(&state.config.www_authenticate, invalid_token)),
                });
            }
        },
    };
    for (name, label) in [
        (&SESSION_NAME, "Mcp-Session-Id"),
        (&VERSION_NAME, "MCP-Protocol-Version"),
    ] {
        if headers.get_all(name).iter().nth(1).is_some() {
            return Err(WireRefusal::from((
                StatusCode::BAD_REQUEST,
                format!("Duplicated {label} header. Send exactly one {label} header."),
            )));
        }
    }
    Ok(identity)
}

/// Whether a request presenting `identity` may use the session `record`.
pub(crate) fn owns(record: &super::SessionRecord, identity: Option<&Identity>) -> bool {
    match (&record.subject, identity) {
        (None, _) => true,
        (Some(subject), Some(identity)) => subject == identity.subject(),
        (Some(_), None) => false,
    }
}

fn protection_on(config: &HttpConfig) -> bool {
    config.dns_rebinding_protection.unwrap_or(true)
}

const LOOPBACK_HOSTS: [&str; 4] = ["localhost", "127.0.0.1", "[::1]", "::1"];

/// The host name of an authority (`host[:port]`), port removed, as written: compare it with
/// `eq_ignore_ascii_case` (this runs on every request, so it allocates nothing).
fn host_name(authority: &str) -> &str {
    let authority = authority.trim();
    if authority.starts_with('[') {
        return match authority.find(']') {
            Some(end) => &authority[..=end],
            None => authority,
        };
    }
    match authority.rsplit_once(':') {
        Some((host, port)) if port.chars().all(|c| c.is_ascii_digit()) => host,
        _ => authority,
    }
}

fn host_allowed(config: &HttpConfig, host: &str) -> bool {
    match &config.allowed_hosts {
        Some(list) => list.iter().any(|h| host_name(h).eq_ignore_ascii_case(host)),
        None => LOOPBACK_HOSTS.iter().any(|h| h.eq_ignore_ascii_case(host)),
    }
}

fn check_origin(config: &HttpConfig, headers: &HeaderMap) -> Result<(), (StatusCode, String)> {
    let values: Vec<_> = headers.get_all(header::ORIGIN).iter().collect();
    if let Some(allowed) = &config.allowed_origins {
        if values.len() > 1 {
            return Err((
                StatusCode::BAD_REQUEST,
                "Duplicated Origin header. Send exactly one Origin header.".to_owned(),
            ));
        }
        if let Some(origin) = values.first() {
            let origin = String::from_utf8_lossy(origin.as_bytes());
            if !allowed.iter().any(|a| *a == origin) {
                return Err(origin_refusal(&origin));
            }
        }
        return Ok(());
    }
    if !protection_on(config) {
        return Ok(());
    }
    for origin in values {
        let origin = String::from_utf8_lossy(origin.as_bytes());
        let authority = origin
            .split_once("://")
            .map(|(_, rest)| rest.split('/').next().unwrap_or_default())
            .unwrap_or_default();
        if authority.is_empty() || !host_allowed(config, host_name(authority)) {
            return Err(origin_refusal(&origin));
        }
    }
    Ok(())
}

fn origin_refusal(origin: &str) -> (StatusCode, String) {
    (
        StatusCode::FORBIDDEN,
        format!("Origin not allowed: {}", wymcp_core::bound::echo(origin)),
    )
}

fn check_host(config: &HttpConfig, headers: &HeaderMap) -> Result<(), (StatusCode, String)> {
    if !protection_on(config) {
        return Ok(());
    }
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(host_name);
    match host {
        Some(host) if host_allowed(config, host) => Ok(()),
        Some(host) => Err((
            StatusCode::FORBIDDEN,
            format!(
                "Host not allowed: {}",
                wymcp_core::bound::echo(&host.to_ascii_lowercase())
            ),
        )),
        None => Err((StatusCode::FORBIDDEN, "Missing Host header".to_owned())),
    }
}

/// Whether an `Accept` header admits `wanted` (absent header: yes).
pub(crate) fn accepts(headers: &HeaderMap, wanted: &str) -> bool {
    let mut seen = false;
    for line in headers.get_all(header::ACCEPT) {
        seen = true;
        if media_ranges(line).any(|range| range_admits(range, wanted.as_bytes())) {
            return true;
        }
    }
    !seen
}

/// The media ranges one `Accept` header line lists, parameters cut and trimmed, read over
/// bytes in place (every POST reads them: nothing is allocated, and a byte loop beats
/// `str::split`'s memchr per piece on a line this short). A line that is not visible ASCII
/// lists none.
pub(crate) fn media_ranges(line: &HeaderValue) -> impl Iterator<Item = &[u8]> {
    line.to_str()
        .ok()
        .into_iter()
        .flat_map(|line| line.as_bytes().split(|&b| b == b','))
        .map(|range| {
            range
                .split(|&b| b == b';')
                .next()
                .unwrap_or_default()
                .trim_ascii()
        })
}

/// Whether a media range admits `wanted` (`type/subtype`): by name, as `*/*`, or as `type/*`,
/// case-insensitively.
pub(crate) fn range_admits(range: &[u8], wanted: &[u8]) -> bool {
    range.eq_ignore_ascii_case(wanted)
        || range == b"*/*"
        || range.strip_suffix(b"/*").is_some_and(|kind| {
            wanted
                .split(|&b| b == b'/')
                .next()
                .is_some_and(|wanted_kind| wanted_kind.eq_ignore_ascii_case(kind))
        })
}

/// A response streaming `body` as Server-Sent Events: `text/event-stream`, not cached, and
/// `X-Accel-Buffering: no` so a reverse proxy (nginx) passes each event on as it is written.
pub(crate) fn sse_response<S>(body: S) -> Response
where
    S: futures_util::Stream<Item = Result<bytes::Bytes, std::convert::Infallible>> + Send + 'static,
{
    let mut response = Response::new(axum::body::Body::from_stream(body));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(
        header::CACHE_CONTROL,
        axum::http::HeaderValue::from_static("no-cache"),
    );
    headers.insert(
        "x-accel-buffering",
        axum::http::HeaderValue::from_static("no"),
    );
    response
}

/// The single value of a header, as text.
pub(crate) fn header_str(headers: &HeaderMap, name: impl AsHeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Plain-JSON refusal for GET and DELETE.
pub(crate) fn plain_refusal(refusal: impl Into<WireRefusal>) -> Response {
    refusal.into().plain().into_response()
}

#[cfg(test)]
mod tests {
    use axum::http::{HeaderMap, HeaderValue, header};

    use super::{accepts, range_admits};

    #[test]
    fn a_range_admits_by_name_by_wildcard_and_by_its_type() {
        let wanted = b"text/event-stream";
        for range in [
            &b"text/event-stream"[..],
            b"TEXT/Event-Stream",
            b"*/*",
            b"text/*",
        ] {
            assert!(range_admits(range, wanted), "{range:?}");
        }
        for range in [
            &b"application/*"[..],
            b"text/plain",
            b"text/event-streams",
            b"",
        ] {
            assert!(!range_admits(range, wanted), "{range:?}");
        }
    }

    #[test]
    fn accepts_reads_every_line_and_admits_a_request_without_the_header() {
        let mut headers = HeaderMap::new();
        assert!(accepts(&headers, "text/event-stream"));
        headers.append(header::ACCEPT, HeaderValue::from_static("application/json"));
        assert!(!accepts(&headers, "text/event-stream"));
        headers.append(header::ACCEPT, HeaderValue::from_static("text/*;q=0.1"));
        assert!(accepts(&headers, "text/event-stream"));
    }
}
