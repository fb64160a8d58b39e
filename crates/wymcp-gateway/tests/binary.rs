//! The `wymcp-gateway` binary over HTTP on 127.0.0.1: started with a `mcpServers` file naming
//! the stdio fixture upstream, it prints how to connect, and wymcp's client calls the
//! upstream's tool through it as an action; a bad call is refused by the gates.

#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use std::process::Stdio;
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};
use wymcp::client::Client;

#[tokio::test]
async fn the_binary_serves_a_claude_desktop_config_over_http() {
    let Some(python) = support::python() else {
        return;
    };
    let record = support::record("binary");
    let config = support::target_dir()
        .join("gateway-test-records")
        .join(format!("binary-{}.json", std::process::id()));
    let file = json!({"mcpServers": {"fx": {
        "command": python,
        "args": [support::fixture("upstream.py"), "ok", record.display().to_string()],
        "timeout_ms": 5000
    }}});
    std::fs::write(&config, file.to_string()).unwrap();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_wymcp-gateway"))
        .args([
            "--config",
            &config.display().to_string(),
            "--port",
            "0",
            "--host",
            "127.0.0.1",
        ])
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut banner = Vec::new();
    let url = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let line = lines.next_line().await.unwrap().expect("the banner");
            banner.push(line.clone());
            if let Some(at) = line.find("http://127.0.0.1:") {
                let url = line[at..].split_whitespace().next().unwrap().to_owned();
                return url;
            }
        }
    })
    .await
    .expect("the gateway prints its URL");
    assert!(url.ends_with("/mcp"), "{url}");
    let shown = banner.join("\n");
    assert!(
        shown.contains("upstreams") && shown.contains("fx"),
        "{shown}"
    );

    let client = Client::builder(&url).connect().await.unwrap();
    let tools = client.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    assert_eq!(names, ["fx", "help"]);
    let ok = client
        .call_tool(
            "fx",
            json!({"action": "work", "data": {"n": 5, "label": "via http"}}),
        )
        .await
        .unwrap();
    assert!(!ok.is_error(), "{}", ok.text());
    let reply: serde_json::Value = serde_json::from_str(&ok.text()).unwrap();
    assert_eq!(reply["content"][0]["text"], "worked 5 via http");
    let refused = client
        .call_tool("fx", json!({"action": "work", "data": {"n": "five"}}))
        .await
        .unwrap();
    assert!(
        refused.is_error() && refused.text().contains("invalid_values"),
        "{}",
        refused.text()
    );
    assert_eq!(support::received(&record, "tools/call"), 1);
    client.close().await.unwrap();
    child.kill().await.unwrap();
}

#[tokio::test]
async fn a_config_the_binary_cannot_read_is_refused_naming_the_key() {
    let config = support::target_dir().join("gateway-test-records");
    std::fs::create_dir_all(&config).unwrap();
    let config = config.join(format!("bad-{}.json", std::process::id()));
    std::fs::write(
        &config,
        r#"{"mcpServers": {"x": {"command": "a", "expose": "flat"}}}"#,
    )
    .unwrap();
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_wymcp-gateway"))
        .args(["--config", &config.display().to_string()])
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("server \"x\": \"expose\" is \"flat\"; expected \"actions\" or \"tools\""),
        "{stderr}"
    );
}
