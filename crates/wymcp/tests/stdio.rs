//! The stdio transport, in process over an in-memory pipe: framing (malformed, oversize,
//! batch lines), the lifecycle, and every context capability over stdio (CTX-3, CTX-4, CTX-5,
//! CTX-6, CTX-7, CTX-8, CTX-9 timeout), cancellation, runtime tools and a clean end on EOF.
//! Then MCP 2026-07-28 on the same transport, decided per message: discover, the envelope and
//! version errors, removed methods, gate refusals alike in both eras, multi round-trip
//! requests, per-request progress and log, concurrency and cancellation, and
//! `subscriptions/listen`; every message of that era is validated against the official
//! schema. `stdio_process.rs` and `stdio_stateless_process.rs` drive a real child process.

#![allow(clippy::unwrap_used, missing_docs)]

mod ctx_fixture;
mod mcp_schema;
mod stateless_fixture;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, DuplexStream, Lines};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use wymcp::protocol::stateless::{CacheHint, CacheHints, CacheScope};
use wymcp::session::SessionHandle;
use wymcp::transport::stdio::{StdioConfig, serve_io};
use wymcp::{ProtocolVersion, Server};

use ctx_fixture::Named;

struct Client {
    write: tokio::io::WriteHalf<DuplexStream>,
    lines: Lines<BufReader<tokio::io::ReadHalf<DuplexStream>>>,
    served: JoinHandle<std::io::Result<()>>,
    stop: CancellationToken,
    session: Arc<Mutex<Option<SessionHandle>>>,
}

fn start(config: StdioConfig) -> Client {
    start_serving(ctx_fixture::server(), config)
}

fn start_serving(served_server: Server, config: StdioConfig) -> Client {
    let (client, server) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server);
    let (client_read, client_write) = tokio::io::split(client);
    let stop = CancellationToken::new();
    let session = Arc::new(Mutex::new(None));
    let seen = session.clone();
    let served = tokio::spawn(serve_io(
        served_server,
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

    /// Closes stdin, reads what the server still writes until stdout ends, and checks the
    /// server ended cleanly.
    async fn close_and_drain(self) -> Vec<Value> {
        let Client {
            mut write,
            mut lines,
            served,
            ..
        } = self;
        write.shutdown().await.unwrap();
        let mut rest = Vec::new();
        while let Some(line) = lines.next_line().await.unwrap() {
            rest.push(
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")),
            );
        }
        served.await.unwrap().unwrap();
        rest
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

// MCP 2026-07-28 over stdio, decided per message.

use stateless_fixture::{WATCHED, call, cancel, envelope, initialize, request};

fn valid(definition: &str, value: &Value) {
    let validator = mcp_schema::validator(ProtocolVersion::V2026_07_28, definition);
    let problems = mcp_schema::problems(&validator, value);
    assert!(problems.is_empty(), "{definition}: {problems:?}\n{value}");
}

/// A stdio connection serving the stateless fixture: the client, the server (to notify its
/// clients) and the flag `slow` sets when its call is cancelled.
fn start_stateless(config: StdioConfig) -> (Client, Server, Arc<AtomicBool>) {
    let (server, cancelled) = stateless_fixture::server();
    (start_serving(server.clone(), config), server, cancelled)
}

fn assert_refused(answer: &Value, id: i64, code: i64, definition: &str) {
    assert_eq!(
        answer["id"], id,
        "every error carries the request's id: {answer}"
    );
    assert_eq!(answer["error"]["code"], code, "{answer}");
    valid(definition, answer);
}

#[tokio::test]
async fn stateless_discover_envelope_version_and_removed_methods() {
    let hint = CacheHint {
        ttl_ms: 60_000,
        scope: CacheScope::Public,
    };
    let config = StdioConfig::default().cache_hints(CacheHints::default().set("tools/list", hint));
    let (mut c, _, _) = start_stateless(config);
    // No initialize: the envelope makes the request stateless.
    let discover = c.request(request(1, "server/discover", json!({}))).await;
    valid("DiscoverResultResponse", &discover);
    let result = &discover["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["supportedVersions"][0], "2026-07-28");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({"name": "stateless-stdio", "version": "1.0.0"})
    );
    assert_eq!(
        (result["ttlMs"].clone(), result["cacheScope"].clone()),
        (json!(0), json!("private"))
    );
    assert_eq!(result["capabilities"]["tools"]["listChanged"], true);
    let list = c.request(request(2, "tools/list", json!({}))).await;
    valid("ListToolsResultResponse", &list);
    assert!(list["result"]["tools"].as_array().unwrap().len() >= 6);
    assert_eq!(list["result"]["ttlMs"], 60_000);
    assert_eq!(list["result"]["cacheScope"], "public");

    // The envelope: `server/discover` without `_meta`, half envelopes.
    let bare = c
        .request(json!({"jsonrpc": "2.0", "id": 3, "method": "server/discover"}))
        .await;
    assert_refused(&bare, 3, -32602, "JSONRPCErrorResponse");
    valid("InvalidParamsError", &bare["error"]);
    assert_eq!(
        bare["error"]["data"]["envelope"]["missing"],
        json!([
            "io.modelcontextprotocol/protocolVersion",
            "io.modelcontextprotocol/clientCapabilities"
        ])
    );
    for missing in [
        "io.modelcontextprotocol/protocolVersion",
        "io.modelcontextprotocol/clientCapabilities",
    ] {
        let mut meta = envelope(json!({}));
        meta.as_object_mut().unwrap().remove(missing);
        let answer = c
            .request(request(4, "tools/list", json!({"_meta": meta})))
            .await;
        assert_refused(&answer, 4, -32602, "JSONRPCErrorResponse");
        assert_eq!(
            answer["error"]["data"]["envelope"]["missing"],
            json!([missing])
        );
    }
    // clientInfo is optional.
    let mut meta = envelope(json!({}));
    meta.as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/clientInfo");
    let answer = c
        .request(request(5, "tools/list", json!({"_meta": meta})))
        .await;
    assert_eq!(answer["result"]["resultType"], "complete", "{answer}");

    // A revision not served.
    let mut meta = envelope(json!({}));
    meta["io.modelcontextprotocol/protocolVersion"] = json!("v999.0.0");
    let answer = c
        .request(request(6, "tools/list", json!({"_meta": meta})))
        .await;
    assert_refused(&answer, 6, -32022, "UnsupportedProtocolVersionError");
    assert_eq!(answer["error"]["data"]["requested"], "v999.0.0");
    assert!(
        answer["error"]["data"]["supported"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28"))
    );

    // Methods removed in 2026-07-28, and unknown ones.
    for (id, method) in [
        (7, "initialize"),
        (8, "ping"),
        (9, "logging/setLevel"),
        (10, "resources/subscribe"),
        (11, "resources/unsubscribe"),
        (12, "tools/frobnicate"),
    ] {
        let answer = c.request(request(id, method, json!({}))).await;
        assert_refused(&answer, id, -32601, "JSONRPCErrorResponse");
        valid("MethodNotFoundError", &answer["error"]);
    }
    // A tool that needs a capability the request did not declare.
    let answer = c.request(call(13, "greet", json!({}))).await;
    assert_refused(&answer, 13, -32021, "MissingRequiredClientCapabilityError");
    assert_eq!(
        answer["error"]["data"]["requiredCapabilities"],
        json!({"elicitation": {}})
    );
    c.close().await.unwrap();
}

#[tokio::test]
async fn stateless_and_session_eras_share_one_process() {
    let (mut c, _, _) = start_stateless(StdioConfig::default());
    let bad = json!({"action": "create", "data": {"title": "", "colour": "red"}});
    let modern = c.request(call(1, "tasks", bad.clone())).await;
    valid("CallToolResultResponse", &modern);
    assert_eq!(modern["result"]["isError"], true, "{modern}");
    assert_eq!(modern["result"]["resultType"], "complete");

    // initialize on the same process: the session era, as before.
    let init = c.request(initialize(2)).await;
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
    c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    let session = c
        .request(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                        "params": {"name": "tasks", "arguments": bad}}))
        .await;
    assert!(session["result"].get("resultType").is_none(), "{session}");
    // The gate's refusal is the same payload in both eras.
    for key in ["content", "isError", "structuredContent"] {
        assert_eq!(modern["result"][key], session["result"][key], "{key}");
    }
    let list = c
        .request(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}))
        .await;
    assert!(list["result"].get("resultType").is_none(), "{list}");
    // ... and the stateless era still answers beside the session.
    let discover = c.request(request(5, "server/discover", json!({}))).await;
    valid("DiscoverResultResponse", &discover);
    c.close().await.unwrap();
}

#[tokio::test]
async fn stateless_input_required_retry_and_tampered_state() {
    let (mut c, _, _) = start_stateless(StdioConfig::default());
    let caps = json!({"elicitation": {}});
    let first = json!({"name": "greet", "arguments": {}, "_meta": envelope(caps.clone())});
    let asked = c.request(request(1, "tools/call", first.clone())).await;
    valid("CallToolResultResponse", &asked);
    let result = &asked["result"];
    valid("InputRequiredResult", result);
    assert_eq!(result["resultType"], "input_required");
    assert_eq!(
        result["inputRequests"]["user_name"]["method"],
        "elicitation/create"
    );
    assert!(
        result.get("ttlMs").is_none(),
        "no cache hint on input_required"
    );
    let state = result["requestState"].as_str().unwrap().to_owned();

    let mut retry = first.clone();
    retry["inputResponses"] =
        json!({"user_name": {"action": "accept", "content": {"name": "Ada"}}});
    retry["requestState"] = json!(state);
    let done = c.request(request(2, "tools/call", retry.clone())).await;
    valid("CallToolResultResponse", &done);
    assert_eq!(done["result"]["resultType"], "complete");
    assert_eq!(done["result"]["content"][0]["text"], "Hello, Ada!");

    retry["requestState"] = json!(format!("{state}-TAMPERED"));
    let tampered = c.request(request(3, "tools/call", retry)).await;
    assert_refused(&tampered, 3, -32602, "JSONRPCErrorResponse");
    assert_eq!(tampered["error"]["data"]["reason"], "invalid_request_state");
    c.close().await.unwrap();
}

#[tokio::test]
async fn stateless_progress_log_concurrency_and_cancellation() {
    let (mut c, _, cancelled) = start_stateless(StdioConfig::default());
    // Progress and log messages go out for their request only, log only with logLevel.
    let mut meta = envelope(json!({}));
    meta["progressToken"] = json!("p1");
    meta["io.modelcontextprotocol/logLevel"] = json!("warning");
    c.send(request(
        1,
        "tools/call",
        json!({"name": "steps", "arguments": {}, "_meta": meta}),
    ))
    .await;
    let progress = c.recv().await;
    valid("ProgressNotification", &progress);
    assert_eq!(progress["params"]["progressToken"], "p1");
    let log = c.recv().await;
    valid("LoggingMessageNotification", &log);
    assert_eq!(
        (
            log["params"]["level"].clone(),
            log["params"]["data"].clone()
        ),
        (json!("warning"), json!("careful"))
    );
    let done = c.recv().await;
    assert_eq!(done["id"], 1);
    assert_eq!(
        tool_body(&done),
        json!({"progress": true, "debug": false, "warning": true})
    );
    // Without logLevel and progressToken: nothing but the answer.
    let quiet = c.request(call(2, "steps", json!({}))).await;
    assert_eq!(
        tool_body(&quiet),
        json!({"progress": false, "debug": false, "warning": false})
    );

    // A slow call does not hold the others.
    let mut meta = envelope(json!({}));
    meta["progressToken"] = json!(7);
    c.send(request(
        3,
        "tools/call",
        json!({"name": "slow", "arguments": {}, "_meta": meta}),
    ))
    .await;
    assert_eq!(c.recv().await["params"]["progressToken"], 7);
    let discover = c.request(request(4, "server/discover", json!({}))).await;
    assert_eq!(discover["id"], 4);
    // Cancelled: its token fires and nothing more comes for it.
    c.send(cancel(3)).await;
    let list = c.request(request(5, "tools/list", json!({}))).await;
    assert_eq!(list["id"], 5, "the cancelled call wrote nothing: {list}");
    for _ in 0..100 {
        if cancelled.load(Ordering::SeqCst) {
            break;
        }
        tokio::task::yield_now().await;
    }
    assert!(
        cancelled.load(Ordering::SeqCst),
        "the call's token was cancelled"
    );
    c.close().await.unwrap();
}

/// The messages `n` lines bring, by the subscription id or request id they carry.
async fn recv_n(c: &mut Client, n: usize) -> Vec<Value> {
    let mut all = Vec::new();
    for _ in 0..n {
        all.push(c.recv().await);
    }
    all
}

fn subscription(message: &Value) -> &Value {
    &message["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"]
}

#[tokio::test]
async fn listen_streams_share_stdout_tagged_and_filtered() {
    let (mut c, server, _) = start_stateless(StdioConfig::default());
    let tools = request(
        10,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true,
                                 "resourceSubscriptions": [WATCHED, "test://nowhere"]}}),
    );
    let ack = c.request(tools).await;
    valid("SubscriptionsAcknowledgedNotification", &ack);
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(*subscription(&ack), 10);
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true, "resourceSubscriptions": [WATCHED]})
    );
    let prompts = request(
        11,
        "subscriptions/listen",
        json!({"notifications": {"resourcesListChanged": true}}),
    );
    let ack = c.request(prompts).await;
    assert_eq!(*subscription(&ack), 11);

    // A change: only the stream that asked hears it, tagged.
    c.send(call(12, "trigger", json!({}))).await;
    let mut got = recv_n(&mut c, 2).await;
    got.sort_by_key(|m| m.get("id").is_some());
    let (changed, answer) = (&got[0], &got[1]);
    valid("ToolListChangedNotification", changed);
    assert_eq!(changed["method"], "notifications/tools/list_changed");
    assert_eq!(*subscription(changed), 10);
    assert_eq!(tool_body(answer), json!({"notified": true}));
    server.notify_resource_updated(WATCHED).await;
    let updated = c.recv().await;
    valid("ResourceUpdatedNotification", &updated);
    assert_eq!(
        (
            updated["params"]["uri"].clone(),
            subscription(&updated).clone()
        ),
        (json!(WATCHED), json!(10))
    );

    // Cancelling stream 10 ends it: the next change reaches nobody.
    c.send(cancel(10)).await;
    let answer = c.request(call(13, "trigger", json!({}))).await;
    assert_eq!(answer["id"], 13, "{answer}");
    // A bad filter is refused at once.
    let bad = c
        .request(request(
            14,
            "subscriptions/listen",
            json!({"notifications": 3}),
        ))
        .await;
    assert_refused(&bad, 14, -32602, "JSONRPCErrorResponse");

    // End of input: the open stream (11) ends with its closing response.
    let rest = c.close_and_drain().await;
    let [closing] = rest.as_slice() else {
        panic!("expected only the closing response, got {rest:?}");
    };
    valid("SubscriptionsListenResultResponse", closing);
    assert_eq!(closing["id"], 11);
    assert_eq!(closing["result"]["resultType"], "complete");
    assert_eq!(
        closing["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        11
    );
}

/// A listen stream whose request arrives just before the end of input still ends with the
/// connection: found by the `jsonrpc` fuzz target, when the stream took its stop token after
/// the connection had closed its streams and held stdout open for ever.
#[tokio::test]
async fn a_listen_stream_opened_as_the_input_ends_ends_with_the_connection() {
    for id in 0..20 {
        let (mut c, _, _) = start_stateless(StdioConfig::default());
        c.send(request(
            id,
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true}}),
        ))
        .await;
        let rest = tokio::time::timeout(std::time::Duration::from_secs(10), c.close_and_drain())
            .await
            .expect("the server ends its output once the input ends");
        // Either the stream opened (its acknowledgement, then its closing response) or the
        // end came first (nothing at all): never an open stream left behind.
        let ids: Vec<&Value> = rest.iter().filter_map(|m| m.get("id")).collect();
        assert!(ids.len() <= 1 && ids.iter().all(|i| **i == id), "{rest:?}");
    }
}

#[tokio::test]
async fn too_many_listen_streams_are_refused() {
    let (mut c, _, _) = start_stateless(StdioConfig::default().max_listen_streams(1));
    let listen = |id| {
        request(
            id,
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true}}),
        )
    };
    let ack = c.request(listen(1)).await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    let refused = c.request(listen(2)).await;
    assert_refused(&refused, 2, -32600, "JSONRPCErrorResponse");
    assert!(
        refused["error"]["data"]["error"]
            .as_str()
            .unwrap()
            .contains("limit of 1")
    );
    // Cancelling the first frees its slot.
    c.send(cancel(1)).await;
    let mut again = c.request(listen(3)).await;
    for _ in 0..100 {
        if again["method"] == "notifications/subscriptions/acknowledged" {
            break;
        }
        tokio::task::yield_now().await;
        again = c.request(listen(3)).await;
    }
    assert_eq!(*subscription(&again), 3, "{again}");
    c.stop.cancel();
}

/// End of input: a request already read is still answered.
#[tokio::test]
async fn a_request_read_before_eof_is_answered() {
    let (mut c, _, _) = start_stateless(StdioConfig::default());
    c.send(request(1, "server/discover", json!({}))).await;
    let rest = c.close_and_drain().await;
    let [answer] = rest.as_slice() else {
        panic!("expected only the discover answer, got {rest:?}");
    };
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"]["resultType"], "complete");
}

/// An action tool with an output schema: its reply is structured content where the revision
/// has it.
struct Counted;

impl wymcp::ActionTool for Counted {
    fn name(&self) -> &str {
        "counted"
    }
    fn description(&self) -> &str {
        "Counts"
    }
    fn actions(&self) -> wymcp::Actions {
        wymcp::Actions::new().action("count", wymcp::ActionSchema::new("A count"))
    }
    async fn run_action(
        &self,
        _action: &str,
        _data: wymcp::Data,
        _ctx: wymcp::Context,
    ) -> wymcp::ActionResult {
        Ok(wymcp::Reply::new(
            json!({"count": 42, "label": "a \"quoted\" label"}),
        ))
    }
    fn output_schema(&self) -> Option<serde_json::Map<String, Value>> {
        match json!({
            "type": "object",
            "properties": {"count": {"type": "integer"}, "label": {"type": "string"}},
            "required": ["count", "label"]
        }) {
            Value::Object(schema) => Some(schema),
            _ => None,
        }
    }
}

/// A session's tools/call answer on stdio is shaped by the session's revision: no
/// `structuredContent` on 2025-03-26, the reply as `structuredContent` from 2025-06-18; the
/// text item carries the same object either way, and the answer matches the revision's schema.
#[tokio::test]
async fn a_session_call_answers_in_its_revisions_shape() {
    let expected = json!({"count": 42, "label": "a \"quoted\" label"});
    for (version, structured) in [
        (ProtocolVersion::V2025_03_26, false),
        (ProtocolVersion::V2025_06_18, true),
        (ProtocolVersion::V2025_11_25, true),
    ] {
        let server = Server::builder().tool(Counted).build().unwrap();
        let mut c = start_serving(server, StdioConfig::default());
        c.initialize(version.as_str(), json!({})).await;
        let answer = c
            .request(
                json!({"jsonrpc": "2.0", "id": "call-1", "method": "tools/call",
                            "params": {"name": "counted", "arguments": {"action": "count"}}}),
            )
            .await;
        assert_eq!(answer["id"], "call-1", "{answer}");
        assert_eq!(answer["jsonrpc"], "2.0");
        let result = &answer["result"];
        assert_eq!(result["isError"], false, "{answer}");
        assert_eq!(tool_body(&answer), expected, "{version:?}");
        assert_eq!(
            result.get("structuredContent"),
            structured.then_some(&expected),
            "{version:?}: {answer}"
        );
        let validator = mcp_schema::validator(version, "CallToolResult");
        let problems = mcp_schema::problems(&validator, result);
        assert!(problems.is_empty(), "{version:?}: {problems:?}");
        c.close().await.unwrap();
    }
}
