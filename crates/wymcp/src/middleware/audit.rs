//! [`AuditLayer`]: one `tracing` span per operation, its fields named by OpenTelemetry's
//! semantic conventions for MCP where they have a name.

use std::task::{Context as TaskContext, Poll};
use std::time::Instant;

use futures_util::future::BoxFuture;
use tower::{BoxError, Layer, Service};
use tracing::Instrument;
use tracing::field::Empty;

use super::{Operation, Refusal, Response, TransportKind};

/// Wraps each operation in an INFO span `mcp.server.operation` (target `wymcp::audit`), named
/// for OpenTelemetry exporters `{method} {name}` (`otel.name`: `tools/call notes`,
/// `resources/read notes://guide`; the method alone when it names nothing). Its fields:
///
/// | field | value |
/// |---|---|
/// | `mcp.method.name` | `tools/call`, `resources/read`, … |
/// | `gen_ai.operation.name` | `execute_tool` (a `tools/call`) |
/// | `gen_ai.tool.name` | the tool (a `tools/call`) |
/// | `gen_ai.prompt.name` | the prompt (`prompts/get`) |
/// | `mcp.resource.uri` | the resource (`resources/read`, `resources/subscribe`, `resources/unsubscribe`) |
/// | `mcp.session.id` | the session (session era) |
/// | `mcp.protocol.version` | the revision |
/// | `jsonrpc.request.id` | the request id (bounded) |
/// | `network.transport` | `tcp` (HTTP) or `pipe` (stdio) |
/// | `network.protocol.name` | `http` over HTTP |
/// | `client.address` | the client's address, when known |
/// | `user.id` | the principal, when authenticated |
/// | `wymcp.action` | the action |
/// | `wymcp.outcome` | `ok`, `error` (the tool's, a gate's, a JSON-RPC error), `refused` (a layer's) |
/// | `error.type` | the refusal's `errorType`, `tool_error`, or a JSON-RPC error's code |
/// | `wymcp.duration_ms` | how long the call took, inner layers included |
///
/// Put it first (outermost) to see what inner layers refused.
///
/// ```
/// use wymcp::Server;
/// use wymcp::middleware::AuditLayer;
///
/// let server = Server::builder().layer(AuditLayer::new()).build().unwrap();
/// # let _ = server;
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct AuditLayer;

impl AuditLayer {
    /// The audit layer.
    pub fn new() -> Self {
        AuditLayer
    }
}

impl<S> Layer<S> for AuditLayer {
    type Service = Audit<S>;

    fn layer(&self, inner: S) -> Audit<S> {
        Audit { inner }
    }
}

/// The service of [`AuditLayer`].
#[derive(Debug, Clone)]
pub struct Audit<S> {
    inner: S,
}

impl<S> Service<Operation> for Audit<S>
where
    S: Service<Operation, Response = Response>,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<Response, BoxError>>;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, operation: Operation) -> Self::Future {
        let span = span_of(&operation);
        if span.is_disabled() {
            // No subscriber wants it: no clock, no record.
            let call = self.inner.call(operation);
            return Box::pin(async move { call.await.map_err(Into::into) });
        }
        let started = Instant::now();
        let call = {
            let _entered = span.enter();
            self.inner.call(operation)
        };
        let recorded = span.clone();
        Box::pin(
            async move {
                let result = call.await.map_err(Into::into);
                record(&recorded, &result, started);
                result
            }
            .instrument(span),
        )
    }
}

/// The operation's span, its request fields filled in.
fn span_of(operation: &Operation) -> tracing::Span {
    let ctx = operation.context();
    let (transport, protocol) = match operation.transport() {
        TransportKind::Http => (Some("tcp"), Some("http")),
        TransportKind::Stdio => (Some("pipe"), None),
        _ => (None, None),
    };
    let method = operation.method();
    let name = operation.name();
    // A URI or a prompt name is the client's text: recorded bounded, as the span name is.
    let bounded = || name.map(wymcp_core::bound::echo);
    let uri = bounded().filter(|_| method.starts_with("resources/"));
    let prompt = bounded().filter(|_| method == "prompts/get");
    // The values are computed only when the span is enabled.
    tracing::info_span!(
        target: "wymcp::audit",
        "mcp.server.operation",
        otel.name = %OtelName(method, name),
        otel.kind = "server",
        mcp.method.name = method,
        gen_ai.operation.name = operation.is_call().then_some("execute_tool"),
        gen_ai.tool.name = operation.tool(),
        gen_ai.prompt.name = prompt.as_deref(),
        mcp.resource.uri = uri.as_deref(),
        mcp.session.id = operation.session_id(),
        mcp.protocol.version = operation.protocol_version().as_str(),
        jsonrpc.request.id = ctx
            .request_id()
            .map(|id| wymcp_core::bound::echo(&id.to_string()))
            .as_deref(),
        network.transport = transport,
        network.protocol.name = protocol,
        client.address = operation.client_address().map(|a| a.to_string()),
        user.id = operation.principal(),
        wymcp.action = operation.action(),
        wymcp.outcome = Empty,
        error.type = Empty,
        wymcp.duration_ms = Empty,
    )
}

/// The span's name: `{method} {name}`, or the method alone.
struct OtelName<'a>(&'a str, Option<&'a str>);

impl std::fmt::Display for OtelName<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.1 {
            Some(name) => write!(f, "{} {}", self.0, wymcp_core::bound::echo(name)),
            None => f.write_str(self.0),
        }
    }
}

/// Records how the operation ended.
fn record(span: &tracing::Span, result: &Result<Response, BoxError>, started: Instant) {
    span.record(
        "wymcp.duration_ms",
        started.elapsed().as_secs_f64() * 1000.0,
    );
    match result {
        Ok(response @ Response::Call(_)) if !response.is_error() => {
            span.record("wymcp.outcome", "ok");
        }
        Ok(Response::Method(Ok(_))) => {
            span.record("wymcp.outcome", "ok");
        }
        Ok(Response::Method(Err(error))) => {
            span.record("wymcp.outcome", "error");
            span.record("error.type", error.code().to_string().as_str());
        }
        Ok(Response::Call(result)) => {
            span.record("wymcp.outcome", "error");
            let kind = result
                .json()
                .and_then(|body| {
                    let kind = body.get("errorType").or_else(|| body.get("error"))?;
                    kind.as_str().map(str::to_owned)
                })
                .unwrap_or_else(|| "tool_error".to_owned());
            span.record("error.type", kind.as_str());
        }
        Err(error) => {
            span.record("wymcp.outcome", "refused");
            // Downcast, justified: a layer's error is tower's `BoxError`; ours are `Refusal`s.
            let kind = error
                .downcast_ref::<Refusal>()
                .map_or("middleware_error", Refusal::error_type);
            span.record("error.type", kind);
        }
    }
}
