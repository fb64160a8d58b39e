//! What `wymcp::run`/`Cli` logs by default (issue 19, item 7 and D15): a real child process
//! (this test binary, run again with `WYMCP_RUN_LOG_CHILD=1`) serves the hostile fixture through
//! `Cli` over stdio. A tool's 1 MB panic message full of newlines reaches stderr cut and
//! escaped (no forged line, no flood); a refused call is logged at info, and not under `--quiet`.

#![allow(clippy::unwrap_used, missing_docs)]

mod hostile_fixture;

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use serde_json::{Value, json};
use wymcp::Limits;
use wymcp::run::Cli;

const CHILD: &str = "WYMCP_RUN_LOG_CHILD";

fn main() {
    if std::env::var_os(CHILD).is_some() {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let server = hostile_fixture::server(Limits::default(), Arc::new(AtomicBool::new(false)));
        runtime
            .block_on(Cli::new("hostile").parse().serve(server))
            .unwrap();
        return;
    }
    a_panic_reaches_stderr_bounded_and_escaped();
    refusals_are_logged_at_info_unless_quiet();
    println!("run_log: ok");
}

/// Serves `calls` (after the handshake) in a child with `flags`; returns its answers to the
/// calls and its whole stderr.
fn serve(flags: &[&str], calls: &[Value]) -> (Vec<Value>, String) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .env(CHILD, "1")
        .env_remove("RUST_LOG")
        .env_remove("RUST_BACKTRACE")
        .arg("--stdio")
        .args(flags)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "run-log", "version": "0"}}})
    )
    .unwrap();
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    )
    .unwrap();
    for call in calls {
        writeln!(stdin, "{call}").unwrap();
    }
    // End of input: the server answers what it read, then exits.
    drop(stdin);
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let answers: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .filter(|m: &Value| m["id"] != 0)
        .collect();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{:?}", out.status);
    (answers, String::from_utf8(out.stderr).unwrap())
}

fn a_panic_reaches_stderr_bounded_and_escaped() {
    let message = "line\nforged: level=ERROR\n".repeat(40_000);
    let (answers, stderr) = serve(
        &[],
        &[hostile_fixture::call(1, "crash", json!({"text": message}))],
    );
    assert_eq!(answers.len(), 1, "{answers:?}");
    let fault = hostile_fixture::payload(&answers[0]["result"]);
    assert_eq!(fault["errorType"], "tool_fault", "{fault}");
    assert!(stderr.len() < 32 * 1024, "stderr is {} bytes", stderr.len());
    assert!(
        !stderr.lines().any(|l| l.starts_with("forged")),
        "a forged line reached stderr:\n{stderr}"
    );
    let hook = stderr
        .lines()
        .find(|l| l.contains("' panicked at "))
        .unwrap_or_else(|| panic!("the panic hook wrote nothing:\n{stderr}"));
    assert!(
        hook.contains(": line\\nforged: level=ERROR\\nline"),
        "{hook}"
    );
    assert!(hook.len() < 16 * 1024, "{} bytes", hook.len());
}

fn refusals_are_logged_at_info_unless_quiet() {
    let unknown = hostile_fixture::call(1, "frobnicate", json!({}));
    let (answers, stderr) = serve(&[], std::slice::from_ref(&unknown));
    assert_eq!(answers[0]["result"]["isError"], true, "{answers:?}");
    let line = stderr
        .lines()
        .find(|l| l.contains("tool call answered with an error"))
        .unwrap_or_else(|| panic!("no refusal logged:\n{stderr}"));
    assert!(
        line.contains(" INFO ") && line.contains("action=\"frobnicate\""),
        "{line}"
    );
    let (answers, quiet) = serve(&["--quiet"], &[unknown]);
    assert_eq!(answers[0]["result"]["isError"], true, "{answers:?}");
    assert!(
        !quiet.contains(" INFO ") && !quiet.contains(" WARN "),
        "{quiet}"
    );
}
