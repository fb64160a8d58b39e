//! Interop: `wymcp::client` against the official TypeScript SDK's
//! `@modelcontextprotocol/server-everything` (npm, pinned below; `.ci/run` installs it under
//! the target directory), over stdio and over Streamable HTTP on 127.0.0.1: tools, a
//! progress-reporting call, a resource, a prompt, the server's sampling and roots requests
//! answered by the client's handlers, and (HTTP) log messages on the session's GET stream.
//! Skipped (one line saying how to install it) without node or the package;
//! `WYMCP_REQUIRE_SERVICES=1` makes that a failure.

#![allow(clippy::unwrap_used, missing_docs)]

use std::io::Write as _;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};
use wymcp::ProtocolVersion;
use wymcp::client::Client;

/// The version `.ci/run` installs too.
const VERSION: &str = "2026.8.31";
const REQUIRE: &str = "WYMCP_REQUIRE_SERVICES";

/// The server's entry point, installed (by `.ci/run`, or by hand as the skip line says) under
/// the target directory; `None` (after the skip line) when node or the package is missing.
/// The test installs nothing itself: tests reach no network.
fn server_everything(test: &str) -> Option<PathBuf> {
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    // target/<profile>/deps/client_everything-… → target/server-everything-<VERSION>
    let exe = std::env::current_exe().unwrap();
    let target = exe.ancestors().nth(3).unwrap().to_path_buf();
    let dir = target.join(format!("server-everything-{VERSION}"));
    let entry = dir.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if node && entry.exists() {
        return Some(entry);
    }
    let install = format!(
        "needs node and @modelcontextprotocol/server-everything@{VERSION} under {} \
         (mkdir -p {0} && cd {0} && npm install @modelcontextprotocol/server-everything@{VERSION}; \
         Debian/Ubuntu node: apt-get install nodejs npm)",
        dir.display()
    );
    assert!(
        std::env::var(REQUIRE).as_deref() != Ok("1"),
        "client_everything: {install}, and {REQUIRE}=1 requires it"
    );
    // Past the harness's capture, so `cargo test` shows it next to the test's `ok`.
    let _ = writeln!(
        std::io::stderr(),
        "skipped client_everything::{test}: {install}; \
         {REQUIRE}=1 makes this a failure"
    );
    None
}

#[tokio::test]
async fn server_everything_over_stdio() {
    let Some(entry) = server_everything("server_everything_over_stdio") else {
        return;
    };
    let client = Client::stdio("node")
        .arg(entry.to_string_lossy())
        .arg("stdio")
        .timeout(Duration::from_secs(20))
        .on_sampling(|params| async move {
            let asked = params["messages"][0]["content"]["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            Ok(json!({"role": "assistant", "model": "wymcp-test",
                      "content": {"type": "text", "text": format!("sampled: {asked}")}}))
        })
        .on_roots(|_| async {
            Ok(json!({"roots": [{"uri": "file:///tmp/wymcp-root", "name": "wymcp root"}]}))
        })
        .connect()
        .await
        .unwrap();
    // A session-era server: `server/discover` refused, `initialize` at the newest revision.
    assert!(!client.protocol_version().is_stateless());
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_11_25);

    // The tools that need the client's capabilities are registered after `initialized`.
    let mut names = Vec::new();
    for _ in 0..50 {
        names = client
            .list_tools()
            .await
            .unwrap()
            .iter()
            .map(|t| t.name().to_owned())
            .collect();
        if names.iter().any(|n| n == "trigger-sampling-request") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for expected in [
        "echo",
        "get-sum",
        "trigger-long-running-operation",
        "trigger-sampling-request",
        "get-roots-list",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} in {names:?}"
        );
    }

    let echoed = client
        .call_tool("echo", json!({"message": "hi from wymcp"}))
        .await
        .unwrap();
    assert_eq!(echoed.text(), "Echo: hi from wymcp");
    let sum = client
        .call_tool("get-sum", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert_eq!(sum.text(), "The sum of 2 and 3 is 5.");

    // Sampling: the server's request answered by the handler, its answer in the result.
    let sampled = client
        .call_tool("trigger-sampling-request", json!({"prompt": "ping"}))
        .await
        .unwrap();
    let text = sampled.text();
    assert!(
        text.contains("\"model\": \"wymcp-test\"") && text.contains("sampled: "),
        "{text}"
    );
    let roots = client.call_tool("get-roots-list", json!({})).await.unwrap();
    assert!(
        roots.text().contains("file:///tmp/wymcp-root"),
        "{}",
        roots.text()
    );

    // Progress under the caller's token.
    client.drain_notifications();
    client
        .call_tool_with_progress(
            "trigger-long-running-operation",
            json!({"duration": 1, "steps": 2}),
            "everything-1",
        )
        .await
        .unwrap();
    let progress: Vec<Value> = client
        .drain_notifications()
        .into_iter()
        .filter(|n| n.method() == "notifications/progress")
        .filter_map(|n| n.params().cloned())
        .collect();
    assert_eq!(progress.len(), 2, "{progress:?}");
    assert!(
        progress
            .iter()
            .all(|p| p["progressToken"] == "everything-1")
    );

    // Resources and templates.
    let templates = client.list_resource_templates().await.unwrap();
    assert!(
        templates
            .iter()
            .any(|t| t["uriTemplate"] == "demo://resource/dynamic/text/{resourceId}"),
        "{templates:?}"
    );
    let read = client
        .read_resource("demo://resource/dynamic/text/1")
        .await
        .unwrap();
    let text = read["contents"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("Resource 1: This is a plaintext resource"),
        "{text}"
    );
    assert!(!client.list_resources().await.unwrap().is_empty());

    // Prompts.
    let prompts = client.list_prompts().await.unwrap();
    assert!(
        prompts.iter().any(|p| p["name"] == "simple-prompt"),
        "{prompts:?}"
    );
    let prompt = client.get_prompt("simple-prompt", json!({})).await.unwrap();
    assert_eq!(
        prompt["messages"][0]["content"]["text"],
        "This is a simple prompt without arguments."
    );

    client.close().await.unwrap();
}

/// Makes the server listen on 127.0.0.1 (its own code listens on every interface) and write
/// the port it got to stderr (it prints the port it was given: 0). Loaded with `node -r`.
const LOOPBACK_PRELOAD: &str = r#"
const net = require("net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number" || (typeof args[0] === "string" && /^[0-9]+$/.test(args[0]))) {
    const callbacks = args.slice(1).filter((a) => typeof a === "function");
    this.once("listening", () => process.stderr.write(`WYMCP_LISTENING ${this.address().port}\n`));
    return listen.call(this, Number(args[0]), "127.0.0.1", ...callbacks);
  }
  return listen.apply(this, args);
};
"#;

/// A server-everything in its Streamable HTTP mode on 127.0.0.1 (killed when dropped) and its
/// endpoint's URL.
async fn serve_everything_http(entry: &std::path::Path) -> (tokio::process::Child, String) {
    use tokio::io::AsyncBufReadExt as _;
    let dir = std::env::temp_dir().join(format!("wymcp-everything-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let preload = dir.join("loopback.cjs");
    std::fs::write(&preload, LOOPBACK_PRELOAD).unwrap();
    let mut child = tokio::process::Command::new("node")
        .arg("-r")
        .arg(&preload)
        .arg(entry)
        .arg("streamableHttp")
        .env("PORT", "0")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let port = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(port) = line.strip_prefix("WYMCP_LISTENING ") {
                return port.trim().to_owned();
            }
        }
        panic!("server-everything ended before listening");
    })
    .await
    .expect("server-everything listens within 30 s");
    // Its later stderr is drained so that it never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, format!("http://127.0.0.1:{port}/mcp"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_over_streamable_http() {
    let Some(entry) = server_everything("server_everything_over_streamable_http") else {
        return;
    };
    let (_server, url) = serve_everything_http(&entry).await;
    let client = Client::builder(&url)
        .timeout(Duration::from_secs(20))
        .on_sampling(|params| async move {
            let asked = params["messages"][0]["content"]["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            Ok(json!({"role": "assistant", "model": "wymcp-test",
                      "content": {"type": "text", "text": format!("sampled: {asked}")}}))
        })
        .on_roots(|_| async {
            Ok(json!({"roots": [{"uri": "file:///tmp/wymcp-root", "name": "wymcp root"}]}))
        })
        .connect()
        .await
        .unwrap();
    // A session-era server: `server/discover` refused (400, no session), `initialize` at the
    // newest revision, a session id.
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_11_25);
    assert!(client.session_id().is_some());

    let mut names = Vec::new();
    for _ in 0..50 {
        names = client
            .list_tools()
            .await
            .unwrap()
            .iter()
            .map(|t| t.name().to_owned())
            .collect();
        if names.iter().any(|n| n == "trigger-sampling-request") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(names.iter().any(|n| n == "echo"), "{names:?}");

    let echoed = client
        .call_tool("echo", json!({"message": "hi over HTTP"}))
        .await
        .unwrap();
    assert_eq!(echoed.text(), "Echo: hi over HTTP");

    // Sampling: the server's request on the call's SSE stream, answered by the handler.
    let sampled = client
        .call_tool("trigger-sampling-request", json!({"prompt": "ping"}))
        .await
        .unwrap();
    let text = sampled.text();
    assert!(
        text.contains("\"model\": \"wymcp-test\"") && text.contains("sampled: "),
        "{text}"
    );

    // Roots: the server asks for them on the session's GET stream shortly after `initialized`.
    let mut roots = String::new();
    for _ in 0..50 {
        roots = client
            .call_tool("get-roots-list", json!({}))
            .await
            .unwrap()
            .text();
        if roots.contains("file:///tmp/wymcp-root") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(roots.contains("file:///tmp/wymcp-root"), "{roots}");

    // Progress on the call's stream, under the caller's token.
    client.drain_notifications();
    client
        .call_tool_with_progress(
            "trigger-long-running-operation",
            json!({"duration": 1, "steps": 2}),
            "everything-http",
        )
        .await
        .unwrap();
    let progress = client
        .drain_notifications()
        .into_iter()
        .filter(|n| n.method() == "notifications/progress")
        .filter(|n| {
            n.params()
                .is_some_and(|p| p["progressToken"] == "everything-http")
        })
        .count();
    assert_eq!(progress, 2);

    // Log messages tied to no request: on the session's GET stream.
    client
        .set_logging_level(wymcp::protocol::LogLevel::Debug)
        .await
        .unwrap();
    client
        .call_tool("toggle-simulated-logging", json!({}))
        .await
        .unwrap();
    let logged = tokio::time::timeout(Duration::from_secs(15), async {
        loop {
            let note = client.next_notification().await;
            if note.method() == "notifications/message" {
                return note;
            }
        }
    })
    .await
    .expect("a log message on the GET stream");
    assert!(
        logged.params().unwrap()["data"]
            .as_str()
            .is_some_and(|d| d.contains("message")),
        "{logged:?}"
    );

    let read = client
        .read_resource("demo://resource/dynamic/text/1")
        .await
        .unwrap();
    assert!(
        read["contents"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Resource 1: This is a plaintext resource")
    );
    client.close().await.unwrap();
}
