//! The stdio transport, in process over an in-memory pipe: framing (malformed, oversize,
//! batch lines), the lifecycle, and every context capability over stdio (CTX-3, CTX-4, CTX-5,
//! CTX-6, CTX-7, CTX-8, CTX-9 timeout), cancellation, runtime tools and a clean end on EOF.
//! `stdio_process.rs` drives a real child process.

#![allow(clippy::unwrap_used, missing_docs)]

mod ctx_fixture;

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, DuplexStream, Lines};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use wymcp::session::SessionHandle;
use wymcp::transport::stdio::{StdioConfig, serve_io};

use ctx_fixture::Named;

struct Client {
    write: tokio::io::WriteHalf<DuplexStream>,
    lines: Lines<BufReader<tokio::io::ReadHalf<DuplexStream>>>,
    served: JoinHandle<std::io::Result<()>>,
    stop: CancellationToken,
    session: Arc<Mutex<Option<SessionHandle>>>,
}

fn start(config: StdioConfig) -> Client {
    let (client, server) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server);
    let (client_read, client_write) = tokio::io::split(client);
    let stop = CancellationToken::new();
    let session = Arc::new(Mutex::new(None));
    let seen = session.clone();
    let served = tokio::spawn(serve_io(
        ctx_fixture::server(),
        config,
        server_read,
        server_write,
        stop.clone(),
        move |handle: &SessionHandle| {
            *seen.lock().unwrap() = Some(handle.clone());
        },
    ));
    Client {
        write: client_write,
        lines: BufReader::new(client_read).lines(),
        served,
        stop,
        session,
    }
}

impl Client {
    async fn send_raw(&mut self, line: &str) {
        self.write.write_all(line.as_bytes()).await.unwrap();
        self.write.write_all(b"\n").await.unwrap();
    }

    async fn send(&mut self, message: Value) {
        self.send_raw(&message.to_string()).await;
    }

    async fn recv(&mut self) -> Value {
        let line = self.lines.next_line().await.unwrap().expect("stdout ended");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    async fn request(&mut self, message: Value) -> Value {
        self.send(message).await;
        self.recv().await
    }

    async fn initialize(&mut self, version: &str, capabilities: Value) -> Value {
        let answer = self
            .request(
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                    "protocolVersion": version,
                    "capabilities": capabilities,
                    "clientInfo": {"name": "stdio-test", "version": "0"}
                }}),
            )
            .await;
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        answer
    }

    async fn call(&mut self, id: i64, arguments: Value, token: Option<&str>) {
        let mut params = json!({"name": "ctx", "arguments": arguments});
        if let Some(token) = token {
            params["_meta"] = json!({"progressToken": token});
        }
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}))
            .await;
    }

    fn handle(&self) -> SessionHandle {
        self.session.lock().unwrap().clone().unwrap()
    }

    /// Closes stdin and answers how the server ended.
    async fn close(self) -> std::io::Result<()> {
        let Client {
            mut write, served, ..
        } = self;
        write.shutdown().await.unwrap();
        drop(write);
        served.await.unwrap()
    }
}

fn tool_body(response: &Value) -> Value {
    let text = response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text content: {response}"));
    serde_json::from_str(text).unwrap()
}

#[tokio::test]
async fn lifecycle_framing_errors_and_a_clean_end_on_eof() {
    let mut c = start(StdioConfig::default().max_line(512));
    // Before initialize: ping answers, other requests are refused, notifications ignored.
    let ping = c
        .request(json!({"jsonrpc": "2.0", "id": "p", "method": "ping"}))
        .await;
    assert_eq!(ping, json!({"jsonrpc": "2.0", "id": "p", "result": {}}));
    c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    let early = c
        .request(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    assert_eq!(early["error"]["code"], -32600);
    assert_eq!(early["id"], 1);

    let init = c.initialize("2025-11-25", json!({})).await;
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(init["result"]["capabilities"]["tools"]["listChanged"], true);
    assert_eq!(init["result"]["serverInfo"]["name"], "ctx-test");

    // Malformed, oversize and batch lines are answered, and the server reads on.
    c.send_raw("{not json").await;
    let parse = c.recv().await;
    assert_eq!(parse["error"]["code"], -32700);
    assert_eq!(parse["id"], Value::Null);
    c.send_raw(&format!("\"{}\"", "x".repeat(2000))).await;
    let large = c.recv().await;
    assert_eq!(large["error"]["code"], -32600);
    assert!(
        large["error"]["message"]
            .as_str()
            .unwrap()
            .contains("512 bytes")
    );
    c.send_raw("").await;
    c.send_raw("   ").await;
    let batch = c
        .request(json!([{"jsonrpc": "2.0", "id": 5, "method": "ping"}]))
        .await;
    assert_eq!(batch["error"]["code"], -32600);
    let unknown = c
        .request(json!({"jsonrpc": "2.0", "id": 6, "method": "tools/frobnicate"}))
        .await;
    assert_eq!(unknown["error"]["code"], -32601);
    let again = c
        .request(json!({"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {}}))
        .await;
    assert_eq!(again["error"]["code"], -32600);

    let list = c
        .request(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
        .await;
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ctx", "A", "help"]);
    let call = c
        .request(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                        "params": {"name": "A", "arguments": {"action": "run"}}}))
        .await;
    assert_eq!(tool_body(&call), json!({"ran": "A"}));
    c.close().await.unwrap();
}

/// CTX-3, CTX-4, CTX-7 over stdio: progress, a log message and an elicitation in one call,
/// the client answering the elicitation.
#[tokio::test]
async fn progress_log_and_elicitation_over_stdio() {
    let mut c = start(StdioConfig::default());
    c.initialize("2025-11-25", json!({"elicitation": {}})).await;
    c.call(1, json!({"op": "steps"}), Some("t1")).await;
    let progress = c.recv().await;
    assert_eq!(
        progress,
        json!({"jsonrpc": "2.0", "method": "notifications/progress",
               "params": {"progressToken": "t1", "progress": 1.0, "total": 3.0,
                          "message": "started"}})
    );
    let log = c.recv().await;
    assert_eq!(log["method"], "notifications/message");
    assert_eq!(log["params"]["data"], "asking for the branch");
    let elicit = c.recv().await;
    assert_eq!(elicit["method"], "elicitation/create");
    assert!(
        elicit["id"].as_str().unwrap().contains(".stdio."),
        "{elicit}"
    );
    c.send(json!({"jsonrpc": "2.0", "id": elicit["id"],
                  "result": {"action": "accept", "content": {"branch": "main"}}}))
        .await;
    let done = c.recv().await;
    assert_eq!(done["params"]["progress"], 3.0);
    let response = c.recv().await;
    assert_eq!(response["id"], 1);
    assert_eq!(
        tool_body(&response),
        json!({"ok": {"action": "accept", "content": {"branch": "main"}}})
    );

    // CTX-4: the session's level filters log messages.
    let set = c
        .request(
            json!({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel",
                        "params": {"level": "warning"}}),
        )
        .await;
    assert_eq!(set["result"], json!({}));
    c.call(3, json!({"op": "log"}), None).await;
    let only = c.recv().await;
    assert_eq!(only["params"]["level"], "error");
    assert_eq!(only["params"]["logger"], "database");
    assert_eq!(
        tool_body(&c.recv().await),
        json!({"info": false, "db": true, "debug": false})
    );
    c.close().await.unwrap();
}

/// CTX-5, CTX-6 over stdio.
#[tokio::test]
async fn sampling_over_stdio() {
    let mut c = start(StdioConfig::default());
    c.initialize("2025-06-18", json!({"sampling": {}})).await;
    c.call(1, json!({"op": "sample"}), None).await;
    let request = c.recv().await;
    assert_eq!(request["method"], "sampling/createMessage");
    assert_eq!(request["params"]["maxTokens"], 500);
    let result = json!({"role": "assistant", "content": {"type": "text", "text": "Short."},
                        "model": "m"});
    c.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": result}))
        .await;
    assert_eq!(tool_body(&c.recv().await), json!({"ok": result}));
    // Elicitation was not declared.
    c.call(2, json!({"op": "elicit"}), None).await;
    assert_eq!(
        tool_body(&c.recv().await),
        json!({"error": "not_supported"})
    );
    c.close().await.unwrap();

    // CTX-6: sampling without the capability; CTX-8: elicitation on 2025-03-26.
    let mut c = start(StdioConfig::default());
    c.initialize("2025-03-26", json!({"elicitation": {}})).await;
    c.call(1, json!({"op": "sample"}), None).await;
    assert_eq!(
        tool_body(&c.recv().await),
        json!({"error": "not_supported"})
    );
    c.call(2, json!({"op": "elicit"}), None).await;
    assert_eq!(
        tool_body(&c.recv().await),
        json!({"error": "not_supported"})
    );
    c.close().await.unwrap();
}

/// CTX-9: no answer within the timeout (paused clock: no real waiting).
#[tokio::test(start_paused = true)]
async fn an_unanswered_round_trip_times_out() {
    let mut c = start(StdioConfig::default());
    c.initialize("2025-11-25", json!({"sampling": {}})).await;
    c.call(1, json!({"op": "sample", "timeout_ms": 60_000}), None)
        .await;
    let request = c.recv().await;
    assert_eq!(request["method"], "sampling/createMessage");
    assert_eq!(tool_body(&c.recv().await), json!({"error": "timeout"}));
    // A late answer is ignored.
    c.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": {}}))
        .await;
    let ping = c
        .request(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
        .await;
    assert_eq!(ping["id"], 2);
    c.close().await.unwrap();
}

/// A cancelled call gets no response; EOF ends a session whose call is still waiting.
#[tokio::test]
async fn cancellation_and_eof_with_a_call_waiting() {
    let mut c = start(StdioConfig::default());
    c.initialize("2025-11-25", json!({"elicitation": {}})).await;
    c.call(1, json!({"op": "elicit"}), None).await;
    let request = c.recv().await;
    assert_eq!(request["method"], "elicitation/create");
    c.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                  "params": {"requestId": 1}}),
    )
    .await;
    // The next message is the ping's answer: the cancelled call never answers.
    let ping = c
        .request(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
        .await;
    assert_eq!(ping["id"], 2);
    c.call(3, json!({"op": "elicit"}), None).await;
    assert_eq!(c.recv().await["method"], "elicitation/create");
    c.close().await.unwrap();
}

/// SIGTERM's path: the stop token ends the session cleanly.
#[tokio::test]
async fn stop_ends_the_session_cleanly() {
    let mut c = start(StdioConfig::default());
    c.initialize("2025-11-25", json!({})).await;
    c.stop.cancel();
    let Client { served, .. } = c;
    served.await.unwrap().unwrap();
}

/// Runtime tools over stdio: list_changed on the clean→dirty edge (stdout is always attached),
/// the merged list (LIST-8), and a tool registering a tool (HELP-3).
#[tokio::test]
async fn runtime_tools_over_stdio() {
    let mut c = start(StdioConfig::default());
    c.initialize("2025-11-25", json!({})).await;
    let handle = c.handle();
    handle
        .register_tool(Named("runtime_tool", "A runtime tool"))
        .unwrap();
    assert_eq!(
        c.recv().await,
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    );
    handle.register_tool(Named("other", "Another")).unwrap();
    let list = c
        .request(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["other", "runtime_tool", "ctx", "A", "help"]);
    assert!(!handle.is_tool_list_dirty());
    c.call(2, json!({"op": "register"}), None).await;
    assert_eq!(c.recv().await["method"], "notifications/tools/list_changed");
    let body = tool_body(&c.recv().await);
    assert_eq!(
        body["tools"],
        json!(["widgets", "other", "runtime_tool", "ctx", "A", "help"])
    );
    c.close().await.unwrap();
}
