//! Resources, prompts and completion over Streamable HTTP (real HTTP on 127.0.0.1, port 0):
//! the method table routes them, `initialize` declares only what the server has, answers
//! validate against the official schemas, and server notifications reach the GET stream.

mod http_harness;
#[path = "mcp_schema/mod.rs"]
mod mcp_schema;

use http_harness::{Http, data_lines, read_until};
use reqwest::StatusCode;
use serde_json::{Value, json};
use wymcp::Prompt;
use wymcp::backend::{Backends, EventLog, LoggedEvent, StoreError};
use wymcp::completion::CompletionValues;
use wymcp::prompt::{GetPromptResult, PromptArgument, PromptArguments, PromptMessage};
use wymcp::resource::{ReadResource, ResourceContents, ResourceError, Variables};
use wymcp::transport::http::StreamableHttp;
use wymcp::{Content, Context, ProtocolVersion, Server};
use wymcp::{Resource, ResourceTemplate};

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

struct Item;

impl ReadResource for Item {
    async fn read(
        &self,
        uri: &str,
        vars: Variables,
        ctx: Context,
    ) -> Result<Vec<ResourceContents>, ResourceError> {
        let id = vars.get("id").ok_or(ResourceError::NotFound)?;
        // The reading session, as the handler's context reports it.
        let mut meta = serde_json::Map::new();
        meta.insert("session".into(), json!(ctx.session_id()));
        Ok(vec![
            ResourceContents::text(uri, format!("item {id}"))
                .with_mime_type("text/plain")
                .with_meta(meta),
        ])
    }
}

struct Greet;

impl Prompt for Greet {
    fn name(&self) -> &str {
        "greet"
    }
    fn description(&self) -> Option<String> {
        Some("Greets someone".to_owned())
    }
    fn arguments(&self) -> Vec<PromptArgument> {
        vec![PromptArgument::required("who").description("Who to greet")]
    }
    async fn get(
        &self,
        arguments: PromptArguments,
        _ctx: Context,
    ) -> Result<GetPromptResult, wymcp::prompt::PromptError> {
        let who = arguments.get("who").cloned().unwrap_or_default();
        Ok(GetPromptResult::new(vec![PromptMessage::user(
            Content::text(format!("Hello, {who}!")),
        )]))
    }
}

fn full_server() -> Server {
    full_server_with(Backends::new())
}

fn full_server_with(backends: Backends) -> Server {
    Server::builder()
        .backends(backends)
        .name("resources-http")
        .version("1.0.0")
        .list_changed(true)
        .resource(
            Resource::text("test://text", "text", "some text")
                .description("A text resource")
                .mime_type("text/plain"),
        )
        .resource(Resource::blob_base64("test://blob", "blob", PNG).mime_type("image/png"))
        .resource_template(
            ResourceTemplate::new("test://items/{id}", "item", Item).mime_type("text/plain"),
        )
        .prompt(Greet)
        .prompt_completion(
            "greet",
            "who",
            CompletionValues::new(["ada", "alan", "grace"]),
        )
        .build()
        .expect("the server builds")
}

async fn start(server: Server) -> Http {
    Http::serve(StreamableHttp::builder(server)).await
}

impl Http {
    /// One request; its JSON answer.
    async fn call(&self, session: &str, method: &str, params: Value) -> Value {
        let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
        let answer = self.post(Some(session), &body).await;
        assert_eq!(answer.status, StatusCode::OK, "{method}");
        answer.json()
    }
}

const REVISIONS: [&str; 3] = ["2025-03-26", "2025-06-18", "2025-11-25"];

/// Validates an answer as a `JSONRPCMessage` and its `result` as `definition`.
fn assert_valid(rev: &str, body: &Value, definition: &str) {
    let version: ProtocolVersion = rev.parse().expect("a revision");
    let envelope = mcp_schema::validator(version, "JSONRPCMessage");
    let problems = mcp_schema::problems(&envelope, body);
    assert!(
        problems.is_empty(),
        "{rev} JSONRPCMessage: {problems:?}\n{body}"
    );
    let result = body
        .get("result")
        .unwrap_or_else(|| panic!("no result: {body}"));
    let specific = mcp_schema::validator(version, definition);
    let problems = mcp_schema::problems(&specific, result);
    assert!(
        problems.is_empty(),
        "{rev} {definition}: {problems:?}\n{result}"
    );
}

/// Validates an error answer and answers its code.
fn error_code(rev: &str, body: &Value) -> i64 {
    let version: ProtocolVersion = rev.parse().expect("a revision");
    let envelope = mcp_schema::validator(version, "JSONRPCMessage");
    let problems = mcp_schema::problems(&envelope, body);
    assert!(
        problems.is_empty(),
        "{rev} JSONRPCMessage: {problems:?}\n{body}"
    );
    body["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error: {body}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initialize_declares_only_what_the_server_has() {
    let full = start(full_server()).await;
    let bare = start(Server::builder().build().expect("builds")).await;
    for rev in REVISIONS {
        let init = full.ready_with_answer(rev).await.1.json();
        assert_valid(rev, &init, "InitializeResult");
        let caps = &init["result"]["capabilities"];
        assert_eq!(caps["tools"]["listChanged"], true, "{caps}");
        assert_eq!(caps["resources"]["subscribe"], true, "{caps}");
        assert_eq!(caps["resources"]["listChanged"], true, "{caps}");
        assert_eq!(caps["prompts"]["listChanged"], true, "{caps}");
        assert!(caps["completions"].is_object(), "{caps}");
        assert!(caps["logging"].is_object(), "{caps}");

        let init = bare.ready_with_answer(rev).await.1.json();
        assert_valid(rev, &init, "InitializeResult");
        let caps = init["result"]["capabilities"]
            .as_object()
            .expect("an object");
        let mut keys: Vec<&str> = caps.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["logging", "tools"], "{caps:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_are_listed_and_read() {
    let h = start(full_server()).await;
    for rev in REVISIONS {
        let s = h.ready(rev).await;
        let list = h.call(&s, "resources/list", json!({})).await;
        assert_valid(rev, &list, "ListResourcesResult");
        let uris: Vec<&str> = list["result"]["resources"]
            .as_array()
            .expect("resources")
            .iter()
            .filter_map(|r| r["uri"].as_str())
            .collect();
        assert_eq!(uris, ["test://text", "test://blob"]);

        let templates = h.call(&s, "resources/templates/list", json!({})).await;
        assert_valid(rev, &templates, "ListResourceTemplatesResult");
        assert_eq!(
            templates["result"]["resourceTemplates"][0]["uriTemplate"],
            "test://items/{id}"
        );

        let text = h
            .call(&s, "resources/read", json!({"uri": "test://text"}))
            .await;
        assert_valid(rev, &text, "ReadResourceResult");
        assert_eq!(text["result"]["contents"][0]["text"], "some text");
        let blob = h
            .call(&s, "resources/read", json!({"uri": "test://blob"}))
            .await;
        assert_valid(rev, &blob, "ReadResourceResult");
        assert_eq!(blob["result"]["contents"][0]["blob"], PNG);
        let item = h
            .call(&s, "resources/read", json!({"uri": "test://items/42"}))
            .await;
        assert_valid(rev, &item, "ReadResourceResult");
        assert_eq!(item["result"]["contents"][0]["text"], "item 42");
        assert_eq!(item["result"]["contents"][0]["uri"], "test://items/42");
        // `_meta` is served from 2025-06-18 on.
        if rev != "2025-03-26" {
            assert_eq!(
                item["result"]["contents"][0]["_meta"]["session"], s,
                "a resource handler's context names the session: {item}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resource_errors_are_json_rpc_errors() {
    let h = start(full_server()).await;
    for rev in REVISIONS {
        let s = h.ready(rev).await;
        let missing = h
            .call(&s, "resources/read", json!({"uri": "test://nope"}))
            .await;
        assert_eq!(error_code(rev, &missing), -32002, "{missing}");
        assert_eq!(missing["error"]["data"]["uri"], "test://nope");
        let no_uri = h.call(&s, "resources/read", json!({})).await;
        assert_eq!(error_code(rev, &no_uri), -32602, "{no_uri}");
        let bad_cursor = h
            .call(&s, "resources/list", json!({"cursor": "not-a-cursor"}))
            .await;
        assert_eq!(error_code(rev, &bad_cursor), -32602, "{bad_cursor}");
        let subscribe_missing = h
            .call(&s, "resources/subscribe", json!({"uri": "test://nope"}))
            .await;
        assert_eq!(error_code(rev, &subscribe_missing), -32002);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_resources_does_not_serve_them() {
    // The method is known, the server has nothing: resources/read of anything is not found.
    let h = start(Server::builder().build().expect("builds")).await;
    let s = h.ready("2025-11-25").await;
    let list = h.call(&s, "resources/list", json!({})).await;
    assert_valid("2025-11-25", &list, "ListResourcesResult");
    assert_eq!(list["result"]["resources"], json!([]));
    let read = h
        .call(&s, "resources/read", json!({"uri": "test://text"}))
        .await;
    assert_eq!(error_code("2025-11-25", &read), -32002);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_are_listed_and_got() {
    let h = start(full_server()).await;
    for rev in REVISIONS {
        let s = h.ready(rev).await;
        let list = h.call(&s, "prompts/list", json!({})).await;
        assert_valid(rev, &list, "ListPromptsResult");
        assert_eq!(list["result"]["prompts"][0]["name"], "greet");
        assert_eq!(
            list["result"]["prompts"][0]["arguments"][0],
            json!({"name": "who", "description": "Who to greet", "required": true})
        );
        let got = h
            .call(
                &s,
                "prompts/get",
                json!({"name": "greet", "arguments": {"who": "Ada"}}),
            )
            .await;
        assert_valid(rev, &got, "GetPromptResult");
        assert_eq!(
            got["result"]["messages"][0]["content"]["text"],
            "Hello, Ada!"
        );
        let missing = h.call(&s, "prompts/get", json!({"name": "greet"})).await;
        assert_eq!(error_code(rev, &missing), -32602, "{missing}");
        assert!(
            missing.to_string().contains("who"),
            "the error names the argument: {missing}"
        );
        let unknown = h.call(&s, "prompts/get", json!({"name": "nope"})).await;
        assert_eq!(error_code(rev, &unknown), -32602, "{unknown}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn completion_completes_prompt_arguments() {
    let h = start(full_server()).await;
    for rev in REVISIONS {
        let s = h.ready(rev).await;
        let done = h
            .call(
                &s,
                "completion/complete",
                json!({"ref": {"type": "ref/prompt", "name": "greet"},
                       "argument": {"name": "who", "value": "a"}}),
            )
            .await;
        assert_valid(rev, &done, "CompleteResult");
        assert_eq!(
            done["result"]["completion"]["values"],
            json!(["ada", "alan"])
        );
        let unknown = h
            .call(
                &s,
                "completion/complete",
                json!({"ref": {"type": "ref/prompt", "name": "nope"},
                       "argument": {"name": "who", "value": "a"}}),
            )
            .await;
        assert_eq!(error_code(rev, &unknown), -32602, "{unknown}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_updated_reaches_the_subscribed_session_get_stream() {
    let server = full_server();
    let h = start(server.clone()).await;
    let subscribed = h.ready("2025-11-25").await;
    let other = h.ready("2025-11-25").await;
    let mut stream = h.get_stream(&subscribed, &[]).await;
    let mut other_stream = h.get_stream(&other, &[]).await;
    let mut buf = String::new();
    read_until(&mut stream, &mut buf, "\n\n").await;
    let mut other_buf = String::new();
    read_until(&mut other_stream, &mut other_buf, "\n\n").await;

    let ok = h
        .call(
            &subscribed,
            "resources/subscribe",
            json!({"uri": "test://text"}),
        )
        .await;
    assert_valid("2025-11-25", &ok, "EmptyResult");
    assert_eq!(
        server
            .subscriptions(Some(&subscribed))
            .await
            .expect("in memory"),
        ["test://text"]
    );
    assert_eq!(server.notify_resource_updated("test://text").await, 1);
    read_until(&mut stream, &mut buf, "notifications/resources/updated").await;
    let updated = data_lines(&buf)
        .into_iter()
        .find(|e| e["method"] == "notifications/resources/updated")
        .expect("delivered");
    assert_eq!(updated["params"]["uri"], "test://text");
    let v = mcp_schema::validator(ProtocolVersion::V2025_11_25, "ResourceUpdatedNotification");
    assert!(mcp_schema::problems(&v, &updated).is_empty(), "{updated}");

    // list_changed names no session: every session's stream hears it, after anything
    // addressed earlier, so the other session's first message proves it got nothing else.
    assert!(server.notify_resources_list_changed());
    read_until(
        &mut stream,
        &mut buf,
        "notifications/resources/list_changed",
    )
    .await;
    read_until(
        &mut other_stream,
        &mut other_buf,
        "notifications/resources/list_changed",
    )
    .await;
    assert!(!other_buf.contains("resources/updated"), "{other_buf:?}");

    let ok = h
        .call(
            &subscribed,
            "resources/unsubscribe",
            json!({"uri": "test://text"}),
        )
        .await;
    assert_valid("2025-11-25", &ok, "EmptyResult");
    assert_eq!(server.notify_resource_updated("test://text").await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ended_session_forgets_its_subscriptions() {
    let server = full_server();
    let h = start(server.clone()).await;
    let s = h.ready("2025-11-25").await;
    h.call(&s, "resources/subscribe", json!({"uri": "test://blob"}))
        .await;
    assert_eq!(
        server.subscriptions(Some(&s)).await.expect("in memory"),
        ["test://blob"]
    );
    h.delete(&s).await;
    assert!(
        server
            .subscriptions(Some(&s))
            .await
            .expect("in memory")
            .is_empty()
    );
    assert_eq!(server.notify_resource_updated("test://blob").await, 0);
}

#[tokio::test]
async fn a_template_match_stopped_by_a_limit_is_refused_naming_it() {
    let limits = wymcp::Limits::default()
        .max_template_uri(64)
        .max_template_match_steps(50);
    let server = Server::builder()
        .limits(limits)
        .resource_template(ResourceTemplate::new("test://items/{id}", "item", Item))
        .resource_template(ResourceTemplate::new("test://{a}{b}{c}z", "explorer", Item))
        .build()
        .expect("the server builds");
    let http = start(server).await;
    let session = http.ready("2025-11-25").await;
    let read = |uri: String| json!({"uri": uri});
    let long = format!("test://items/{}", "x".repeat(60));
    let body = http.call(&session, "resources/read", read(long)).await;
    assert_eq!(error_code("2025-11-25", &body), -32002);
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("longer than 64 bytes"), "{message}");
    assert!(message.contains("Limits::max_template_uri"), "{message}");
    let explore = format!("test://{}", "x".repeat(40));
    for method in ["resources/read", "resources/subscribe"] {
        let body = http.call(&session, method, read(explore.clone())).await;
        assert_eq!(error_code("2025-11-25", &body), -32002, "{method}");
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("more than 50 steps"),
            "{method}: {message}"
        );
        assert!(
            message.contains("Limits::max_template_match_steps"),
            "{message}"
        );
    }
    // A URI within the limits is read as usual, and one matching nothing says only that.
    let body = http
        .call(&session, "resources/read", read("test://items/7".into()))
        .await;
    assert_eq!(body["result"]["contents"][0]["text"], "item 7");
    let body = http
        .call(&session, "resources/read", read("other://7".into()))
        .await;
    assert_eq!(body["error"]["message"], "Resource not found: other://7");
}

/// An event log that refuses every event with data, as a store that filled up after the
/// stream opened does (a GET stream's priming event, empty, is logged: the GET is served).
struct RefusingLog(wymcp::backend::InMemoryEventLog);

impl EventLog for RefusingLog {
    fn append<'a>(
        &'a self,
        session: &'a str,
        stream: &'a str,
        data: String,
    ) -> futures_util::future::BoxFuture<'a, Result<String, StoreError>> {
        if data.is_empty() {
            return self.0.append(session, stream, data);
        }
        Box::pin(async { Err(StoreError::full("the event log is full")) })
    }

    fn replay_after<'a>(
        &'a self,
        session: &'a str,
        last_event_id: &'a str,
    ) -> futures_util::future::BoxFuture<'a, Result<Option<Vec<LoggedEvent>>, StoreError>> {
        self.0.replay_after(session, last_event_id)
    }

    fn remove_session<'a>(
        &'a self,
        session: &'a str,
    ) -> futures_util::future::BoxFuture<'a, Result<(), StoreError>> {
        self.0.remove_session(session)
    }
}

/// Issue 48, N19: a server notification whose event the log refuses still reaches the
/// session's GET stream, live and without an `id:` (it was dropped).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notification_the_event_log_refuses_still_reaches_the_stream_without_an_id() {
    let server = full_server_with(Backends::new().events(RefusingLog(Default::default())));
    let h = Http::serve(StreamableHttp::builder(server.clone())).await;
    let session = h.ready("2025-11-25").await;
    let mut stream = h.get_stream(&session, &[]).await;
    let mut buf = String::new();
    read_until(&mut stream, &mut buf, "\n\n").await;
    buf.clear();
    assert!(server.notify_resources_list_changed());
    read_until(
        &mut stream,
        &mut buf,
        "notifications/resources/list_changed",
    )
    .await;
    read_until(&mut stream, &mut buf, "\n\n").await;
    let event = buf
        .split("\n\n")
        .find(|e| e.contains("list_changed"))
        .expect("the list_changed event");
    assert!(!event.lines().any(|l| l.starts_with("id:")), "{event:?}");
}
