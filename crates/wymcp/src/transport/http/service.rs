//! [`StreamableHttpService`]: the tower `Service` serving one MCP endpoint: its state, the
//! routes, and the tasks that run beside the requests (the idle-session reaper, the delivery
//! of the server's notifications to GET streams).

use std::convert::Infallible;
use std::sync::{Arc, Weak};
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::HttpBody;
use axum::extract::{Request, State as AxumState};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, future::RouteFuture};
use bytes::Bytes;
use futures_util::StreamExt as _;
use futures_util::future::{BoxFuture, Either};
use futures_util::stream::BoxStream;
use serde_json::Value;
use tokio::sync::broadcast;

use super::cluster::Elsewhere;
use super::config::{HttpConfig, StreamableHttp};
use super::events::EventLog;
use super::rejection::{Dialect, MethodNotAllowed, Rejection};
use super::state::State;
use super::streams::{GET_STREAM, StreamEvent, Streams};
use super::{delete, get, post};
use crate::resource::ServerNotification;
use crate::serve::{Cluster, Core, EndReason, Settings};
use crate::session::{BusMessage, SessionHandle, StoreError};

/// The Streamable HTTP endpoint as a tower `Service` (cheap to clone).
///
/// Mount it in an axum application with `Router::nest_service("/mcp", service)`, or serve it
/// alone with [`HttpServer`](super::HttpServer) / [`serve`](super::serve). Build it with
/// [`StreamableHttp::builder`].
#[derive(Clone)]
pub struct StreamableHttpService {
    state: Arc<State>,
    router: Router,
    /// The Server Card, served at `<endpoint>/server-card`.
    card: Arc<super::card::CardDocument>,
}

impl std::fmt::Debug for StreamableHttpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamableHttpService")
            .field("config", &self.state.config)
            .finish_non_exhaustive()
    }
}

impl StreamableHttp {
    /// Builds the service. Inside a Tokio runtime, also starts the idle-session reaper.
    pub fn build(self) -> StreamableHttpService {
        StreamableHttpService::new(self)
    }
}

impl StreamableHttpService {
    fn new(builder: StreamableHttp) -> Self {
        let streams = Arc::new(Streams::default());
        let (cluster, elsewhere) = cluster_of(&builder);
        let mut config = builder.config;
        publish_scopes(&mut config, &builder.server);
        if let (Some(auth), Some(resource)) = (
            &builder.auth,
            config
                .protected_resource
                .as_ref()
                .and_then(|metadata| metadata.get("resource"))
                .and_then(serde_json::Value::as_str),
        ) {
            auth.set_resource(resource);
        }
        let settings = Settings {
            max_sessions: config.max_sessions,
            session_ttl: config.session_ttl,
            strict_version_header: config.strict_version_header,
            cache_hints: config.cache_hints.clone(),
            one_session: false,
            transport: crate::context::TransportKind::Http,
        };
        let standalone = super::state::get_stream(Arc::downgrade(&streams), elsewhere.clone());
        let core = Core::new(
            builder.server,
            builder.store,
            builder.hooks,
            settings,
            standalone,
            false,
            cluster,
        );
        let state = Arc::new(State {
            core,
            config,
            events: builder.events,
            auth: builder.auth,
            auth_module: builder.auth_module,
            streams,
            listeners: super::streams::Listeners::default(),
            elsewhere,
        });
        start_tasks(&state);
        let card = Arc::new(super::card::CardDocument::new(state.core.server()));
        let router = Router::new()
            .route("/", any(route))
            .fallback(not_found)
            .with_state(state.clone())
            .merge(super::card::router("/server-card", card.clone()));
        StreamableHttpService {
            state,
            router,
            card,
        }
    }

    /// The endpoint routed at `path` and `path/` directly, as `nest_service(path, ..)` serves
    /// it there, without the nested router's second routing pass.
    pub(crate) fn endpoint_router(&self, path: &str) -> Router {
        Router::new()
            .route(path, any(route))
            .route(&format!("{path}/"), any(route))
            .with_state(self.state.clone())
            .merge(super::card::router(
                &format!("{path}/server-card"),
                self.card.clone(),
            ))
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
            .streams
            .send(session_id, StreamEvent { id: Some(id), data }))
    }

    /// The live session `session_id` (on this node): register and unregister runtime tools,
    /// read its tool list. `None` when there is no such session.
    pub async fn session(&self, session_id: &str) -> Result<Option<SessionHandle>, StoreError> {
        self.state.core.session_handle(session_id).await
    }

    /// Ends every open GET stream, and every open `subscriptions/listen` stream with its
    /// graceful-closure response, so a graceful shutdown is not held open by them.
    pub fn close_streams(&self) {
        self.state.streams.close_streams();
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

/// Takes what other nodes send, until the service is dropped or the bus ends.
pub(crate) async fn take(state: Weak<State>, mut messages: BoxStream<'static, BusMessage>) {
    while let Some(message) = messages.next().await {
        let Some(state) = state.upgrade() else { return };
        if let BusMessage::Ended { session } = &message {
            state.streams.end_session(session);
        }
        if state.core.on_bus(&message) {
            continue;
        }
        if let BusMessage::Event {
            session,
            stream,
            id,
            data,
        } = message
        {
            super::cluster::deliver(
                &state.streams,
                &session,
                &stream,
                StreamEvent { id: Some(id), data },
            );
        }
    }
}

/// This node among the others of `builder`'s bus, and how its stream events reach them.
fn cluster_of(builder: &StreamableHttp) -> (Cluster, Option<Elsewhere>) {
    let elsewhere = builder.bus.as_ref().map(|bus| Elsewhere {
        node: builder.node.clone(),
        bus: bus.clone(),
        events: builder.events.clone(),
    });
    let cluster = Cluster {
        node: builder.node.clone(),
        bus: builder.bus.clone(),
    };
    (cluster, elsewhere)
}

/// Inside a Tokio runtime, starts what runs beside the requests: the reaper, the delivery of
/// the server's notifications and, with other nodes, the taking of what they send.
fn start_tasks(state: &Arc<State>) {
    let Ok(handle) = tokio::runtime::Handle::try_current() else {
        return;
    };
    handle.spawn(reap(Arc::downgrade(state)));
    let notifications = state.core.server().notifications();
    handle.spawn(drain(Arc::downgrade(state), notifications));
    if let Some(bus) = state.core.bus() {
        let messages = bus.subscribe(state.core.node());
        handle.spawn(take(Arc::downgrade(state), messages));
    }
}

/// Removes idle sessions and ends their live things, until the service is dropped.
async fn reap(state: Weak<State>) {
    // Twice per TTL at least: the reaper restarts the idle timer of a session running a call
    // (see `Core::reap`), which must happen before that session's TTL is up.
    let period = match state.upgrade() {
        Some(s) => {
            (s.config.session_ttl / 2).clamp(Duration::from_millis(10), Duration::from_secs(60))
        }
        None => return,
    };
    let mut ticker = tokio::time::interval(period);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        let Some(state) = state.upgrade() else { return };
        match state.core.reap().await {
            Ok(gone) => {
                for id in gone {
                    state.streams.end_session(&id);
                    if let Err(err) = state.events.remove_session(&id).await {
                        tracing::warn!(%err, "could not forget the events of an expired session");
                    }
                    state.core.ended(&id, EndReason::Expired).await;
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
/// them. With other nodes, a notification naming a session whose GET stream another node
/// holds (or one this node never served) travels on the bus to it; one naming none goes to the streams this node holds (every
/// node hears the notification: `Server::notify_*` relays it). Runs until the service or the
/// server is dropped.
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
        let live = state.core.live();
        let sessions = match &notification.session_id {
            Some(id) if live.existing(id).is_some() => vec![id.clone()],
            // A session this node has not served, named by the shared subscription store:
            // another node may hold its stream.
            Some(id) if state.elsewhere.is_some() => vec![id.clone()],
            // A session no node serves.
            Some(_) => Vec::new(),
            None if state.elsewhere.is_some() => state.streams.sessions(),
            None => live.ids(),
        };
        let data = notification.message.to_string();
        let named = notification.session_id.is_some();
        for session in sessions {
            let id = match state
                .events
                .append(&session, GET_STREAM, data.clone())
                .await
            {
                Ok(id) => id,
                Err(err) => {
                    tracing::warn!(%err, "SSE event log failed");
                    continue;
                }
            };
            let event = StreamEvent {
                id: Some(id.clone()),
                data: data.clone(),
            };
            if !state.streams.send(&session, event)
                && named
                && let Some(elsewhere) = &state.elsewhere
            {
                let stream = GET_STREAM.to_owned();
                elsewhere.send(session, stream, id, data.clone()).await;
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
            let refusal = Rejection::from(MethodNotAllowed).write(Dialect::Bare);
            Either::Right(Box::pin(std::future::ready(refusal.into_response())))
        }
    }
}

async fn not_found() -> Response {
    (StatusCode::NOT_FOUND, "Not found").into_response()
}

/// Adds `scopes_supported` (RFC 9728 §2), the scopes the server's tools declare, to the
/// protected-resource metadata when it has none of its own.
fn publish_scopes(config: &mut HttpConfig, server: &crate::Server) {
    let Some(serde_json::Value::Object(metadata)) = &mut config.protected_resource else {
        return;
    };
    let scopes = server.declared_scopes();
    if !scopes.is_empty() && !metadata.contains_key("scopes_supported") {
        metadata.insert("scopes_supported".into(), serde_json::json!(scopes));
    }
}
