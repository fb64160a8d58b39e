//! [`StreamableHttpService`]: the tower `Service` serving one MCP endpoint: its state and its
//! routes. What runs beside the requests (the reaper, the fan-out of the server's
//! notifications, the bus) is the sessions' ([`Sessions`](crate::serve::Sessions)).

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use axum::Router;
use axum::body::HttpBody;
use axum::extract::{Request, State as AxumState};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, future::RouteFuture};
use bytes::Bytes;
use futures_util::future::{BoxFuture, Either};
use serde_json::Value;

use super::config::{HttpConfig, StreamableHttp};
use super::get::GET_STREAM;
use super::rejection::{Dialect, MethodNotAllowed, Rejection};
use super::state::State;
use super::{delete, get, post};
use crate::serve::{Cluster, Core, SessionHandle, SessionsConfig, Settings, StoreError};

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
            strict_version_header: config.strict_version_header,
            cache_hints: config.cache_hints.clone(),
            one_session: false,
            transport: crate::serve::TransportKind::Http,
        };
        let sessions = SessionsConfig {
            store: builder.store,
            hooks: builder.hooks,
            events: Some(builder.events),
            ttl: config.session_ttl,
            max: config.max_sessions,
            standalone: GET_STREAM,
            cluster: Cluster {
                node: builder.node,
                bus: builder.bus,
            },
        };
        let core = Core::new(builder.server, sessions, settings, false);
        let state = Arc::new(State {
            core,
            config,
            auth: builder.auth,
            auth_module: builder.auth_module,
            listeners: crate::serve::Listeners::default(),
            get_streams: crate::serve::ClientCounts::default(),
        });
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
        self.state.core.sessions().push(session_id, message).await
    }

    /// The live session `session_id` (on this node): register and unregister runtime tools,
    /// read its tool list. `None` when there is no such session.
    pub async fn session(&self, session_id: &str) -> Result<Option<SessionHandle>, StoreError> {
        self.state.core.sessions().session_handle(session_id).await
    }

    /// Ends every open GET stream, and every open `subscriptions/listen` stream with its
    /// graceful-closure response, so a graceful shutdown is not held open by them.
    pub fn close_streams(&self) {
        self.state.core.sessions().streams().close_streams();
        self.state.listeners.close();
    }

    /// Ends a session as DELETE would; `false` when there was none.
    pub async fn end_session(&self, session_id: &str) -> Result<bool, StoreError> {
        let sessions = self.state.core.sessions();
        sessions
            .end(session_id, crate::serve::EndReason::Deleted)
            .await
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
fn publish_scopes(config: &mut HttpConfig, server: &crate::serve::Server) {
    let Some(serde_json::Value::Object(metadata)) = &mut config.protected_resource else {
        return;
    };
    let scopes = server.declared_scopes();
    if !scopes.is_empty() && !metadata.contains_key("scopes_supported") {
        metadata.insert("scopes_supported".into(), serde_json::json!(scopes));
    }
}
