//! The stdio transport in a real child process: this test binary runs itself as the server
//! (`WYMCP_STDIO_CHILD=1`) and drives it over pipes. stdout carries JSON-RPC only, logs go to
//! stderr; progress, logging and an elicitation round trip work; EOF and SIGTERM end it with
//! exit status 0.

#![allow(clippy::unwrap_used, missing_docs)]

mod ctx_fixture;

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

const CHILD: &str = "WYMCP_STDIO_CHILD";

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    if std::env::var_os(CHILD).is_some() {
        eprintln!("stdio fixture: serving on stdin/stdout");
        runtime
            .block_on(wymcp::transport::stdio::serve(ctx_fixture::server()))
            .unwrap();
        eprintln!("stdio fixture: clean exit");
        return;
    }
    runtime.block_on(async {
        tokio::time::timeout(Duration::from_secs(60), async {
            eof_exit_and_a_full_round_trip().await;
            #[cfg(unix)]
            sigterm_exits_cleanly().await;
        })
        .await
        .expect("the stdio process test took longer than 60 s");
    });
    println!("stdio_process: ok");
}

struct Proc {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: tokio::io::Lines<BufReader<ChildStdout>>,
}

fn spawn() -> Proc {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .env(CHILD, "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stdin = child.stdin.take();
    let stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    Proc {
        child,
        stdin,
        stdout,
    }
}

impl Proc {
    async fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
        stdin.flush().await.unwrap();
    }

    /// The next stdout line, which must be one JSON-RPC message.
    async fn recv(&mut self) -> Value {
        let line = self
            .stdout
            .next_line()
            .await
            .unwrap()
            .expect("stdout ended");
        let message: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout carried a non-JSON line ({e}): {line}"));
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
        message
    }

    async fn initialize(&mut self) {
        self.send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"elicitation": {}},
                "clientInfo": {"name": "stdio-process-test", "version": "0"}
            }}),
        )
        .await;
        let init = self.recv().await;
        assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
    }

    async fn stderr(&mut self) -> String {
        let mut text = String::new();
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut text)
            .await
            .unwrap();
        text
    }
}

async fn eof_exit_and_a_full_round_trip() {
    let mut p = spawn();
    p.initialize().await;
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
    assert!(p.stdout.next_line().await.unwrap().is_none());
    let status = p.child.wait().await.unwrap();
    assert!(status.success(), "{status}");
    let stderr = p.stderr().await;
    assert!(stderr.contains("clean exit"), "{stderr}");
}

#[cfg(unix)]
async fn sigterm_exits_cleanly() {
    let mut p = spawn();
    p.initialize().await;
    let pid = p.child.id().unwrap();
    let killed = Command::new("kill")
        .arg("-TERM")
        .arg(pid.to_string())
        .status()
        .await
        .unwrap();
    assert!(killed.success());
    let status = p.child.wait().await.unwrap();
    assert!(status.success(), "{status}");
    let stderr = p.stderr().await;
    assert!(stderr.contains("clean exit"), "{stderr}");
}
