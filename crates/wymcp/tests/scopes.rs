//! Scopes on actions: a real Streamable HTTP server with bearer auth, callers holding
//! different scopes, in both eras; and the transport-independent refusal (`isError`).

#![allow(clippy::unwrap_used)]

mod http_harness;

use http_harness::{Answer, Http, borrowed, modern_headers, request};
use reqwest::StatusCode;
use serde_json::{Value, json};
use wymcp::testing::TestClient;
use wymcp::transport::http::{BearerAuth, StreamableHttp};
use wymcp::{
    ActionResult, ActionSchema, ActionTool, Actions, Context, Data, Identity, Reply, Server,
};

const PRM: &str = "https://mcp.example.test/.well-known/oauth-protected-resource/mcp";

/// A task tool whose reads need `tasks:read` and whose writes need `tasks:write`.
struct Tasks;

impl ActionTool for Tasks {
    fn name(&self) -> &str {
        "tasks"
    }
    fn description(&self) -> &str {
        "Tracks tasks"
    }
    fn actions(&self) -> Actions {
        Actions::new()
            .action(
                "list",
                ActionSchema::new("List the tasks").scopes(["tasks:read"]),
            )
            .action(
                "create",
                ActionSchema::new("Create a task")
                    .property("title", json!({"type": "string"}))
                    .required(["title"])
                    .scopes(["tasks:write"]),
            )
            .action("about", ActionSchema::new("What this tool is"))
    }
    async fn run_action(&self, action: &str, data: Data, ctx: Context) -> ActionResult {
        let who = ctx.identity().map(|i| i.subject().to_owned());
        Ok(Reply::new(
            json!({"action": action, "title": data.get("title"), "by": who}),
        ))
    }
}

/// A tool all of whose actions need `admin`.
struct Admin;

impl ActionTool for Admin {
    fn name(&self) -> &str {
        "admin"
    }
    fn description(&self) -> &str {
        "Administers the server"
    }
    fn actions(&self) -> Actions {
        Actions::new().action(
            "purge",
            ActionSchema::new("Purge everything").scopes(["admin"]),
        )
    }
    async fn run_action(&self, _: &str, _: Data, _: Context) -> ActionResult {
        Ok(Reply::new(json!({"purged": true})))
    }
}

fn server() -> Server {
    Server::builder()
        .name("scoped")
        .tool(Tasks)
        .tool(Admin)
        .build()
        .unwrap()
}

fn reader() -> Identity {
    Identity::new("rita").claim("scope", json!("tasks:read"))
}

fn writer() -> Identity {
    Identity::new("will").claim("scope", json!("tasks:read tasks:write"))
}

async fn serve() -> Http {
    Http::serve(
        StreamableHttp::builder(server())
            .auth(
                BearerAuth::new()
                    .token("reader-token", reader())
                    .token("writer-token", writer()),
            )
            .protected_resource(json!({"resource": "https://mcp.example.test/mcp"}))
            .www_authenticate([("resource_metadata", PRM)]),
    )
    .await
}

/// `tasks` `action` with `data` in a fresh 2025-11-25 session of `token`.
async fn session_call(http: &Http, token: &str, action: &str, data: Value) -> Answer {
    let bearer = format!("Bearer {token}");
    let auth = [("authorization", bearer.as_str())];
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                      "params": {"protocolVersion": "2025-11-25"}});
    let opened = http.post_raw(&auth, init.to_string()).await;
    let session = opened.header("mcp-session-id").unwrap().to_owned();
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": "tasks", "arguments": {"action": action, "data": data}}});
    let headers = [
        auth[0],
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    http.post_raw(&headers, call.to_string()).await
}

/// `tasks` `action` with `data` as one 2026-07-28 request of `token`.
async fn stateless_call(http: &Http, token: &str, action: &str, data: Value) -> Answer {
    let body = request(
        json!(1),
        "tools/call",
        json!({"name": "tasks", "arguments": {"action": action, "data": data}}),
    );
    let bearer = format!("Bearer {token}");
    let owned = modern_headers(&body);
    let mut headers = borrowed(&owned);
    headers.push(("authorization", &bearer));
    http.post_raw(&headers, body.to_string()).await
}

fn payload(answer: &Answer) -> Value {
    let body = answer.json();
    serde_json::from_str(body["result"]["content"][0]["text"].as_str().unwrap()).unwrap()
}

fn assert_step_up(answer: &Answer) {
    assert_eq!(answer.status, StatusCode::FORBIDDEN, "{}", answer.text);
    assert_eq!(
        answer.header("www-authenticate"),
        Some(
            format!(
                r#"Bearer error="insufficient_scope", scope="tasks:write", resource_metadata="{PRM}""#
            )
            .as_str()
        )
    );
    assert_eq!(answer.json()["result"]["isError"], true);
    let refusal = payload(answer);
    assert_eq!(refusal["error"], "insufficient_scope");
    assert_eq!(refusal["action"], "create");
    assert_eq!(refusal["required_scopes"], json!(["tasks:write"]));
    assert_eq!(refusal["missing_scopes"], json!(["tasks:write"]));
    assert!(
        refusal["message"]
            .as_str()
            .unwrap()
            .contains("lack the scope(s) tasks:write that action 'create' of tool 'tasks'")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_scope_is_a_403_step_up_in_the_session_era() {
    let http = serve().await;
    let refused = session_call(&http, "reader-token", "create", json!({"title": "x"})).await;
    assert_step_up(&refused);
    // The scope gate runs before the data gates: no title, still the scope refusal.
    let refused = session_call(&http, "reader-token", "create", json!({})).await;
    assert_step_up(&refused);
    let listed = session_call(&http, "reader-token", "list", json!({})).await;
    assert_eq!(listed.status, StatusCode::OK);
    assert_eq!(payload(&listed)["by"], "rita");
    let created = session_call(&http, "writer-token", "create", json!({"title": "x"})).await;
    assert_eq!(created.status, StatusCode::OK);
    assert_eq!(
        payload(&created),
        json!({"action": "create", "title": "x", "by": "will"})
    );
    // An action without scopes is open to every authenticated caller.
    let about = session_call(&http, "reader-token", "about", json!({})).await;
    assert_eq!(about.status, StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_scope_is_a_403_step_up_in_the_stateless_era() {
    let http = serve().await;
    let refused = stateless_call(&http, "reader-token", "create", json!({"title": "x"})).await;
    assert_step_up(&refused);
    let created = stateless_call(&http, "writer-token", "create", json!({"title": "x"})).await;
    assert_eq!(created.status, StatusCode::OK, "{}", created.text);
    assert_eq!(payload(&created)["by"], "will");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_protected_resource_metadata_lists_the_declared_scopes() {
    let http = serve().await;
    let config = http.service.config();
    assert_eq!(
        config.protected_resource.as_ref().unwrap()["scopes_supported"],
        json!(["admin", "tasks:read", "tasks:write"])
    );
}

/// The `tools/list` of `token` in a 2025-11-25 session, and in a 2026-07-28 request.
async fn lists(http: &Http, token: &str) -> [Value; 2] {
    let bearer = format!("Bearer {token}");
    let auth = [("authorization", bearer.as_str())];
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                      "params": {"protocolVersion": "2025-11-25"}});
    let opened = http.post_raw(&auth, init.to_string()).await;
    let session = opened.header("mcp-session-id").unwrap().to_owned();
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let headers = [
        auth[0],
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let session_era = http.post_raw(&headers, list.to_string()).await.json();
    let body = request(json!(2), "tools/list", json!({}));
    let owned = modern_headers(&body);
    let mut headers = borrowed(&owned);
    headers.push(("authorization", &bearer));
    let stateless = http.post_raw(&headers, body.to_string()).await.json();
    [session_era["result"].clone(), stateless["result"].clone()]
}

/// Each listed tool's name with its action enum and description lines (`null` for help).
fn shown(result: &Value) -> Vec<(String, Value, Value)> {
    let tools = result["tools"].as_array().unwrap();
    tools
        .iter()
        .map(|t| {
            let action = &t["inputSchema"]["properties"]["action"];
            let name = t["name"].as_str().unwrap().to_owned();
            (name, action["enum"].clone(), action["description"].clone())
        })
        .collect()
}

fn names(result: &Value) -> Vec<String> {
    shown(result).into_iter().map(|(n, _, _)| n).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_principals_see_different_tools_lists_in_both_eras() {
    let http = serve().await;
    for result in lists(&http, "reader-token").await {
        assert_eq!(
            shown(&result),
            [
                (
                    "tasks".to_owned(),
                    json!(["about", "list"]),
                    json!("about: What this tool is\nlist: List the tasks")
                ),
                (
                    "help".to_owned(),
                    Value::Null,
                    json!("Action name within that tool (requires tool)")
                ),
            ]
        );
    }
    for result in lists(&http, "writer-token").await {
        assert_eq!(names(&result), ["tasks", "help"]);
        assert_eq!(shown(&result)[0].1, json!(["about", "create", "list"]));
    }
    // Without auth (the testing client, no identity), everything is listed as configured.
    let all = TestClient::new(server()).list_tools(wymcp::ProtocolVersion::V2025_11_25);
    assert_eq!(names(&all), ["tasks", "admin", "help"]);
}

#[tokio::test]
async fn help_and_refusals_show_only_the_callable_actions() {
    let client = TestClient::new(server());
    let ask = |arguments: Value, who: Identity| {
        let client = &client;
        async move {
            let result = client
                .clone()
                .with_identity(who)
                .call_tool("help", arguments)
                .await
                .unwrap();
            result.json().unwrap().clone()
        }
    };
    let index = ask(json!({}), reader()).await;
    let tools: Vec<&str> = index["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tool"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["tasks", "help"]);
    assert_eq!(
        index["tools"][0]["actions"],
        json!(["about: What this tool is", "list: List the tasks"])
    );
    let tool = ask(json!({"tool": "tasks"}), reader()).await;
    let keys: Vec<&String> = tool["actions"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["about", "list"]);
    let hidden = ask(json!({"tool": "tasks", "action": "create"}), reader()).await;
    assert_eq!(hidden["error"], "unknown_action");
    assert_eq!(hidden["valid_actions"], json!(["about", "list"]));
    let admin = ask(json!({"tool": "admin"}), reader()).await;
    assert_eq!(admin["error"], "unknown_tool");
    let unknown = client
        .clone()
        .with_identity(reader())
        .call_tool("tasks", json!({"action": "nope"}))
        .await
        .unwrap();
    assert_eq!(
        unknown.json().unwrap()["valid_actions"],
        json!(["about", "list"])
    );
    // The writer's help has the action in full, its scopes included.
    let create = ask(json!({"tool": "tasks", "action": "create"}), writer()).await;
    assert_eq!(create["scopes"], json!(["tasks:write"]));
}

#[tokio::test]
async fn without_a_transport_the_refusal_is_an_is_error_result() {
    let client = TestClient::new(server());
    let arguments = json!({"action": "create", "data": {"title": "x"}});
    let refused = client
        .clone()
        .with_identity(reader())
        .call_tool("tasks", arguments.clone())
        .await
        .unwrap();
    assert!(refused.is_error());
    assert_eq!(
        refused.result().scopes_needed(),
        Some(&["tasks:write".to_owned()][..])
    );
    assert_eq!(refused.json().unwrap()["error"], "insufficient_scope");
    let created = client
        .clone()
        .with_identity(writer())
        .call_tool("tasks", arguments.clone())
        .await
        .unwrap();
    assert!(!created.is_error());
    // No authenticated identity (a transport without auth): nothing to authorize.
    let open = client.call_tool("tasks", arguments).await.unwrap();
    assert!(!open.is_error());
}

#[test]
fn scopes_must_be_scope_tokens() {
    for bad in [
        json!("tasks:read"),
        json!(["two words"]),
        json!([""]),
        json!(["a\"b"]),
    ] {
        let actions = Actions::from_value(json!({
            "list": {"description": "List", "properties": {}, "scopes": bad}
        }));
        let error = wymcp_core_validate(&actions);
        assert!(
            error.contains("scopes must be a list of OAuth scope tokens"),
            "{error}"
        );
    }
}

/// Builds a server of one action tool with `actions`; the configuration error's text.
fn wymcp_core_validate(actions: &Actions) -> String {
    struct Declared(Actions);
    impl ActionTool for Declared {
        fn name(&self) -> &str {
            "declared"
        }
        fn description(&self) -> &str {
            "Declared actions"
        }
        fn actions(&self) -> Actions {
            self.0.clone()
        }
        async fn run_action(&self, _: &str, _: Data, _: Context) -> ActionResult {
            Ok(Reply::new(json!({})))
        }
    }
    Server::builder()
        .tool(Declared(actions.clone()))
        .build()
        .map(|_| String::new())
        .unwrap_or_else(|e| e.to_string())
}

/// The typed form: `#[wymcp(scopes = [...])]` on a variant.
#[derive(Debug, wymcp::ActionEnum)]
enum NoteAction {
    /// Read the notes
    #[wymcp(scopes = ["notes:read"])]
    Read,
    /// Erase the notes
    #[wymcp(scopes = ["notes:read", "notes:admin"])]
    Erase,
}

struct Notes;

impl wymcp::TypedActionTool for Notes {
    type Action = NoteAction;
    fn name(&self) -> &str {
        "notes"
    }
    fn description(&self) -> &str {
        "Keeps notes"
    }
    async fn run(&self, action: NoteAction, _ctx: Context) -> ActionResult {
        Ok(Reply::new(json!({"did": format!("{action:?}")})))
    }
}

#[tokio::test]
async fn typed_actions_declare_scopes_by_attribute() {
    let server = Server::builder().typed_tool(Notes).build().unwrap();
    assert_eq!(server.declared_scopes(), ["notes:admin", "notes:read"]);
    let client = TestClient::new(server);
    let reader = Identity::new("r").claim("scp", json!(["notes:read"]));
    let erase = json!({"action": "erase"});
    let refused = client
        .clone()
        .with_identity(reader.clone())
        .call_tool("notes", erase.clone())
        .await
        .unwrap();
    assert_eq!(
        refused.json().unwrap()["missing_scopes"],
        json!(["notes:admin"])
    );
    let read = client
        .clone()
        .with_identity(reader)
        .call_tool("notes", json!({"action": "read"}))
        .await
        .unwrap();
    assert_eq!(read.json().unwrap()["did"], "Read");
}

/// A plain tool needing `tasks:read`.
struct Search;

impl wymcp::PlainTool for Search {
    fn name(&self) -> &str {
        "search"
    }
    fn description(&self) -> &str {
        "Searches the tasks"
    }
    fn input_schema(&self) -> serde_json::Map<String, Value> {
        json!({"type": "object", "properties": {"q": {"type": "string"}}})
            .as_object()
            .cloned()
            .unwrap()
    }
    fn scopes(&self) -> Vec<String> {
        vec!["tasks:read".to_owned()]
    }
    async fn run(&self, _: serde_json::Map<String, Value>, _: Context) -> wymcp::CallResult {
        Ok(wymcp::CallOutput::json(json!({"found": []})))
    }
}

#[tokio::test]
async fn a_plain_tool_declaring_scopes_is_hidden_and_refused_without_them() {
    let server = Server::builder().plain_tool(Search).build().unwrap();
    assert_eq!(server.declared_scopes(), ["tasks:read"]);
    let nobody = Identity::new("n");
    let listed = server.list_tools_for(wymcp::ProtocolVersion::V2025_11_25, Some(&nobody));
    assert_eq!(names(&listed), ["help"]);
    let listed = server.list_tools_for(wymcp::ProtocolVersion::V2025_11_25, Some(&reader()));
    assert_eq!(names(&listed), ["search", "help"]);
    let client = TestClient::new(server);
    let refused = client
        .clone()
        .with_identity(nobody)
        .call_tool("search", json!({"q": "x"}))
        .await
        .unwrap();
    let body = refused.json().unwrap();
    assert_eq!(body["error"], "insufficient_scope");
    assert_eq!(body["missing_scopes"], json!(["tasks:read"]));
    assert!(body.get("action").is_none());
    let found = client
        .clone()
        .with_identity(reader())
        .call_tool("search", json!({"q": "x"}))
        .await
        .unwrap();
    assert!(!found.is_error());
}

// ---------------------------------------------------------------------------------------------
// Scopes on resources, resource templates and prompts

/// A prompt that would show the notes.
struct Digest;

impl wymcp::Prompt for Digest {
    fn name(&self) -> &str {
        "digest"
    }
    fn arguments(&self) -> Vec<wymcp::prompt::PromptArgument> {
        vec![wymcp::prompt::PromptArgument::optional("topic")]
    }
    async fn get(
        &self,
        _: wymcp::prompt::PromptArguments,
        _: Context,
    ) -> Result<wymcp::prompt::GetPromptResult, wymcp::prompt::PromptError> {
        let text = wymcp::Content::text("the secret notes");
        Ok(wymcp::prompt::GetPromptResult::new(vec![
            wymcp::prompt::PromptMessage::user(text),
        ]))
    }
}

/// Notes behind `notes:read` (a static resource, a template, a prompt and a completion of the
/// template's variable), beside an open readme; `visibility` as given.
fn notes_server(visibility: wymcp::Visibility) -> Server {
    use wymcp::Prompt as _;
    use wymcp::resource::{ResourceContents, read_fn};
    use wymcp::{Resource, ResourceTemplate};
    let note = read_fn(|uri: String, _vars, _ctx| async move {
        Ok(vec![ResourceContents::text(uri, "the secret note")])
    });
    Server::builder()
        .visibility(visibility)
        .resource(Resource::text("notes://readme", "readme", "open to all"))
        .resource(
            Resource::text("notes://all", "all", "the secret notes")
                .description("Every note")
                .scopes(["notes:read"]),
        )
        .resource_template(
            ResourceTemplate::new("notes://n/{id}", "note", note).scopes(["notes:read"]),
        )
        .template_completion(
            "notes://n/{id}",
            "id",
            wymcp::completion::CompletionValues::new(["secret-1"]),
        )
        .prompt(Digest.with_scopes(["notes:read"]))
        .build()
        .unwrap()
}

fn nobody() -> Identity {
    Identity::new("nobody").claim("scope", json!("openid"))
}

fn note_reader() -> Identity {
    Identity::new("nora").claim("scope", json!("notes:read"))
}

/// `method` with `params` as `who`: the result or the error.
async fn as_caller(
    client: &TestClient,
    who: &Identity,
    method: &str,
    params: Value,
) -> Result<Value, wymcp::RpcError> {
    client
        .clone()
        .with_identity(who.clone())
        .request(method, Some(params))
        .await
}

fn assert_refused(refused: Result<Value, wymcp::RpcError>, subject: &str) {
    let error = refused.unwrap_err();
    assert_eq!(error.code(), wymcp::RpcError::INSUFFICIENT_SCOPE);
    assert_eq!(
        error.message(),
        format!(
            "The caller's credentials lack the scope(s) notes:read that {subject} needs. \
             Authorize again with these scopes, then retry."
        )
    );
    assert_eq!(
        error.data().unwrap(),
        &json!({"error": "insufficient_scope", "required_scopes": ["notes:read"],
                "missing_scopes": ["notes:read"]})
    );
}

#[tokio::test]
async fn resources_templates_and_prompts_are_refused_and_hidden_without_their_scopes() {
    let server = notes_server(wymcp::Visibility::Hide);
    assert_eq!(server.declared_scopes(), ["notes:read"]);
    let client = TestClient::new(server);
    let who = nobody();
    let read = |uri: &str| json!({"uri": uri});
    assert_refused(
        as_caller(&client, &who, "resources/read", read("notes://all")).await,
        "resource 'notes://all'",
    );
    // A template's refusal names the template, whatever the URI: nothing of the data is told.
    assert_refused(
        as_caller(&client, &who, "resources/read", read("notes://n/1")).await,
        "resource template 'notes://n/{id}'",
    );
    assert_refused(
        as_caller(&client, &who, "resources/subscribe", read("notes://n/1")).await,
        "resource template 'notes://n/{id}'",
    );
    assert_refused(
        as_caller(
            &client,
            &who,
            "prompts/get",
            json!({"name": "digest", "arguments": {"x": "1"}}),
        )
        .await,
        "prompt 'digest'",
    );
    let complete = json!({"ref": {"type": "ref/resource", "uri": "notes://n/{id}"},
                          "argument": {"name": "id", "value": "s"}});
    assert_refused(
        as_caller(&client, &who, "completion/complete", complete.clone()).await,
        "resource template 'notes://n/{id}'",
    );
    let complete_prompt = json!({"ref": {"type": "ref/prompt", "name": "digest"},
                                 "argument": {"name": "nope", "value": ""}});
    assert_refused(
        as_caller(&client, &who, "completion/complete", complete_prompt).await,
        "prompt 'digest'",
    );
    // The lists leave them out; an unknown prompt's refusal names only the visible ones.
    let listed = as_caller(&client, &who, "resources/list", json!({}))
        .await
        .unwrap();
    assert_eq!(listed["resources"].as_array().unwrap().len(), 1);
    assert_eq!(listed["resources"][0]["uri"], "notes://readme");
    let templates = as_caller(&client, &who, "resources/templates/list", json!({}))
        .await
        .unwrap();
    assert_eq!(templates["resourceTemplates"], json!([]));
    let prompts = as_caller(&client, &who, "prompts/list", json!({}))
        .await
        .unwrap();
    assert_eq!(prompts["prompts"], json!([]));
    let unknown = as_caller(&client, &who, "prompts/get", json!({"name": "nope"}))
        .await
        .unwrap_err();
    assert_eq!(
        unknown.message(),
        "Unknown prompt: nope. Available prompts: (none)"
    );
    // The open resource is open.
    let readme = as_caller(&client, &who, "resources/read", read("notes://readme")).await;
    assert_eq!(readme.unwrap()["contents"][0]["text"], "open to all");

    // A caller holding the scope is shown and served everything.
    let nora = note_reader();
    let note = as_caller(&client, &nora, "resources/read", read("notes://n/1")).await;
    assert_eq!(note.unwrap()["contents"][0]["text"], "the secret note");
    let got = as_caller(&client, &nora, "prompts/get", json!({"name": "digest"})).await;
    assert_eq!(
        got.unwrap()["messages"][0]["content"]["text"],
        "the secret notes"
    );
    let completed = as_caller(&client, &nora, "completion/complete", complete).await;
    assert_eq!(
        completed.unwrap()["completion"]["values"],
        json!(["secret-1"])
    );
    let listed = as_caller(&client, &nora, "resources/list", json!({}))
        .await
        .unwrap();
    assert_eq!(listed["resources"].as_array().unwrap().len(), 2);
    // Without auth (no identity) there is no one to refuse.
    assert!(client.read_resource("notes://all").await.is_ok());
}

#[tokio::test]
async fn show_with_scope_lists_them_marked_and_still_refuses() {
    let client = TestClient::new(notes_server(wymcp::Visibility::ShowWithScope));
    let who = nobody();
    let listed = as_caller(&client, &who, "resources/list", json!({}))
        .await
        .unwrap();
    assert_eq!(
        listed["resources"][1]["description"],
        "Every note (needs scope: notes:read)"
    );
    let prompts = as_caller(&client, &who, "prompts/list", json!({}))
        .await
        .unwrap();
    assert_eq!(
        prompts["prompts"][0]["description"],
        "(needs scope: notes:read)"
    );
    assert_refused(
        as_caller(
            &client,
            &who,
            "resources/read",
            json!({"uri": "notes://all"}),
        )
        .await,
        "resource 'notes://all'",
    );
}

#[test]
fn resource_and_prompt_scopes_must_be_scope_tokens() {
    use wymcp::Prompt as _;
    let resource = wymcp::Resource::text("notes://a", "a", "A").scopes(["two words"]);
    let error = Server::builder().resource(resource).build().unwrap_err();
    assert!(
        error
            .to_string()
            .contains("resource \"notes://a\": scopes must be a list of OAuth scope tokens"),
        "{error}"
    );
    let error = Server::builder()
        .prompt(Digest.with_scopes(["a\"b"]))
        .build()
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("prompt \"digest\": scopes must be"),
        "{error}"
    );
}

/// A server of one scoped resource behind bearer auth.
async fn serve_notes() -> Http {
    Http::serve(
        StreamableHttp::builder(notes_server(wymcp::Visibility::Hide))
            .auth(
                BearerAuth::new()
                    .token("nobody-token", nobody())
                    .token("reader-token", note_reader()),
            )
            .www_authenticate([("resource_metadata", PRM)]),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_read_without_the_scope_is_a_403_step_up() {
    let http = serve_notes().await;
    let body = request(json!(1), "resources/read", json!({"uri": "notes://all"}));
    let owned = modern_headers(&body);
    for (token, status) in [
        ("nobody-token", StatusCode::FORBIDDEN),
        ("reader-token", StatusCode::OK),
    ] {
        let mut headers = borrowed(&owned);
        let bearer = format!("Bearer {token}");
        headers.push(("authorization", &bearer));
        let answer = http.post_raw(&headers, body.to_string()).await;
        assert_eq!(answer.status, status, "{}", answer.text);
        if status == StatusCode::FORBIDDEN {
            assert_eq!(
                answer.header("www-authenticate"),
                Some(
                    format!(
                        r#"Bearer error="insufficient_scope", scope="notes:read", resource_metadata="{PRM}""#
                    )
                    .as_str()
                )
            );
            assert_eq!(answer.json()["error"]["code"], -32003);
        } else {
            assert_eq!(
                answer.json()["result"]["contents"][0]["text"],
                "the secret notes"
            );
        }
    }
}
