//! What the gateway's tests share: finding the upstreams they spawn (skipping, with one line
//! saying how to install, when one is missing; failing under `WYMCP_REQUIRE_SERVICES=1`), the
//! record of the requests an upstream received, and calls through the gateway.

#![allow(dead_code, clippy::unwrap_used)]

use std::io::Write as _;

use std::path::{Path, PathBuf};
use std::process::Command;
use tokio::io::AsyncBufReadExt as _;

use serde_json::{Value, json};
use wymcp::testing::{TestClient, ToolResult};

const REQUIRE: &str = "WYMCP_REQUIRE_SERVICES";

/// The npm packages' version `.ci/run` installs under the target directory.
pub(crate) const NPM_VERSION: &str = "2026.8.31";
/// The PyPI `mcp-server-time` version `.ci/run` installs in a venv under the target directory.
pub(crate) const TIME_VERSION: &str = "2026.10.19";

/// Prints the skip line (or panics under `WYMCP_REQUIRE_SERVICES=1`).
pub(crate) fn skip(what: &str) {
    let test = std::thread::current().name().unwrap_or("a test").to_owned();
    assert!(
        std::env::var(REQUIRE).as_deref() != Ok("1"),
        "{test}: {what}, and {REQUIRE}=1 requires it"
    );
    let _ = writeln!(
        std::io::stderr(),
        "skipped {test}: {what}; {REQUIRE}=1 makes this a failure"
    );
}

/// The target directory (`target/<profile>/deps/<test>-… → target`).
pub(crate) fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.ancestors().nth(3).unwrap().to_path_buf()
}

fn works(program: &str, arg: &str) -> bool {
    Command::new(program)
        .arg(arg)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `python3`, when it runs.
pub(crate) fn python() -> Option<&'static str> {
    if works("python3", "--version") {
        return Some("python3");
    }
    skip("needs python3 on PATH (Debian/Ubuntu: apt-get install python3)");
    None
}

/// A fixture script of this crate's `tests/fixtures`.
pub(crate) fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

/// The entry point of the npm package `@modelcontextprotocol/server-<name>`, installed (by
/// `.ci/run`, or by hand as the skip line says) under the target directory.
pub(crate) fn npm_server(name: &str) -> Option<String> {
    let dir = target_dir().join(format!("server-{name}-{NPM_VERSION}"));
    let entry = dir.join(format!(
        "node_modules/@modelcontextprotocol/server-{name}/dist/index.js"
    ));
    if works("node", "--version") && works("python3", "--version") && entry.exists() {
        return Some(entry.display().to_string());
    }
    skip(&format!(
        "needs node, python3 and @modelcontextprotocol/server-{name}@{NPM_VERSION} under {0} \
         (mkdir -p {0} && cd {0} && npm install @modelcontextprotocol/server-{name}@{NPM_VERSION})",
        dir.display()
    ));
    None
}

/// The `mcp-server-time` program of the venv under the target directory.
pub(crate) fn time_server() -> Option<String> {
    let venv = target_dir().join(format!("mcp-server-time-{TIME_VERSION}"));
    let program = venv.join("bin/mcp-server-time");
    if program.exists() && works("python3", "--version") {
        return Some(program.display().to_string());
    }
    skip(&format!(
        "needs mcp-server-time=={TIME_VERSION} in the venv {0} (python3 -m venv {0} && \
         {0}/bin/pip install mcp-server-time=={TIME_VERSION})",
        venv.display()
    ));
    None
}

/// A fresh file for an upstream's record of the lines it received.
pub(crate) fn record(name: &str) -> PathBuf {
    let dir = target_dir().join("gateway-test-records");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_file(path.with_extension("jsonl.died"));
    path
}

/// The requests of `method` in the record at `path`.
pub(crate) fn received(path: &Path, method: &str) -> usize {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|m| m["method"] == method && m.get("id").is_some())
        .count()
}

/// The starts in the record of the fixture `upstream.py`.
pub(crate) fn starts(path: &Path) -> usize {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines().filter(|line| *line == "start").count()
}

/// Calls `action` of the action tool `tool` with `data`.
pub(crate) async fn call_action(
    client: &TestClient,
    tool: &str,
    action: &str,
    data: Value,
) -> ToolResult {
    client
        .call_tool(tool, json!({"action": action, "data": data}))
        .await
        .unwrap()
}

/// The text of a result's first content item.
pub(crate) fn text(result: &ToolResult) -> String {
    result.result().text().unwrap_or_default().to_owned()
}

/// Writes `file` to `config`, starts the binary on it (with `env` added, and `args` after its
/// own) on 127.0.0.1 port 0, and reads its banner up to the URL it prints.
pub(crate) async fn start(
    config: &Path,
    file: &Value,
    env: &[(&str, &str)],
    args: &[&str],
) -> (tokio::process::Child, String, Vec<String>) {
    std::fs::write(config, file.to_string()).unwrap();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_wymcp-gateway"))
        .args([
            "--config",
            &config.display().to_string(),
            "--port",
            "0",
            "--host",
            "127.0.0.1",
        ])
        .args(args)
        .envs(env.iter().copied())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let mut banner = Vec::new();
    let url = tokio::time::timeout(std::time::Duration::from_secs(30), async {
        loop {
            let line = lines.next_line().await.unwrap().expect("the banner");
            banner.push(line.clone());
            // The collector `--otlp` names is no URL of the gateway's.
            if line.trim_start().starts_with("otlp") {
                continue;
            }
            if let Some(at) = line.find("http://127.0.0.1:") {
                let url = line[at..].split_whitespace().next().unwrap().to_owned();
                return url;
            }
        }
    })
    .await
    .expect("the gateway prints its URL");
    (child, url, banner)
}

/// server-everything (npm) twice: a client of it directly over stdio, and a `TestClient` of a
/// gateway serving it as its one upstream (default `actions` mode); `None` (after the skip
/// line) when it is not installed.
pub(crate) async fn everything_direct_and_through_gateway()
-> Option<(wymcp::client::Client, wymcp::testing::TestClient)> {
    let entry = npm_server("everything")?;
    let direct = wymcp::client::Client::stdio("node")
        .args([entry.as_str(), "stdio"])
        .timeout(std::time::Duration::from_secs(30))
        .connect()
        .await
        .unwrap();
    let upstream =
        wymcp_gateway::UpstreamConfig::stdio("everything", "node").args([entry.as_str(), "stdio"]);
    let gateway =
        wymcp_gateway::Gateway::start(wymcp_gateway::GatewayConfig::new().upstream(upstream)).await;
    assert_eq!(gateway.notices(), []);
    let server = gateway
        .register(wymcp::Server::builder().name("gateway-test"))
        .build()
        .unwrap();
    Some((direct, wymcp::testing::TestClient::new(server)))
}
