//! `wymcp::client` over stdio against a real wymcp server in a child process: this test
//! binary runs itself as the server (`WYMCP_CLIENT_STDIO_CHILD=1`, the `ctx` fixture) and the
//! client spawns it. Both eras, tools, the server's sampling and elicitation requests answered
//! by the client's handlers, progress and log messages delivered, the child's stderr logged,
//! the line limit and a command that cannot start refused with typed errors, a timed-out call.

#![allow(clippy::unwrap_used, missing_docs)]

mod ctx_fixture;
mod stdio_harness;

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};
use wymcp::client::{Client, ClientBuilder, ClientError, Limit};
use wymcp::protocol::LogLevel;
use wymcp::{CallOutput, CallResult, Context, PlainTool, ProtocolVersion, Server};

const CHILD: &str = "WYMCP_CLIENT_STDIO_CHILD";

fn main() {
    stdio_harness::main(CHILD, "client stdio", "client_stdio", served, || async {
        let logs = capture_logs();
        the_session_era_over_stdio_with_handlers_progress_and_logs().await;
        the_stateless_era_over_stdio().await;
        the_childs_stderr_is_logged_line_by_line(&logs).await;
        a_line_over_the_limit_is_refused_naming_it().await;
        a_command_that_cannot_start_is_a_typed_error().await;
        a_call_past_the_timeout_fails_and_the_client_keeps_working().await;
        a_timed_out_call_is_cancelled(&logs).await;
    });
}

/// The server the child serves: the `ctx` fixture and `slow`.
fn served() -> Server {
    Server::builder()
        .name("client-stdio-test")
        .plain_tool(ctx_fixture::CtxTool)
        .plain_tool(Slow)
        .build()
        .unwrap()
}

/// Sleeps 10 s; writes `slow call aborted` to stderr when its future is dropped before (the
/// server aborts a cancelled call).
struct Slow;

impl PlainTool for Slow {
    fn name(&self) -> &str {
        "slow"
    }
    fn description(&self) -> &str {
        "Takes its time"
    }
    fn input_schema(&self) -> Map<String, Value> {
        json!({"type": "object"}).as_object().cloned().unwrap()
    }
    async fn run(&self, _arguments: Map<String, Value>, _ctx: Context) -> CallResult {
        struct Aborted;
        impl Drop for Aborted {
            fn drop(&mut self) {
                eprintln!("slow call aborted");
            }
        }
        let aborted = Aborted;
        tokio::time::sleep(Duration::from_secs(10)).await;
        std::mem::forget(aborted);
        Ok(CallOutput::text("done"))
    }
}

/// This test binary as the server.
fn server() -> ClientBuilder {
    Client::stdio(std::env::current_exe().unwrap().to_string_lossy())
        .env(CHILD, "1")
        .env("RUST_LOG", "off")
}

/// The text of a `ctx` result, as JSON.
fn body(result: &wymcp::client::ToolResult) -> Value {
    serde_json::from_str(&result.text()).unwrap()
}

async fn the_session_era_over_stdio_with_handlers_progress_and_logs() {
    let client = server()
        .versions(ProtocolVersion::SESSION_ERA)
        .on_sampling(|params| async move {
            let asked = params["messages"][0]["content"]["text"].clone();
            Ok(json!({"role": "assistant", "model": "echo-model",
                      "content": {"type": "text", "text": format!("echo: {}", asked.as_str().unwrap_or(""))}}))
        })
        .on_elicitation(|_| async { Ok(json!({"action": "accept", "content": {"branch": "main"}})) })
        .connect()
        .await
        .unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_11_25);
    assert_eq!(client.session_id(), None);
    let mut names: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["ctx", "help", "slow"]);

    // The server's sampling request, answered by the handler, round-trips into the result.
    let sampled = client
        .call_tool("ctx", json!({"op": "sample"}))
        .await
        .unwrap();
    let sampled = body(&sampled);
    assert_eq!(sampled["ok"]["model"], "echo-model", "{sampled}");
    assert_eq!(
        sampled["ok"]["content"]["text"], "echo: Summarize this",
        "{sampled}"
    );
    let elicited = client
        .call_tool("ctx", json!({"op": "elicit"}))
        .await
        .unwrap();
    assert_eq!(
        body(&elicited),
        json!({"ok": {"action": "accept", "content": {"branch": "main"}}})
    );

    // Progress under the caller's token, delivered to the queue.
    client.drain_notifications();
    client
        .call_tool_with_progress("ctx", json!({"op": "progress"}), "p-1")
        .await
        .unwrap();
    let progress: Vec<Value> = client
        .drain_notifications()
        .into_iter()
        .filter(|n| n.method() == "notifications/progress")
        .map(|n| n.params().cloned().unwrap())
        .collect();
    assert_eq!(
        progress
            .iter()
            .map(|p| p["progress"].clone())
            .collect::<Vec<_>>(),
        [json!(50.0), json!(60.0)],
        "{progress:?}"
    );
    assert!(progress.iter().all(|p| p["progressToken"] == "p-1"));

    // Log messages at the level set.
    client.set_logging_level(LogLevel::Debug).await.unwrap();
    client.call_tool("ctx", json!({"op": "log"})).await.unwrap();
    let logged: Vec<Value> = client
        .drain_notifications()
        .into_iter()
        .filter(|n| n.method() == "notifications/message")
        .map(|n| n.params().cloned().unwrap())
        .collect();
    assert_eq!(logged.len(), 3, "{logged:?}");
    assert_eq!(logged[0]["data"], "Processing started");
    assert_eq!(logged[1]["logger"], "database");
    client.ping().await.unwrap();
    client.close().await.unwrap();
}

async fn the_stateless_era_over_stdio() {
    let client = server().connect().await.unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
    client.ping().await.unwrap();
    let result = client
        .call_tool("ctx", json!({"op": "progress"}))
        .await
        .unwrap();
    assert!(!result.is_error(), "{:?}", result.raw());
    client.close().await.unwrap();
}

/// Everything logged through `tracing` in this process, for the stderr test.
fn capture_logs() -> Arc<Mutex<Vec<u8>>> {
    #[derive(Clone)]
    struct Sink(Arc<Mutex<Vec<u8>>>);
    impl Write for Sink {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let logs = Arc::new(Mutex::new(Vec::new()));
    let sink = Sink(logs.clone());
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || sink.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::INFO)
        .finish();
    tracing::subscriber::set_global_default(subscriber).unwrap();
    logs
}

async fn the_childs_stderr_is_logged_line_by_line(logs: &Mutex<Vec<u8>>) {
    // The fixture writes `client stdio fixture: serving on stdin/stdout` to stderr at start
    // (each spawn above did): one line longer than 16 bytes, logged cut at 16.
    let client = server().max_stderr_line_bytes(16).connect().await.unwrap();
    client.close().await.unwrap();
    let text = String::from_utf8_lossy(&logs.lock().unwrap()).into_owned();
    // Earlier clients' lines, whole; this one's, cut.
    assert!(
        text.contains("wymcp::client::stderr: client stdio fixture: serving on stdin/stdout"),
        "{text}"
    );
    let cut: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("truncated=true"))
        .collect();
    assert!(!cut.is_empty(), "{text}");
    for line in cut {
        assert!(
            line.contains("wymcp::client::stderr: client stdio fix command="),
            "{line}"
        );
    }
}

async fn a_line_over_the_limit_is_refused_naming_it() {
    let err = server().max_line_bytes(64).connect().await.unwrap_err();
    assert_eq!(err.limit(), Some(Limit::LineBytes { max: 64 }));
    assert_eq!(
        err.to_string(),
        "server/discover: refused: the server exceeded one stdout line's size \
         (at most 64 bytes, ClientBuilder::max_line_bytes)"
    );
}

async fn a_command_that_cannot_start_is_a_typed_error() {
    let err = Client::stdio("/nonexistent/wymcp-no-such-server")
        .connect()
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::Spawn { .. }), "{err:?}");
    assert!(
        err.to_string()
            .starts_with("cannot start \"/nonexistent/wymcp-no-such-server\": "),
        "{err}"
    );
}

async fn a_call_past_the_timeout_fails_and_the_client_keeps_working() {
    // The elicitation handler never answers in time: the call times out (and is cancelled);
    // the next call is answered.
    let client = server()
        .versions(ProtocolVersion::SESSION_ERA)
        .timeout(Duration::from_millis(500))
        .on_elicitation(|_| async {
            tokio::time::sleep(Duration::from_secs(3)).await;
            Ok(json!({"action": "decline"}))
        })
        .connect()
        .await
        .unwrap();
    let err = client
        .call_tool("ctx", json!({"op": "elicit"}))
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err:?}");
    assert_eq!(err.to_string(), "tools/call: no answer within 500ms");
    let answered = client
        .call_tool("ctx", json!({"op": "assigns"}))
        .await
        .unwrap();
    assert!(!answered.is_error());
    client.close().await.unwrap();
}

async fn a_timed_out_call_is_cancelled(logs: &Mutex<Vec<u8>>) {
    // Over stdio nothing but `notifications/cancelled` tells the server: the child's stderr
    // (logged here) says when it aborted the call.
    let client = server()
        .versions(ProtocolVersion::SESSION_ERA)
        .timeout(Duration::from_millis(300))
        .connect()
        .await
        .unwrap();
    let err = client.call_tool("slow", json!({})).await.unwrap_err();
    assert!(err.is_timeout(), "{err:?}");
    let aborted = || String::from_utf8_lossy(&logs.lock().unwrap()).contains("slow call aborted");
    for _ in 0..100 {
        if aborted() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(aborted(), "the server never aborted the timed-out call");
    drop(client);
}
