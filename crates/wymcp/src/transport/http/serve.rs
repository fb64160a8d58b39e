//! Standalone serving: [`HttpServer`] and the [`serve`] one-liner, with connection limits
//! ([`ConnectionLimits`]) and graceful shutdown.

use std::future::Future;
use std::io;
use std::net::SocketAddr;

use axum::Router;
use tokio::net::{TcpListener, ToSocketAddrs};

use super::config::StreamableHttp;
use super::connections::{ConnectionLimits, serve_connections};
use super::service::StreamableHttpService;
use crate::serve::Server;

/// A bound listener and the MCP endpoint it serves at `/` (and `/mcp`), over HTTP/1.1 with
/// TCP_NODELAY, under [`ConnectionLimits`] (header, body and keep-alive idle timeouts, a cap
/// on open connections; [`connection_limits`](Self::connection_limits) replaces the defaults).
///
/// ```no_run
/// use wymcp::Server;
/// use wymcp::transport::http::{HttpServer, StreamableHttp};
///
/// # #[tokio::main] async fn main() -> std::io::Result<()> {
/// let server = Server::builder().name("demo").build().unwrap();
/// let http = HttpServer::bind("127.0.0.1:0", StreamableHttp::builder(server)).await?;
/// println!("listening on {}", http.local_addr()?);
/// http.run_until(async { let _ = tokio::signal::ctrl_c().await; }).await
/// # }
/// ```
#[derive(Debug)]
pub struct HttpServer {
    listener: TcpListener,
    service: StreamableHttpService,
    limits: ConnectionLimits,
}

impl HttpServer {
    /// Binds `addr` and builds the service, with the default [`ConnectionLimits`]. Unless set
    /// explicitly, the `Host` allowlist (DNS-rebinding protection) is on when the listener is
    /// bound to a loopback address and off otherwise: the public names of a server are not
    /// known to it. `Host` is parsed strictly and `Origin` validated either way.
    pub async fn bind(addr: impl ToSocketAddrs, builder: StreamableHttp) -> io::Result<Self> {
        let listener = TcpListener::bind(addr).await?;
        let mut builder = builder;
        if builder.settings().dns_rebinding_protection.is_none() {
            let loopback = listener.local_addr()?.ip().is_loopback();
            builder = builder.dns_rebinding_protection(loopback);
        }
        Ok(HttpServer {
            listener,
            service: builder.build(),
            limits: ConnectionLimits::default(),
        })
    }

    /// Serves connections under `limits` instead of the defaults.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use wymcp::Server;
    /// use wymcp::transport::http::{ConnectionLimits, HttpServer, StreamableHttp};
    ///
    /// # #[tokio::main] async fn main() -> std::io::Result<()> {
    /// let server = Server::builder().name("demo").build().unwrap();
    /// let http = HttpServer::bind("127.0.0.1:8080", StreamableHttp::builder(server))
    ///     .await?
    ///     .connection_limits(ConnectionLimits::new().max_connections(256));
    /// assert_eq!(http.limits().max_connections, 256);
    /// http.run().await
    /// # }
    /// ```
    #[must_use]
    pub fn connection_limits(mut self, limits: ConnectionLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The connection limits it serves under.
    pub fn limits(&self) -> &ConnectionLimits {
        &self.limits
    }

    /// The bound address (useful after binding port 0).
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The service (for example to [`push`](StreamableHttpService::push) to a session).
    pub fn service(&self) -> &StreamableHttpService {
        &self.service
    }

    /// Serves until `shutdown` completes, then stops accepting, closes the open SSE streams and
    /// idle connections, and lets in-flight requests finish.
    pub async fn run_until(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> io::Result<()> {
        let closer = self.service.clone();
        let mut app = Router::new();
        if let Some(metadata) = &self.service.config().protected_resource {
            app = app.merge(protected_resource_router("/mcp", metadata.clone()));
        }
        // `/mcp` is routed to the endpoint itself: `nest_service` would strip the prefix and
        // route a second time on every request (about 5 % of a call's work).
        let app = app
            .merge(self.service.endpoint_router("/mcp"))
            .fallback_service(self.service);
        let trusted = closer.config().trusted_proxies.clone();
        serve_connections(
            self.listener,
            app,
            (&self.limits, &trusted),
            shutdown,
            move || {
                closer.close_streams();
            },
        )
        .await;
        Ok(())
    }

    /// Serves until Ctrl-C.
    pub async fn run(self) -> io::Result<()> {
        self.run_until(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
    }
}

/// A router serving RFC 9728 protected-resource metadata for an MCP endpoint mounted at
/// `mount` (such as `"/mcp"`): at the path-aware well-known URL
/// `/.well-known/oauth-protected-resource<mount>` and at `/.well-known/oauth-protected-resource`.
/// Merge it at the root of your application.
///
/// ```
/// use serde_json::json;
///
/// let router: axum::Router = wymcp::transport::http::protected_resource_router(
///     "/mcp",
///     json!({"resource": "https://mcp.example.com/mcp",
///            "authorization_servers": ["https://auth.example.com"]}),
/// );
/// # let _ = router;
/// ```
pub fn protected_resource_router(mount: &str, metadata: serde_json::Value) -> Router {
    let body = metadata.to_string();
    let handler = move || {
        let body = body.clone();
        async move {
            (
                [(axum::http::header::CONTENT_TYPE, "application/json")],
                body,
            )
        }
    };
    let base = "/.well-known/oauth-protected-resource";
    let mount = mount.trim_end_matches('/');
    let mut router = Router::new().route(base, axum::routing::get(handler.clone()));
    if !mount.is_empty() {
        router = router.route(&format!("{base}{mount}"), axum::routing::get(handler));
    }
    router
}

/// Serves `server` over Streamable HTTP at `addr` (endpoint `/mcp`, also `/`) with the default
/// settings, until Ctrl-C.
///
/// ```no_run
/// # #[tokio::main] async fn main() -> std::io::Result<()> {
/// let server = wymcp::Server::builder().name("demo").build().unwrap();
/// wymcp::transport::http::serve(server, "127.0.0.1:8080").await
/// # }
/// ```
pub async fn serve(server: Server, addr: impl ToSocketAddrs) -> io::Result<()> {
    HttpServer::bind(addr, StreamableHttp::builder(server))
        .await?
        .run()
        .await
}
