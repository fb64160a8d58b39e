//! A request span's remote parent (feature `otel`): the trace context the client propagated in
//! the request's `params._meta` (`traceparent`, `tracestate`, `baggage`, unprefixed, as the
//! MCP conventions and SEP-414 write them), else the one of its HTTP request (the
//! `traceparent` header: one HTTP request may carry several MCP messages, so the message's own
//! context wins). Read through the program's propagator
//! (`opentelemetry::global::set_text_map_propagator`, W3C's `TraceContextPropagator` for
//! these keys): without one, no parent is taken.

use opentelemetry::propagation::Extractor;
use opentelemetry::trace::TraceContextExt as _;
use serde_json::{Map, Value};
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

use super::RoutingHeaders;

/// The keys of `_meta` (and headers) a propagator may read: W3C Trace Context and Baggage.
const KEYS: [&str; 3] = ["traceparent", "tracestate", "baggage"];

/// Gives `span` the remote parent `message` or its transport's `headers` carry, when one does.
pub(super) fn adopt(span: &Span, message: &Value, headers: Option<&dyn RoutingHeaders>) {
    let meta = message
        .get("params")
        .and_then(|p| p.get("_meta"))
        .and_then(Value::as_object);
    let parent = meta
        .map(|meta| extract(&MetaCarrier(meta)))
        .filter(has_remote_span)
        .or_else(|| {
            headers
                .map(|headers| extract(&HeaderCarrier(headers)))
                .filter(has_remote_span)
        });
    if let Some(parent) = parent {
        // Fails only when no OpenTelemetry layer took the span: nothing to parent then.
        let _ = span.set_parent(parent);
    }
}

fn extract(carrier: &dyn Extractor) -> opentelemetry::Context {
    opentelemetry::global::get_text_map_propagator(|propagator| propagator.extract(carrier))
}

fn has_remote_span(cx: &opentelemetry::Context) -> bool {
    cx.span().span_context().is_valid()
}

/// A request's `params._meta`, as a propagator's carrier.
struct MetaCarrier<'a>(&'a Map<String, Value>);

impl Extractor for MetaCarrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }

    fn keys(&self) -> Vec<&str> {
        KEYS.into_iter()
            .filter(|k| self.0.contains_key(*k))
            .collect()
    }
}

/// An HTTP request's headers, as a propagator's carrier.
struct HeaderCarrier<'a>(&'a dyn RoutingHeaders);

impl Extractor for HeaderCarrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key)
    }

    fn keys(&self) -> Vec<&str> {
        KEYS.into_iter()
            .filter(|k| self.0.get(k).is_some())
            .collect()
    }
}
