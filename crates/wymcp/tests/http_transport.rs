//! The Streamable HTTP transport over real HTTP on 127.0.0.1 (port 0): status codes, headers,
//! bodies, error codes, sessions, SSE — every answer of initialize, tools/list, tools/call and
//! ping validated against the official schema of the negotiated revision.

#![allow(clippy::unwrap_used, missing_docs)]

mod http_harness;
mod mcp_schema;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures_util::future::BoxFuture;
use http_harness::{Answer, Http, read_to_end, read_until};
use reqwest::StatusCode;
use serde_json::{Map, Value, json};
use tokio::sync::{Notify, oneshot};
use wymcp::Identity;
use wymcp::transport::http::{
    BearerAuth, EndReason, HttpServer, SessionHooks, SessionStart, StreamableHttp,
};
use wymcp::{CallOutput, CallResult, Context, PlainTool, ProtocolVersion, Server};

// ---------------------------------------------------------------------------------------------
// Tools

fn object(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

/// Answers what its context says: session id, revision, and a per-session call count kept in
/// the session's assigns.
struct WhoAmI;

impl PlainTool for WhoAmI {
    fn name(&self) -> &str {
        "whoami"
    }
    fn description(&self) -> &str {
        "Tells the caller what its context holds"
    }
    fn input_schema(&self) -> Map<String, Value> {
        object(json!({"type": "object", "properties": {}}))
    }
    async fn run(&self, _arguments: Map<String, Value>, ctx: Context) -> CallResult {
        let count = ctx
            .assigns()
            .get("count")
            .and_then(Value::as_i64)
            .unwrap_or(0)
            + 1;
        ctx.assign("count", json!(count));
        Ok(CallOutput::json(json!({
            "session_id": ctx.session_id(),
            "version": ctx.protocol_version().as_str(),
            "count": count,
            "request_id": ctx.request_id(),
            "identity": ctx.assigns().get("identity"),
            "hooked": ctx.assigns().get("hooked"),
        })))
    }
}

/// Sets a flag when dropped: proves a future was aborted.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Runs until cancelled; tells the test when it started, whether it was dropped, and keeps
/// its cancellation token for inspection.
struct Slow {
    started: Arc<Notify>,
    dropped: Arc<AtomicBool>,
    token: Arc<std::sync::Mutex<Option<tokio_util::sync::CancellationToken>>>,
}

impl PlainTool for Slow {
    fn name(&self) -> &str {
        "slow"
    }
    fn description(&self) -> &str {
        "Never finishes on its own"
    }
    fn input_schema(&self) -> Map<String, Value> {
        object(json!({"type": "object", "properties": {}}))
    }
    async fn run(&self, _arguments: Map<String, Value>, ctx: Context) -> CallResult {
        let _guard = DropFlag(self.dropped.clone());
        *self.token.lock().unwrap() = Some(ctx.cancellation().clone());
        self.started.notify_one();
        std::future::pending::<()>().await;
        Ok(CallOutput::text("unreachable"))
    }
}

/// Reports progress twice and logs once, then answers.
struct Progress;

impl PlainTool for Progress {
    fn name(&self) -> &str {
        "progress"
    }
    fn description(&self) -> &str {
        "Reports progress while it works"
    }
    fn input_schema(&self) -> Map<String, Value> {
        object(json!({"type": "object", "properties": {}}))
    }
    async fn run(&self, _arguments: Map<String, Value>, ctx: Context) -> CallResult {
        ctx.progress(1.0, Some(2.0), Some("half way"));
        ctx.notify(
            "notifications/message",
            json!({"level": "info", "data": "working"}),
        );
        ctx.progress(2.0, Some(2.0), None);
        Ok(CallOutput::text("done"))
    }
}

struct SlowProbe {
    started: Arc<Notify>,
    dropped: Arc<AtomicBool>,
    token: Arc<std::sync::Mutex<Option<tokio_util::sync::CancellationToken>>>,
}

fn server_with(instructions: Option<&str>) -> (Server, SlowProbe) {
    let probe = SlowProbe {
        started: Arc::new(Notify::new()),
        dropped: Arc::new(AtomicBool::new(false)),
        token: Arc::new(std::sync::Mutex::new(None)),
    };
    let mut builder = Server::builder()
        .name("http-test")
        .version("1.2.3")
        .title("HTTP test server")
        .plain_tool(WhoAmI)
        .plain_tool(Progress)
        .plain_tool(Slow {
            started: probe.started.clone(),
            dropped: probe.dropped.clone(),
            token: probe.token.clone(),
        });
    if let Some(text) = instructions {
        builder = builder.instructions(text);
    }
    (builder.build().unwrap(), probe)
}

// ---------------------------------------------------------------------------------------------
// Harness

struct Harness {
    http: Http,
    probe: SlowProbe,
}

http_harness::serves_http!(Harness);

async fn start_with(
    instructions: Option<&str>,
    configure: impl FnOnce(StreamableHttp) -> StreamableHttp,
) -> Harness {
    let (server, probe) = server_with(instructions);
    let http = Http::serve(configure(StreamableHttp::builder(server))).await;
    Harness { http, probe }
}

async fn start() -> Harness {
    start_with(None, |b| b).await
}

fn version(v: &str) -> ProtocolVersion {
    v.parse().unwrap()
}

/// Validates a response envelope as a `JSONRPCMessage` and its `result` as `definition`.
fn assert_valid(rev: &str, body: &Value, definition: &str) {
    let v = version(rev);
    let envelope = mcp_schema::validator(v, "JSONRPCMessage");
    let errors: Vec<String> = envelope.iter_errors(body).map(|e| e.to_string()).collect();
    assert!(
        errors.is_empty(),
        "{rev} JSONRPCMessage: {errors:?}\n{body}"
    );
    if let Some(result) = body.get("result") {
        let specific = mcp_schema::validator(v, definition);
        let errors: Vec<String> = specific
            .iter_errors(result)
            .map(|e| e.to_string())
            .collect();
        assert!(
            errors.is_empty(),
            "{rev} {definition}: {errors:?}\n{result}"
        );
    }
}

const REVISIONS: [&str; 3] = ["2025-03-26", "2025-06-18", "2025-11-25"];

// ---------------------------------------------------------------------------------------------
// initialize, ping

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initialize_echoes_supported_revisions_and_validates() {
    let h = start().await;
    for rev in REVISIONS {
        let (session, answer) = h.initialize(rev).await;
        let body = answer.json();
        assert_valid(rev, &body, "InitializeResult");
        assert!(
            answer
                .header("content-type")
                .unwrap()
                .starts_with("application/json")
        );
        assert_eq!(body["id"], 0);
        assert_eq!(body["result"]["protocolVersion"], rev);
        assert_eq!(body["result"]["capabilities"]["logging"], json!({}));
        assert!(body["result"]["capabilities"]["tools"].is_object());
        assert_eq!(body["result"]["serverInfo"]["name"], "http-test");
        assert_eq!(body["result"]["serverInfo"]["version"], "1.2.3");
        assert!(body["result"].get("instructions").is_none());
        assert_eq!(session.len(), 43);
        assert!(
            session
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initialize_counter_proposes_the_latest_for_unsupported_revisions() {
    let h = start().await;
    for requested in ["1999-01-01", "2024-11-05", "2026-07-28"] {
        let (_, answer) = h.initialize(requested).await;
        let body = answer.json();
        assert!(body.get("error").is_none());
        assert_eq!(body["result"]["protocolVersion"], "2025-11-25");
        assert_valid("2025-11-25", &body, "InitializeResult");
    }
    let answer = h
        .post(
            None,
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}),
        )
        .await;
    assert_eq!(answer.json()["result"]["protocolVersion"], "2025-11-25");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initialize_carries_instructions_and_title_gated_by_revision() {
    let h = start_with(Some("Use whoami first."), |b| b).await;
    let (_, answer) = h.initialize("2025-11-25").await;
    let body = answer.json();
    assert_eq!(body["result"]["instructions"], "Use whoami first.");
    assert_eq!(body["result"]["serverInfo"]["title"], "HTTP test server");
    let (_, answer) = h.initialize("2025-03-26").await;
    let body = answer.json();
    assert_valid("2025-03-26", &body, "InitializeResult");
    assert!(body["result"]["serverInfo"].get("title").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_ids_are_distinct() {
    let h = start().await;
    let mut ids = std::collections::HashSet::new();
    for _ in 0..10 {
        let (id, _) = h.initialize("2025-06-18").await;
        assert!(ids.insert(id));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ping_needs_no_session_and_validates() {
    let h = start().await;
    let answer = h
        .post(
            None,
            &json!({"jsonrpc": "2.0", "id": "p", "method": "ping"}),
        )
        .await;
    assert_eq!(answer.status, StatusCode::OK);
    let body = answer.json();
    assert_eq!(body, json!({"jsonrpc": "2.0", "id": "p", "result": {}}));
    for rev in REVISIONS {
        assert_valid(rev, &body, "EmptyResult");
    }
    // Also with a session, and with an unknown one.
    let session = h.ready("2025-06-18").await;
    let answer = h
        .post(
            Some(&session),
            &json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
        )
        .await;
    assert_eq!(answer.json()["result"], json!({}));
    let answer = h
        .post(
            Some("bogus"),
            &json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}),
        )
        .await;
    assert_eq!(answer.status, StatusCode::OK);
}

// ---------------------------------------------------------------------------------------------
// tools

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_list_and_call_validate_for_every_revision() {
    let h = start().await;
    for rev in REVISIONS {
        let session = h.ready(rev).await;
        let answer = h
            .post(
                Some(&session),
                &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
            )
            .await;
        assert_eq!(answer.status, StatusCode::OK);
        let body = answer.json();
        assert_valid(rev, &body, "ListToolsResult");
        let names: Vec<&str> = body["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert_eq!(names, ["whoami", "progress", "slow", "help"]);

        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                          "params": {"name": "whoami", "arguments": {}}});
        let answer = h.post(Some(&session), &call).await;
        assert_eq!(answer.status, StatusCode::OK);
        let body = answer.json();
        assert_valid(rev, &body, "CallToolResult");
        let text = body["result"]["content"][0]["text"].as_str().unwrap();
        let seen: Value = serde_json::from_str(text).unwrap();
        assert_eq!(seen["session_id"], session.as_str());
        assert_eq!(seen["version"], rev);
        assert_eq!(seen["count"], 1);
        assert_eq!(seen["request_id"], 2);

        // The session's assigns outlive the call.
        let body = h.post(Some(&session), &call).await.json();
        let seen: Value =
            serde_json::from_str(body["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(seen["count"], 2);

        // Gate refusals are tool results; unknown tools are -32602.
        let body = h
            .post(
                Some(&session),
                &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                "params": {"name": "whoami", "arguments": {"bogus": 1}}}),
            )
            .await
            .json();
        assert_valid(rev, &body, "CallToolResult");
        assert_eq!(body["result"]["isError"], true);
        let body = h
            .post(
                Some(&session),
                &json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                "params": {"name": "nope"}}),
            )
            .await
            .json();
        assert_valid(rev, &body, "CallToolResult");
        assert_eq!(body["error"]["code"], -32602);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_do_not_share_assigns() {
    let h = start().await;
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": "whoami", "arguments": {}}});
    let a = h.ready("2025-11-25").await;
    let b = h.ready("2025-11-25").await;
    h.post(Some(&a), &call).await;
    let body = h.post(Some(&b), &call).await.json();
    let seen: Value =
        serde_json::from_str(body["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(seen["count"], 1);
}

/// Calls the `slow` tool (which runs until cancelled) as request `id` of `session`, in a task
/// answering the response's status and body, and waits until the tool runs.
async fn start_slow_call(
    h: &Harness,
    session: &str,
    id: Value,
) -> tokio::task::JoinHandle<(StatusCode, String)> {
    let started = h.probe.started.clone();
    let (url, client, session) = (h.url.clone(), h.client.clone(), session.to_owned());
    let call = tokio::spawn(async move {
        let resp = client
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", session)
            .body(
                json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                       "params": {"name": "slow", "arguments": {}}})
                .to_string(),
            )
            .send()
            .await
            .unwrap();
        (resp.status(), resp.text().await.unwrap())
    });
    started.notified().await;
    call
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_call_is_aborted_and_gets_no_response() {
    let h = start().await;
    let session = h.ready("2025-11-25").await;
    let call = start_slow_call(&h, &session, json!("call-7")).await;
    let cancel = h
        .post(
            Some(&session),
            &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": "call-7", "reason": "user gave up"}}),
        )
        .await;
    assert_eq!(cancel.status, StatusCode::ACCEPTED);
    assert_eq!(cancel.text, "");
    let (status, text) = call.await.unwrap();
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(text, "", "a cancelled request gets no JSON-RPC response");
    assert!(
        h.probe.dropped.load(Ordering::SeqCst),
        "the tool's future was aborted"
    );
    let token = h.probe.token.lock().unwrap().clone().unwrap();
    assert!(
        token.is_cancelled(),
        "the tool's context saw the cancellation"
    );
    // Cancelling an unknown request is accepted too.
    let again = h
        .post(
            Some(&session),
            &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 999}}),
        )
        .await;
    assert_eq!(again.status, StatusCode::ACCEPTED);
}

// ---------------------------------------------------------------------------------------------
// JSON-RPC envelope

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_json_is_a_parse_error() {
    let h = start().await;
    let answer = h.post_raw(&[], "{not valid json}").await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    let body = answer.json();
    assert_eq!(body["id"], Value::Null);
    assert_eq!(body["error"]["code"], -32700);
    assert_eq!(body["error"]["message"], "Parse error");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn non_json_content_type_is_415() {
    let h = start().await;
    let answer = h
        .post_raw(
            &[("content-type", "text/plain")],
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        )
        .await;
    assert_eq!(answer.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let body = answer.json();
    assert_eq!(body["id"], Value::Null);
    assert_eq!(body["error"]["code"], -32600);
    // A charset parameter is fine.
    let answer = h
        .post_raw(
            &[("content-type", "application/json; charset=utf-8")],
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        )
        .await;
    assert_eq!(answer.status, StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversize_body_is_413() {
    let h = start_with(None, |b| b.body_limit(64)).await;
    let big =
        json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "x".repeat(200)}});
    let answer = h.post(None, &big).await;
    assert_eq!(answer.status, StatusCode::PAYLOAD_TOO_LARGE);
    let body = answer.json();
    assert_eq!(body["id"], Value::Null);
    assert_eq!(body["error"]["code"], -32600);
    assert_eq!(
        body["error"]["data"]["error"],
        "Payload Too Large: the body limit is 64 bytes (StreamableHttp::body_limit)"
    );
    // Chunked (no content-length) is limited too.
    let chunks = futures_util::stream::iter(vec![Ok::<_, std::io::Error>(big.to_string())]);
    let answer = h.post_raw(&[], reqwest::Body::wrap_stream(chunks)).await;
    assert_eq!(answer.status, StatusCode::PAYLOAD_TOO_LARGE);
    // Small bodies pass.
    let answer = h
        .post(None, &json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        .await;
    assert_eq!(answer.status, StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn default_body_limit_is_4_mib() {
    assert_eq!(wymcp::transport::http::DEFAULT_BODY_LIMIT, 4 * 1024 * 1024);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_envelopes_are_refused_with_the_rejection_id() {
    let h = start().await;
    let session = h.ready("2025-11-25").await;
    let answer = h
        .post(Some(&session), &json!({"jsonrpc": "2.0", "id": 42}))
        .await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    let body = answer.json();
    assert_eq!(body["id"], Value::Null);
    assert_eq!(body["error"]["code"], -32600);
    let answer = h
        .post(
            Some(&session),
            &json!({"jsonrpc": "1.0", "id": 5, "method": "tools/list"}),
        )
        .await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert_eq!(answer.json()["id"], 5);
    let answer = h
        .post(
            Some(&session),
            &json!({"jsonrpc": "2.0", "id": 6, "method": "tools/list", "params": [1]}),
        )
        .await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert_eq!(answer.json()["id"], 6);
    let answer = h
        .post(None, &json!({"jsonrpc": "1.0", "id": 7, "method": "ping"}))
        .await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert_eq!(answer.json()["id"], 7);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_request_methods_are_404_without_echo() {
    let h = start().await;
    let session = h.ready("2025-11-25").await;
    let answer = h
        .post(
            Some(&session),
            &json!({"jsonrpc": "2.0", "id": 7, "method": "tools/frobnicate"}),
        )
        .await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
    let body = answer.json();
    assert_eq!(body["id"], 7);
    assert_eq!(body["error"]["code"], -32601);
    assert_eq!(body["error"]["message"], "Method not found");
    assert!(!answer.text.contains("frobnicate"));
    assert_valid("2025-11-25", &body, "Result");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notifications_and_client_responses_are_202_without_body() {
    let h = start().await;
    let session = h.ready("2025-11-25").await;
    for body in [
        json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}),
        json!({"jsonrpc": "2.0", "method": "notifications/progress",
               "params": {"progressToken": 1, "progress": 1}}),
        json!({"jsonrpc": "2.0", "id": "srv-x", "result": {}}),
        json!({"jsonrpc": "2.0", "id": "srv-y", "error": {"code": -1, "message": "no"}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ] {
        let answer = h.post(Some(&session), &body).await;
        assert_eq!(answer.status, StatusCode::ACCEPTED, "{body}");
        assert_eq!(answer.text, "");
        assert!(answer.header("content-type").is_none());
    }
    // A client response without a session is still refused.
    let answer = h
        .post(
            None,
            &json!({"jsonrpc": "2.0", "id": "srv-x", "result": {}}),
        )
        .await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert_eq!(answer.json()["id"], Value::Null);
}

// ---------------------------------------------------------------------------------------------
// Sessions

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_session_header_is_400_with_the_request_id() {
    let h = start().await;
    let answer = h
        .post(
            None,
            &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        )
        .await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    let body = answer.json();
    assert_eq!(body["id"], 1);
    assert_eq!(body["error"]["code"], -32600);
    assert!(
        body["error"]["data"]["error"]
            .as_str()
            .unwrap()
            .contains("Missing Mcp-Session-Id")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_session_is_404() {
    let h = start().await;
    let answer = h
        .post(
            Some("bogus"),
            &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        )
        .await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
    assert_eq!(
        answer.json(),
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "Session terminated"}})
    );
    for body in [
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": "srv", "result": {}}),
        json!({"jsonrpc": "2.0", "id": 42}),
    ] {
        let answer = h.post(Some("bogus"), &body).await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND);
        assert_eq!(answer.text, "");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicated_session_or_version_headers_are_400() {
    let h = start().await;
    let session = h.ready("2025-11-25").await;
    let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}).to_string();
    let answer = h
        .post_raw(
            &[("mcp-session-id", &session), ("mcp-session-id", &session)],
            list.clone(),
        )
        .await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert!(answer.text.contains("Duplicated Mcp-Session-Id"));
    let answer = h
        .post_raw(
            &[
                ("mcp-protocol-version", "2025-11-25"),
                ("mcp-protocol-version", "2025-11-25"),
            ],
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}).to_string(),
        )
        .await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert!(answer.text.contains("Duplicated MCP-Protocol-Version"));
    assert!(answer.header("mcp-session-id").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lifecycle_gate_before_initialized() {
    let h = start().await;
    let (session, _) = h.initialize("2025-11-25").await;
    let answer = h
        .post(
            Some(&session),
            &json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}),
        )
        .await;
    assert_eq!(answer.status, StatusCode::OK);
    let answer = h
        .post(
            Some(&session),
            &json!({"jsonrpc": "2.0", "id": 5, "method": "logging/setLevel",
            "params": {"level": "info"}}),
        )
        .await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    let body = answer.json();
    assert_eq!(body["id"], 5);
    assert!(
        body["error"]["data"]["error"]
            .as_str()
            .unwrap()
            .contains("Session not yet initialized")
    );
}

/// `tools/list` in `session`, sent with an `MCP-Protocol-Version` header.
async fn list_with_version(h: &Harness, session: &str, version: &str) -> Answer {
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    h.post_raw(
        &[
            ("mcp-session-id", session),
            ("mcp-protocol-version", version),
        ],
        list,
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protocol_version_header_rules() {
    // By default a supported revision other than the session's is served (the specification
    // refuses only invalid or unsupported ones; the official conformance suite sends
    // 2025-03-26 on a 2025-11-25 session).
    let lenient = start().await;
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    let s = lenient.ready("2025-11-25").await;
    let answer = list_with_version(&lenient, &s, "2025-03-26").await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
    let answer = list_with_version(&lenient, &s, "1999-01-01").await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        answer.refusal_reason(),
        "Unsupported MCP-Protocol-Version header: 1999-01-01. Supported: 2025-11-25, 2025-06-18, 2025-03-26."
    );
    // A header value that is not visible ASCII names no revision either.
    let answer = list_with_version(&lenient, &s, "2025-11-25\u{e9}").await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert!(
        answer.refusal_reason().contains("header: <not text>."),
        "{}",
        answer.text
    );

    // Strict: the header must name the negotiated revision (2025-06-18 and later sessions).
    let h = start_with(None, |b| b.strict_version_header(true)).await;
    let s = h.ready("2025-06-18").await;
    let answer = list_with_version(&h, &s, "2025-03-26").await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert!(
        answer.refusal_reason().contains("MCP-Protocol-Version"),
        "{}",
        answer.text
    );
    let answer = list_with_version(&h, &s, "2025-06-18").await;
    assert_eq!(answer.status, StatusCode::OK);
    let answer = h.post_raw(&[("mcp-session-id", &s)], list).await;
    assert_eq!(answer.status, StatusCode::OK);
    let answer = list_with_version(&h, &s, "1999-01-01").await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    let old = h.ready("2025-03-26").await;
    let answer = list_with_version(&h, &old, "2025-11-25").await;
    assert_eq!(answer.status, StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logging_set_level() {
    let h = start().await;
    let session = h.ready("2025-11-25").await;
    for level in [
        "debug",
        "info",
        "notice",
        "warning",
        "error",
        "critical",
        "alert",
        "emergency",
    ] {
        let body = h
            .post(
                Some(&session),
                &json!({"jsonrpc": "2.0", "id": 1, "method": "logging/setLevel",
                "params": {"level": level}}),
            )
            .await
            .json();
        assert_eq!(body["result"], json!({}), "{level}");
    }
    let body = h
        .post(
            Some(&session),
            &json!({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel",
            "params": {"level": "verbose"}}),
        )
        .await
        .json();
    assert_eq!(body["error"]["code"], -32602);
    assert_eq!(
        body["error"]["data"]["reason"],
        "Invalid log level: \"verbose\""
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_ends_the_session() {
    let h = start().await;
    let session = h.ready("2025-11-25").await;
    let resp = h
        .send(reqwest::Method::DELETE, &[("mcp-session-id", &session)])
        .await;
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.text().await.unwrap(), "");
    let answer = h
        .post(
            Some(&session),
            &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        )
        .await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
    let resp = h
        .send(reqwest::Method::DELETE, &[("mcp-session-id", &session)])
        .await;
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
    assert_eq!(
        resp.json::<Value>().await.unwrap(),
        json!({"error": "Session not found"})
    );
    let resp = h.send(reqwest::Method::DELETE, &[]).await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    assert!(
        resp.text()
            .await
            .unwrap()
            .contains("Missing mcp-session-id header")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_cancels_the_sessions_running_calls() {
    let h = start().await;
    let session = h.ready("2025-11-25").await;
    let call = start_slow_call(&h, &session, json!(8)).await;
    let resp = h
        .send(reqwest::Method::DELETE, &[("mcp-session-id", &session)])
        .await;
    assert_eq!(resp.status(), StatusCode::OK);
    // The slow tool never ends by itself: only the cancellation ends the call.
    let (status, text) = tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .expect("ending the session ends its running call")
        .unwrap();
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(
        text, "",
        "a call cancelled by the session's end gets no response"
    );
    let token = h.probe.token.lock().unwrap().clone().unwrap();
    assert!(
        token.is_cancelled(),
        "the tool's context saw the session end"
    );
    assert!(
        h.probe.dropped.load(Ordering::SeqCst),
        "the tool's future was aborted"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_sessions_expire() {
    // A zero idle time: the session is expired by its next request, no clock needed.
    let h = start_with(None, |b| b.session_ttl(Duration::ZERO)).await;
    let (session, _) = h.initialize("2025-11-25").await;
    let answer = h
        .post(
            Some(&session),
            &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        )
        .await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
    assert_eq!(answer.json()["error"]["code"], -32001);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_sessions_are_capped() {
    let h = start_with(None, |b| b.max_sessions(2)).await;
    let a = h.ready("2025-11-25").await;
    h.initialize("2025-11-25").await;
    let answer = h
        .post(
            None,
            &json!({"jsonrpc": "2.0", "id": 9, "method": "initialize", "params": {}}),
        )
        .await;
    assert_eq!(answer.status, StatusCode::SERVICE_UNAVAILABLE);
    let body = answer.json();
    assert_eq!(body["id"], 9);
    assert!(
        body["error"]["data"]["error"]
            .as_str()
            .unwrap()
            .contains("Too many sessions")
    );
    assert!(answer.header("mcp-session-id").is_none());
    // Ending one frees a place.
    let resp = h
        .send(reqwest::Method::DELETE, &[("mcp-session-id", &a)])
        .await;
    assert_eq!(resp.status(), StatusCode::OK);
    h.initialize("2025-11-25").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batches_only_for_2025_03_26_sessions() {
    let h = start().await;
    let old = h.ready("2025-03-26").await;
    let batch = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "nope"}
    ]);
    let answer = h.post(Some(&old), &batch).await;
    assert_eq!(answer.status, StatusCode::OK);
    let body = answer.json();
    let items = body.as_array().unwrap();
    assert_eq!(items.len(), 3);
    assert_eq!(items[0]["id"], 1);
    assert_eq!(items[1]["id"], 2);
    assert_eq!(items[2]["error"]["code"], -32601);
    let v = mcp_schema::validator(ProtocolVersion::V2025_03_26, "JSONRPCBatchResponse");
    assert!(v.is_valid(&body), "{body}");
    let only_notes = json!([{"jsonrpc": "2.0", "method": "notifications/initialized"}]);
    let answer = h.post(Some(&old), &only_notes).await;
    assert_eq!(answer.status, StatusCode::ACCEPTED);

    let new = h.ready("2025-06-18").await;
    let answer = h.post(Some(&new), &batch).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    let body = answer.json();
    assert_eq!(body["id"], Value::Null);
    assert_eq!(body["error"]["code"], -32600);
}

// ---------------------------------------------------------------------------------------------
// Wire checks

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dns_rebinding_is_refused_by_default_on_loopback() {
    let h = start().await;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    let answer = h
        .post_raw(&[("host", "evil.example.com")], ping.clone())
        .await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN);
    assert_eq!(answer.json()["id"], Value::Null);
    let answer = h
        .post_raw(&[("origin", "http://evil.example.com")], ping.clone())
        .await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN);
    assert_eq!(answer.json()["error"]["code"], -32600);
    let answer = h
        .post_raw(&[("origin", "http://localhost:5173")], ping.clone())
        .await;
    assert_eq!(answer.status, StatusCode::OK);
    let answer = h
        .post_raw(&[("host", "localhost:1234")], ping.clone())
        .await;
    assert_eq!(answer.status, StatusCode::OK);
    // Host names compare without regard to case; a refusal names the host lowercased.
    let answer = h
        .post_raw(&[("host", "LocalHost:1234")], ping.clone())
        .await;
    assert_eq!(answer.status, StatusCode::OK);
    let answer = h
        .post_raw(&[("origin", "http://LOCALHOST:5173")], ping.clone())
        .await;
    assert_eq!(answer.status, StatusCode::OK);
    let answer = h.post_raw(&[("host", "Evil.Example.COM:80")], ping).await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN);
    assert_eq!(
        answer.refusal_reason(),
        "Host not allowed: evil.example.com"
    );
    let resp = h
        .send(reqwest::Method::GET, &[("host", "evil.example.com")])
        .await;
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    assert!(resp.text().await.unwrap().contains("Host not allowed"));
    let resp = h
        .send(
            reqwest::Method::DELETE,
            &[("origin", "http://evil.example.com")],
        )
        .await;
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowlists_are_configurable() {
    let h = start_with(None, |b| {
        b.allowed_origins(["https://app.example"])
            .allowed_hosts(["127.0.0.1", "mcp.example"])
    })
    .await;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    assert_eq!(
        h.post_raw(&[("origin", "https://app.example")], ping.clone())
            .await
            .status,
        StatusCode::OK
    );
    assert_eq!(
        h.post_raw(&[("origin", "http://localhost")], ping.clone())
            .await
            .status,
        StatusCode::FORBIDDEN
    );
    let answer = h
        .post_raw(
            &[
                ("origin", "https://app.example"),
                ("origin", "https://app.example"),
            ],
            ping.clone(),
        )
        .await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        h.post_raw(&[("host", "mcp.example")], ping.clone())
            .await
            .status,
        StatusCode::OK
    );
    assert_eq!(
        h.post_raw(&[("host", "localhost")], ping).await.status,
        StatusCode::FORBIDDEN
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accept_header_is_checked() {
    let h = start().await;
    let resp = h
        .client
        .post(&h.url)
        .header("content-type", "application/json")
        .header("accept", "text/html")
        .body(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::NOT_ACCEPTABLE);
    let session = h.ready("2025-11-25").await;
    let resp = h
        .send(
            reqwest::Method::GET,
            &[("mcp-session-id", &session), ("accept", "application/json")],
        )
        .await;
    assert_eq!(resp.status(), StatusCode::NOT_ACCEPTABLE);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_verbs_are_refused() {
    let h = start().await;
    let resp = h.send(reqwest::Method::PUT, &[]).await;
    assert_eq!(resp.status(), StatusCode::METHOD_NOT_ALLOWED);
    let resp = h
        .client
        .get(format!("{}/elsewhere", h.url))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
}

// ---------------------------------------------------------------------------------------------
// GET: the SSE stream

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_refusals_speak_plain_json() {
    let h = start().await;
    let resp = h
        .send(reqwest::Method::GET, &[("accept", "text/event-stream")])
        .await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    assert_eq!(
        resp.json::<Value>().await.unwrap(),
        json!({"error": "Missing mcp-session-id header"})
    );
    let resp = h
        .send(
            reqwest::Method::GET,
            &[("accept", "text/event-stream"), ("mcp-session-id", "bogus")],
        )
        .await;
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
    assert_eq!(
        resp.json::<Value>().await.unwrap(),
        json!({"error": "Session not found"})
    );
    // An unsupported version header is refused in POST's words.
    let resp = h
        .send(
            reqwest::Method::GET,
            &[
                ("accept", "text/event-stream"),
                ("mcp-session-id", "bogus"),
                ("mcp-protocol-version", "1999-01-01"),
            ],
        )
        .await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    assert_eq!(
        resp.json::<Value>().await.unwrap(),
        json!({"error": "Unsupported MCP-Protocol-Version header: 1999-01-01. Supported: 2025-11-25, 2025-06-18, 2025-03-26."})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_stream_primes_pushes_and_ends_with_the_session() {
    let h = start_with(None, |b| b.sse_retry(Duration::from_millis(1500))).await;
    let session = h.ready("2025-11-25").await;
    let mut resp = h.get_stream(&session, &[]).await;
    assert!(
        resp.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    assert_eq!(resp.headers()["cache-control"], "no-cache");
    let mut buf = String::new();
    read_until(&mut resp, &mut buf, "\n\n").await;
    assert_eq!(buf, "id: get.1\nretry: 1500\ndata: \n\n");
    let note = json!({"jsonrpc": "2.0", "method": "notifications/message",
                      "params": {"level": "info", "data": "hello"}});
    assert!(h.service.push(&session, &note).await.unwrap());
    read_until(&mut resp, &mut buf, "hello").await;
    assert!(
        buf.contains(&format!("id: get.2\ndata: {note}\n\n")),
        "{buf:?}"
    );
    let v = mcp_schema::validator(ProtocolVersion::V2025_11_25, "JSONRPCMessage");
    assert!(v.is_valid(&note));
    // DELETE ends the stream.
    let del = h
        .send(reqwest::Method::DELETE, &[("mcp-session-id", &session)])
        .await;
    assert_eq!(del.status(), StatusCode::OK);
    read_to_end(&mut resp, &mut buf).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_get_replaces_the_stream_and_event_ids_stay_unique() {
    let h = start().await;
    let session = h.ready("2025-11-25").await;
    let headers = [
        ("accept", "text/event-stream"),
        ("mcp-session-id", session.as_str()),
    ];
    let mut first = h.send(reqwest::Method::GET, &headers).await;
    let mut buf1 = String::new();
    read_until(&mut first, &mut buf1, "\n\n").await;
    let mut second = h.send(reqwest::Method::GET, &headers).await;
    assert_eq!(second.status(), StatusCode::OK);
    read_to_end(&mut first, &mut buf1).await;
    let mut buf2 = String::new();
    read_until(&mut second, &mut buf2, "\n\n").await;
    assert!(buf1.starts_with("id: get.1\n"), "{buf1:?}");
    assert!(buf2.starts_with("id: get.2\n"), "{buf2:?}");
    // The second is the registered stream.
    let note = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
    assert!(h.service.push(&session, &note).await.unwrap());
    read_until(&mut second, &mut buf2, "list_changed").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keepalive_comments_flow() {
    let h = start_with(None, |b| b.keepalive(Duration::from_millis(5))).await;
    let session = h.ready("2025-11-25").await;
    let mut resp = h.get_stream(&session, &[]).await;
    let mut buf = String::new();
    read_until(&mut resp, &mut buf, ":keepalive\n\n").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn last_event_id_replays_missed_events() {
    let h = start().await;
    let session = h.ready("2025-11-25").await;
    let headers = [
        ("accept", "text/event-stream"),
        ("mcp-session-id", session.as_str()),
    ];
    let mut first = h.send(reqwest::Method::GET, &headers).await;
    let mut buf = String::new();
    read_until(&mut first, &mut buf, "\n\n").await;
    drop(first);
    // Sent while the client is away (logged even when no stream takes it).
    let missed = json!({"jsonrpc": "2.0", "method": "notifications/message",
                        "params": {"level": "info", "data": "missed"}});
    h.service.push(&session, &missed).await.unwrap();
    let mut again = h.get_stream(&session, &[("last-event-id", "get.1")]).await;
    let mut buf = String::new();
    read_until(&mut again, &mut buf, "missed").await;
    assert!(
        buf.starts_with(&format!("id: get.2\ndata: {missed}\n\n")),
        "{buf:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Mounting

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mounts_in_an_axum_router() {
    let (server, _) = server_with(None);
    let service = StreamableHttp::builder(server).build();
    let app = axum::Router::new()
        .route("/health", axum::routing::get(|| async { "ok" }))
        .nest_service("/api/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = oneshot::channel::<()>();
    tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = rx.await;
            })
            .await
    });
    let client = reqwest::Client::new();
    let resp = client
        .post(format!("http://{addr}/api/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                     "params": {"protocolVersion": "2025-06-18"}})
            .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert!(resp.headers().contains_key("mcp-session-id"));
    let body: Value = resp.json().await.unwrap();
    assert_valid("2025-06-18", &body, "InitializeResult");
    let health = client
        .get(format!("http://{addr}/health"))
        .send()
        .await
        .unwrap();
    assert_eq!(health.text().await.unwrap(), "ok");
    let _ = tx.send(());
}

// ---------------------------------------------------------------------------------------------
// Auth

async fn start_with_auth() -> Harness {
    start_with(None, |b| {
        b.auth(
            BearerAuth::new()
                .token(
                    "alice-token",
                    Identity::new("alice").claim("scope", json!("mcp")),
                )
                .verifier(|t| t.strip_prefix("user-").map(Identity::new)),
        )
        .www_authenticate([
            ("resource_metadata", "https://example.com/prm"),
            ("realm", "my \"realm\""),
        ])
    })
    .await
}

const CHALLENGE: &str =
    r#"Bearer resource_metadata="https://example.com/prm", realm="my \"realm\"""#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_refusals_are_401_with_a_bearer_challenge() {
    let h = start_with_auth().await;
    let list = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}).to_string();
    let answer = h.post_raw(&[], list.clone()).await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
    assert_eq!(answer.header("www-authenticate"), Some(CHALLENGE));
    let body = answer.json();
    assert_eq!(body["id"], Value::Null);
    assert_eq!(body["error"]["code"], -32600);
    assert_eq!(body["error"]["data"]["error"], "Unauthorized");
    let answer = h.post_raw(&[("authorization", "Bearer wrong")], list).await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
    // Presented and refused: RFC 6750's error code joins the challenge.
    assert_eq!(
        answer.header("www-authenticate"),
        Some(format!(r#"{CHALLENGE}, error="invalid_token""#).as_str())
    );
    assert_eq!(answer.refusal_reason(), "invalid_token");
    for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
        let resp = h.send(method, &[("mcp-session-id", "whatever")]).await;
        assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(resp.headers()["www-authenticate"], CHALLENGE);
        assert_eq!(
            resp.json::<Value>().await.unwrap(),
            json!({"error": "Unauthorized"})
        );
    }
    // Origin refusals beat auth.
    let answer = h
        .post_raw(
            &[("origin", "http://evil.example")],
            json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string(),
        )
        .await;
    assert_eq!(answer.status, StatusCode::FORBIDDEN);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_auth_hook_is_a_401_authentication_error_and_the_server_lives_on() {
    let h = start_with(None, |b| {
        b.auth(BearerAuth::new().verifier(|token| {
            if token == "boom" {
                panic!("verifier bug");
            }
            token.strip_prefix("user-").map(Identity::new)
        }))
    })
    .await;
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    let answer = h
        .post_raw(&[("authorization", "Bearer boom")], ping.clone())
        .await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
    assert_eq!(answer.header("www-authenticate"), Some("Bearer"));
    assert_eq!(answer.refusal_reason(), "Authentication error");
    let answer = h
        .post_raw(&[("authorization", "Bearer user-bob")], ping)
        .await;
    assert_eq!(answer.status, StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identity_reaches_tools_and_binds_the_session() {
    let h = start_with_auth().await;
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                      "params": {"protocolVersion": "2025-11-25"}})
    .to_string();
    let answer = h
        .post_raw(&[("authorization", "Bearer alice-token")], init)
        .await;
    assert_eq!(answer.status, StatusCode::OK);
    let session = answer.header("mcp-session-id").unwrap().to_owned();
    let alice = [
        ("authorization", "Bearer alice-token"),
        ("mcp-session-id", session.as_str()),
    ];
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    assert_eq!(h.post_raw(&alice, note).await.status, StatusCode::ACCEPTED);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": "whoami", "arguments": {}}})
    .to_string();
    let body = h.post_raw(&alice, call.clone()).await.json();
    let seen: Value =
        serde_json::from_str(body["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        seen["identity"],
        json!({"subject": "alice", "claims": {"scope": "mcp"}})
    );
    // Another authenticated caller does not see alice's session.
    let bob = [
        ("authorization", "Bearer user-bob"),
        ("mcp-session-id", session.as_str()),
    ];
    let answer = h.post_raw(&bob, call).await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
    assert_eq!(answer.json()["error"]["code"], -32001);
    let resp = h.send(reqwest::Method::DELETE, &bob).await;
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
    let resp = h.send(reqwest::Method::DELETE, &alice).await;
    assert_eq!(resp.status(), StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protected_resource_metadata_is_served() {
    let metadata = json!({"resource": "http://127.0.0.1/mcp",
                          "authorization_servers": ["https://auth.example.com"],
                          "scopes_supported": ["mcp"]});
    let m = metadata.clone();
    let h = start_with(None, move |b| b.protected_resource(m)).await;
    let base = h.url.trim_end_matches("/mcp").to_owned();
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let resp = h.client.get(format!("{base}{path}")).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK, "{path}");
        assert!(
            resp.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("application/json")
        );
        assert_eq!(resp.json::<Value>().await.unwrap(), metadata);
    }
}

// ---------------------------------------------------------------------------------------------
// Scale, expiry, shutdown

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keeps_answering_with_a_thousand_sessions_open() {
    let h = Arc::new(start().await);
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let h = h.clone();
        tasks.push(tokio::spawn(async move {
            let mut ids = Vec::new();
            for _ in 0..125 {
                ids.push(h.initialize("2025-11-25").await.0);
            }
            ids
        }));
    }
    let mut ids = std::collections::HashSet::new();
    for t in tasks {
        ids.extend(t.await.unwrap());
    }
    assert_eq!(ids.len(), 1000);
    let session = h.ready("2025-11-25").await;
    let answer = h
        .post(
            Some(&session),
            &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        )
        .await;
    assert_eq!(answer.status, StatusCode::OK);
    let first = ids.iter().next().unwrap();
    let answer = h
        .post(
            Some(first),
            &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        )
        .await;
    assert_eq!(answer.status, StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_sessions_free_their_places() {
    let h = start_with(None, |b| b.session_ttl(Duration::ZERO).max_sessions(1)).await;
    h.initialize("2025-11-25").await;
    // The first session is already idle past its (zero) TTL, so it no longer counts.
    h.initialize("2025-11-25").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graceful_shutdown_closes_open_streams() {
    let (server, _) = server_with(None);
    let http = HttpServer::bind("127.0.0.1:0", StreamableHttp::builder(server))
        .await
        .unwrap();
    let url = format!("http://{}/mcp", http.local_addr().unwrap());
    let (tx, rx) = oneshot::channel::<()>();
    let running = tokio::spawn(http.run_until(async move {
        let _ = rx.await;
    }));
    let client = reqwest::Client::new();
    let answer = client
        .post(&url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}).to_string())
        .send()
        .await
        .unwrap();
    let session = answer.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let mut stream = client
        .get(&url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    let mut buf = String::new();
    read_until(&mut stream, &mut buf, "\n\n").await;
    tx.send(()).unwrap();
    read_to_end(&mut stream, &mut buf).await;
    let result = tokio::time::timeout(Duration::from_secs(20), running)
        .await
        .expect("the server should stop")
        .unwrap();
    assert!(result.is_ok());
}

// ---------------------------------------------------------------------------------------------
// Session hooks

#[derive(Clone, Default)]
struct Hooks {
    ended: Arc<std::sync::Mutex<Vec<(String, EndReason)>>>,
    notify: Arc<Notify>,
}

impl SessionHooks for Hooks {
    fn on_start<'a>(
        &'a self,
        start: SessionStart<'a>,
    ) -> BoxFuture<'a, Result<Map<String, Value>, String>> {
        Box::pin(async move {
            if start.client_info.get("name") != Some(&json!("test-client")) {
                return Err("access denied: unknown client".to_owned());
            }
            Ok(object(json!({"hooked": start.version.as_str()})))
        })
    }

    fn on_end<'a>(&'a self, session_id: &'a str, reason: EndReason) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            self.ended
                .lock()
                .unwrap()
                .push((session_id.to_owned(), reason));
            self.notify.notify_one();
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_hooks_refuse_seed_assigns_and_see_the_end() {
    let hooks = Hooks::default();
    let seen = hooks.clone();
    let h = start_with(None, move |b| b.session_hooks(hooks)).await;
    // Refused: a JSON-RPC error, no session.
    let answer = h
        .post(None, &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "clientInfo": {"name": "stranger", "version": "1"}}}))
        .await;
    assert_eq!(answer.status, StatusCode::OK);
    let body = answer.json();
    assert_eq!(body["error"]["code"], -32603);
    assert!(
        body["error"]["data"]["reason"]
            .as_str()
            .unwrap()
            .contains("access denied")
    );
    assert!(answer.header("mcp-session-id").is_none());
    // Accepted: the hook's assigns reach tools.
    let session = h.ready("2025-06-18").await;
    let body = h
        .post(
            Some(&session),
            &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "whoami", "arguments": {}}}),
        )
        .await
        .json();
    let out: Value =
        serde_json::from_str(body["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(out["hooked"], "2025-06-18");
    let resp = h
        .send(reqwest::Method::DELETE, &[("mcp-session-id", &session)])
        .await;
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(
        *seen.ended.lock().unwrap(),
        vec![(session, EndReason::Deleted)]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reaper_ends_idle_sessions_and_reports_them() {
    let hooks = Hooks::default();
    let seen = hooks.clone();
    let h = start_with(None, move |b| {
        b.session_hooks(hooks).session_ttl(Duration::ZERO)
    })
    .await;
    let (session, _) = h.initialize("2025-11-25").await;
    tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            if seen
                .ended
                .lock()
                .unwrap()
                .iter()
                .any(|(id, _)| *id == session)
            {
                break;
            }
            seen.notify.notified().await;
        }
    })
    .await
    .expect("the reaper should end the idle session");
    assert!(
        seen.ended
            .lock()
            .unwrap()
            .contains(&(session.clone(), EndReason::Expired))
    );
    let answer = h
        .post(
            Some(&session),
            &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        )
        .await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_last_event_id_replays_nothing() {
    let h = start().await;
    let session = h.ready("2025-11-25").await;
    let note = json!({"jsonrpc": "2.0", "method": "notifications/message",
                      "params": {"level": "info", "data": "before"}});
    h.service.push(&session, &note).await.unwrap();
    let mut resp = h.get_stream(&session, &[("last-event-id", "evt-x")]).await;
    let mut buf = String::new();
    read_until(&mut resp, &mut buf, "\n\n").await;
    assert_eq!(buf, "id: get.2\ndata: \n\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellation_is_scoped_to_its_session() {
    let h = start().await;
    let owner = h.ready("2025-11-25").await;
    let other = h.ready("2025-11-25").await;
    let call = start_slow_call(&h, &owner, json!(1)).await;
    // Another session naming the same request id cancels nothing.
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 1}});
    assert_eq!(
        h.post(Some(&other), &cancel).await.status,
        StatusCode::ACCEPTED
    );
    assert!(!h.probe.dropped.load(Ordering::SeqCst));
    assert_eq!(
        h.post(Some(&owner), &cancel).await.status,
        StatusCode::ACCEPTED
    );
    assert_eq!(call.await.unwrap().0, StatusCode::ACCEPTED);
    assert!(h.probe.dropped.load(Ordering::SeqCst));
}

// ---------------------------------------------------------------------------------------------
// POST answered as SSE

/// Parses an SSE body into (id, data) pairs.
fn sse_events(body: &str) -> Vec<(String, Value)> {
    body.split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .map(|block| {
            let mut id = String::new();
            let mut data = String::new();
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("id: ") {
                    id = v.to_owned();
                } else if let Some(v) = line.strip_prefix("data: ") {
                    data.push_str(v);
                }
            }
            (id, serde_json::from_str(&data).unwrap())
        })
        .collect()
}

fn progress_call(id: i64) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "progress", "arguments": {}, "_meta": {"progressToken": "tok"}}})
    .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_with_progress_answers_sse_with_notifications_then_the_response() {
    let h = start().await;
    let session = h.ready("2025-11-25").await;
    let answer = h
        .post_raw(&[("mcp-session-id", &session)], progress_call(7))
        .await;
    assert_eq!(answer.status, StatusCode::OK);
    assert!(
        answer
            .header("content-type")
            .unwrap()
            .starts_with("text/event-stream")
    );
    // A reverse proxy must pass each event on as it is written.
    assert_eq!(answer.header("x-accel-buffering"), Some("no"));
    assert_eq!(answer.header("cache-control"), Some("no-cache"));
    let events = sse_events(&answer.text);
    let methods: Vec<&str> = events
        .iter()
        .map(|(_, m)| m["method"].as_str().unwrap_or("<response>"))
        .collect();
    assert_eq!(
        methods,
        [
            "notifications/progress",
            "notifications/message",
            "notifications/progress",
            "<response>"
        ]
    );
    assert_eq!(
        events[0].1["params"],
        json!({"progressToken": "tok", "progress": 1.0, "total": 2.0, "message": "half way"})
    );
    let (_, response) = events.last().unwrap();
    assert_eq!(response["id"], 7);
    assert_valid("2025-11-25", response, "CallToolResult");
    let envelope = mcp_schema::validator(ProtocolVersion::V2025_11_25, "JSONRPCMessage");
    for (_, message) in &events {
        assert!(envelope.is_valid(message), "{message}");
    }
    let ids: std::collections::HashSet<&String> = events.iter().map(|(id, _)| id).collect();
    assert_eq!(ids.len(), events.len(), "event ids are unique");
    assert!(events.iter().all(|(id, _)| !id.is_empty()));

    // Log messages below the session's level are not sent.
    h.post(
        Some(&session),
        &json!({"jsonrpc": "2.0", "id": 8, "method": "logging/setLevel",
        "params": {"level": "error"}}),
    )
    .await;
    let answer = h
        .post_raw(&[("mcp-session-id", &session)], progress_call(9))
        .await;
    let events = sse_events(&answer.text);
    assert_eq!(events.len(), 3);
    assert!(
        events
            .iter()
            .all(|(_, m)| m["method"] != "notifications/message")
    );
    // A second stream's ids differ from the first's.
    assert!(events.iter().all(|(id, _)| !ids.contains(id)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_json_only_client_gets_the_plain_response() {
    let h = start().await;
    let session = h.ready("2025-11-25").await;
    let resp = h
        .client
        .post(&h.url)
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .header("mcp-session-id", &session)
        .body(progress_call(3))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert!(
        resp.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/json")
    );
    let body: Value = resp.json().await.unwrap();
    assert_valid("2025-11-25", &body, "CallToolResult");
    assert_eq!(body["result"]["content"][0]["text"], "done");
}
