//! The stdio transport in a real child process: this test binary runs itself as the server
//! (`WYMCP_STDIO_CHILD=1`) and drives it over pipes. stdout carries JSON-RPC only, logs go to
//! stderr; progress, logging and an elicitation round trip work; EOF and SIGTERM end it with
//! exit status 0.

#![allow(clippy::unwrap_used, missing_docs)]

mod ctx_fixture;
mod stdio_harness;

use serde_json::{Value, json};
use tokio::io::AsyncWriteExt as _;
use tokio::process::Command;

use stdio_harness::Proc;

const CHILD: &str = "WYMCP_STDIO_CHILD";

fn main() {
    stdio_harness::main(
        CHILD,
        "stdio",
        "stdio_process",
        ctx_fixture::server,
        || async {
            eof_exit_and_a_full_round_trip().await;
            #[cfg(unix)]
            sigterm_exits_cleanly().await;
        },
    );
}

fn spawn() -> Proc {
    stdio_harness::spawn(CHILD)
}

async fn initialize(p: &mut Proc) {
    p.send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "stdio-process-test", "version": "0"}
        }}),
    )
    .await;
    let init = p.recv().await;
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    p.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
}

async fn eof_exit_and_a_full_round_trip() {
    let mut p = spawn();
    initialize(&mut p).await;
    p.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "ctx", "arguments": {"op": "steps"}, "_meta": {"progressToken": 7}
        }}),
    )
    .await;
    assert_eq!(p.recv().await["method"], "notifications/progress");
    assert_eq!(p.recv().await["method"], "notifications/message");
    let elicit = p.recv().await;
    assert_eq!(elicit["method"], "elicitation/create");
    p.send(json!({"jsonrpc": "2.0", "id": elicit["id"],
                  "result": {"action": "accept", "content": {"branch": "main"}}}))
        .await;
    assert_eq!(p.recv().await["params"]["progress"], 3.0);
    let response = p.recv().await;
    assert_eq!(response["id"], 1);
    let text = response["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(text).unwrap(),
        json!({"ok": {"action": "accept", "content": {"branch": "main"}}})
    );
    // A malformed line is answered, never a crash.
    p.stdin
        .as_mut()
        .unwrap()
        .write_all(b"{oops\n")
        .await
        .unwrap();
    assert_eq!(p.recv().await["error"]["code"], -32700);
    // EOF: a clean exit, nothing more on stdout, logs on stderr.
    drop(p.stdin.take());
    p.assert_stdout_ended().await;
    p.assert_clean_exit().await;
}

#[cfg(unix)]
async fn sigterm_exits_cleanly() {
    let mut p = spawn();
    initialize(&mut p).await;
    let pid = p.child.id().unwrap();
    let killed = Command::new("kill")
        .arg("-TERM")
        .arg(pid.to_string())
        .status()
        .await
        .unwrap();
    assert!(killed.success());
    p.assert_clean_exit().await;
}
