//! The telemetry catalogue (behaviour-spec §8) on `tracing`: every named event and its fields,
//! captured by a recording subscriber. Tool and help events in process; session, auth and server
//! events over real HTTP on 127.0.0.1 (port 0), with the server running on the test's own
//! current-thread runtime so the thread's default subscriber sees everything it emits.

#![allow(clippy::unwrap_used, missing_docs)]

mod http_harness;

use std::fmt::Debug;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::{Map, Value, json};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};
use wymcp::Identity;
use wymcp::tool::Failure;
use wymcp::transport::http::{
    AuthRefusal, Authenticate, BearerAuth, SessionHooks, SessionStart, StreamableHttp,
};
use wymcp::{ActionResult, ActionSchema, ActionTool, Actions, Context, Data, Reply, Server};

// ---------------------------------------------------------------------------------------------
// A subscriber that records every event by name, with its fields rendered as text.

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

    fn has(&self, name: &str) -> bool {
        self.field(name).is_some()
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

    fn one(&self, name: &str) -> Captured {
        let events = self.named(name);
        assert_eq!(events.len(), 1, "one {name}: {events:?}");
        events.into_iter().next().unwrap()
    }

    /// No field of any `wymcp.*` event contains `needle`.
    fn assert_nowhere(&self, needle: &str) {
        let events = self.0.lock().unwrap();
        for event in events.iter().filter(|e| e.name.starts_with("wymcp.")) {
            for (key, value) in &event.fields {
                assert!(
                    !value.contains(needle),
                    "{} field {key} leaks {needle:?}: {value}",
                    event.name
                );
            }
        }
    }
}

/// Runs `test` on a current-thread runtime under a recording subscriber: every task spawned on
/// that runtime (the HTTP server, the session reaper) runs on this thread and is recorded.
fn recorded<F: Future<Output = ()>>(test: impl FnOnce() -> F) -> Recorder {
    let recorder = Recorder::default();
    tracing::subscriber::with_default(recorder.clone(), || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(test());
    });
    recorder
}

fn duration_ns(event: &Captured) -> u64 {
    event
        .field("duration_ns")
        .unwrap_or_else(|| panic!("{} has duration_ns", event.name))
        .parse()
        .unwrap()
}

// ---------------------------------------------------------------------------------------------
// Tool and help events, in process.

struct Echoer;

impl ActionTool for Echoer {
    fn name(&self) -> &str {
        "echoer"
    }
    fn description(&self) -> &str {
        "Answers, fails or crashes on demand"
    }
    fn actions(&self) -> Actions {
        Actions::new()
            .action(
                "echo",
                ActionSchema::new("Echoes the text")
                    .property("text", json!({"type": "string"}))
                    .required(["text"]),
            )
            .action("fail", ActionSchema::new("Answers an error"))
            .action("boom", ActionSchema::new("Panics"))
    }
    async fn run_action(&self, action: &str, data: Data, _ctx: Context) -> ActionResult {
        match action {
            "echo" => Ok(Reply::new(json!({"echo": data["text"]}))),
            "boom" => panic!("kaboom"),
            _ => Err(Failure::msg("nope")),
        }
    }
}

fn server() -> Server {
    Server::builder()
        .name("telemetry")
        .tool(Echoer)
        .build()
        .unwrap()
}

fn ctx() -> Context {
    Context::builder()
        .session_id("session-1")
        .request_id(json!(7))
        .build()
}

async fn call(server: &Server, tool: &str, arguments: Value) -> wymcp::tool::CallToolResult {
    wymcp::testing::call_tool(server, tool, Some(arguments), ctx())
        .await
        .expect("a known tool")
}

#[test]
fn a_success_emits_start_and_stop_without_error_kind() {
    let server = server();
    let events = recorded(|| async {
        let result = call(
            &server,
            "echoer",
            json!({"action": "echo", "data": {"text": "hi"}}),
        )
        .await;
        assert!(!result.is_error());
    });
    let start = events.one("wymcp.tool.start");
    assert_eq!(start.field("tool_name"), Some("echoer"));
    assert_eq!(start.field("action"), Some("echo"));
    assert_eq!(start.field("session_id"), Some("session-1"));
    let stop = events.one("wymcp.tool.stop");
    assert_eq!(stop.field("tool_name"), Some("echoer"));
    assert_eq!(stop.field("action"), Some("echo"));
    assert_eq!(stop.field("session_id"), Some("session-1"));
    assert_eq!(stop.field("is_error"), Some("false"));
    assert!(
        !stop.has("error_kind"),
        "no error_kind on success: {stop:?}"
    );
    let _ = duration_ns(&stop);
    assert!(events.named("wymcp.tool.error").is_empty());
    events.assert_nowhere("hi\"");
}

#[test]
fn a_gate_refusal_stops_with_error_kind_dispatch() {
    let server = server();
    let events = recorded(|| async {
        let result = call(&server, "echoer", json!({"action": "nope"})).await;
        assert!(result.is_error());
        let result = call(&server, "echoer", json!({"action": "echo", "data": {}})).await;
        assert!(result.is_error());
    });
    let stops = events.named("wymcp.tool.stop");
    assert_eq!(stops.len(), 2, "{stops:?}");
    assert_eq!(stops[0].field("action"), Some("nope"));
    assert_eq!(stops[1].field("action"), Some("echo"));
    for stop in &stops {
        assert_eq!(stop.field("is_error"), Some("true"));
        assert_eq!(stop.field("error_kind"), Some("dispatch"));
        let _ = duration_ns(stop);
    }
    assert_eq!(events.named("wymcp.tool.start").len(), 2);
}

#[test]
fn a_tool_error_stops_with_error_kind_tool() {
    let server = server();
    let events = recorded(|| async {
        let result = call(&server, "echoer", json!({"action": "fail"})).await;
        assert!(result.is_error());
    });
    let stop = events.one("wymcp.tool.stop");
    assert_eq!(stop.field("action"), Some("fail"));
    assert_eq!(stop.field("is_error"), Some("true"));
    assert_eq!(stop.field("error_kind"), Some("tool"));
    assert_eq!(stop.field("session_id"), Some("session-1"));
}

#[test]
fn a_fault_emits_error_instead_of_stop() {
    let server = server();
    let events = recorded(|| async {
        let result = call(&server, "echoer", json!({"action": "boom"})).await;
        assert!(result.is_error());
    });
    assert_eq!(events.named("wymcp.tool.start").len(), 1);
    assert!(
        events.named("wymcp.tool.stop").is_empty(),
        "no stop after a fault"
    );
    let error = events.one("wymcp.tool.error");
    assert_eq!(error.field("tool_name"), Some("echoer"));
    assert_eq!(error.field("action"), Some("boom"));
    assert_eq!(error.field("session_id"), Some("session-1"));
    assert_eq!(error.field("request_id"), Some("7"));
    assert_eq!(error.field("exception"), Some("panic"));
    assert_eq!(error.field("error"), Some("kaboom"));
    assert_eq!(error.field("crash_reason"), Some("kaboom"));
    let _ = duration_ns(&error);
}

struct HugePanic;

impl ActionTool for HugePanic {
    fn name(&self) -> &str {
        "crasher"
    }
    fn description(&self) -> &str {
        "Panics with a 1 MB message"
    }
    fn actions(&self) -> Actions {
        Actions::new().action("boom", ActionSchema::new("Panics with a huge message"))
    }
    async fn run_action(&self, _action: &str, _data: Data, _ctx: Context) -> ActionResult {
        panic!("{}", "x".repeat(1_000_000))
    }
}

#[test]
fn a_fault_event_carries_the_bounded_message_and_the_whole_payload() {
    let server = Server::builder()
        .tool(HugePanic)
        .tool(Echoer)
        .build()
        .unwrap();
    let mut message = String::new();
    let events = recorded(|| async {
        let result = call(&server, "crasher", json!({"action": "boom"})).await;
        let body = result.json().expect("a JSON fault body");
        assert_eq!(body["errorType"], "tool_fault");
        message = body["message"].as_str().unwrap().to_owned();
        // The server lives on.
        let next = call(&server, "echoer", json!({"action": "fail"})).await;
        assert_eq!(next.text(), Some("Operation failed: nope"));
    });
    assert!(message.ends_with("…(+999800 chars)"), "bounded");
    let error = events.one("wymcp.tool.error");
    assert_eq!(error.field("error"), Some(message.as_str()));
    // Issue 19 (D15): the log gets the panic message bounded (4,096 characters) and escaped,
    // not whole: a 1 MB message is not written to the log a million bytes at a time.
    assert_eq!(
        error.field("crash_reason"),
        Some(format!("{}…(+995904 chars)", "x".repeat(4096)).as_str()),
        "crash_reason carries the payload bounded"
    );
}

struct ForgingPanic;

impl ActionTool for ForgingPanic {
    fn name(&self) -> &str {
        "forger"
    }
    fn description(&self) -> &str {
        "Panics with a message that looks like log lines"
    }
    fn actions(&self) -> Actions {
        Actions::new().action("boom", ActionSchema::new("Panics"))
    }
    async fn run_action(&self, _action: &str, _data: Data, _ctx: Context) -> ActionResult {
        panic!("real\n2026-12-01T00:00:00Z ERROR forged: admin logged in")
    }
}

#[test]
fn a_fault_event_escapes_the_panic_message_so_it_cannot_forge_log_lines() {
    let server = Server::builder().tool(ForgingPanic).build().unwrap();
    let events = recorded(|| async {
        assert!(
            call(&server, "forger", json!({"action": "boom"}))
                .await
                .is_error()
        );
    });
    let error = events.one("wymcp.tool.error");
    let logged = error.field("crash_reason").unwrap();
    assert!(!logged.contains('\n'), "{logged}");
    assert_eq!(
        logged,
        "real\\n2026-12-01T00:00:00Z ERROR forged: admin logged in"
    );
}

#[test]
fn help_called_reports_level_target_and_is_error() {
    let server = server();
    let events = recorded(|| async {
        assert!(!call(&server, "help", json!({})).await.is_error());
        assert!(
            !call(&server, "help", json!({"tool": "echoer"}))
                .await
                .is_error()
        );
        assert!(
            !call(&server, "help", json!({"tool": "echoer", "action": "echo"}))
                .await
                .is_error()
        );
        assert!(
            call(&server, "help", json!({"tool": "nope", "action": "get"}))
                .await
                .is_error()
        );
    });
    let helps = events.named("wymcp.help.called");
    assert_eq!(helps.len(), 4, "{helps:?}");
    let index = &helps[0];
    assert_eq!(index.field("level"), Some("index"));
    assert_eq!(index.field("is_error"), Some("false"));
    assert_eq!(index.field("session_id"), Some("session-1"));
    assert!(!index.has("tool") && !index.has("action"));
    let tool = &helps[1];
    assert_eq!(tool.field("level"), Some("tool"));
    assert_eq!(tool.field("tool"), Some("echoer"));
    let action = &helps[2];
    assert_eq!(action.field("level"), Some("action"));
    assert_eq!(action.field("tool"), Some("echoer"));
    assert_eq!(action.field("action"), Some("echo"));
    assert_eq!(action.field("is_error"), Some("false"));
    let probe = &helps[3];
    assert_eq!(probe.field("level"), Some("action"));
    assert_eq!(probe.field("tool"), Some("nope"));
    assert_eq!(probe.field("action"), Some("get"));
    assert_eq!(probe.field("is_error"), Some("true"));
}

// ---------------------------------------------------------------------------------------------
// Session, auth and server events, over real HTTP.

struct Http(http_harness::Http);

async fn start(configure: impl FnOnce(StreamableHttp) -> StreamableHttp) -> Http {
    Http(http_harness::Http::serve(configure(StreamableHttp::builder(server()))).await)
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"telemetry-test","version":"1.0"}}}"#;

impl Http {
    async fn post(&self, headers: &[(&str, &str)], body: &str) -> (u16, Option<String>, Value) {
        let answer = self.0.post_raw(headers, body.to_owned()).await;
        let session = answer.header("mcp-session-id").map(str::to_owned);
        (answer.status.as_u16(), session, answer.json_or_null())
    }

    async fn get(&self, headers: &[(&str, &str)]) -> u16 {
        let mut all = vec![("Accept", "text/event-stream")];
        all.extend_from_slice(headers);
        let response = self.0.send(reqwest::Method::GET, &all).await;
        response.status().as_u16()
    }
}

#[test]
fn initialize_emits_session_start_with_id_and_client_info() {
    let mut session = None;
    let events = recorded(|| async {
        let http = start(|b| b).await;
        let (status, id, _) = http.post(&[], INITIALIZE).await;
        assert_eq!(status, 200);
        session = id;
    });
    let session = session.expect("a session id");
    let start = events.one("wymcp.session.start");
    assert_eq!(start.field("session_id"), Some(session.as_str()));
    let client_info: Value = serde_json::from_str(start.field("client_info").unwrap()).unwrap();
    assert_eq!(
        client_info,
        json!({"name": "telemetry-test", "version": "1.0"})
    );
}

#[test]
fn an_unknown_session_emits_not_found_with_request_id_and_method() {
    let events = recorded(|| async {
        let http = start(|b| b).await;
        let (status, _, _) = http
            .post(
                &[
                    ("Mcp-Session-Id", "bogus"),
                    ("MCP-Protocol-Version", "2025-11-25"),
                ],
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            )
            .await;
        assert_eq!(status, 404);
    });
    let not_found = events.one("wymcp.session.not_found");
    assert_eq!(not_found.field("session_id"), Some("bogus"));
    assert_eq!(not_found.field("request_id"), Some("1"));
    assert_eq!(not_found.field("method"), Some("tools/list"));
}

#[test]
fn an_idle_session_emits_session_expired() {
    let mut session = None;
    let events = recorded(|| async {
        let http = start(|b| b.session_ttl(Duration::from_millis(50))).await;
        let (status, id, _) = http.post(&[], INITIALIZE).await;
        assert_eq!(status, 200);
        session = id;
        for _ in 0..100 {
            tokio::time::sleep(Duration::from_millis(20)).await;
            if !events_so_far().is_empty() {
                break;
            }
        }
    });
    let session = session.expect("a session id");
    let expired = events.one("wymcp.session.expired");
    assert_eq!(expired.field("session_id"), Some(session.as_str()));
}

/// The `wymcp.session.expired` events recorded so far by the current subscriber (the test's).
fn events_so_far() -> Vec<Captured> {
    tracing::dispatcher::get_default(|dispatch| {
        dispatch
            .downcast_ref::<Recorder>()
            .map(|r| r.named("wymcp.session.expired"))
            .unwrap_or_default()
    })
}

const SECRET: &str = "wrong-token-3f9a";

#[test]
fn an_auth_refusal_emits_auth_reject_without_reading_the_body_or_the_token() {
    let events = recorded(|| async {
        let auth = BearerAuth::new().token("right-token", Identity::new("alice"));
        let http = start(|b| b.auth(auth)).await;
        let bearer = format!("Bearer {SECRET}");
        let (status, _, _) = http
            .post(
                &[("Authorization", bearer.as_str())],
                r#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echoer"}}"#,
            )
            .await;
        assert_eq!(status, 401);
        assert_eq!(http.get(&[("Authorization", bearer.as_str())]).await, 401);
    });
    let rejects = events.named("wymcp.auth.reject");
    assert_eq!(rejects.len(), 2, "{rejects:?}");
    let post = &rejects[0];
    assert!(
        post.field("auth_module").unwrap().ends_with("BearerAuth"),
        "{post:?}"
    );
    assert_eq!(post.field("reason"), Some("invalid_token"));
    // The body of a refused caller is never read, so no request id or method is reported.
    assert!(!post.has("request_id") && !post.has("method"), "{post:?}");
    assert_eq!(post.field("http_method"), Some("POST"));
    let get = &rejects[1];
    assert_eq!(get.field("http_method"), Some("GET"));
    assert!(!get.has("request_id") && !get.has("method"), "{get:?}");
    events.assert_nowhere(SECRET);
}

struct PanickingAuth;

impl Authenticate for PanickingAuth {
    fn authenticate<'a>(
        &'a self,
        _headers: &'a axum::http::HeaderMap,
    ) -> BoxFuture<'a, Result<Identity, AuthRefusal>> {
        Box::pin(async { panic!("auth backend down") })
    }
}

#[test]
fn a_panicking_auth_hook_emits_auth_error() {
    let events = recorded(|| async {
        let http = start(|b| b.auth(PanickingAuth)).await;
        let (status, _, _) = http
            .post(
                &[],
                r#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echoer"}}"#,
            )
            .await;
        assert_eq!(status, 401);
    });
    let error = events.one("wymcp.auth.error");
    assert!(
        error
            .field("auth_module")
            .unwrap()
            .ends_with("PanickingAuth")
    );
    assert_eq!(error.field("exception"), Some("panic"));
    assert_eq!(error.field("error"), Some("auth backend down"));
    assert!(
        !error.has("request_id") && !error.has("method"),
        "{error:?}"
    );
    assert_eq!(error.field("http_method"), Some("POST"));
    assert!(events.named("wymcp.auth.reject").is_empty());
}

struct Gatekeeper;

impl SessionHooks for Gatekeeper {
    fn on_start<'a>(
        &'a self,
        start: SessionStart<'a>,
    ) -> BoxFuture<'a, Result<Map<String, Value>, String>> {
        Box::pin(async move {
            match start.client_info.get("name").and_then(Value::as_str) {
                Some("forbidden") => Err("forbidden: 42".to_owned()),
                Some("crash") => panic!("hook exploded"),
                _ => Ok(Map::new()),
            }
        })
    }
}

fn initialize_as(name: &str, id: u32) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": name, "version": "1"}}})
    .to_string()
}

#[test]
fn the_session_hook_refusing_or_panicking_emits_server_reject_or_error() {
    let events = recorded(|| async {
        let http = start(|b| b.session_hooks(Gatekeeper)).await;
        let (status, session, body) = http.post(&[], &initialize_as("forbidden", 2)).await;
        assert_eq!(status, 200);
        assert!(session.is_none());
        assert_eq!(body["error"]["data"]["reason"], "forbidden: 42");
        let (status, session, body) = http.post(&[], &initialize_as("crash", 3)).await;
        assert_eq!(status, 200);
        assert!(session.is_none());
        assert_eq!(body["error"]["code"], -32603);
        // The server lives on.
        let (status, session, _) = http.post(&[], &initialize_as("welcome", 4)).await;
        assert_eq!(status, 200);
        assert!(session.is_some());
    });
    let reject = events.one("wymcp.server.reject");
    assert_eq!(reject.field("server"), Some("telemetry"));
    assert_eq!(reject.field("reason"), Some("forbidden: 42"));
    assert_eq!(reject.field("request_id"), Some("2"));
    assert!(reject.has("session_id"));
    let error = events.one("wymcp.server.error");
    assert_eq!(error.field("server"), Some("telemetry"));
    assert_eq!(error.field("exception"), Some("panic"));
    assert_eq!(error.field("error"), Some("hook exploded"));
    assert_eq!(error.field("request_id"), Some("3"));
    assert!(error.has("session_id"));
    assert_eq!(events.named("wymcp.session.start").len(), 1);
}

#[test]
fn a_stdio_initialize_emits_session_start() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let events = recorded(|| async {
        let (client, served) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(served);
        let (client_read, mut client_write) = tokio::io::split(client);
        let stop = tokio_util::sync::CancellationToken::new();
        let serving = tokio::spawn(wymcp::transport::stdio::serve_io(
            server(),
            wymcp::transport::stdio::StdioConfig::default(),
            server_read,
            server_write,
            stop.clone(),
            |_: &wymcp::session::SessionHandle| {},
        ));
        client_write
            .write_all(format!("{INITIALIZE}\n").as_bytes())
            .await
            .unwrap();
        let mut lines = BufReader::new(client_read).lines();
        let answer: Value =
            serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
        assert_eq!(answer["result"]["serverInfo"]["name"], "telemetry");
        stop.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(5), serving).await;
    });
    let start = events.one("wymcp.session.start");
    assert!(start.has("session_id"));
    let client_info: Value = serde_json::from_str(start.field("client_info").unwrap()).unwrap();
    assert_eq!(client_info["name"], "telemetry-test");
}
