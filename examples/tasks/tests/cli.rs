//! The `tasks` binary as a user and a client meet it: its `--help` (wymcp's `Cli`), its refusals,
//! a real `tools/list` over stdio, and the Claude Desktop configuration its banner prints,
//! spawned as printed from `/` with a home directory of its own.

#![allow(clippy::unwrap_used, missing_docs)]

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_tasks");
/// How long one answer may take before the test gives up (a hang fails, it does not block).
const WAIT: Duration = Duration::from_secs(30);

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wymcp-tasks-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Lines of a child's stream, read on a thread so that a silent child times out.
fn lines(stream: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Sends initialize, initialized and tools/list over stdio; returns the tool names.
fn list_tools_over_stdio(child: &mut Child, stdout: ChildStdout) -> Vec<String> {
    let mut stdin = child.stdin.take().unwrap();
    let answers = lines(stdout);
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "cli-test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    stdin.flush().unwrap();
    let init: Value = serde_json::from_str(&answers.recv_timeout(WAIT).unwrap()).unwrap();
    assert_eq!(
        init["result"]["serverInfo"]["name"], "wymcp-tasks",
        "{init}"
    );
    let list: Value = serde_json::from_str(&answers.recv_timeout(WAIT).unwrap()).unwrap();
    assert_eq!(list["id"], 2, "{list}");
    drop(stdin); // end of input ends the session
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
    list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

fn spawn_stdio(command: &mut Command) -> (Child, ChildStdout) {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    (child, stdout)
}

#[test]
fn help_lists_every_flag_on_stdout_and_exits_0() {
    let out = Command::new(BIN).arg("--help").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(
        help.starts_with("wymcp tasks example: a task tracker served over MCP\n"),
        "{help}"
    );
    assert!(help.contains("\nUSAGE:\n    tasks [OPTIONS]\n"), "{help}");
    for flag in [
        "--port <PORT>",
        "--bind <ADDR>",
        "--stdio",
        "--data <DIR>",
        "-q, --quiet",
        "--rate-limit <RATE>",
        "--max-concurrent-calls <N>",
        "--trusted-proxies <ADDRS>",
        "-h, --help",
    ] {
        assert!(
            help.lines().any(|l| l.trim_start().starts_with(flag)),
            "{flag} missing from:\n{help}"
        );
    }
    assert!(out.stderr.is_empty());
}

#[test]
fn a_refused_command_line_says_why_and_exits_2() {
    for (args, reason) in [
        (
            &["--port", "http"][..],
            "error: --port: \"http\" is not a port number (0-65535)\n",
        ),
        (
            &["--bind", "localhost"],
            "error: --bind: \"localhost\" is not an IP address",
        ),
        (
            &["--frobnicate"],
            "error: unknown argument \"--frobnicate\"\n",
        ),
        (&["--data"], "error: --data needs a value\n"),
        (
            &["--trusted-proxies", "nginx"],
            "error: --trusted-proxies: \"nginx\" is not an IP address (such as 127.0.0.1 or ::1)\n",
        ),
        (
            &["--stdio", "--port", "9000"],
            "error: --stdio serves over stdin/stdout: it takes no --port\n",
        ),
    ] {
        let out = Command::new(BIN).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.starts_with(reason), "{args:?}: {err}");
        assert!(err.contains("USAGE:"), "{args:?}: the usage follows: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn stdio_answers_tools_list() {
    let data = scratch("stdio");
    let (mut child, stdout) =
        spawn_stdio(Command::new(BIN).arg("--stdio").arg("--data").arg(&data));
    let names = list_tools_over_stdio(&mut child, stdout);
    assert_eq!(names, ["tasks", "projects", "search", "help"]);
    assert!(data.join("tasks.db").is_file());
    let _ = std::fs::remove_dir_all(&data);
}

/// Starts the HTTP server with `--data <relative>` from `cwd`; returns the Desktop entry the
/// banner printed.
fn desktop_entry_printed(cwd: &Path, data: &str) -> Value {
    let mut server = Command::new(BIN)
        .args(["--port", "0", "--data", data])
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let banner = lines(server.stderr.take().unwrap());
    let mut entry = None;
    while entry.is_none() {
        let line = banner
            .recv_timeout(WAIT)
            .expect("the banner's Desktop line");
        if line.contains("\"--stdio\"") {
            entry = Some(serde_json::from_str::<Value>(line.trim()).unwrap());
        }
    }
    server.kill().unwrap();
    server.wait().unwrap();
    entry.unwrap()["mcpServers"]["tasks"].clone()
}

/// Bound to every interface, the banner names a URL a client can connect to (loopback, not
/// 0.0.0.0) and warns that the server is reachable from other machines without auth.
#[tokio::test]
async fn bound_to_every_interface_the_banner_prints_a_usable_url_and_warns_about_auth() {
    let data = scratch("bind-all");
    let mut server = Command::new(BIN)
        .args(["--bind", "0.0.0.0", "--port", "0", "--data"])
        .arg(&data)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let banner = lines(server.stderr.take().unwrap());
    let (mut url, mut warning) = (None, None);
    while url.is_none() || warning.is_none() {
        let line = banner.recv_timeout(WAIT).expect("the banner");
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("listening") {
            url = rest.split_whitespace().next().map(str::to_owned);
        } else if let Some(rest) = line.strip_prefix("warning") {
            warning = Some(rest.trim().to_owned());
        }
    }
    let url = url.unwrap();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    assert!(url.ends_with("/mcp"), "{url}");
    assert_eq!(
        warning.unwrap(),
        "bound to 0.0.0.0: other machines reach it at this one's addresses, and without auth \
         in front (docs/auth.md) anyone who reaches it may call every tool"
    );
    // The printed URL serves: an initialize answered 200.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "cli-test", "version": "1"}}});
    let status = reqwest::Client::new()
        .post(&url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(init.to_string())
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status, 200);
    server.kill().unwrap();
    server.wait().unwrap();
    let _ = std::fs::remove_dir_all(&data);
}

#[test]
fn the_printed_claude_desktop_entry_works_from_root_with_the_same_data() {
    let scratch = scratch("desktop");
    let entry = desktop_entry_printed(&scratch, "relative-data");
    let data = std::fs::canonicalize(scratch.join("relative-data")).unwrap();
    let exe = std::fs::canonicalize(BIN).unwrap();
    assert_eq!(
        entry,
        json!({"command": exe.display().to_string(),
               "args": ["--stdio", "--data", data.display().to_string()]})
    );
    // As Claude Desktop would: the command and args as printed, from a working directory
    // of its own, with nothing of this environment but a home directory.
    let home = scratch.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let args: Vec<&str> = entry["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let (mut child, stdout) = spawn_stdio(
        Command::new(entry["command"].as_str().unwrap())
            .args(args)
            .current_dir("/")
            .env_clear()
            .env("HOME", &home),
    );
    let names = list_tools_over_stdio(&mut child, stdout);
    assert_eq!(names, ["tasks", "projects", "search", "help"]);
    assert!(data.join("tasks.db").is_file());
    let _ = std::fs::remove_dir_all(&scratch);
}

#[cfg(target_os = "linux")]
#[test]
fn by_default_the_data_lives_in_the_per_user_data_directory() {
    let home = scratch("home");
    let (mut child, stdout) = spawn_stdio(
        Command::new(BIN)
            .arg("--stdio")
            .current_dir("/")
            .env_clear()
            .env("HOME", &home),
    );
    let said = lines(child.stderr.take().unwrap());
    let names = list_tools_over_stdio(&mut child, stdout);
    assert_eq!(names.len(), 4);
    let db = home.join(".local/share/wymcp-tasks/tasks.db");
    assert!(db.is_file(), "{} missing", db.display());
    let line = said.recv_timeout(WAIT).unwrap();
    let db = std::fs::canonicalize(db).unwrap();
    assert_eq!(
        line,
        format!("tasks: serving over stdio (database {})", db.display())
    );
    let _ = std::fs::remove_dir_all(&home);
}

/// Runs one refused call over stdio (`extra` flags added), closes stdin and returns stderr.
fn stderr_of_a_refused_call(name: &str, extra: &[&str]) -> String {
    let data = scratch(name);
    let (mut child, stdout) = spawn_stdio(
        Command::new(BIN)
            .env_remove("RUST_LOG")
            .arg("--stdio")
            .arg("--data")
            .arg(&data)
            .args(extra),
    );
    let mut stdin = child.stdin.take().unwrap();
    let answers = lines(stdout);
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "cli-test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "tasks", "arguments": {"action": "frobnicate"}}}),
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    stdin.flush().unwrap();
    answers.recv_timeout(WAIT).unwrap();
    let refused: Value = serde_json::from_str(&answers.recv_timeout(WAIT).unwrap()).unwrap();
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let _ = std::fs::remove_dir_all(&data);
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn refused_calls_are_logged_on_stderr_unless_quiet() {
    let logged = stderr_of_a_refused_call("log", &[]);
    let line = logged
        .lines()
        .find(|l| l.contains("tool call answered with an error"))
        .unwrap_or_else(|| panic!("no refusal logged:\n{logged}"));
    assert!(line.contains(" INFO "), "{line}");
    assert!(line.contains("tool_name=tasks"), "{line}");
    assert!(line.contains("action=\"frobnicate\""), "{line}");
    let quiet = stderr_of_a_refused_call("quiet", &["--quiet"]);
    assert!(
        !quiet.contains("tool call answered with an error"),
        "{quiet}"
    );
    assert!(!quiet.contains(" INFO "), "{quiet}");
}

/// Writes `messages` to the child's stdin, one per line, at once.
fn send_all(stdin: &mut std::process::ChildStdin, messages: &[Value]) {
    let mut burst = String::new();
    for message in messages {
        burst.push_str(&format!("{message}\n"));
    }
    stdin.write_all(burst.as_bytes()).unwrap();
    stdin.flush().unwrap();
}

/// A `tools/call` of `tasks` `list` with id `id`.
fn list_call(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "tasks", "arguments": {"action": "list", "data": {}}}})
}

/// The JSON a tool answered in its one text item.
fn tool_json(answer: &Value) -> Value {
    serde_json::from_str(answer["result"]["content"][0]["text"].as_str().unwrap()).unwrap()
}

#[test]
fn rate_limit_5_per_second_refuses_most_of_a_burst_of_20_then_lets_a_later_call_through() {
    let dir = scratch("rate-limit");
    let (mut child, stdout) = spawn_stdio(Command::new(BIN).args([
        "--stdio",
        "--rate-limit",
        "5/s",
        "--data",
        dir.to_str().unwrap(),
    ]));
    let mut stdin = child.stdin.take().unwrap();
    let answers = lines(stdout);
    send_all(
        &mut stdin,
        &[
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "cli-test", "version": "1"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        ],
    );
    answers.recv_timeout(WAIT).unwrap();
    let burst: Vec<Value> = (1..=20).map(list_call).collect();
    send_all(&mut stdin, &burst);
    let (mut limited, mut longest) = (0, 0);
    for _ in 0..20 {
        let answer: Value = serde_json::from_str(&answers.recv_timeout(WAIT).unwrap()).unwrap();
        let body = tool_json(&answer);
        if body["errorType"] == "rate_limited" {
            assert_eq!(answer["result"]["isError"], true, "{answer}");
            assert_eq!(body["limit"], "5/s", "{body}");
            let wait = body["retryAfterMs"].as_u64().unwrap();
            assert!((1..=1000).contains(&wait), "{body}");
            longest = longest.max(wait);
            limited += 1;
        } else {
            assert_eq!(answer["result"]["isError"], false, "{answer}");
        }
    }
    assert!(limited >= 10, "only {limited} of 20 were rate_limited");
    std::thread::sleep(Duration::from_millis(longest));
    send_all(&mut stdin, &[list_call(21)]);
    let after: Value = serde_json::from_str(&answers.recv_timeout(WAIT).unwrap()).unwrap();
    assert_eq!(after["id"], 21, "{after}");
    assert_eq!(after["result"]["isError"], false, "{after}");
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

/// Says on one line, past the harness's capture (so `cargo test` shows it beside the test's
/// `ok`), that a test file of the example was not built: it needs a cargo feature this build
/// lacks (`cargo test --workspace` builds the example's default), and how to run it.
#[cfg(any(not(feature = "jwt"), not(feature = "redis")))]
fn say_not_built(file: &str, feature: &str) {
    let _ = writeln!(
        std::io::stderr(),
        "skipped examples/tasks/tests/{file}.rs (needs the example's `{feature}` feature): \
         cargo test -p wymcp-tasks --features \"redis jwt\" --test nodes --test auth"
    );
}

/// A build without the `jwt` feature (the default) refuses `--jwks-url`, saying how to get it,
/// before it opens any data directory. (`tests/auth.rs` is not built then: said on stderr.)
#[cfg(not(feature = "jwt"))]
#[test]
fn without_the_jwt_feature_jwks_url_is_refused_naming_the_feature() {
    say_not_built("auth", "jwt");
    let data = scratch("no-jwt");
    let out = Command::new(BIN)
        .args(["--jwks-url", "http://127.0.0.1:9/jwks", "--issuer", "i"])
        .args(["--audience", "http://127.0.0.1:8080/mcp", "--port", "0"])
        .env("WYMCP_TASKS_DATA", &data)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("--jwks-url needs the example built with JWT support: cargo run -p wymcp-tasks --features jwt --"),
        "{stderr}"
    );
    assert!(!data.join("tasks.db").exists(), "no database was created");
}

/// A build without the `otel` feature (the default) refuses `--metrics` as wymcp's parser
/// refuses a flag its build left out: status 2, the feature named, the usage.
/// (`tests/metrics.rs` is not built then.)
#[cfg(not(feature = "otel"))]
#[test]
fn without_the_otel_feature_metrics_is_refused_naming_the_feature() {
    let out = Command::new(BIN)
        .args(["--metrics", "127.0.0.1:0", "--port", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with(
            "error: --metrics: this program was built without wymcp's `otel-export` feature\n\n"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("USAGE:"), "the usage follows: {stderr}");
}

/// A build without the `redis` feature (the default) refuses `--redis` as a command line it
/// cannot serve: status 2, how to get the feature, the usage, and no data directory opened.
/// (`tests/nodes.rs` is not built then: said on stderr.)
#[cfg(not(feature = "redis"))]
#[test]
fn without_the_redis_feature_redis_is_refused_with_status_2_and_the_usage() {
    say_not_built("nodes", "redis");
    let data = scratch("no-redis");
    let out = Command::new(BIN)
        .args(["--redis", "redis://127.0.0.1:6379/", "--port", "0"])
        .env("WYMCP_TASKS_DATA", &data)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with(
            "error: --redis needs the example built with Redis support: \
             cargo run -p wymcp-tasks --features redis -- --redis URL\n\n"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("USAGE:"), "the usage follows: {stderr}");
    assert!(!data.join("tasks.db").exists(), "no database was created");
}

#[test]
fn a_malformed_rate_limit_is_refused_with_status_2() {
    let out = Command::new(BIN)
        .args(["--stdio", "--rate-limit", "fast"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("--rate-limit: \"fast\" is not a rate such as 5/s or 100/min"),
        "{stderr}"
    );
}

/// Issue 48, N9: behind a reverse proxy on this host every client's address is 127.0.0.1, so
/// without `--trusted-proxies` one client's burst spends every client's rate limit. With the
/// proxy listed, each forwarded client (`X-Forwarded-For`) has its own budget: client A's
/// burst is limited, client B is still served.
#[tokio::test]
async fn behind_a_trusted_proxy_each_forwarded_client_has_its_own_rate_limit() {
    let data = scratch("trusted-proxies");
    let mut server = Command::new(BIN)
        .args(["--port", "0", "--rate-limit", "3/min", "--trusted-proxies"])
        .args(["127.0.0.1,::1", "--data"])
        .arg(&data)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let banner = lines(server.stderr.take().unwrap());
    let mut url = None;
    while url.is_none() {
        let line = banner.recv_timeout(WAIT).expect("the banner");
        if let Some(rest) = line.trim().strip_prefix("listening") {
            url = rest.split_whitespace().next().map(str::to_owned);
        }
    }
    let url = url.unwrap();
    let http = reqwest::Client::new();
    // A stateless (2026-07-28) `tasks list` call from the client behind the proxy at `client`.
    let call = |client: &'static str, id: u64| {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "tasks", "arguments": {"action": "list"},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "cli-test", "version": "1"}}}});
        http.post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", "tasks")
            .header("x-forwarded-for", client)
            .body(body.to_string())
            .send()
    };
    let mut limited_a = 0;
    for id in 0..6 {
        let answer: Value = call("198.51.100.1", id)
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if tool_json(&answer)["errorType"] == "rate_limited" {
            limited_a += 1;
        }
    }
    assert_eq!(limited_a, 3, "client A: 3 of 6 calls over 3/min");
    let answer: Value = call("198.51.100.2", 7).await.unwrap().json().await.unwrap();
    assert_eq!(
        answer["result"]["isError"], false,
        "client B is served: {answer}"
    );
    server.kill().unwrap();
    server.wait().unwrap();
    let _ = std::fs::remove_dir_all(&data);
}
