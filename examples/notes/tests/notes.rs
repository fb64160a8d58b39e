//! The `notes` example: its action tool (`#[wymcp::tool]` on an `impl` block) against the
//! same tool written with `actions!` (identical `tools/list` definitions, identical help at
//! every level, identical refusals for every gate, the methods receiving typed, defaulted
//! arguments); its plain tool (a `#[wymcp(plain)]` method: the output schema its return type
//! derives, `structuredContent` validated against it, the input gate); its prompt (a
//! `#[wymcp(prompt)]` method), its resource and its `main` (`wymcp::main!`, over stdio).

#![allow(clippy::unwrap_used, missing_docs)]

#[allow(dead_code)]
#[path = "../src/main.rs"]
mod notes;

use serde_json::{Map, Value, json};
use wymcp::testing::TestClient;
use wymcp::tool::{CallToolResult, Companions};
use wymcp::{
    ActionResult, ActionTool, Actions, CallOutput, CallResult, Context, Data, PlainTool,
    ProtocolVersion, Reply, Server,
};

/// The notes tool as literals, written from what the example's methods say.
struct LiteralNotes;

impl ActionTool for LiteralNotes {
    fn name(&self) -> &str {
        "notes"
    }
    fn description(&self) -> &str {
        "Keep short notes: add them, list them, delete them."
    }
    fn actions(&self) -> Actions {
        wymcp::actions!({
            "add": {
                "description": "Add a note",
                "properties": {
                    "text": {"type": "string"},
                    "tags": {"type": "array", "items": {"type": "string"}}
                },
                "required": ["text"],
                "defaults": {"tags": []},
                "examples": [{"text": "Buy milk", "tags": ["errands"]}],
                "related": ["list"]
            },
            "list": {
                "description": "List the notes, oldest first",
                "properties": {
                    "tag": {"type": "string"},
                    "limit": {"type": "integer", "minimum": 0, "maximum": 255}
                },
                "defaults": {"limit": 20}
            },
            "delete": {
                "description": "Delete a note by id",
                "properties": {
                    "id": {"type": "integer", "minimum": 0, "maximum": 4294967295}
                },
                "required": ["id"]
            }
        })
    }
    async fn run_action(&self, action: &str, _data: Data, _ctx: Context) -> ActionResult {
        Ok(Reply::new(json!({ "ran": action })))
    }
    /// The example's plain tool and prompt, beside the literal tool as beside the methods.
    fn companions(&self) -> Companions {
        ActionTool::companions(&notes::Notes::default())
    }
}

fn methods() -> Server {
    notes::server().expect("the notes example builds")
}

/// The literal tool beside the example's other tools, so that help's index is comparable.
fn literal() -> Server {
    Server::builder()
        .tool(LiteralNotes)
        .build()
        .expect("the literal tool builds")
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime")
        .block_on(f)
}

fn call(server: &Server, tool: &str, arguments: Value) -> CallToolResult {
    block_on(wymcp::testing::call_tool(
        server,
        tool,
        Some(arguments),
        Context::default(),
    ))
    .expect("the tool exists and the arguments are an object")
}

/// A result as one comparable value: error flag, error kind, and the JSON (or text) content.
fn outcome(result: &CallToolResult) -> Value {
    json!({
        "is_error": result.is_error(),
        "kind": result.error_kind().map(|k| k.as_str()),
        "body": result.json().unwrap_or_else(|| json!(result.text())),
    })
}

fn ok(server: &Server, action: &str, data: Value) -> Value {
    let result = call(server, "notes", json!({"action": action, "data": data}));
    assert!(!result.is_error(), "{:?}", result.text());
    result.json().expect("a JSON reply")
}

#[test]
fn the_methods_and_the_literal_list_identically() {
    for version in [
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
    ] {
        assert_eq!(
            methods().list_tools(version),
            literal().list_tools(version),
            "{version:?}"
        );
    }
}

#[test]
fn the_methods_and_the_literal_help_identically_at_every_level() {
    let (methods, literal) = (methods(), literal());
    let mut asks = vec![json!({}), json!({"tool": "notes"})];
    for action in ["add", "list", "delete", "nope"] {
        asks.push(json!({"tool": "notes", "action": action}));
    }
    for ask in asks {
        let m = outcome(&call(&methods, "help", ask.clone()));
        let l = outcome(&call(&literal, "help", ask.clone()));
        assert_eq!(m, l, "help {ask}");
    }
    let add = call(&methods, "help", json!({"tool": "notes", "action": "add"}));
    let add = add.json().expect("help answers JSON").to_string();
    for published in ["Buy milk", "\"related\":[\"list\"]"] {
        assert!(add.contains(published), "{published} missing from {add}");
    }
}

#[test]
fn the_methods_and_the_literal_refuse_every_bad_call_identically() {
    let (methods, literal) = (methods(), literal());
    let bad_calls = [
        json!({"action": "destroy", "data": {}}),
        json!({"data": {}}),
        json!({"action": 7, "data": {}}),
        json!({"action": "add", "data": {"text": "x"}, "force": true}),
        json!({"action": "add", "data": {}}),
        json!({"action": "add", "data": {"text": "x", "colour": "red"}}),
        json!({"action": "add", "data": {"text": 5}}),
        json!({"action": "add", "data": {"text": null}}),
        json!({"action": "add", "data": {"text": "x", "tags": "errands"}}),
        json!({"action": "add", "data": {"text": "x", "tags": [1]}}),
        json!({"action": "list", "data": {"limit": -1}}),
        json!({"action": "list", "data": {"limit": 256}}),
        json!({"action": "list", "data": {"limit": 2.5}}),
        json!({"action": "list", "data": {"tag": null}}),
        json!({"action": "delete", "data": {}}),
        json!({"action": "delete", "data": {"id": -1}}),
        json!({"action": "delete", "data": {"id": "1"}}),
        json!({"action": "delete", "data": {"id": 4294967296u64}}),
    ];
    for bad in bad_calls {
        let m = outcome(&call(&methods, "notes", bad.clone()));
        let l = outcome(&call(&literal, "notes", bad.clone()));
        assert_eq!(m["is_error"], true, "{bad} was admitted");
        assert_eq!(m, l, "{bad}");
    }
}

#[test]
fn the_methods_receive_typed_defaulted_arguments() {
    let server = methods();
    let first = ok(
        &server,
        "add",
        json!({"text": "Buy milk", "tags": ["errands"]}),
    );
    assert_eq!(
        first,
        json!({"id": 1, "text": "Buy milk", "tags": ["errands"]})
    );
    // `tags` omitted: the default `[]` reaches the method.
    let second = ok(&server, "add", json!({"text": "Call Ada"}));
    assert_eq!(second, json!({"id": 2, "text": "Call Ada", "tags": []}));
    assert_eq!(ok(&server, "list", json!({})).as_array().unwrap().len(), 2);
    let errands = ok(&server, "list", json!({"tag": "errands"}));
    assert_eq!(errands, json!([first]));
    assert_eq!(ok(&server, "list", json!({"limit": 1})), json!([first]));
    // A whole-number float is admitted as the integer it is.
    assert_eq!(ok(&server, "delete", json!({"id": 1.0})), first);
    assert_eq!(ok(&server, "list", json!({})), json!([second]));
}

#[test]
fn an_error_the_method_returns_is_a_tool_error() {
    let server = methods();
    let result = call(
        &server,
        "notes",
        json!({"action": "delete", "data": {"id": 9}}),
    );
    assert!(result.is_error());
    assert_eq!(result.error_kind().map(|k| k.as_str()), Some("tool"));
    assert!(
        result.text().unwrap_or_default().contains("no note 9"),
        "{:?}",
        result.text()
    );
}

fn definition(server: &Server, name: &str) -> Value {
    let list = server.list_tools(ProtocolVersion::V2025_11_25);
    let tools = list["tools"].as_array().unwrap();
    tools.iter().find(|t| t["name"] == name).cloned().unwrap()
}

#[test]
fn the_plain_tool_serves_the_output_schema_its_return_type_derives() {
    let server = methods();
    assert_eq!(server.tool_names(), ["notes", "tag_counts", "help"]);
    let tool = definition(&server, "tag_counts");
    assert_eq!(tool["description"], "Count the notes carrying each tag");
    assert_eq!(
        tool["inputSchema"],
        json!({"type": "object", "properties": {}, "additionalProperties": false})
    );
    assert_eq!(
        tool["outputSchema"],
        json!({"type": "object", "additionalProperties": {"type": "integer"}})
    );
    ok(
        &server,
        "add",
        json!({"text": "Buy milk", "tags": ["errands", "home"]}),
    );
    ok(
        &server,
        "add",
        json!({"text": "Fix the door", "tags": ["home"]}),
    );
    let counted = call(&server, "tag_counts", json!({}));
    assert!(!counted.is_error(), "{counted:?}");
    let counts = json!({"errands": 1, "home": 2});
    assert_eq!(counted.structured_content(), Some(&counts));
    assert_eq!(counted.json(), Some(counts));
    // The same tool written by hand lists and refuses identically.
    let by_hand = Server::builder().plain_tool(HandCounts).build().unwrap();
    assert_eq!(definition(&by_hand, "tag_counts"), tool);
    for bad in [json!({"tag": "home"}), json!({"a": {"b": 1}})] {
        let refused = outcome(&call(&server, "tag_counts", bad.clone()));
        assert_eq!(refused["kind"], "dispatch", "{bad}");
        assert_eq!(refused, outcome(&call(&by_hand, "tag_counts", bad)));
    }
}

/// The example's plain tool written by hand.
struct HandCounts;

impl PlainTool for HandCounts {
    fn name(&self) -> &str {
        "tag_counts"
    }
    fn description(&self) -> &str {
        "Count the notes carrying each tag"
    }
    fn input_schema(&self) -> Map<String, Value> {
        json!({"type": "object", "properties": {}})
            .as_object()
            .cloned()
            .unwrap()
    }
    fn output_schema(&self) -> Option<Map<String, Value>> {
        json!({"type": "object", "additionalProperties": {"type": "integer"}})
            .as_object()
            .cloned()
    }
    async fn run(&self, _arguments: Map<String, Value>, _ctx: Context) -> CallResult {
        Ok(CallOutput::json(json!({})))
    }
}

#[test]
fn the_prompt_takes_its_argument_and_refuses_its_absence() {
    let server = methods();
    assert_eq!(server.prompt_names(), ["summarize"]);
    let got = block_on(TestClient::new(server.clone()).request(
        "prompts/get",
        Some(json!({"name": "summarize", "arguments": {"tag": "home"}})),
    ))
    .unwrap();
    let text = got["messages"][0]["content"]["text"].as_str().unwrap();
    assert!(text.starts_with("List my notes tagged \"home\""), "{text}");
    let listed = block_on(TestClient::new(server.clone()).request("prompts/list", None)).unwrap();
    let description = "Ask for a summary of the notes carrying a tag";
    assert_eq!(listed["prompts"][0]["description"], description);
    assert_eq!(
        listed["prompts"][0]["arguments"],
        json!([{"name": "tag", "required": true}])
    );
    let missing = block_on(TestClient::new(server.clone()).request(
        "prompts/get",
        Some(json!({"name": "summarize", "arguments": {}})),
    ))
    .unwrap_err();
    assert_eq!(missing.code(), -32602);
    assert!(missing.message().contains("'tag'"), "{}", missing.message());
}

#[test]
fn the_example_serves_its_resource() {
    let server = methods();
    assert_eq!(server.resource_uris(), ["notes://guide"]);
    let read = block_on(
        TestClient::new(server.clone())
            .request("resources/read", Some(json!({"uri": "notes://guide"}))),
    )
    .unwrap();
    assert_eq!(read["contents"][0]["text"], "Tag notes, then list by tag.");
}

/// The example's server over real HTTP on 127.0.0.1: initialize, the four parts listed, a note
/// added, counted (structured content), a prompt rendered, a refusal.
#[tokio::test]
async fn over_http_on_an_ephemeral_port() {
    use wymcp::transport::http::{HttpServer, StreamableHttp};

    let http = HttpServer::bind("127.0.0.1:0", StreamableHttp::builder(methods()))
        .await
        .unwrap();
    let url = format!("http://{}/mcp", http.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(http.run_until(async {
        let _ = stopped.await;
    }));
    let client = reqwest::Client::new();
    let post = |body: Value, session: Option<&str>| {
        let mut request = client
            .post(&url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .json(&body);
        if let Some(session) = session {
            request = request
                .header("Mcp-Session-Id", session)
                .header("MCP-Protocol-Version", "2025-11-25");
        }
        request.send()
    };
    let init = post(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "notes-test", "version": "1.0"}}}),
        None,
    )
    .await
    .unwrap();
    assert_eq!(init.status(), 200);
    let session = init.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let init: Value = init.json().await.unwrap();
    assert_eq!(init["result"]["serverInfo"]["name"], "notes");
    let session = Some(session.as_str());
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post(initialized, session).await.unwrap().status(), 202);
    let rpc = |id: u32, method: &str, params: Value| json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let answer = |response: reqwest::Response| async move {
        let body: Value = response.json().await.unwrap();
        body["result"].clone()
    };

    let tools = answer(
        post(rpc(2, "tools/list", json!({})), session)
            .await
            .unwrap(),
    )
    .await;
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["notes", "tag_counts", "help"]);
    let add = json!({"name": "notes", "arguments": {"action": "add",
                     "data": {"text": "Buy milk", "tags": ["errands"]}}});
    let added = answer(post(rpc(3, "tools/call", add), session).await.unwrap()).await;
    assert_eq!(added["isError"], false, "{added}");
    let count = json!({"name": "tag_counts", "arguments": {}});
    let counted = answer(post(rpc(4, "tools/call", count), session).await.unwrap()).await;
    assert_eq!(counted["structuredContent"], json!({"errands": 1}));
    let get = json!({"name": "summarize", "arguments": {"tag": "errands"}});
    let prompt = answer(post(rpc(5, "prompts/get", get), session).await.unwrap()).await;
    let text = prompt["messages"][0]["content"]["text"].as_str().unwrap();
    assert!(text.contains("\"errands\""), "{prompt}");
    let bad = json!({"name": "notes", "arguments": {"action": "list", "data": {"limit": 256}}});
    let refused = answer(post(rpc(6, "tools/call", bad), session).await.unwrap()).await;
    assert_eq!(refused["isError"], true);
    let body: Value =
        serde_json::from_str(refused["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(body["error"], "invalid_values");

    let _ = stop.send(());
    serving.await.unwrap().unwrap();
}

/// The example's own binary (`wymcp::main!`) over stdio: it answers a session, then exits 0 at
/// end of input; a refused command line exits 2.
#[tokio::test]
async fn its_main_serves_stdio_until_end_of_input() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    let binary = env!("CARGO_BIN_EXE_notes");
    let mut child = tokio::process::Command::new(binary)
        .arg("--stdio")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // Calls on stdio run concurrently, so each request waits for its answer before the next
    // is written: the tag count must see the note the call before it added.
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "notes-test", "version": "1.0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "notes",
               "arguments": {"action": "add", "data": {"text": "Buy milk", "tags": ["errands"]}}}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
               "params": {"name": "tag_counts", "arguments": {}}}),
    ];
    let mut answers = Vec::new();
    for message in messages {
        stdin
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
        if message.get("id").is_none() {
            continue;
        }
        let line = tokio::time::timeout(std::time::Duration::from_secs(60), lines.next_line())
            .await
            .expect("the server answers each request")
            .unwrap()
            .expect("stdout stays open until end of input");
        answers.push(serde_json::from_str::<Value>(&line).unwrap());
    }
    drop(stdin);
    let rest = tokio::time::timeout(std::time::Duration::from_secs(60), lines.next_line())
        .await
        .expect("the server closes stdout at end of input")
        .unwrap();
    assert_eq!(rest, None, "nothing follows the last answer");
    let status = tokio::time::timeout(std::time::Duration::from_secs(60), child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "{status}");
    assert_eq!(answers.len(), 3, "{answers:?}");
    assert_eq!(answers[0]["result"]["serverInfo"]["name"], "notes");
    assert_eq!(answers[1]["id"], 2);
    assert_eq!(answers[2]["id"], 3);
    assert_eq!(
        answers[2]["result"]["structuredContent"],
        json!({"errands": 1})
    );

    let refused = tokio::process::Command::new(binary)
        .arg("--no-such-flag")
        .output()
        .await
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("--no-such-flag"), "{stderr}");
}
