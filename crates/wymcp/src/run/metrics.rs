//! `--metrics ADDR` (feature `otel-export`): the process's meter provider, OpenTelemetry's SDK
//! read by its Prometheus exporter, and the Prometheus text format served at
//! `http://ADDR/metrics` on a listener of its own (not the MCP endpoint's: a scraper needs
//! no MCP session, and the MCP endpoint's auth does not guard it; bind it where only the
//! scraper reaches it).
//!
//! What it serves is every metric recorded through OpenTelemetry's global meter provider:
//! wymcp's (`mcp.server.operation.duration`, …: docs/telemetry.md) and the program's own,
//! named as Prometheus names them (`mcp_server_operation_duration_seconds_bucket`,
//! `wymcp_server_refusals_total`, labels with `_` for `.`).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode, header};
use hyper_util::rt::{TokioIo, TokioTimer};
use prometheus::{Encoder as _, Registry, TextEncoder};

use super::RunError;

/// How long a scraper has to send its request's headers before its connection is closed.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// The endpoint, serving: its address (the port chosen when ADDR's was 0). Its reader goes to
/// the process's meter provider ([`Telemetry`](super::telemetry::Telemetry)); a pull
/// exporter, it has nothing to flush on the way out.
pub(super) struct MetricsEndpoint {
    pub(super) local: SocketAddr,
}

impl MetricsEndpoint {
    /// Serves on `addr`, in a task of its own, the metrics of the reader it returns.
    pub(super) async fn start(
        addr: SocketAddr,
    ) -> Result<(Self, opentelemetry_prometheus::PrometheusExporter), RunError> {
        let registry = Registry::new();
        let exporter = opentelemetry_prometheus::exporter()
            .with_registry(registry.clone())
            .build()
            .map_err(|error| RunError::Metrics {
                addr,
                source: std::io::Error::other(error.to_string()),
            })?;
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| RunError::Metrics { addr, source })?;
        let local = listener
            .local_addr()
            .map_err(|source| RunError::Metrics { addr, source })?;
        tokio::spawn(serve(listener, registry));
        Ok((MetricsEndpoint { local }, exporter))
    }
}

/// Answers scrapers until the runtime stops. An accept that fails (no file descriptor left)
/// is retried after a pause rather than ending the endpoint.
async fn serve(listener: tokio::net::TcpListener, registry: Registry) {
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(error) => {
                tracing::warn!("the metrics endpoint cannot accept a connection: {error}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let registry = registry.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let answer = answer(&request, &registry);
                async move { Ok::<_, Infallible>(answer) }
            });
            // A scraper that goes away mid-answer is no error of the server's.
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_READ_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// `GET /metrics`: the text format; any other path 404, another method 405.
fn answer(request: &Request<Incoming>, registry: &Registry) -> Response<Full<Bytes>> {
    let plain = |status: StatusCode, text: &str| {
        let mut response = Response::new(Full::new(Bytes::from(text.to_owned())));
        *response.status_mut() = status;
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        response
    };
    if request.uri().path() != "/metrics" {
        return plain(
            StatusCode::NOT_FOUND,
            "Not Found: metrics are at /metrics\n",
        );
    }
    if request.method() != Method::GET && request.method() != Method::HEAD {
        return plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "Method Not Allowed: GET /metrics\n",
        );
    }
    let encoder = TextEncoder::new();
    let mut text = Vec::new();
    if let Err(error) = encoder.encode(&registry.gather(), &mut text) {
        return plain(
            StatusCode::INTERNAL_SERVER_ERROR,
            &format!("the metrics could not be encoded: {error}\n"),
        );
    }
    let mut response = Response::new(Full::new(Bytes::from(text)));
    if let Ok(content_type) = header::HeaderValue::from_str(encoder.format_type()) {
        response
            .headers_mut()
            .insert(header::CONTENT_TYPE, content_type);
    }
    response
}
