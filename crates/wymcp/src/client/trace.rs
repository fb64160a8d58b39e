//! A client request's span under OpenTelemetry's MCP conventions: DEBUG `mcp.client.request`,
//! exported by `tracing-opentelemetry` as a `CLIENT` span named `{mcp.method.name} {target}`;
//! with the `otel` feature its context travels in the request's `params._meta`
//! (`traceparent`, `tracestate`, through the program's propagator), so the server's span is
//! its child and one trace runs across the hop.

use serde_json::{Map, Value};
use tracing::Span;
use tracing::field::Empty;
use wymcp_core::bound::echo;

use super::ClientError;
use crate::protocol::ProtocolVersion;

/// The span of request `id` of `method` (naming tool or prompt `name`), over HTTP or stdio.
pub(super) fn request_span(
    method: &str,
    name: Option<&str>,
    id: i64,
    version: ProtocolVersion,
    http: bool,
) -> Span {
    let span = tracing::debug_span!(
        "mcp.client.request",
        otel.name = Empty,
        otel.kind = "client",
        otel.status_code = Empty,
        otel.status_description = Empty,
        mcp.method.name = method,
        jsonrpc.request.id = id,
        mcp.protocol.version = version.as_str(),
        gen_ai.operation.name = Empty,
        gen_ai.tool.name = Empty,
        gen_ai.prompt.name = Empty,
        network.transport = if http { "tcp" } else { "pipe" },
        error.type = Empty,
        rpc.response.status_code = Empty,
    );
    if span.is_disabled() {
        return span;
    }
    let name = name.map(echo);
    span.record(
        "otel.name",
        match &name {
            Some(name) => format!("{method} {name}"),
            None => method.to_owned(),
        },
    );
    match method {
        "tools/call" => {
            span.record("gen_ai.operation.name", "execute_tool");
            span.record("gen_ai.tool.name", name);
        }
        "prompts/get" => {
            span.record("gen_ai.prompt.name", name);
        }
        _ => {}
    }
    span
}

/// Puts `span`'s context in `meta`, the members the request's `params._meta` gets (feature
/// `otel`; without it, or with no OpenTelemetry layer, nothing).
pub(super) fn inject(span: &Span, meta: &mut Map<String, Value>) {
    #[cfg(feature = "otel")]
    if !span.is_disabled() {
        use tracing_opentelemetry::OpenTelemetrySpanExt as _;
        let cx = span.context();
        let mut fields = std::collections::HashMap::new();
        opentelemetry::global::get_text_map_propagator(|p| p.inject_context(&cx, &mut fields));
        for (key, value) in fields {
            meta.insert(key, Value::String(value));
        }
    }
    #[cfg(not(feature = "otel"))]
    let _ = (span, meta);
}

/// Writes a failed request's error on its span.
pub(super) fn failed(span: &Span, error: &ClientError) {
    if span.is_disabled() {
        return;
    }
    let error_type = match (error.rpc_error(), error.is_timeout()) {
        (Some(rpc), _) => {
            span.record("rpc.response.status_code", rpc.code().to_string());
            rpc.code().to_string()
        }
        (None, true) => "timeout".to_owned(),
        (None, false) => "_OTHER".to_owned(),
    };
    span.record("error.type", error_type);
    span.record("otel.status_code", "ERROR");
    span.record("otel.status_description", echo(&error.to_string()));
}
