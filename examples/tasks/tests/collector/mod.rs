//! An OTLP/HTTP collector on 127.0.0.1 for the tests of `--otlp`: this example's
//! tests/otlp.rs, and the gateway's (which includes this file with `#[path]`). It answers
//! `/v1/traces` and `/v1/metrics` 200 and keeps each request; [`spans`] and [`metric_names`]
//! decode what arrived with `opentelemetry-proto`.

#![allow(dead_code, clippy::unwrap_used)]

use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message as _;

/// One request the collector received: its path, content type and body.
pub(crate) type Request = (String, String, Bytes);

/// What the collector received, in order.
pub(crate) type Received = Arc<Mutex<Vec<Request>>>;

async fn collect(
    State(received): State<Received>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    let content_type = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    received
        .lock()
        .unwrap()
        .push((uri.path().to_owned(), content_type, body));
    StatusCode::OK
}

/// An OTLP/HTTP collector on 127.0.0.1 (a free port): its base URL (what `--otlp` takes) and
/// what it receives. `/v1/traces` and `/v1/metrics` are answered 200 (an empty protobuf
/// answer: full success).
pub(crate) async fn collector() -> (String, Received) {
    let received = Received::default();
    let app = axum::Router::new()
        .route("/v1/traces", axum::routing::post(collect))
        .route("/v1/metrics", axum::routing::post(collect))
        .with_state(received.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, received)
}

/// Lower-case hex, as trace and span ids are written.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The string value of `key` among `attributes`, `None` when absent or not a string.
pub(crate) fn text<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a str> {
    attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| match kv.value.as_ref() {
            Some(AnyValue {
                value: Some(any_value::Value::StringValue(s)),
            }) => Some(s.as_str()),
            _ => None,
        })
}

/// The spans of every `/v1/traces` request `received` holds, each resource's `service.name`
/// asserted to be `service`.
pub(crate) fn spans(received: &[Request], service: &str) -> Vec<Span> {
    let mut spans = Vec::new();
    for (_, _, body) in received.iter().filter(|(p, _, _)| p == "/v1/traces") {
        let request = ExportTraceServiceRequest::decode(body.clone()).unwrap();
        for resource in request.resource_spans {
            let attributes = resource.resource.unwrap().attributes;
            assert_eq!(text(&attributes, "service.name"), Some(service));
            for scope in resource.scope_spans {
                spans.extend(scope.spans);
            }
        }
    }
    spans
}

/// The names of the metrics of every `/v1/metrics` request `received` holds.
pub(crate) fn metric_names(received: &[Request]) -> Vec<String> {
    let mut names = Vec::new();
    for (_, _, body) in received.iter().filter(|(p, _, _)| p == "/v1/metrics") {
        let request = ExportMetricsServiceRequest::decode(body.clone()).unwrap();
        for resource in request.resource_metrics {
            for scope in resource.scope_metrics {
                names.extend(scope.metrics.into_iter().map(|m| m.name));
            }
        }
    }
    names
}
