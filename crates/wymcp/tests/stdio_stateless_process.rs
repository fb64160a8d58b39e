//! MCP 2026-07-28 over stdio in a real child process: this test binary runs itself as the
//! server (`WYMCP_STDIO_STATELESS_CHILD=1`, the stateless fixture) and drives it over pipes.
//! One process serves discover, the envelope and version errors, a removed method, a gate
//! refusal, an `input_required` round trip and a tampered state, a listen stream with a tagged
//! `list_changed`, a cancelled call, and then a session-era `initialize` whose gate refusal is
//! the stateless one's. Every stdout line must be one JSON-RPC message valid against the
//! official schema; stateless answers are checked against their specific definitions. End
//! of input: the open listen stream closes gracefully and the process exits with status 0.

#![allow(clippy::unwrap_used, missing_docs)]

mod mcp_schema;
mod stateless_fixture;
mod stdio_harness;

use serde_json::{Value, json};
use wymcp::ProtocolVersion;

use stateless_fixture::{call, cancel, envelope, initialize, request};
use stdio_harness::Proc;

const CHILD: &str = "WYMCP_STDIO_STATELESS_CHILD";
const V2026: ProtocolVersion = ProtocolVersion::V2026_07_28;

fn main() {
    stdio_harness::main(
        CHILD,
        "stateless stdio",
        "stdio_stateless_process",
        || stateless_fixture::server().0,
        both_eras_in_one_process,
    );
}

fn valid(definition: &str, value: &Value) {
    mcp_schema::assert_valid(V2026, definition, value);
}

impl Proc {
    /// The next stdout line, which must be one JSON-RPC message (valid per the 2026-07-28
    /// schema unless `session` says it answers the session era).
    async fn recv_as(&mut self, session: bool) -> Value {
        let message = self.recv().await;
        assert!(
            message.get("method").is_none() || message.get("id").is_none(),
            "the server never writes a request: {message}"
        );
        if !session {
            valid("JSONRPCMessage", &message);
        }
        message
    }

    async fn next(&mut self) -> Value {
        self.recv_as(false).await
    }

    async fn request(&mut self, message: Value) -> Value {
        self.send(message).await;
        self.next().await
    }
}

fn assert_error(answer: &Value, id: i64, code: i64) {
    assert_eq!(answer["id"], id, "{answer}");
    assert_eq!(answer["error"]["code"], code, "{answer}");
}

async fn both_eras_in_one_process() {
    let mut p = stdio_harness::spawn(CHILD);
    // Discover first, as a dual-era client probes.
    let discover = p.request(request(1, "server/discover", json!({}))).await;
    valid("DiscoverResultResponse", &discover);
    assert_eq!(
        discover["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "stateless-stdio"
    );

    // The envelope, the revision, a removed method.
    let bare = p
        .request(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list",
                        "params": {"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}}}))
        .await;
    assert_error(&bare, 2, -32602);
    valid("InvalidParamsError", &bare["error"]);
    let mut meta = envelope(json!({}));
    meta["io.modelcontextprotocol/protocolVersion"] = json!("v999.0.0");
    let version = p
        .request(request(3, "tools/list", json!({"_meta": meta})))
        .await;
    valid("UnsupportedProtocolVersionError", &version);
    assert_eq!(version["error"]["data"]["requested"], "v999.0.0");
    let removed = p.request(request(4, "ping", json!({}))).await;
    assert_error(&removed, 4, -32601);
    valid("MethodNotFoundError", &removed["error"]);

    // A listen stream, acknowledged first, then a tagged change.
    let ack = p
        .request(request(
            5,
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true}}),
        ))
        .await;
    valid("SubscriptionsAcknowledgedNotification", &ack);
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        5
    );
    p.send(call(6, "trigger", json!({}))).await;
    let mut got = [p.next().await, p.next().await];
    got.sort_by_key(|m| m.get("id").is_some());
    valid("ToolListChangedNotification", &got[0]);
    assert_eq!(
        got[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        5
    );
    assert_eq!(got[1]["id"], 6);

    // An input_required round trip, then a tampered state.
    let caps = json!({"elicitation": {}});
    let first = json!({"name": "greet", "arguments": {}, "_meta": envelope(caps)});
    let asked = p.request(request(7, "tools/call", first.clone())).await;
    valid("CallToolResultResponse", &asked);
    valid("InputRequiredResult", &asked["result"]);
    let state = asked["result"]["requestState"].as_str().unwrap().to_owned();
    let mut retry = first;
    retry["inputResponses"] =
        json!({"user_name": {"action": "accept", "content": {"name": "Ada"}}});
    retry["requestState"] = json!(state);
    let done = p.request(request(8, "tools/call", retry.clone())).await;
    valid("CallToolResultResponse", &done);
    assert_eq!(done["result"]["content"][0]["text"], "Hello, Ada!");
    retry["requestState"] = json!(format!("{state}-TAMPERED"));
    let tampered = p.request(request(9, "tools/call", retry)).await;
    assert_error(&tampered, 9, -32602);
    assert_eq!(tampered["error"]["data"]["reason"], "invalid_request_state");

    // A slow call, cancelled: nothing more comes for it.
    let mut meta = envelope(json!({}));
    meta["progressToken"] = json!("slow");
    p.send(request(
        10,
        "tools/call",
        json!({"name": "slow", "arguments": {}, "_meta": meta}),
    ))
    .await;
    valid("ProgressNotification", &p.next().await);
    p.send(cancel(10)).await;
    let list = p.request(request(11, "tools/list", json!({}))).await;
    assert_eq!(list["id"], 11, "{list}");

    // A gate refusal, then the session era on the same process: the same payload.
    let bad = json!({"action": "create", "data": {"title": "", "colour": "red"}});
    let modern = p.request(call(12, "tasks", bad.clone())).await;
    valid("CallToolResultResponse", &modern);
    assert_eq!(modern["result"]["isError"], true);
    p.send(initialize(13)).await;
    let init = p.recv_as(true).await;
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
    p.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    p.send(json!({"jsonrpc": "2.0", "id": 14, "method": "tools/call",
                  "params": {"name": "tasks", "arguments": bad}}))
        .await;
    let session = p.recv_as(true).await;
    assert_eq!(session["result"]["content"], modern["result"]["content"]);
    assert_eq!(session["result"]["isError"], true);
    assert!(session["result"].get("resultType").is_none());

    // End of input: the open listen stream closes gracefully, then a clean exit.
    drop(p.stdin.take());
    let closing = p.next().await;
    valid("SubscriptionsListenResultResponse", &closing);
    assert_eq!(closing["id"], 5);
    p.assert_stdout_ended().await;
    p.assert_clean_exit().await;
}
