//! A stdio server in a real child process: the test binary runs itself as the server when its
//! child variable is set, and drives it over pipes. Shared by `stdio_process.rs` and
//! `stdio_stateless_process.rs` (both `harness = false`; a directory module, so not a test
//! target).

#![allow(dead_code, clippy::unwrap_used)]

use std::future::Future;
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use wymcp::Server;

/// The test binary's `main`: with `child` in the environment it serves `server()` on
/// stdin/stdout (logging `{label} fixture: …` to stderr); otherwise it runs `test` within 60 s
/// and prints `{target}: ok`.
pub(crate) fn main<T: Future<Output = ()>>(
    child: &str,
    label: &str,
    target: &str,
    server: impl FnOnce() -> Server,
    test: impl FnOnce() -> T,
) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    if std::env::var_os(child).is_some() {
        eprintln!("{label} fixture: serving on stdin/stdout");
        runtime
            .block_on(wymcp::transport::stdio::serve(server()))
            .unwrap();
        eprintln!("{label} fixture: clean exit");
        return;
    }
    runtime.block_on(async {
        tokio::time::timeout(Duration::from_secs(60), test())
            .await
            .unwrap_or_else(|_| panic!("the {label} process test took longer than 60 s"));
    });
    println!("{target}: ok");
}

/// The server child process and its pipes.
pub(crate) struct Proc {
    pub(crate) child: Child,
    pub(crate) stdin: Option<ChildStdin>,
    pub(crate) stdout: tokio::io::Lines<BufReader<ChildStdout>>,
}

/// Starts this test binary again as the server (`child` set to `1`).
pub(crate) fn spawn(child: &str) -> Proc {
    let mut process = Command::new(std::env::current_exe().unwrap())
        .env(child, "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stdin = process.stdin.take();
    let stdout = BufReader::new(process.stdout.take().unwrap()).lines();
    Proc {
        child: process,
        stdin,
        stdout,
    }
}

impl Proc {
    pub(crate) async fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
        stdin.flush().await.unwrap();
    }

    /// The next stdout line, which must be one JSON-RPC message.
    pub(crate) async fn recv(&mut self) -> Value {
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

    /// Everything the child wrote to stderr.
    pub(crate) async fn stderr(&mut self) -> String {
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

    /// Nothing more on stdout: it ended.
    pub(crate) async fn assert_stdout_ended(&mut self) {
        assert!(self.stdout.next_line().await.unwrap().is_none());
    }

    /// Exit status 0 and the fixture's clean exit logged on stderr.
    pub(crate) async fn assert_clean_exit(&mut self) {
        let status = self.child.wait().await.unwrap();
        assert!(status.success(), "{status}");
        let stderr = self.stderr().await;
        assert!(stderr.contains("clean exit"), "{stderr}");
    }
}
