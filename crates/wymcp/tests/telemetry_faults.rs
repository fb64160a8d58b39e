//! The tracing events of a call: a contained panic emits `wymcp.tool.error` carrying the
//! bounded rendering and the whole payload, and no `wymcp.tool.stop`; refusals and tool errors
//! emit `wymcp.tool.stop` with their classification.

use std::fmt::Debug;
use std::sync::{Arc, Mutex};

use serde_json::json;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};
use wymcp::{ActionResult, ActionSchema, ActionTool, Actions, Context, Data, Failure, Server};

#[derive(Debug, Clone)]
struct Captured {
    name: String,
    fields: Vec<(String, String)>,
}

impl Captured {
    fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<Captured>>>);

struct Fields(Vec<(String, String)>);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        self.0.push((field.name().to_owned(), format!("{value:?}")));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push((field.name().to_owned(), value.to_owned()));
    }
}

impl Subscriber for Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut fields = Fields(Vec::new());
        event.record(&mut fields);
        if let Ok(mut events) = self.0.lock() {
            events.push(Captured {
                name: event.metadata().name().to_owned(),
                fields: fields.0,
            });
        }
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

impl Recorder {
    fn named(&self, name: &str) -> Vec<Captured> {
        self.0
            .lock()
            .map(|events| events.iter().filter(|e| e.name == name).cloned().collect())
            .unwrap_or_default()
    }
}

struct Crasher;

impl ActionTool for Crasher {
    fn name(&self) -> &str {
        "crasher"
    }
    fn description(&self) -> &str {
        "Crashes on demand"
    }
    fn actions(&self) -> Actions {
        Actions::new()
            .action("boom", ActionSchema::new("Panics with a huge message"))
            .action("fail", ActionSchema::new("Answers an error"))
    }
    async fn run_action(&self, action: &str, _data: Data, _ctx: Context) -> ActionResult {
        match action {
            "boom" => panic!("{}", "x".repeat(1_000_000)),
            _ => Err(Failure::msg("nope")),
        }
    }
}

fn call(server: &Server, args: serde_json::Value) -> wymcp::CallToolResult {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a current-thread runtime builds")
        .block_on(server.call_tool("crasher", Some(args), Context::default()))
        .expect("crasher is a known tool")
}

fn recorded(f: impl FnOnce()) -> Recorder {
    let recorder = Recorder::default();
    tracing::subscriber::with_default(recorder.clone(), f);
    recorder
}

#[test]
fn a_fault_emits_error_with_bounded_and_whole_payload_and_no_stop() {
    let server = Server::builder().tool(Crasher).build().expect("valid tool");
    let mut result = None;
    let events = recorded(|| result = Some(call(&server, json!({"action": "boom"}))));
    let result = result.expect("the call answered");
    let body = result.json().expect("a JSON fault body");
    assert_eq!(body["errorType"], "tool_fault");
    assert_eq!(body["tool"], "crasher");
    assert_eq!(body["exception"], "panic");
    let message = body["message"].as_str().expect("a message");
    assert!(
        message.ends_with("…(+999800 chars)"),
        "bounded: {}",
        &message[190..]
    );

    assert_eq!(events.named("wymcp.tool.start").len(), 1);
    assert!(
        events.named("wymcp.tool.stop").is_empty(),
        "no stop after a fault"
    );
    let errors = events.named("wymcp.tool.error");
    assert_eq!(errors.len(), 1);
    let error = &errors[0];
    assert_eq!(error.field("tool_name"), Some("crasher"));
    assert_eq!(error.field("action"), Some("boom"));
    assert_eq!(error.field("error"), Some(message));
    assert_eq!(
        error.field("crash_reason").map(str::len),
        Some(1_000_000),
        "crash_reason carries the whole payload"
    );

    // The server lives on.
    let next = call(&server, json!({"action": "fail"}));
    assert_eq!(next.text(), Some("Operation failed: nope"));
}

#[test]
fn stop_events_classify_refusals_and_tool_errors() {
    let server = Server::builder().tool(Crasher).build().expect("valid tool");
    let events = recorded(|| {
        call(&server, json!({"action": "nope"}));
        call(&server, json!({"action": "fail"}));
    });
    let stops = events.named("wymcp.tool.stop");
    assert_eq!(stops.len(), 2);
    assert_eq!(stops[0].field("error_kind"), Some("dispatch"));
    assert_eq!(stops[0].field("is_error"), Some("true"));
    assert_eq!(stops[1].field("error_kind"), Some("tool"));
    assert!(stops.iter().all(|s| s.field("duration_ns").is_some()));
}
