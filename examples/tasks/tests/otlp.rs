//! `tasks --otlp URL` (cargo feature `otel`): a real `tools/call` carrying a W3C
//! `_meta.traceparent`, exported over OTLP/HTTP to a collector this test serves on 127.0.0.1,
//! decoded with `opentelemetry-proto`: the conventions' span name, kind and attributes, the
//! trace id and parent span id the client sent, and the operation's metric. The batch and the
//! metric interval are set far beyond the test's length, so what arrives was sent by the flush
//! on shutdown (SIGTERM).

#![allow(clippy::unwrap_used, missing_docs)]

mod collector;

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use opentelemetry_proto::tonic::trace::v1::{Span, span::SpanKind, status::StatusCode as Status};
use serde_json::{Value, json};

use collector::{collector, hex, metric_names, spans, text};

const BIN: &str = env!("CARGO_BIN_EXE_tasks");
/// How long the banner, and the process's exit after SIGTERM, may take before the test gives up.
const WAIT: Duration = Duration::from_secs(30);

/// The client's trace: its trace id and the id of its span, the server span's parent.
const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID: &str = "00f067aa0ba902b7";

/// The child, killed when the test ends however it ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn a_tools_call_is_exported_over_otlp_with_the_conventions_and_the_clients_parent() {
    let (collector_url, received) = collector().await;
    let data = std::env::temp_dir().join(format!("wymcp-tasks-otlp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    let mut child = Command::new(BIN)
        .args(["--port", "0", "--otlp", &collector_url, "--data"])
        .arg(&data)
        // Nothing is sent before shutdown: what arrives is the flush's.
        .env("OTEL_BSP_SCHEDULE_DELAY", "600000")
        .env("OTEL_METRIC_EXPORT_INTERVAL", "600000")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let stderr = child.stderr.take().unwrap();
    let mut server = Server(child);
    let (tx, banner) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let (mut url, mut otlp) = (None, None);
    while url.is_none() {
        let line = banner.recv_timeout(WAIT).expect("the banner");
        let line = line.trim();
        let word = |rest: &str| rest.split_whitespace().next().map(str::to_owned);
        if let Some(rest) = line.strip_prefix("otlp") {
            otlp = word(rest);
        } else if let Some(rest) = line.strip_prefix("listening") {
            url = word(rest);
        }
    }
    let url = url.unwrap();
    assert_eq!(otlp.as_deref(), Some(collector_url.as_str()));

    let http = reqwest::Client::new();
    let post = |body: Value, session: Option<&str>| {
        let mut request = http
            .post(&url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .json(&body);
        if let Some(session) = session {
            request = request
                .header("Mcp-Session-Id", session)
                .header("MCP-Protocol-Version", "2025-11-25");
        }
        request.send()
    };
    let init = post(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "otlp-test", "version": "1"}}}),
        None,
    )
    .await
    .unwrap();
    assert_eq!(init.status(), 200);
    let session = init.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let initialized = post(
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        Some(&session),
    )
    .await
    .unwrap();
    assert_eq!(initialized.status(), 202);
    let traceparent = format!("00-{TRACE_ID}-{PARENT_ID}-01");
    let call = |id: u64, action: &str, data: Value| {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "tasks", "arguments": {"action": action, "data": data},
            "_meta": {"traceparent": traceparent}}});
        let answer = post(body, Some(&session));
        async move { answer.await.unwrap().json::<Value>().await.unwrap() }
    };
    let created = call(2, "create", json!({"title": "Traced"})).await;
    assert_eq!(created["result"]["isError"], false, "{created}");
    // `get` needs an id or a title: the group gate refuses it.
    let refused = call(3, "get", json!({})).await;
    assert_eq!(refused["result"]["isError"], true, "{refused}");

    // SIGTERM: the server stops serving and flushes its exporters before it exits.
    let killed = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let mut exited = None;
    for _ in 0..WAIT.as_millis() / 50 {
        if let Some(status) = server.0.try_wait().unwrap() {
            exited = Some(status);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let exited = exited.expect("the server exits after SIGTERM");
    assert!(exited.success(), "{exited:?}");

    let received = received.lock().unwrap().clone();
    let paths: Vec<&str> = received.iter().map(|(p, _, _)| p.as_str()).collect();
    assert!(paths.contains(&"/v1/traces"), "{paths:?}");
    assert!(paths.contains(&"/v1/metrics"), "{paths:?}");
    for (path, content_type, _) in &received {
        assert_eq!(content_type, "application/x-protobuf", "{path}");
    }

    let spans = spans(&received, "tasks");
    let calls: Vec<&Span> = spans
        .iter()
        .filter(|s| s.name == "tools/call tasks")
        .collect();
    assert_eq!(
        calls.len(),
        2,
        "{:?}",
        spans.iter().map(|s| &s.name).collect::<Vec<_>>()
    );
    let by_action = |action: &str| {
        *calls
            .iter()
            .find(|s| text(&s.attributes, "wymcp.action") == Some(action))
            .unwrap_or_else(|| panic!("no span for {action}: {calls:?}"))
    };

    let create = by_action("create");
    assert_eq!(create.kind, SpanKind::Server as i32);
    assert_eq!(hex(&create.trace_id), TRACE_ID);
    assert_eq!(hex(&create.parent_span_id), PARENT_ID);
    let a = &create.attributes;
    assert_eq!(text(a, "mcp.method.name"), Some("tools/call"));
    assert_eq!(text(a, "gen_ai.tool.name"), Some("tasks"));
    assert_eq!(text(a, "gen_ai.operation.name"), Some("execute_tool"));
    assert_eq!(text(a, "mcp.protocol.version"), Some("2025-11-25"));
    assert_eq!(text(a, "mcp.session.id"), Some(session.as_str()));
    assert_eq!(text(a, "jsonrpc.request.id"), Some("2"));
    assert_eq!(text(a, "network.transport"), Some("tcp"));
    assert_eq!(text(a, "network.protocol.name"), Some("http"));
    assert_eq!(text(a, "wymcp.era"), Some("session"));
    assert_eq!(text(a, "error.type"), None);
    assert_ne!(
        create.status.as_ref().map_or(0, |s| s.code),
        Status::Error as i32
    );

    // The refused call: the same trace, its own span, failed with the gate named.
    let get = by_action("get");
    assert_eq!(hex(&get.trace_id), TRACE_ID);
    assert_eq!(hex(&get.parent_span_id), PARENT_ID);
    assert_ne!(get.span_id, create.span_id);
    assert_eq!(text(&get.attributes, "jsonrpc.request.id"), Some("3"));
    assert_eq!(text(&get.attributes, "error.type"), Some("tool_error"));
    assert_eq!(
        text(&get.attributes, "wymcp.refusal"),
        Some("missing_required_group")
    );
    assert_eq!(
        get.status.as_ref().map(|s| s.code),
        Some(Status::Error as i32)
    );

    // `initialize` had no traceparent: a trace of its own, no parent.
    let initialize = spans.iter().find(|s| s.name == "initialize").unwrap();
    assert_ne!(hex(&initialize.trace_id), TRACE_ID);
    assert!(initialize.parent_span_id.is_empty());

    // The metrics, sent over OTLP too: the calls' durations.
    let names = metric_names(&received);
    assert!(
        names.iter().any(|n| n == "mcp.server.operation.duration"),
        "{names:?}"
    );
    assert!(
        names.iter().any(|n| n == "wymcp.server.refusals"),
        "{names:?}"
    );
    let _ = std::fs::remove_dir_all(&data);
}

/// `--otlp` that is no http(s) URL is a refused command line (status 2), naming the flag.
#[test]
fn an_otlp_value_that_is_no_http_url_is_refused_naming_it() {
    let out = Command::new(BIN)
        .args(["--otlp", "127.0.0.1:4318", "--port", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with(
            "error: --otlp: \"127.0.0.1:4318\" is not an http:// or https:// URL (such as http://127.0.0.1:4318)\n\n"
        ),
        "{stderr}"
    );
}
