//! One trace across the gateway (feature `otel`): a downstream wymcp client calls the gateway
//! over Streamable HTTP on 127.0.0.1, the gateway forwards the call to an upstream wymcp
//! server over Streamable HTTP on 127.0.0.1, all exported through the real OpenTelemetry SDK
//! (its in-memory exporters). The four spans of the call share the client's trace id, and each
//! is the child of the one before: downstream client → gateway server → gateway client →
//! upstream server. The gateway's client measures the upstream call
//! (`mcp.client.operation.duration`, by `server.address`/`server.port`).

#![allow(clippy::unwrap_used, missing_docs)]

use std::collections::HashMap;

use opentelemetry::KeyValue;
use opentelemetry::propagation::TextMapPropagator as _;
use opentelemetry::trace::{SpanKind, TracerProvider as _};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::{Value, json};
use tracing::Instrument as _;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::prelude::*;
use wymcp::client::Client;
use wymcp::transport::http::{HttpServer, StreamableHttp};
use wymcp_gateway::{Gateway, GatewayConfig, UpstreamConfig};

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

/// Serves `server` over Streamable HTTP on 127.0.0.1 (a free port) in the background; its URL.
async fn serve(server: wymcp::Server) -> String {
    let http = HttpServer::bind("127.0.0.1:0", StreamableHttp::builder(server))
        .await
        .unwrap();
    let url = format!("http://{}/mcp", http.local_addr().unwrap());
    tokio::spawn(http.run());
    url
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_trace_runs_from_the_downstream_client_through_the_gateway_to_the_upstream() {
    let spans = InMemorySpanExporter::default();
    let tracers = SdkTracerProvider::builder()
        .with_simple_exporter(spans.clone())
        .build();
    let metrics = InMemoryMetricExporter::default();
    let meters = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(metrics.clone()).build())
        .build();
    opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
    opentelemetry::global::set_meter_provider(meters.clone());
    let layer = tracing_opentelemetry::layer()
        .with_tracer(tracers.tracer("gateway-otel-test"))
        .with_filter(Targets::new().with_target("wymcp", tracing::Level::DEBUG));
    tracing_subscriber::registry().with(layer).init();

    let upstream = wymcp::Server::builder()
        .name("upstream")
        .tool(Notes)
        .build()
        .unwrap();
    let upstream_url = serve(upstream).await;
    let upstream_port = upstream_url
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/mcp")
        .to_owned();
    let gateway = Gateway::start(
        GatewayConfig::new().upstream(UpstreamConfig::http("up", upstream_url.clone())),
    )
    .await;
    assert_eq!(gateway.notices(), []);
    let server = gateway
        .register(wymcp::Server::builder().name("gateway"))
        .build()
        .unwrap();
    let gateway_url = serve(server).await;
    let client = Client::builder(gateway_url).connect().await.unwrap();

    // The agent's span, child of a remote parent of trace `trace` (as if the agent itself
    // had been called with that context).
    let trace = "0a7e3a1d00000000000000000000a044".to_owned();
    let remote = TraceContextPropagator::new().extract(&HashMap::from([(
        "traceparent".to_owned(),
        format!("00-{trace}-5555555555555555-01"),
    )]));
    // Target `wymcp…`: the test's layer takes it.
    let agent = tracing::debug_span!(target: "wymcp::gateway_otel_test", "agent");
    agent.set_parent(remote).unwrap();
    let arguments = json!({"action": "notes", "data": {"action": "add", "data": {"text": "hi"}}});
    let called = client
        .call_tool("up", arguments)
        .instrument(agent.clone())
        .await
        .unwrap();
    assert!(!called.is_error(), "{}", called.text());
    // The upstream's answer, as the gateway forwards it: its text, or its whole result as
    // JSON text (then the upstream's text inside).
    let mut answer: Value = serde_json::from_str(&called.text()).unwrap();
    if let Some(text) = answer["content"][0]["text"].as_str() {
        answer = serde_json::from_str(text).unwrap();
    }
    assert_eq!(answer, json!({"added": "hi"}), "{}", called.text());
    drop(agent);
    client.close().await.unwrap();

    let finished: Vec<SpanData> = spans
        .get_finished_spans()
        .unwrap()
        .into_iter()
        .filter(|s| s.span_context.trace_id().to_string() == trace)
        .collect();
    let names = || -> Vec<_> {
        finished
            .iter()
            .map(|s| (s.name.to_string(), s.span_kind.clone()))
            .collect()
    };
    let one = |name: &str, kind: SpanKind| -> &SpanData {
        let found: Vec<_> = finished
            .iter()
            .filter(|s| s.name == name && s.span_kind == kind)
            .collect();
        assert_eq!(found.len(), 1, "{name} {kind:?} in {:?}", names());
        found[0]
    };
    let agent = finished.iter().find(|s| s.name == "agent").unwrap();
    let downstream = one("tools/call up", SpanKind::Client);
    let gateway_server = one("tools/call up", SpanKind::Server);
    let gateway_client = one("tools/call notes", SpanKind::Client);
    let upstream_server = one("tools/call notes", SpanKind::Server);

    assert_eq!(downstream.parent_span_id, agent.span_context.span_id());
    // Across each hop the parent is the remote span whose context `_meta` carried.
    assert_eq!(
        gateway_server.parent_span_id,
        downstream.span_context.span_id()
    );
    assert!(gateway_server.parent_span_is_remote);
    assert_eq!(
        upstream_server.parent_span_id,
        gateway_client.span_context.span_id()
    );
    assert!(upstream_server.parent_span_is_remote);
    // Inside the gateway the forwarded call runs within the downstream request's span.
    assert_eq!(
        gateway_client.parent_span_id,
        gateway_server.span_context.span_id(),
        "{:?}",
        names()
    );
    let attribute = |span: &SpanData, key: &str| {
        span.attributes
            .iter()
            .find(|kv| kv.key.as_str() == key)
            .map(|kv| kv.value.to_string())
    };
    assert_eq!(
        attribute(gateway_server, "wymcp.action").as_deref(),
        Some("notes")
    );
    assert_eq!(
        attribute(upstream_server, "wymcp.action").as_deref(),
        Some("add")
    );
    assert_eq!(
        attribute(gateway_client, "gen_ai.tool.name").as_deref(),
        Some("notes")
    );

    // The gateway's call upstream, measured as its client saw it.
    meters.force_flush().unwrap();
    let exported = metrics.get_finished_metrics().unwrap();
    let last = exported.last().expect("an export");
    let wanted = [
        KeyValue::new("mcp.method.name", "tools/call"),
        KeyValue::new("gen_ai.tool.name", "notes"),
        KeyValue::new("server.address", "127.0.0.1"),
        KeyValue::new("server.port", upstream_port.parse::<i64>().unwrap()),
        KeyValue::new("network.transport", "tcp"),
    ];
    let mut calls = 0;
    for scope in last.scope_metrics() {
        for metric in scope
            .metrics()
            .filter(|m| m.name() == "mcp.client.operation.duration")
        {
            assert_eq!(metric.unit(), "s");
            let AggregatedMetrics::F64(MetricData::Histogram(histogram)) = metric.data() else {
                panic!("mcp.client.operation.duration is no f64 histogram");
            };
            for point in histogram.data_points() {
                let labels: Vec<_> = point.attributes().collect();
                let has = |kv: &KeyValue| labels.contains(&kv);
                if wanted.iter().all(has) {
                    assert!(
                        !labels.iter().any(|l| l.key.as_str() == "error.type"),
                        "{labels:?}"
                    );
                    calls += point.count();
                }
            }
        }
    }
    assert_eq!(calls, 1, "the upstream call, once");
}
