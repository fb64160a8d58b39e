//! `ServerBuilder::mount`: a wymcp server served inside another over Streamable HTTP (real
//! HTTP on 127.0.0.1, port 0), in both eras. A mounted action tool passes its own gates (a
//! wrong type refused as the mounted tool, under its served name) and its own server's
//! layers; its resources are read under their own URIs, its prompts got and completed under
//! the prefixed names (the provider asked with the prompt's own name); `help` answers for it;
//! `build()` refuses a name or URI served twice, naming both.

#![allow(clippy::unwrap_used)]

mod http_harness;

use http_harness::{Http, borrowed, modern_headers, request};
use serde_json::{Map, Value, json};
use tower::ServiceExt;
use tower::layer::layer_fn;
use wymcp::completion::{Completion, CompletionRef, complete_fn};
use wymcp::middleware::{BoxOperation, Operation, Refusal};
use wymcp::prompt::{GetPromptResult, PromptArgument, PromptArguments, PromptError, PromptMessage};
use wymcp::resource::{ResourceContents, read_fn};
use wymcp::task::TaskSupport;
use wymcp::testing::TestClient;
use wymcp::transport::http::{BearerAuth, StreamableHttp};
use wymcp::{
    ActionResult, ActionSchema, ActionTool, Actions, CallOutput, CallResult, Content, Context,
    Data, Identity, PlainTool, Prompt, Reply, Resource, ResourceTemplate, Server, ToolPolicy,
};

/// The mounted server's action tool: `add` takes a string `text`.
struct Journal;

impl ActionTool for Journal {
    fn name(&self) -> &str {
        "journal"
    }
    fn description(&self) -> &str {
        "Keep a journal"
    }
    fn actions(&self) -> Actions {
        Actions::new()
            .action(
                "add",
                ActionSchema::new("Add an entry")
                    .property("text", json!({"type": "string"}))
                    .required(["text"]),
            )
            .action(
                "purge",
                ActionSchema::new("Delete every entry").scopes(["notes:admin"]),
            )
    }
    async fn run_action(&self, action: &str, data: Data, _ctx: Context) -> ActionResult {
        Ok(Reply::new(
            json!({"done": action, "data": data.into_value()}),
        ))
    }
}

/// A prompt of the mounted server.
struct Summarize;

impl Prompt for Summarize {
    fn name(&self) -> &str {
        "summarize"
    }
    fn arguments(&self) -> Vec<PromptArgument> {
        vec![PromptArgument::required("topic")]
    }
    async fn get(
        &self,
        arguments: PromptArguments,
        _ctx: Context,
    ) -> Result<GetPromptResult, PromptError> {
        let topic = arguments.get("topic").cloned().unwrap_or_default();
        Ok(GetPromptResult::new(vec![PromptMessage::user(
            Content::text(format!("Summarize the notes on {topic}")),
        )]))
    }
}

/// The outer server's own plain tool.
struct Echo;

impl PlainTool for Echo {
    fn name(&self) -> &str {
        "echo"
    }
    fn description(&self) -> &str {
        "Echo the arguments"
    }
    fn input_schema(&self) -> Map<String, Value> {
        let schema = json!({"type": "object", "properties": {"action": {"type": "string"}}});
        schema.as_object().unwrap().clone()
    }
    async fn run(&self, arguments: Map<String, Value>, _ctx: Context) -> CallResult {
        Ok(CallOutput::json(Value::Object(arguments)))
    }
}

/// The mounted server: a tool behind a server layer that refuses `purge` naming the tool as
/// the layer sees it, a resource, a template, a prompt and its completion (which answers the
/// prompt name it was asked with).
fn notes() -> Server {
    let no_purge = layer_fn(|next: BoxOperation| {
        BoxOperation::new(tower::service_fn(move |op: Operation| {
            let next = next.clone();
            async move {
                if op.action() == Some("purge") {
                    let tool = op.tool().unwrap_or_default().to_owned();
                    let refusal = Refusal::new("forbidden", format!("{tool} keeps its entries"));
                    return Err(refusal.into());
                }
                next.oneshot(op).await
            }
        }))
    });
    Server::builder()
        .name("notes")
        .instructions("The notes server's own instructions")
        .tool(Journal)
        .layer(no_purge)
        .resource(Resource::text("notes://index", "index", "three notes"))
        .resource_template(ResourceTemplate::new(
            "notes://note/{id}",
            "note",
            read_fn(|uri, vars, _ctx| async move {
                let id = vars.get("id").unwrap_or_default().to_owned();
                Ok(vec![ResourceContents::text(uri, format!("note {id}"))])
            }),
        ))
        .prompt(Summarize)
        .prompt_completion(
            "summarize",
            "topic",
            complete_fn(|request| {
                let CompletionRef::Prompt(prompt) = &request.reference else {
                    return Completion::new(Vec::<String>::new());
                };
                Completion::new([format!("{}:{prompt}", request.value)])
            }),
        )
        .build()
        .unwrap()
}

fn outer() -> Server {
    Server::builder()
        .name("host")
        .instructions("The host's instructions")
        .plain_tool(Echo)
        .mount("notes", notes())
        .build()
        .unwrap()
}

/// One era's way of sending a request and reading its result.
enum Era {
    Session(String),
    Stateless,
}

struct Client {
    http: Http,
    era: Era,
    bearer: String,
}

/// A caller holding `notes:admin`, and one holding no scope.
const ADMIN: &str = "admin-token";
const NOBODY: &str = "nobody-token";

impl Client {
    /// The host served with bearer auth, and a client of `version` presenting `ADMIN`.
    async fn start(version: &str) -> Client {
        Client::start_as(version, ADMIN).await
    }

    /// The host served with bearer auth, and a client of `version` presenting `token`.
    async fn start_as(version: &str, token: &str) -> Client {
        let auth = BearerAuth::new()
            .token(
                ADMIN,
                Identity::new("ada").claim("scope", json!("notes:admin")),
            )
            .token(NOBODY, Identity::new("bob"));
        let http = Http::serve(StreamableHttp::builder(outer()).auth(auth)).await;
        let bearer = format!("Bearer {token}");
        let era = if version == "2026-07-28" {
            Era::Stateless
        } else {
            let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": version, "capabilities": {},
                "clientInfo": {"name": "test-client", "version": "0.0.1"}}});
            let opened = http
                .post_raw(&[("authorization", &bearer)], init.to_string())
                .await;
            let session = opened.header("mcp-session-id").unwrap().to_owned();
            let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
            let headers = [
                ("authorization", bearer.as_str()),
                ("mcp-session-id", &session),
            ];
            let answer = http.post_raw(&headers, note.to_string()).await;
            assert_eq!(
                answer.status,
                reqwest::StatusCode::ACCEPTED,
                "{}",
                answer.text
            );
            Era::Session(session)
        };
        Client { http, era, bearer }
    }

    /// The answer to `method` with `params`: its `result`, or its `error`.
    async fn send(&self, method: &str, params: Value) -> Value {
        let answer = match &self.era {
            Era::Session(session) => {
                let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
                let headers = [
                    ("authorization", self.bearer.as_str()),
                    ("mcp-session-id", session.as_str()),
                ];
                self.http.post_raw(&headers, body.to_string()).await
            }
            Era::Stateless => {
                let body = request(json!(7), method, params);
                let owned = modern_headers(&body);
                let mut headers = borrowed(&owned);
                headers.push(("authorization", &self.bearer));
                self.http.post_raw(&headers, body.to_string()).await
            }
        };
        let body = answer.json();
        match body.get("result") {
            Some(result) => result.clone(),
            None => body["error"].clone(),
        }
    }

    /// The first content item of a `tools/call` result, as JSON, and whether it is an error.
    async fn call(&self, tool: &str, arguments: Value) -> (Value, bool) {
        let result = self
            .send("tools/call", json!({"name": tool, "arguments": arguments}))
            .await;
        let text = result["content"][0]["text"].as_str().unwrap();
        let content = serde_json::from_str(text).unwrap_or(Value::String(text.to_owned()));
        (content, result["isError"] == true)
    }
}

const ERAS: [&str; 2] = ["2025-11-25", "2026-07-28"];

#[tokio::test]
async fn mounted_tools_are_listed_prefixed_and_help_answers_for_them() {
    for version in ERAS {
        let client = Client::start(version).await;
        let list = client.send("tools/list", json!({})).await;
        let names: Vec<&str> = list["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["echo", "notes_journal", "help"], "{version}");
        let (help, is_error) = client.call("help", json!({"tool": "notes_journal"})).await;
        assert!(!is_error, "{version}: {help}");
        assert_eq!(
            help,
            json!({
                "tool": "notes_journal",
                "description": "Keep a journal",
                "actions": {
                    "add": {
                        "description": "Add an entry",
                        "properties": {"text": {"type": "string"}},
                        "required": ["text"]
                    },
                    "purge": {
                        "description": "Delete every entry",
                        "properties": {},
                        "required": [],
                        "scopes": ["notes:admin"]
                    }
                }
            }),
            "{version}"
        );
        let (listed, _) = client.call("help", json!({})).await;
        let tools: Vec<&str> = listed["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["tool"].as_str().unwrap())
            .collect();
        assert_eq!(
            tools,
            ["echo", "notes_journal", "help"],
            "{version}: {listed}"
        );
    }
}

#[tokio::test]
async fn a_mounted_action_tool_keeps_its_gates_and_its_servers_layers() {
    for version in ERAS {
        let client = Client::start(version).await;
        let (ok, is_error) = client
            .call(
                "notes_journal",
                json!({"action": "add", "data": {"text": "hi"}}),
            )
            .await;
        assert!(!is_error, "{version}: {ok}");
        assert_eq!(
            ok,
            json!({"done": "add", "data": {"text": "hi"}}),
            "{version}"
        );

        let (refused, is_error) = client
            .call(
                "notes_journal",
                json!({"action": "add", "data": {"text": 5}}),
            )
            .await;
        assert!(is_error, "{version}: {refused}");
        assert_eq!(
            refused,
            json!({
                "action": "add",
                "error": "invalid_values",
                "help": "help {tool: \"notes_journal\", action: \"add\"}",
                "input_schema": {
                    "defaults": {},
                    "properties": {"text": {"type": "string"}},
                    "required": ["text"]
                },
                "invalid": [{"path": "/text", "problems": ["expected type string"]}],
                "invalid_count": 1,
                "message": "Invalid value(s) for action 'add': /text.",
                "schemas": [{"path": "/text", "schema": {"type": "string"}}]
            }),
            "{version}"
        );
        // The gates the mounted server's own serving runs, word for word but the name.
        let alone = TestClient::new(notes());
        let direct = alone
            .call_tool("journal", json!({"action": "add", "data": {"text": 5}}))
            .await
            .unwrap();
        let direct = direct.json().unwrap().to_string();
        assert_eq!(
            refused.to_string(),
            direct.replace("journal", "notes_journal")
        );

        // The mounted server's layer runs, and sees the tool by its own name.
        let (purged, is_error) = client
            .call("notes_journal", json!({"action": "purge", "data": {}}))
            .await;
        assert!(is_error, "{version}: {purged}");
        assert_eq!(purged["errorType"], "forbidden", "{version}: {purged}");
        assert_eq!(purged["message"], "journal keeps its entries", "{version}");

        // This server's own tools pass no layer of the mounted server.
        let (echoed, is_error) = client.call("echo", json!({"action": "purge"})).await;
        assert!(!is_error, "{version}: {echoed}");
    }
}

#[tokio::test]
async fn a_mounted_actions_scope_is_its_own() {
    for version in ERAS {
        let client = Client::start_as(version, NOBODY).await;
        let (refused, is_error) = client
            .call("notes_journal", json!({"action": "purge", "data": {}}))
            .await;
        assert!(is_error, "{version}: {refused}");
        assert_eq!(
            refused,
            json!({
                "action": "purge",
                "error": "insufficient_scope",
                "message": "The caller's credentials lack the scope(s) notes:admin that action 'purge' of tool 'notes_journal' needs. Authorize again with these scopes, then retry.",
                "missing_scopes": ["notes:admin"],
                "required_scopes": ["notes:admin"]
            }),
            "{version}"
        );
        // Hidden from a caller without the scope, as the mounted server hides it.
        let list = client.send("tools/list", json!({})).await;
        let journal = &list["tools"][1];
        assert_eq!(journal["name"], "notes_journal", "{version}: {list}");
        assert_eq!(
            journal["inputSchema"]["properties"]["action"]["enum"],
            json!(["add"]),
            "{version}: {journal}"
        );
    }
    assert_eq!(outer().declared_scopes(), ["notes:admin"]);
}

/// A plain tool that runs as a task.
struct Report;

impl PlainTool for Report {
    fn name(&self) -> &str {
        "report"
    }
    fn description(&self) -> &str {
        "Write a report"
    }
    fn input_schema(&self) -> Map<String, Value> {
        json!({"type": "object"}).as_object().unwrap().clone()
    }
    async fn run(&self, _arguments: Map<String, Value>, _ctx: Context) -> CallResult {
        Ok(CallOutput::text("a report"))
    }
}

#[tokio::test]
async fn a_mounted_tool_keeps_its_task_support() {
    let reports = Server::builder()
        .plain_tool_with(
            Report,
            ToolPolicy::new().task_support(TaskSupport::Required),
        )
        .build()
        .unwrap();
    let host = Server::builder().mount("docs", reports).build().unwrap();
    let http = Http::serve(StreamableHttp::builder(host)).await;
    let call = |extensions: Value| {
        let mut body = request(json!(1), "tools/call", json!({"name": "docs_report"}));
        body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = extensions;
        body
    };
    // Required: a client without the tasks extension is refused, one with it gets a task.
    let without = call(json!({}));
    let headers = modern_headers(&without);
    let refused = http
        .post_raw(&borrowed(&headers), without.to_string())
        .await
        .json();
    assert_eq!(
        refused["error"]["message"], "Server requires the extensions capability for this request",
        "{refused}"
    );
    let with = call(json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}));
    let headers = modern_headers(&with);
    let task = http
        .post_raw(&borrowed(&headers), with.to_string())
        .await
        .json();
    assert_eq!(task["result"]["resultType"], "task", "{task}");
}

#[tokio::test]
async fn mounted_resources_are_read_under_their_own_uris() {
    for version in ERAS {
        let client = Client::start(version).await;
        let read = client
            .send("resources/read", json!({"uri": "notes://index"}))
            .await;
        assert_eq!(
            read["contents"][0]["text"], "three notes",
            "{version}: {read}"
        );
        let read = client
            .send("resources/read", json!({"uri": "notes://note/7"}))
            .await;
        assert_eq!(read["contents"][0]["text"], "note 7", "{version}: {read}");
        let list = client.send("resources/templates/list", json!({})).await;
        assert_eq!(
            list["resourceTemplates"][0]["uriTemplate"], "notes://note/{id}",
            "{version}: {list}"
        );
    }
}

#[tokio::test]
async fn mounted_prompts_are_got_and_completed_under_the_prefix() {
    for version in ERAS {
        let client = Client::start(version).await;
        let list = client.send("prompts/list", json!({})).await;
        assert_eq!(
            list["prompts"][0]["name"], "notes_summarize",
            "{version}: {list}"
        );
        let got = client
            .send(
                "prompts/get",
                json!({"name": "notes_summarize", "arguments": {"topic": "redis"}}),
            )
            .await;
        assert_eq!(
            got["messages"][0]["content"]["text"], "Summarize the notes on redis",
            "{version}: {got}"
        );
        // The provider is asked with the prompt's own name.
        let completed = client
            .send(
                "completion/complete",
                json!({
                    "ref": {"type": "ref/prompt", "name": "notes_summarize"},
                    "argument": {"name": "topic", "value": "re"}
                }),
            )
            .await;
        assert_eq!(
            completed["completion"]["values"],
            json!(["re:summarize"]),
            "{version}: {completed}"
        );
        // The prompt's own name is not served here.
        let unknown = client
            .send(
                "prompts/get",
                json!({"name": "summarize", "arguments": {"topic": "x"}}),
            )
            .await;
        assert_eq!(unknown["code"], -32602, "{version}: {unknown}");
    }
}

#[tokio::test]
async fn initialize_sends_this_servers_instructions_and_declares_what_is_mounted() {
    let http = Http::serve(StreamableHttp::builder(outer())).await;
    let (_, answer) = http.initialize("2025-11-25").await;
    let result = &answer.json()["result"];
    assert_eq!(result["instructions"], "The host's instructions");
    assert_eq!(result["serverInfo"]["name"], "host");
    let caps = &result["capabilities"];
    assert_eq!(caps["resources"]["subscribe"], true, "{caps}");
    assert!(caps["prompts"].is_object(), "{caps}");
    assert!(caps["completions"].is_object(), "{caps}");
}

#[test]
fn build_refuses_a_tool_name_served_twice_naming_both() {
    let refused = Server::builder()
        .mount("notes", notes())
        .plain_tool(Clash)
        .build()
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        r#"tool "notes_journal" is served twice: by this server, and by the server mounted at "notes" (its tool "journal")"#
    );
}

#[test]
fn build_refuses_a_collision_between_two_mounts() {
    let refused = Server::builder()
        .mount("", notes())
        .mount("", Server::builder().tool(Journal).build().unwrap())
        .build()
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        r#"tool "journal" is served twice: by the server mounted at "" (its tool "journal"), and by the server mounted at "" (its tool "journal")"#
    );
}

#[test]
fn build_refuses_a_resource_uri_served_twice() {
    let refused = Server::builder()
        .resource(Resource::text("notes://index", "mine", "mine"))
        .mount("notes", notes())
        .build()
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        r#"resource "notes://index" is served twice: by this server, and by the server mounted at "notes""#
    );
}

#[test]
fn build_refuses_a_prompt_name_served_twice() {
    let refused = Server::builder()
        .mount("a", notes())
        .mount("a", Server::builder().prompt(Summarize).build().unwrap())
        .build()
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        r#"prompt "a_summarize" is served twice: by the server mounted at "a" (its prompt "summarize"), and by the server mounted at "a" (its prompt "summarize")"#
    );
}

#[test]
fn build_refuses_a_prefix_that_makes_no_tool_names() {
    let refused = Server::builder()
        .mount("my notes", notes())
        .build()
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        r#"mount prefix "my notes" is not a tool-name prefix: use ASCII letters, digits, '_', '-' and '.' only"#
    );
}

/// A plain tool named as the mounted journal is served.
struct Clash;

impl PlainTool for Clash {
    fn name(&self) -> &str {
        "notes_journal"
    }
    fn description(&self) -> &str {
        "Takes the mounted tool's name"
    }
    fn input_schema(&self) -> Map<String, Value> {
        json!({"type": "object"}).as_object().unwrap().clone()
    }
    async fn run(&self, _arguments: Map<String, Value>, _ctx: Context) -> CallResult {
        Ok(CallOutput::text("clash"))
    }
}
