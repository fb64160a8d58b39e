//! A `tracing` subscriber that keeps the audit layer's spans and their fields.

use std::fmt::Debug;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// A span's name and fields.
type Recorded = (String, Vec<(String, String)>);

/// Every span opened, its fields recorded for the audit layer's.
#[derive(Clone, Default)]
pub(crate) struct Spans(pub(crate) Arc<Mutex<Vec<Recorded>>>);

struct Fields<'a>(&'a mut Vec<(String, String)>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        self.0.push((field.name().to_owned(), format!("{value:?}")));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push((field.name().to_owned(), value.to_owned()));
    }
}

impl Subscriber for Spans {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let mut spans = self.0.lock().unwrap();
        let mut fields = Vec::new();
        if span.metadata().target() == "wymcp::audit" {
            span.record(&mut Fields(&mut fields));
        }
        spans.push((span.metadata().name().to_owned(), fields));
        Id::from_u64(spans.len() as u64)
    }
    fn record(&self, id: &Id, values: &Record<'_>) {
        let mut spans = self.0.lock().unwrap();
        let index = usize::try_from(id.into_u64()).unwrap() - 1;
        values.record(&mut Fields(&mut spans[index].1));
    }
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, _: &Event<'_>) {}
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

impl Spans {
    /// The audit spans' fields, one map per span.
    pub(crate) fn audited(&self) -> Vec<serde_json::Map<String, Value>> {
        let spans = self.0.lock().unwrap();
        spans
            .iter()
            .filter(|(name, _)| name == "mcp.server.operation")
            .map(|(_, fields)| {
                let pairs = fields
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::from(v.as_str())));
                pairs.collect()
            })
            .collect()
    }
}
