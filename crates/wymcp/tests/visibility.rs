//! `Visibility::ShowWithScope`: a caller lacking a scope is shown the action or tool it needs
//! it for, marked with that scope, in `tools/list` (over HTTP with bearer auth, 2026-07-28) and
//! in `help`; calling it is still refused. And a session whose token gains or loses a scope is
//! told its tools changed (`notifications/tools/list_changed` on its GET stream).

#![allow(clippy::unwrap_used)]

mod http_harness;

use std::time::Duration;

use http_harness::{Http, Sse, borrowed, modern_headers, request};
use serde_json::{Map, Value, json};
use wymcp::testing::TestClient;
use wymcp::transport::http::{BearerAuth, StreamableHttp};
use wymcp::{
    ActionResult, ActionSchema, ActionTool, Actions, CallOutput, CallResult, Context, Data,
    Identity, PlainTool, Reply, Server, Visibility,
};

struct Notes;

impl ActionTool for Notes {
    fn name(&self) -> &str {
        "notes"
    }
    fn description(&self) -> &str {
        "Keeps notes"
    }
    fn actions(&self) -> Actions {
        Actions::new()
            .action(
                "list",
                ActionSchema::new("List notes").scopes(["notes:read"]),
            )
            .action(
                "add",
                ActionSchema::new("Add a note").scopes(["notes:write"]),
            )
    }
    async fn run_action(&self, action: &str, _: Data, _: Context) -> ActionResult {
        Ok(Reply::new(json!({"action": action})))
    }
}

struct Purge;

impl PlainTool for Purge {
    fn name(&self) -> &str {
        "purge"
    }
    fn description(&self) -> &str {
        "Deletes every note"
    }
    fn input_schema(&self) -> Map<String, Value> {
        json!({"type": "object"}).as_object().cloned().unwrap()
    }
    fn scopes(&self) -> Vec<String> {
        vec!["admin".into()]
    }
    async fn run(&self, _: Map<String, Value>, _: Context) -> CallResult {
        Ok(CallOutput::text("purged"))
    }
}

fn server(visibility: Visibility) -> Server {
    Server::builder()
        .tool(Notes)
        .plain_tool(Purge)
        .visibility(visibility)
        .build()
        .unwrap()
}

fn reader() -> Identity {
    Identity::new("rita").claim("scope", json!("notes:read"))
}

/// The reader's 2026-07-28 `tools/list`: each tool's name, description and action lines.
async fn listed(visibility: Visibility) -> Vec<(String, Value, Value)> {
    let auth = BearerAuth::new().token("reader-token", reader());
    let http = Http::serve(StreamableHttp::builder(server(visibility)).auth(auth)).await;
    let body = request(json!(1), "tools/list", json!({}));
    let owned = modern_headers(&body);
    let mut headers = borrowed(&owned);
    headers.push(("authorization", "Bearer reader-token"));
    let answer = http.post_raw(&headers, body.to_string()).await.json();
    let tools = answer["result"]["tools"].as_array().unwrap().clone();
    tools
        .iter()
        .map(|t| {
            let lines = &t["inputSchema"]["properties"]["action"]["description"];
            (
                t["name"].as_str().unwrap().to_owned(),
                t["description"].clone(),
                lines.clone(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shown_with_scope_the_reader_sees_what_it_lacks_marked() {
    let marked = listed(Visibility::ShowWithScope).await;
    assert_eq!(marked[0].0, "notes");
    assert_eq!(
        marked[0].2,
        json!("add: Add a note (needs scope: notes:write)\nlist: List notes")
    );
    assert_eq!(marked[1].0, "purge");
    assert_eq!(
        marked[1].1,
        json!("Deletes every note (needs scope: admin)")
    );
    // Hidden (the default), the same reader sees neither.
    let hidden = listed(Visibility::Hide).await;
    let names: Vec<&str> = hidden.iter().map(|(n, _, _)| n.as_str()).collect();
    assert_eq!(names, ["notes", "help"]);
    assert_eq!(hidden[0].2, json!("list: List notes"));
}

#[tokio::test]
async fn help_gives_what_the_reader_lacks_and_the_call_is_still_refused() {
    let client = TestClient::new(server(Visibility::ShowWithScope));
    let ask = |arguments: Value| {
        let client = &client;
        async move {
            let result = client
                .clone()
                .with_identity(reader())
                .call_tool("help", arguments)
                .await
                .unwrap();
            result.json().unwrap().clone()
        }
    };
    let index = ask(json!({})).await;
    assert_eq!(
        index["tools"][0]["actions"],
        json!([
            "add: Add a note (needs scope: notes:write)",
            "list: List notes"
        ])
    );
    let tool = ask(json!({"tool": "notes"})).await;
    assert_eq!(
        tool["actions"]["add"]["needs_scopes"],
        json!(["notes:write"])
    );
    assert!(tool["actions"]["list"].get("needs_scopes").is_none());
    let action = ask(json!({"tool": "notes", "action": "add"})).await;
    assert_eq!(action["needs_scopes"], json!(["notes:write"]));
    let purge = ask(json!({"tool": "purge"})).await;
    assert_eq!(purge["needs_scopes"], json!(["admin"]));

    let refused = client
        .clone()
        .with_identity(reader())
        .call_tool("notes", json!({"action": "add", "data": {}}))
        .await
        .unwrap();
    assert!(refused.is_error());
    assert_eq!(refused.json().unwrap()["error"], "insufficient_scope");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_whose_token_changes_scopes_is_told_its_tools_changed() {
    let auth = BearerAuth::new().token("rita-read", reader()).token(
        "rita-write",
        Identity::new("rita").claim("scope", json!("notes:read notes:write")),
    );
    let http = Http::serve(StreamableHttp::builder(server(Visibility::Hide)).auth(auth)).await;
    let read = ("authorization", "Bearer rita-read");
    let write = ("authorization", "Bearer rita-write");
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "visibility-test", "version": "1"}}});
    let opened = http.post_raw(&[read], init.to_string()).await;
    let session = opened.header("mcp-session-id").unwrap().to_owned();
    http.initialized(&session, &[read]).await;
    let list = |token: (&'static str, &'static str), id: u64| {
        let http = &http;
        let session = session.clone();
        async move {
            let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"});
            let headers = [
                token,
                ("mcp-session-id", session.as_str()),
                ("mcp-protocol-version", "2025-11-25"),
            ];
            let answer = http.post_raw(&headers, body.to_string()).await.json();
            answer["result"]["tools"][0]["inputSchema"]["properties"]["action"]["enum"].clone()
        }
    };
    assert_eq!(list(read, 1).await, json!(["list"]));
    let mut stream = Sse::bounded(
        http.get_stream(&session, &[read]).await,
        Duration::from_secs(10),
    );

    // A step-up: the same subject, one more scope.
    assert_eq!(list(write, 2).await, json!(["add", "list"]));
    let (changed, _) = stream.until("notifications/tools/list_changed").await;
    assert_eq!(changed["params"], json!({}));
    // The same scopes again: nothing to tell.
    list(write, 3).await;
    let quiet = tokio::time::timeout(Duration::from_millis(400), stream.message()).await;
    assert!(
        quiet.is_err(),
        "no notification without a change: {quiet:?}"
    );
    // Back to the narrower token: told again.
    assert_eq!(list(read, 4).await, json!(["list"]));
    stream.until("notifications/tools/list_changed").await;
}
