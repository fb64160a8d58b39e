//! `wymcp-gateway --otlp URL` (cargo feature `otel`): the real binary in front of an upstream
//! wymcp server (Streamable HTTP on 127.0.0.1), one `tools/call` sent with a W3C
//! `_meta.traceparent`, exported over OTLP/HTTP to a collector this test serves on 127.0.0.1
//! (the tasks example's, decoding with `opentelemetry-proto`): the gateway's `SERVER` span has
//! the client's trace id and parent, and its `CLIENT` span to the upstream runs in the same
//! trace, inside it. The batch and the metric interval are set far beyond the test's length, so
//! what arrives was sent by the flush on shutdown (SIGTERM).

#![allow(clippy::unwrap_used, missing_docs)]

mod support;

#[path = "../../../examples/tasks/tests/collector/mod.rs"]
mod collector;

use std::time::Duration;

use opentelemetry_proto::tonic::trace::v1::Span;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use serde_json::{Value, json};
use wymcp::transport::http::{HttpServer, StreamableHttp};

use collector::{collector, hex, metric_names, spans, text};

/// The client's trace: its trace id and the id of its span, the gateway span's parent.
const TRACE_ID: &str = "6a7e3a1d0000000000000000000b0044";
const PARENT_ID: &str = "00f067aa0ba9b044";
/// How long the gateway's exit after SIGTERM may take before the test gives up.
const WAIT: Duration = Duration::from_secs(30);

/// The upstream's one tool.
struct Notes;

/// Keep short notes
#[wymcp::tool]
impl Notes {
    /// Add a note
    async fn add(
        &self,
        /// What to remember
        text: String,
    ) -> Value {
        json!({"added": text})
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binarys_otlp_export_has_the_clients_trace_through_to_the_upstream_call() {
    let (collector_url, received) = collector().await;
    let upstream = wymcp::Server::builder()
        .name("upstream")
        .tool(Notes)
        .build()
        .unwrap();
    let http = HttpServer::bind("127.0.0.1:0", StreamableHttp::builder(upstream))
        .await
        .unwrap();
    let upstream_url = format!("http://{}/mcp", http.local_addr().unwrap());
    tokio::spawn(http.run());

    let config = support::target_dir()
        .join("gateway-test-records")
        .join(format!("otlp-{}.json", std::process::id()));
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    let file = json!({"mcpServers": {"up": {"url": upstream_url}}});
    // Nothing is sent before shutdown: what arrives is the flush's.
    let env = [
        ("OTEL_BSP_SCHEDULE_DELAY", "600000"),
        ("OTEL_METRIC_EXPORT_INTERVAL", "600000"),
    ];
    let (mut child, url, banner) =
        support::start(&config, &file, &env, &["--otlp", &collector_url]).await;
    let pid = child.id().unwrap();

    let http = reqwest::Client::new();
    let post = |body: Value, session: Option<&str>| {
        let mut request = http
            .post(&url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .json(&body);
        if let Some(session) = session {
            request = request
                .header("Mcp-Session-Id", session)
                .header("MCP-Protocol-Version", "2025-11-25");
        }
        request.send()
    };
    let init = post(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "gateway-otlp-test", "version": "1"}}}),
        None,
    )
    .await
    .unwrap();
    assert_eq!(init.status(), 200, "{banner:?}");
    let session = init.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let initialized = post(
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        Some(&session),
    )
    .await
    .unwrap();
    assert_eq!(initialized.status(), 202);
    let called = post(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "up",
            "arguments": {"action": "notes", "data": {"action": "add", "data": {"text": "hi"}}},
            "_meta": {"traceparent": format!("00-{TRACE_ID}-{PARENT_ID}-01")}}}),
        Some(&session),
    )
    .await
    .unwrap();
    let called: Value = called.json().await.unwrap();
    assert_eq!(called["result"]["isError"], false, "{called}");
    // The upstream's answer, as the gateway forwards it: its text, or its whole result as
    // JSON text (then the upstream's text inside).
    let text_of = |v: &Value| v["content"][0]["text"].as_str().map(str::to_owned);
    let mut answer: Value = serde_json::from_str(&text_of(&called["result"]).unwrap()).unwrap();
    if let Some(inner) = text_of(&answer) {
        answer = serde_json::from_str(&inner).unwrap();
    }
    assert_eq!(answer, json!({"added": "hi"}), "{called}");

    // SIGTERM: the gateway stops serving and flushes its exporters before it exits.
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let exited = tokio::time::timeout(WAIT, child.wait())
        .await
        .expect("the gateway exits after SIGTERM")
        .unwrap();
    assert!(exited.success(), "{exited:?}");

    let received = received.lock().unwrap().clone();
    for (path, content_type, _) in &received {
        assert_eq!(content_type, "application/x-protobuf", "{path}");
    }
    let spans = spans(&received, "wymcp-gateway");
    let traced: Vec<&Span> = spans
        .iter()
        .filter(|s| hex(&s.trace_id) == TRACE_ID)
        .collect();
    let names: Vec<(&str, i32)> = traced.iter().map(|s| (s.name.as_str(), s.kind)).collect();
    let one = |name: &str, kind: SpanKind| -> &Span {
        let found: Vec<&&Span> = traced
            .iter()
            .filter(|s| s.name == name && s.kind == kind as i32)
            .collect();
        assert_eq!(found.len(), 1, "{name} {kind:?} in {names:?}");
        found[0]
    };
    // The downstream call, the gateway's server span: the client's span is its parent.
    let server = one("tools/call up", SpanKind::Server);
    assert_eq!(hex(&server.parent_span_id), PARENT_ID);
    assert_eq!(text(&server.attributes, "gen_ai.tool.name"), Some("up"));
    assert_eq!(text(&server.attributes, "wymcp.action"), Some("notes"));
    assert_eq!(text(&server.attributes, "mcp.session.id"), Some(&*session));
    // The call upstream, the gateway's client span: the same trace, inside the server span.
    let client = one("tools/call notes", SpanKind::Client);
    assert_eq!(client.parent_span_id, server.span_id);
    assert_eq!(text(&client.attributes, "gen_ai.tool.name"), Some("notes"));
    assert_eq!(
        text(&client.attributes, "mcp.method.name"),
        Some("tools/call")
    );

    // The metrics, sent over OTLP too: the downstream call and the upstream call.
    let metrics = metric_names(&received);
    for name in [
        "mcp.server.operation.duration",
        "mcp.client.operation.duration",
    ] {
        assert!(metrics.iter().any(|n| n == name), "{name}: {metrics:?}");
    }
    let _ = std::fs::remove_file(&config);
}
