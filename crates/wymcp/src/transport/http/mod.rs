//! The Streamable HTTP transport (MCP 2025-03-26, 2025-06-18, 2025-11-25) with sessions, and
//! the stateless era (2026-07-28) on the same endpoint, decided per request.
//!
//! One endpoint answers POST (JSON-RPC messages), GET (the session's SSE stream) and DELETE
//! (end the session); GET and DELETE answer 405 to the stateless era, whose long-lived stream
//! is a POST `subscriptions/listen` answered as SSE (`docs/subscriptions.md`). Build a [`StreamableHttpService`] with [`StreamableHttp::builder`] and
//! mount it in any axum application, or serve it alone:
//!
//! ```no_run
//! use wymcp::Server;
//! use wymcp::transport::http::StreamableHttp;
//!
//! # #[tokio::main] async fn main() -> std::io::Result<()> {
//! let server = Server::builder().name("demo").build().unwrap();
//! let app = axum::Router::new().nest_service("/mcp", StreamableHttp::builder(server).build());
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! axum::serve(listener, app).await
//! # }
//! ```
//!
//! Sessions are data ([`SessionRecord`](crate::backend::SessionRecord)) kept behind a
//! [`SessionStore`](crate::backend::SessionStore) (in memory by default); SSE events go through
//! an [`EventLog`](crate::backend::EventLog). Running calls and open streams stay on the
//! node that owns them.

mod accept;
mod auth;
mod authority;
mod call;
mod card;
mod checks;
mod config;
mod connections;
mod delete;
mod error;
mod forwarded;
mod framed;
mod get;
mod headers;
#[cfg(feature = "jwt")]
pub mod introspection;
#[cfg(feature = "jwt")]
pub mod jwt;
mod listen;
mod post;
mod rejection;
mod serve;
mod service;
mod sse;
mod state;

pub use crate::serve::{EndReason, SessionHooks, SessionStart};
pub use auth::{AuthRefusal, Authenticate, BearerAuth};
pub use config::{
    DEFAULT_BODY_LIMIT, DEFAULT_KEEPALIVE, DEFAULT_MAX_GET_STREAMS_PER_CLIENT,
    DEFAULT_MAX_LISTEN_STREAMS, DEFAULT_MAX_LISTEN_STREAMS_PER_CLIENT, DEFAULT_MAX_SESSIONS,
    DEFAULT_MAX_STREAM_QUEUE_BYTES, DEFAULT_SESSION_TTL, HttpConfig, StreamableHttp,
};
pub use connections::{
    ConnectionLimits, DEFAULT_BODY_DEADLINE, DEFAULT_BODY_READ_TIMEOUT,
    DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
};
pub use error::{ErrorBody, HttpError};
pub use headers::{SESSION_HEADER, VERSION_HEADER};
pub use serve::{HttpServer, protected_resource_router, serve};
pub use service::StreamableHttpService;
