//! Interop: `wymcp::client` over stdio against the official TypeScript SDK's
//! `@modelcontextprotocol/server-everything` (npm, pinned below; `.ci/run` installs it under
//! the target directory): tools, a progress-reporting call, a resource, a prompt, completion,
//! and the server's sampling and roots requests answered by the client's handlers. Skipped
//! (one line saying how to install it) without node or the package; `WYMCP_REQUIRE_SERVICES=1` makes that a failure.

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
fn server_everything() -> Option<PathBuf> {
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
        "skipped client_everything::server_everything_over_stdio: {install}; \
         {REQUIRE}=1 makes this a failure"
    );
    None
}

#[tokio::test]
async fn server_everything_over_stdio() {
    let Some(entry) = server_everything() else {
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
