//! OpenTelemetry's MCP semantic conventions (feature `otel`), exported through the real SDK:
//! each request's `SERVER` span (its name, its attributes, its remote parent from
//! `params._meta.traceparent` or the HTTP `traceparent` header) over every path (HTTP and
//! stdio, each in both eras), and the `mcp.server.*` histograms and wymcp's counters.
//!
//! One process-wide pipeline (the global propagator, meter provider and subscriber), so each
//! test picks its spans by the trace id it sent and its metrics by labels no other test uses.

#![allow(clippy::unwrap_used, missing_docs)]

mod http_harness;
#[allow(unused)]
mod matrix_kit;
mod mcp_schema;
mod middleware_fixture;

use std::sync::OnceLock;

use opentelemetry::trace::{SpanKind, Status, TracerProvider as _};
use opentelemetry::{KeyValue, Value as OtelValue};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, HistogramDataPoint, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::{Value, json};
use tracing_subscriber::filter::Targets;
use tracing_subscriber::prelude::*;
use wymcp::transport::http::StreamableHttp;

use matrix_kit::{Client, Path};
use middleware_fixture::{PATHS, action, builder};

/// The SDK's in-memory exporters, behind the global propagator, meter provider and a
/// `tracing-opentelemetry` layer taking `wymcp` at DEBUG.
struct Pipeline {
    spans: InMemorySpanExporter,
    metrics: InMemoryMetricExporter,
    meters: SdkMeterProvider,
}

fn pipeline() -> &'static Pipeline {
    static PIPELINE: OnceLock<Pipeline> = OnceLock::new();
    PIPELINE.get_or_init(|| {
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
            .with_tracer(tracers.tracer("otel-test"))
            .with_filter(Targets::new().with_target("wymcp", tracing::Level::DEBUG));
        tracing_subscriber::registry().with(layer).init();
        Pipeline {
            spans,
            metrics,
            meters,
        }
    })
}

/// A W3C `traceparent` of trace `trace` and parent span `span` (sampled).
fn traceparent(trace: &str, span: &str) -> String {
    format!("00-{trace}-{span}-01")
}

/// A trace id of 32 hex digits unique to `test` and `path`.
fn trace_id(test: u8, path: Path) -> String {
    let n = PATHS.iter().position(|p| *p == path).unwrap();
    format!("{test:02x}{n:02x}{}", "ab".repeat(14))
}

/// The exported spans of trace `trace`.
fn spans_of(trace: &str) -> Vec<SpanData> {
    pipeline()
        .spans
        .get_finished_spans()
        .unwrap()
        .into_iter()
        .filter(|s| s.span_context.trace_id().to_string() == trace)
        .collect()
}

/// The one exported span of trace `trace` named `name`.
fn span_named(trace: &str, name: &str) -> SpanData {
    let mut found: Vec<_> = spans_of(trace)
        .into_iter()
        .filter(|s| s.name == name)
        .collect();
    let names: Vec<_> = spans_of(trace).iter().map(|s| s.name.clone()).collect();
    assert_eq!(found.len(), 1, "spans named {name:?} in {trace}: {names:?}");
    found.pop().unwrap()
}

fn attribute(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.to_string())
}

/// `params` with `_meta.traceparent`.
fn traced(mut params: Value, traceparent: &str) -> Value {
    params["_meta"] = json!({"traceparent": traceparent});
    params
}

#[tokio::test]
async fn every_path_gives_a_call_a_server_span_named_and_parented_by_the_conventions() {
    pipeline();
    for path in PATHS {
        let mut client = Client::open_serving(path, builder().build().unwrap()).await;
        let trace = trace_id(1, path);
        let parent = "00f067aa0ba902b7";
        let params = traced(
            json!({"name": "notes", "arguments": action("list", json!({}))}),
            &traceparent(&trace, parent),
        );
        let called = client.request("tools/call", params).await;
        assert_eq!(called.tool_json(), json!({"notes": []}), "{path:?}");
        // The id as text: a string's own characters, a number's digits.
        let id = match &called.response["id"] {
            Value::String(id) => id.clone(),
            id => id.to_string(),
        };
        client.close().await;

        let span = span_named(&trace, "tools/call notes");
        assert_eq!(span.span_kind, SpanKind::Server, "{path:?}");
        assert_eq!(span.parent_span_id.to_string(), parent, "{path:?}");
        assert!(span.parent_span_is_remote, "{path:?}");
        assert_eq!(span.status, Status::Unset, "{path:?}");
        let expect = |key: &str| attribute(&span, key);
        assert_eq!(expect("mcp.method.name").as_deref(), Some("tools/call"));
        assert_eq!(expect("gen_ai.tool.name").as_deref(), Some("notes"));
        assert_eq!(
            expect("gen_ai.operation.name").as_deref(),
            Some("execute_tool")
        );
        assert_eq!(expect("wymcp.action").as_deref(), Some("list"), "{path:?}");
        assert_eq!(expect("jsonrpc.request.id"), Some(id), "{path:?}");
        let (transport, era) = match path {
            Path::HttpSession => ("tcp", "session"),
            Path::HttpStateless => ("tcp", "stateless"),
            Path::StdioSession => ("pipe", "session"),
            Path::StdioStateless => ("pipe", "stateless"),
        };
        assert_eq!(expect("network.transport").as_deref(), Some(transport));
        assert_eq!(expect("wymcp.era").as_deref(), Some(era), "{path:?}");
        assert_eq!(
            expect("network.protocol.name").as_deref(),
            path.http().then_some("http"),
            "{path:?}"
        );
        assert_eq!(
            expect("mcp.protocol.version").as_deref(),
            Some(path.by_era("2025-11-25", "2026-07-28")),
            "{path:?}"
        );
        // A session's calls name it; the stateless era has none.
        assert_eq!(
            expect("mcp.session.id").is_some(),
            !path.stateless(),
            "{path:?}"
        );
        for absent in ["error.type", "rpc.response.status_code", "wymcp.refusal"] {
            assert_eq!(expect(absent), None, "{path:?}: {absent}");
        }
    }
}

#[tokio::test]
async fn a_refused_call_names_its_gate_and_a_json_rpc_error_its_code() {
    pipeline();
    for path in PATHS {
        let mut client = Client::open_serving(path, builder().build().unwrap()).await;
        let trace = trace_id(2, path);
        let sent = traceparent(&trace, "1111111111111111");
        let params = json!({"name": "notes", "arguments": action("fly", json!({}))});
        let refused = client.request("tools/call", traced(params, &sent)).await;
        assert_eq!(refused.result()["isError"], true, "{path:?}");
        let params = json!({"name": "nowhere", "arguments": {}});
        let unknown = client.request("tools/call", traced(params, &sent)).await;
        let code = unknown.error()["code"].as_i64().unwrap();
        client.close().await;

        let gate = span_named(&trace, "tools/call notes");
        assert_eq!(
            attribute(&gate, "error.type").as_deref(),
            Some("tool_error")
        );
        assert_eq!(
            attribute(&gate, "wymcp.refusal").as_deref(),
            Some("unknown_action"),
            "{path:?}"
        );
        assert_eq!(attribute(&gate, "rpc.response.status_code"), None);
        assert!(matches!(gate.status, Status::Error { .. }), "{path:?}");

        let rpc = span_named(&trace, "tools/call nowhere");
        assert_eq!(attribute(&rpc, "error.type"), Some(code.to_string()));
        assert_eq!(
            attribute(&rpc, "rpc.response.status_code"),
            Some(code.to_string()),
            "{path:?}"
        );
        let Status::Error { description } = &rpc.status else {
            panic!("{path:?}: {:?}", rpc.status);
        };
        assert_eq!(
            description.as_ref(),
            unknown.error()["message"].as_str().unwrap(),
            "{path:?}"
        );
    }
}

#[tokio::test]
async fn over_http_the_traceparent_header_parents_a_message_that_propagates_none() {
    pipeline();
    let http = http_harness::Http::serve(StreamableHttp::builder(builder().build().unwrap())).await;
    let initialize = |meta: Option<&str>| {
        let mut params = json!({"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "otel-test", "version": "0"}});
        if let Some(meta) = meta {
            params = traced(params, meta);
        }
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
    };
    let header_trace = format!("03{}", "cd".repeat(15));
    let header = traceparent(&header_trace, "2222222222222222");
    let answer = http
        .post_with(&[("traceparent", &header)], initialize(None).to_string())
        .await;
    assert_eq!(answer.status(), 200);
    let span = span_named(&header_trace, "initialize");
    assert_eq!(span.parent_span_id.to_string(), "2222222222222222");
    let session = answer.headers()["mcp-session-id"].to_str().unwrap();
    assert_eq!(attribute(&span, "mcp.session.id").as_deref(), Some(session));
    assert_eq!(
        attribute(&span, "mcp.protocol.version").as_deref(),
        Some("2025-11-25")
    );

    // The message's own context wins over its HTTP request's.
    let meta_trace = format!("04{}", "ef".repeat(15));
    let meta = traceparent(&meta_trace, "3333333333333333");
    let answer = http
        .post_with(
            &[("traceparent", &header)],
            initialize(Some(&meta)).to_string(),
        )
        .await;
    assert_eq!(answer.status(), 200);
    let span = span_named(&meta_trace, "initialize");
    assert_eq!(span.parent_span_id.to_string(), "3333333333333333");
    assert_eq!(spans_of(&header_trace).len(), 1, "the header's trace");
}

/// The data points of histogram `name` whose labels include every one of `labels`.
fn histogram(name: &str, labels: &[(&str, &str)]) -> Vec<HistogramDataPoint<f64>> {
    let pipeline = pipeline();
    pipeline.meters.force_flush().unwrap();
    let exported = pipeline.metrics.get_finished_metrics().unwrap();
    let last = exported.last().expect("an export");
    let mut points = Vec::new();
    for scope in last.scope_metrics() {
        for metric in scope.metrics().filter(|m| m.name() == name) {
            let AggregatedMetrics::F64(MetricData::Histogram(h)) = metric.data() else {
                panic!("{name} is no f64 histogram");
            };
            points.extend(
                h.data_points()
                    .filter(|p| has_labels(p.attributes(), labels))
                    .cloned(),
            );
        }
    }
    points
}

/// The value of counter `name` for the series whose labels include every one of `labels`.
fn counter(name: &str, labels: &[(&str, &str)]) -> Option<u64> {
    let pipeline = pipeline();
    pipeline.meters.force_flush().unwrap();
    let exported = pipeline.metrics.get_finished_metrics().unwrap();
    let last = exported.last()?;
    let mut total = None;
    for scope in last.scope_metrics() {
        for metric in scope.metrics().filter(|m| m.name() == name) {
            let AggregatedMetrics::U64(MetricData::Sum(sum)) = metric.data() else {
                panic!("{name} is no u64 sum");
            };
            for point in sum
                .data_points()
                .filter(|p| has_labels(p.attributes(), labels))
            {
                *total.get_or_insert(0) += point.value();
            }
        }
    }
    total
}

fn has_labels<'a>(attributes: impl Iterator<Item = &'a KeyValue>, labels: &[(&str, &str)]) -> bool {
    let attributes: Vec<_> = attributes.collect();
    labels.iter().all(|(key, value)| {
        attributes
            .iter()
            .any(|kv| kv.key.as_str() == *key && kv.value == OtelValue::from(value.to_string()))
    })
}

/// Calls of `notes` `add` (this test's action alone) over every path: the operation histogram
/// per tool and action with the conventions' buckets; refusals by gate; each session's
/// duration once it ends.
#[tokio::test]
async fn metrics_measure_each_operation_count_refusals_by_gate_and_time_sessions() {
    pipeline();
    for path in PATHS {
        let transport = if path.http() { "tcp" } else { "pipe" };
        let era = path.by_era("session", "stateless");
        let labels = [
            ("mcp.method.name", "tools/call"),
            ("gen_ai.tool.name", "notes"),
            ("wymcp.action", "add"),
            ("network.transport", transport),
            ("wymcp.era", era),
        ];
        let before: u64 = histogram("mcp.server.operation.duration", &labels)
            .iter()
            .map(|p| p.count())
            .sum();
        let mut client = Client::open_serving(path, builder().build().unwrap()).await;
        let added = client
            .call("notes", action("add", json!({"text": "remember"})))
            .await;
        assert_eq!(added.tool_json(), json!({"added": "remember"}), "{path:?}");
        // Refused by the value gate: `text` must be a string.
        let refused = client
            .call("notes", action("add", json!({"text": 7})))
            .await;
        assert_eq!(refused.result()["isError"], true, "{path:?}");
        let gate = refused.tool_json()["error"].as_str().unwrap().to_owned();
        client.close().await;

        let points = histogram("mcp.server.operation.duration", &labels);
        let after: u64 = points.iter().map(|p| p.count()).sum();
        assert_eq!(after, before + 2, "{path:?}");
        let bounds: Vec<f64> = points[0].bounds().collect();
        assert_eq!(
            bounds,
            [
                0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0
            ]
        );
        let refused_labels = [
            ("wymcp.refusal", gate.as_str()),
            ("wymcp.action", "add"),
            ("network.transport", transport),
            ("wymcp.era", era),
        ];
        assert!(
            counter("wymcp.server.refusals", &refused_labels).is_some_and(|n| n >= 1),
            "{path:?}: {gate}"
        );
        let with_error = [("error.type", "tool_error"), labels[2], labels[3]];
        assert!(
            !histogram("mcp.server.operation.duration", &with_error).is_empty(),
            "{path:?}"
        );
    }
    // Each session-era path ended its session (DELETE, stdio's end of input).
    for transport in ["tcp", "pipe"] {
        let sessions = histogram(
            "mcp.server.session.duration",
            &[
                ("network.transport", transport),
                ("mcp.protocol.version", "2025-11-25"),
            ],
        );
        assert!(
            sessions.iter().map(|p| p.count()).sum::<u64>() >= 1,
            "{transport}"
        );
    }
}

/// wymcp's client calls a wymcp server over HTTP inside a span of trace `trace`: its `CLIENT`
/// span carries the context in `params._meta`, and the server's span is that span's child.
#[tokio::test]
async fn the_clients_span_parents_the_servers_across_the_hop() {
    use opentelemetry::propagation::TextMapPropagator as _;
    use tracing::Instrument as _;
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;

    pipeline();
    let http = http_harness::Http::serve(StreamableHttp::builder(builder().build().unwrap())).await;
    let client = wymcp::client::Client::builder(http.url.clone())
        .connect()
        .await
        .unwrap();
    let trace = format!("05{}", "12".repeat(15));
    let carrier = std::collections::HashMap::from([(
        "traceparent".to_owned(),
        traceparent(&trace, "4444444444444444"),
    )]);
    let remote = TraceContextPropagator::new().extract(&carrier);
    // Target `wymcp…`: the test's layer takes it.
    let agent = tracing::debug_span!(target: "wymcp::otel_test", "agent");
    agent.set_parent(remote).unwrap();
    let listed = client
        .call_tool("notes", action("list", json!({})))
        .instrument(agent.clone())
        .await
        .unwrap();
    assert!(!listed.is_error());
    drop(agent);
    client.close().await.unwrap();

    let spans = spans_of(&trace);
    let calls: Vec<_> = spans
        .iter()
        .filter(|s| s.name == "tools/call notes")
        .collect();
    let client_span = calls.iter().find(|s| s.span_kind == SpanKind::Client);
    let server_span = calls.iter().find(|s| s.span_kind == SpanKind::Server);
    let (Some(client_span), Some(server_span)) = (client_span, server_span) else {
        panic!(
            "{:?}",
            spans
                .iter()
                .map(|s| (&s.name, &s.span_kind))
                .collect::<Vec<_>>()
        );
    };
    let agent = spans.iter().find(|s| s.name == "agent").unwrap();
    assert_eq!(client_span.parent_span_id, agent.span_context.span_id());
    assert_eq!(
        server_span.parent_span_id,
        client_span.span_context.span_id()
    );
    assert!(server_span.parent_span_is_remote);
    assert_eq!(
        attribute(client_span, "gen_ai.tool.name").as_deref(),
        Some("notes")
    );
    assert_eq!(
        attribute(client_span, "network.transport").as_deref(),
        Some("tcp")
    );
    assert_eq!(
        attribute(client_span, "jsonrpc.request.id"),
        attribute(server_span, "jsonrpc.request.id")
    );
}

/// wymcp's client measures each request it sends (`mcp.client.operation.duration`): by
/// method and tool, with the server's address and port, and the outcome: a call answered
/// `isError` is a `tool_error`, a JSON-RPC error its code.
#[tokio::test]
async fn the_client_measures_each_request_with_its_outcome() {
    pipeline();
    let http = http_harness::Http::serve(StreamableHttp::builder(builder().build().unwrap())).await;
    let port: i64 = http
        .url
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap();
    let port = port.to_string();
    let client = wymcp::client::Client::builder(http.url.clone())
        .connect()
        .await
        .unwrap();
    let server = [
        ("server.address", "127.0.0.1"),
        ("network.transport", "tcp"),
    ];
    let points = |extra: &[(&str, &str)], absent: &str| -> u64 {
        let mut labels = server.to_vec();
        labels.extend_from_slice(extra);
        histogram("mcp.client.operation.duration", &labels)
            .iter()
            .filter(|p| {
                p.attributes()
                    .any(|kv| kv.key.as_str() == "server.port" && kv.value.to_string() == port)
            })
            .filter(|p| !p.attributes().any(|kv| kv.key.as_str() == absent))
            .map(|p| p.count())
            .sum()
    };
    let listed = client
        .call_tool("notes", action("list", json!({})))
        .await
        .unwrap();
    assert!(!listed.is_error());
    let refused = client
        .call_tool("notes", action("fly", json!({})))
        .await
        .unwrap();
    assert!(refused.is_error());
    let unknown = client.call_tool("nowhere", json!({})).await.unwrap_err();
    let code = unknown.rpc_error().unwrap().code().to_string();
    client.close().await.unwrap();

    let call = [
        ("mcp.method.name", "tools/call"),
        ("gen_ai.operation.name", "execute_tool"),
    ];
    let notes = [call[0], call[1], ("gen_ai.tool.name", "notes")];
    assert_eq!(points(&notes, "error.type"), 1);
    let mut failed = notes.to_vec();
    failed.push(("error.type", "tool_error"));
    assert_eq!(points(&failed, "rpc.response.status_code"), 1);
    let errored = [
        call[0],
        ("gen_ai.tool.name", "nowhere"),
        ("error.type", code.as_str()),
        ("rpc.response.status_code", code.as_str()),
    ];
    assert_eq!(points(&errored, ""), 1);
    let bounds: Vec<f64> = histogram("mcp.client.operation.duration", &notes)[0]
        .bounds()
        .collect();
    assert_eq!(bounds.len(), 14);
}
