//! The `wymcp-gateway` binary over HTTP on 127.0.0.1: started with a `mcpServers` file naming
//! the stdio fixture upstream, it prints how to connect, and wymcp's client calls the
//! upstream's tool through it as an action; a bad call is refused by the gates.

#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use std::sync::{Arc, Mutex};

use axum::http::{HeaderMap, Uri};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};
use wymcp::client::Client;

/// Starts the binary on `file` (written to `config`), with `env` added.
async fn start(
    config: &std::path::Path,
    file: &serde_json::Value,
    env: &[(&str, &str)],
) -> (tokio::process::Child, String, Vec<String>) {
    support::start(config, file, env, &[]).await
}

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
    let (mut child, url, banner) = start(&config, &file, &[]).await;
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

/// A small REST API on 127.0.0.1 with its own OpenAPI document at `/openapi.json` (its server
/// relative): `GET /api/animals` (tag `animals`) and `POST /api/animals` with a JSON body.
/// Every request to `/api` is recorded with its `Authorization` header.
async fn zoo() -> (String, Arc<Mutex<Vec<String>>>) {
    let log: Arc<Mutex<Vec<String>>> = Arc::default();
    let document = json!({
        "openapi": "3.1.0",
        "info": {"title": "Zoo", "version": "1"},
        "servers": [{"url": "/api"}],
        "paths": {"/animals": {
            "get": {"operationId": "listAnimals", "tags": ["animals"],
                "parameters": [{"name": "limit", "in": "query", "required": true,
                    "schema": {"type": "integer"}}]},
            "post": {"operationId": "addAnimal", "tags": ["animals"],
                "requestBody": {"required": true, "content": {"application/json": {"schema": {
                    "type": "object", "required": ["name"],
                    "properties": {"name": {"type": "string"}}}}}}}
        }}
    });
    let recorded = log.clone();
    let record = move |headers: HeaderMap, uri: Uri| {
        let auth = headers
            .get("authorization")
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default();
        recorded.lock().unwrap().push(format!("{uri} {auth}"));
    };
    let (list, add) = (record.clone(), record);
    let app = Router::new()
        .route("/openapi.json", get(move || async move { Json(document) }))
        .route(
            "/api/animals",
            get(move |headers: HeaderMap, uri: Uri| async move {
                list(headers, uri);
                Json(json!([{"name": "Zebra"}]))
            })
            .post(
                move |headers: HeaderMap, uri: Uri, Json(body): Json<Value>| async move {
                    add(headers, uri);
                    Json(json!({"added": body["name"]}))
                },
            ),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (base, log)
}

/// Issue 43's acceptance: the binary serves an OpenAPI upstream from its config file next to
/// an MCP upstream; the API's token comes from the environment; a bad call is refused by the
/// gates and the API receives no request.
#[tokio::test]
async fn the_binary_serves_an_openapi_upstream_beside_an_mcp_one() {
    let Some(python) = support::python() else {
        return;
    };
    let (base, log) = zoo().await;
    let record = support::record("binary-openapi");
    let config = support::target_dir()
        .join("gateway-test-records")
        .join(format!("binary-openapi-{}.json", std::process::id()));
    let file = json!({"mcpServers": {
        "fx": {"command": python,
               "args": [support::fixture("upstream.py"), "ok", record.display().to_string()]},
        "zoo": {"openapi": format!("{base}/openapi.json"),
                "auth": {"type": "bearer", "token_env": "ZOO_TOKEN"}}
    }});
    let (mut child, url, banner) = start(&config, &file, &[("ZOO_TOKEN", "s3cret")]).await;
    assert!(
        !banner.join("\n").contains("s3cret"),
        "the token is never printed"
    );
    let client = Client::builder(&url).connect().await.unwrap();
    let tools = client.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    assert_eq!(names, ["fx", "animals", "help"]);

    let listed = client
        .call_tool(
            "animals",
            json!({"action": "listAnimals", "data": {"limit": 5}}),
        )
        .await
        .unwrap();
    assert!(!listed.is_error(), "{}", listed.text());
    assert_eq!(
        listed.structured_content().cloned(),
        Some(json!({"status": 200, "body": [{"name": "Zebra"}]}))
    );
    let added = client
        .call_tool(
            "animals",
            json!({"action": "addAnimal", "data": {"body": {"name": "Okapi"}}}),
        )
        .await
        .unwrap();
    assert_eq!(
        added.structured_content().cloned(),
        Some(json!({"status": 200, "body": {"added": "Okapi"}}))
    );
    // A wrong type and a missing required key: refused before a request leaves.
    for data in [json!({"limit": "five"}), json!({})] {
        let refused = client
            .call_tool("animals", json!({"action": "listAnimals", "data": data}))
            .await
            .unwrap();
        assert!(refused.is_error(), "{data}: {}", refused.text());
    }
    assert_eq!(
        *log.lock().unwrap(),
        [
            "/api/animals?limit=5 Bearer s3cret",
            "/api/animals Bearer s3cret"
        ]
    );
    // The MCP upstream beside it is served as before.
    let ok = client
        .call_tool(
            "fx",
            json!({"action": "work", "data": {"n": 1, "label": "x"}}),
        )
        .await
        .unwrap();
    assert!(!ok.is_error(), "{}", ok.text());
    client.close().await.unwrap();
    child.kill().await.unwrap();
}
