//! The client's metric (feature `otel`): OpenTelemetry's MCP conventions'
//! `mcp.client.operation.duration`, a histogram in seconds with the conventions' buckets, one
//! point per request this client sent, through the global meter provider (without one, a
//! no-op). Its count by `error.type` is a server's calls and failures as this client saw
//! them: the gateway's upstream health, per `server.address`.

use std::sync::OnceLock;
use std::time::Instant;

use opentelemetry::KeyValue;
use opentelemetry::metrics::Histogram;
use serde_json::Value;
use wymcp_core::bound::echo;

use super::ClientError;
use crate::protocol::ProtocolVersion;

/// The conventions' `ExplicitBucketBoundaries`, in seconds (the server's too).
const BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

fn histogram() -> &'static Histogram<f64> {
    static HISTOGRAM: OnceLock<Histogram<f64>> = OnceLock::new();
    HISTOGRAM.get_or_init(|| {
        let scope = opentelemetry::InstrumentationScope::builder("wymcp")
            .with_version(env!("CARGO_PKG_VERSION"))
            .build();
        opentelemetry::global::meter_with_scope(scope)
            .f64_histogram("mcp.client.operation.duration")
            .with_unit("s")
            .with_description(
                "The duration of the MCP request or notification as observed on the sender \
                 from the time it was sent until the response or ack is received.",
            )
            .with_boundaries(BUCKETS.to_vec())
            .build()
    })
}

/// One request's measurement: its start and the labels known when it is sent.
pub(super) struct Measure {
    started: Instant,
    labels: Vec<KeyValue>,
    tool_call: bool,
}

impl Measure {
    /// Request `method` (naming tool or prompt `name`) of revision `version`, to the server at
    /// `server` (host and port; `None` over stdio).
    pub(super) fn start(
        method: &str,
        name: Option<&str>,
        version: ProtocolVersion,
        server: Option<(&str, u16)>,
    ) -> Self {
        let mut labels = Vec::with_capacity(9);
        labels.push(KeyValue::new("mcp.method.name", echo(method)));
        labels.push(KeyValue::new("mcp.protocol.version", version.as_str()));
        match server {
            Some((host, port)) => {
                labels.push(KeyValue::new("network.transport", "tcp"));
                labels.push(KeyValue::new("network.protocol.name", "http"));
                labels.push(KeyValue::new("server.address", echo(host)));
                labels.push(KeyValue::new("server.port", i64::from(port)));
            }
            None => labels.push(KeyValue::new("network.transport", "pipe")),
        }
        let tool_call = method == "tools/call";
        match (method, name) {
            ("tools/call", Some(name)) => {
                labels.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
                labels.push(KeyValue::new("gen_ai.tool.name", echo(name)));
            }
            ("prompts/get", Some(name)) => {
                labels.push(KeyValue::new("gen_ai.prompt.name", echo(name)));
            }
            _ => {}
        }
        Measure {
            started: Instant::now(),
            labels,
            tool_call,
        }
    }

    /// Records the request's duration with its outcome: `error.type` is the JSON-RPC error's
    /// code, `timeout`, `_OTHER` (the transport failed), or `tool_error` (a call answered
    /// `isError`).
    pub(super) fn finish(mut self, outcome: Result<&Value, &ClientError>) {
        let seconds = self.started.elapsed().as_secs_f64();
        match outcome {
            Ok(result) => {
                if self.tool_call && result.get("isError") == Some(&Value::Bool(true)) {
                    self.labels.push(KeyValue::new("error.type", "tool_error"));
                }
            }
            Err(error) => {
                let error_type = match (error.rpc_error(), error.is_timeout()) {
                    (Some(rpc), _) => {
                        let code = rpc.code().to_string();
                        self.labels
                            .push(KeyValue::new("rpc.response.status_code", code.clone()));
                        code
                    }
                    (None, true) => "timeout".to_owned(),
                    (None, false) => "_OTHER".to_owned(),
                };
                self.labels.push(KeyValue::new("error.type", error_type));
            }
        }
        histogram().record(seconds, &self.labels);
    }
}
