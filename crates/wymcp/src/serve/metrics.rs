//! The server's metrics (feature `otel`), recorded through OpenTelemetry's global meter
//! provider (the program installs one, with the exporter it picks; without one every record is
//! a no-op): the MCP conventions' `mcp.server.operation.duration` and
//! `mcp.server.session.duration` (histograms, seconds, the conventions' buckets), and the
//! counters an operator watches: refusals by gate, rate-limited calls, live sessions.
//!
//! The instruments are made once per process, from the provider installed when the first
//! message arrives: install the provider before serving (before or after building the
//! server: `wymcp::run`'s `--metrics` installs its own once the server is built). When that
//! provider is OpenTelemetry's no-op one (none was installed), no instrument is made and no
//! message is measured: no clock read, no label (docs/performance.md, "The `otel` feature's
//! cost per call").
//!
//! Every label is bounded in cardinality by the server, not the client: a method the server
//! does not serve is `_OTHER`; a tool, an action or a prompt is named only when the server
//! has it (the call was answered by the tool, past the action gate; the prompt was got).

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::Instant;

use opentelemetry::KeyValue;
use opentelemetry::metrics::{Counter, Histogram, UpDownCounter};

use super::Era;
use super::operation::{Ended, Facts, era_name, network_transport};
use crate::context::TransportKind;
use crate::protocol::{Method, ProtocolVersion};

/// The conventions' `ExplicitBucketBoundaries` for both duration histograms, in seconds.
const BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// The value of a label the server cannot vouch for (the conventions' fallback).
const OTHER: &str = "_OTHER";

/// Refusals that come before the action is known to the tool: their action is not a label.
const BEFORE_ACTION: [&str; 4] = [
    "unknown_arguments",
    "invalid_argument_type",
    "missing_action",
    "unknown_action",
];

struct Instruments {
    operation: Histogram<f64>,
    session: Histogram<f64>,
    refusals: Counter<u64>,
    rate_limited: Counter<u64>,
    sessions: UpDownCounter<i64>,
    /// The live sessions this node started: when, and the labels their end is recorded with.
    started: Mutex<HashMap<String, (Instant, Vec<KeyValue>)>>,
}

/// The instruments, or `None` when no meter provider was installed when first asked.
fn instruments() -> Option<&'static Instruments> {
    static INSTRUMENTS: OnceLock<Option<Instruments>> = OnceLock::new();
    INSTRUMENTS.get_or_init(make).as_ref()
}

/// Whether the server measures its messages: a meter provider was installed when it was
/// first asked (then once and for all).
#[inline]
pub(super) fn enabled() -> bool {
    instruments().is_some()
}

/// Whether the global meter provider is one a program installed, not OpenTelemetry's default.
///
/// The default is `NoopMeterProvider`, a zero-sized type, and the API offers no other way to
/// tell it apart (no downcast, no `enabled` check on an instrument). A provider that records
/// holds its readers and exporters (the SDK's is an `Arc`), so it has a size.
fn provider_installed() -> bool {
    std::mem::size_of_val(&*opentelemetry::global::meter_provider()) != 0
}

fn make() -> Option<Instruments> {
    if !provider_installed() {
        return None;
    }
    let scope = opentelemetry::InstrumentationScope::builder("wymcp")
        .with_version(env!("CARGO_PKG_VERSION"))
        .build();
    let meter = opentelemetry::global::meter_with_scope(scope);
    Some(Instruments {
        operation: meter
            .f64_histogram("mcp.server.operation.duration")
            .with_unit("s")
            .with_description(
                "MCP request or notification duration as observed on the receiver from \
                 the time it was received until the result or ack is sent.",
            )
            .with_boundaries(BUCKETS.to_vec())
            .build(),
        session: meter
            .f64_histogram("mcp.server.session.duration")
            .with_unit("s")
            .with_description("The duration of the MCP session as observed on the MCP server.")
            .with_boundaries(BUCKETS.to_vec())
            .build(),
        refusals: meter
            .u64_counter("wymcp.server.refusals")
            .with_unit("{refusal}")
            .with_description("Requests refused by a gate or a layer, by `wymcp.refusal`.")
            .build(),
        rate_limited: meter
            .u64_counter("wymcp.server.rate_limited")
            .with_unit("{call}")
            .with_description("Calls refused by the rate limit (`rate_limited`).")
            .build(),
        sessions: meter
            .i64_up_down_counter("wymcp.server.sessions")
            .with_unit("{session}")
            .with_description("Sessions started on this node and not ended.")
            .build(),
        started: Mutex::default(),
    })
}

/// One operation's measurement: its start, and the labels known on arrival.
pub(super) struct Measure {
    instruments: &'static Instruments,
    started: Instant,
    method: &'static str,
    known: Option<Method>,
    target: Option<String>,
    action: Option<String>,
    version: Option<ProtocolVersion>,
    transport: TransportKind,
    era: Era,
}

impl Measure {
    /// The measurement of the operation `facts` describe; `None` when the server does not
    /// measure ([`enabled`]).
    pub(super) fn start(facts: &Facts<'_>) -> Option<Self> {
        let echo = wymcp_core::bound::echo;
        Some(Measure {
            instruments: instruments()?,
            started: Instant::now(),
            method: facts.known.map_or(OTHER, Method::as_str),
            known: facts.known,
            target: facts.target.map(echo),
            action: facts.action.map(echo),
            version: facts.version,
            transport: facts.transport,
            era: facts.era,
        })
    }

    /// Records the operation's duration and, when it was refused, the refusal.
    pub(super) fn finish(self, ended: Option<&Ended>) {
        let seconds = self.started.elapsed().as_secs_f64();
        let instruments = self.instruments;
        // Every label but `wymcp.refusal` fits: the transport's two, the revision, the era,
        // the method, the operation, the tool, the action, the error's two.
        let mut labels = Vec::with_capacity(10);
        self.transport_labels(&mut labels);
        if let Some(version) = self.version {
            labels.push(KeyValue::new("mcp.protocol.version", version.as_str()));
        }
        labels.push(KeyValue::new("wymcp.era", era_name(self.era)));
        labels.push(KeyValue::new("mcp.method.name", self.method));
        let answered = ended.is_some_and(|e| e.tool_answered);
        let refusal = ended.and_then(|e| e.refusal.as_deref());
        match self.known {
            Some(Method::ToolsCall) => {
                labels.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
                if answered && let Some(tool) = self.target {
                    labels.push(KeyValue::new("gen_ai.tool.name", tool));
                }
                if answered
                    && !refusal.is_some_and(|r| BEFORE_ACTION.contains(&r))
                    && let Some(action) = self.action
                {
                    labels.push(KeyValue::new("wymcp.action", action));
                }
            }
            Some(Method::PromptsGet) => {
                if ended.is_some_and(|e| e.error_type.is_none())
                    && let Some(prompt) = self.target
                {
                    labels.push(KeyValue::new("gen_ai.prompt.name", prompt));
                }
            }
            _ => {}
        }
        if let Some(refusal) = refusal {
            let mut refused = labels.clone();
            refused.push(KeyValue::new("wymcp.refusal", refusal.to_owned()));
            instruments.refusals.add(1, &refused);
            if refusal == "rate_limited" {
                instruments.rate_limited.add(1, &labels);
            }
        }
        if let Some(ended) = ended {
            if let Some(error_type) = &ended.error_type {
                labels.push(KeyValue::new("error.type", error_type.clone()));
            }
            if let Some(code) = &ended.code {
                labels.push(KeyValue::new("rpc.response.status_code", code.clone()));
            }
        }
        instruments.operation.record(seconds, &labels);
    }

    /// `initialize` started `session` (revision `version`): it is live from now on.
    pub(super) fn session_started(&self, session: &str, version: Option<ProtocolVersion>) {
        let mut labels = Vec::with_capacity(3);
        self.transport_labels(&mut labels);
        if let Some(version) = version {
            labels.push(KeyValue::new("mcp.protocol.version", version.as_str()));
        }
        self.instruments.sessions.add(1, &labels);
        self.instruments
            .started
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(session.to_owned(), (Instant::now(), labels));
    }

    fn transport_labels(&self, labels: &mut Vec<KeyValue>) {
        if let Some(transport) = network_transport(self.transport) {
            labels.push(KeyValue::new("network.transport", transport));
        }
        if self.transport == TransportKind::Http {
            labels.push(KeyValue::new("network.protocol.name", "http"));
        }
    }
}

/// Session `id` is gone from this node (ended, expired, ended elsewhere): its duration is
/// recorded when this node started it.
pub(crate) fn session_ended(id: &str) {
    let Some(instruments) = instruments() else {
        return;
    };
    let started = instruments
        .started
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(id);
    if let Some((at, labels)) = started {
        instruments.sessions.add(-1, &labels);
        instruments
            .session
            .record(at.elapsed().as_secs_f64(), &labels);
    }
}
