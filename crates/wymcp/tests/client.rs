//! `wymcp::client` against a real wymcp server served in-process over Streamable HTTP on
//! 127.0.0.1 port 0: both eras, tools listed across pages, a call and a tool's refusal, the
//! notifications an answer's stream carries, the timeout and the limits, each refusal typed.

#![allow(clippy::unwrap_used, missing_docs)]

mod ctx_fixture;
mod http_harness;

use std::time::Duration;

use http_harness::Http;
use serde_json::{Map, Value, json};
use wymcp::Prompt;
use wymcp::Resource;
use wymcp::client::{Client, ClientError, Limit};
use wymcp::completion::CompletionValues;
use wymcp::prompt::{GetPromptResult, PromptArgument, PromptArguments, PromptMessage};
use wymcp::protocol::LogLevel;
use wymcp::transport::http::{BearerAuth, StreamableHttp};
use wymcp::{
    CallError, CallOutput, CallResult, Content, Context, Identity, PlainTool, ProtocolVersion,
    Server,
};

/// A plain tool whose behaviour is a function of its arguments and context.
struct Fixture {
    name: &'static str,
}

impl PlainTool for Fixture {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        "A fixture of the client's tests"
    }
    fn input_schema(&self) -> Map<String, Value> {
        let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
        schema.as_object().cloned().unwrap_or_default()
    }
    async fn run(&self, arguments: Map<String, Value>, ctx: Context) -> CallResult {
        let text = arguments.get("text").and_then(Value::as_str).unwrap_or("");
        match self.name {
            "echo" => Ok(CallOutput::text(text)),
            "refuse" => Err(CallError::tool(format!("no: {text}"))),
            "sleep" => {
                // Longer than the tests' client timeout, short enough to end with the test.
                tokio::time::sleep(Duration::from_secs(3)).await;
                Ok(CallOutput::text("late"))
            }
            "big" => Ok(CallOutput::text("x".repeat(64 * 1024))),
            "chatty" => {
                // Not log messages: the stateless era sends those only at a requested level.
                for i in 0..3 {
                    ctx.notify("notifications/test/chatter", json!({"data": i}));
                }
                Ok(CallOutput::text("said three things"))
            }
            _ => Err(CallError::tool("unknown fixture")),
        }
    }
}

const TOOLS: [&str; 5] = ["echo", "refuse", "sleep", "big", "chatty"];

/// A server of the fixtures.
async fn serve() -> Http {
    let mut builder = Server::builder().name("client-test");
    for name in TOOLS {
        builder = builder.plain_tool(Fixture { name });
    }
    Http::serve(StreamableHttp::builder(builder.build().unwrap())).await
}

#[tokio::test]
async fn the_client_speaks_2026_07_28_where_the_server_offers_it() {
    let http = serve().await;
    let client = Client::builder(&http.url).connect().await.unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
    assert_eq!(client.session_id(), None);
    assert!(client.server_capabilities()["tools"].is_object());
    client.ping().await.unwrap();
    let result = client
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .unwrap();
    assert!(!result.is_error());
    assert_eq!(result.text(), "hi");
    client.close().await.unwrap();
}

#[tokio::test]
async fn the_client_pinned_to_the_session_era_opens_uses_and_ends_a_session() {
    let http = serve().await;
    for version in ProtocolVersion::SESSION_ERA {
        let client = Client::builder(&http.url)
            .versions([version])
            .connect()
            .await
            .unwrap();
        assert_eq!(client.protocol_version(), version);
        let session = client.session_id().unwrap().to_owned();
        client.ping().await.unwrap();
        let result = client
            .call_tool("echo", json!({"text": version.as_str()}))
            .await
            .unwrap();
        assert_eq!(result.text(), version.as_str());
        client.close().await.unwrap();
        // The session is gone: ending it again is refused.
        let again = http
            .send(reqwest::Method::DELETE, &[("mcp-session-id", &session)])
            .await;
        assert_eq!(again.status(), reqwest::StatusCode::NOT_FOUND, "{version}");
    }
}

#[tokio::test]
async fn tools_are_listed_in_both_eras() {
    let http = serve().await;
    let mut expected: Vec<&str> = TOOLS.to_vec();
    expected.push("help");
    expected.sort_unstable();
    for versions in [&ProtocolVersion::ALL[..], &ProtocolVersion::SESSION_ERA[..]] {
        let client = Client::builder(&http.url)
            .versions(versions.iter().copied())
            .connect()
            .await
            .unwrap();
        let tools = client.list_tools().await.unwrap();
        let mut names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
        names.sort_unstable();
        assert_eq!(names, expected, "{}", client.protocol_version());
        let echo = tools.iter().find(|t| t.name() == "echo").unwrap();
        assert_eq!(echo.input_schema()["type"], "object");
        assert_eq!(echo.description(), Some("A fixture of the client's tests"));
    }
}

/// A session-era-only server, written for these tests (wymcp's own does not page `tools/list`):
/// it refuses `server/discover` as a session-era server does (400, the session id missing),
/// speaks 2025-06-18, and lists its tools two a page over three pages, the second page as an
/// SSE stream with a notification before the response.
mod paged {
    use axum::http::{HeaderMap, StatusCode};
    use axum::response::{IntoResponse, Response};
    use axum::{Json, Router, routing::post};
    use serde_json::{Value, json};

    pub(crate) const PAGES: usize = 3;

    async fn handle(headers: HeaderMap, Json(body): Json<Value>) -> Response {
        let id = body.get("id").cloned().unwrap_or(Value::Null);
        let in_session = headers.get("mcp-session-id").is_some_and(|v| v == "s-1")
            && headers
                .get("mcp-protocol-version")
                .is_some_and(|v| v == "2025-06-18");
        match body["method"].as_str().unwrap_or_default() {
            "initialize" => (
                [("mcp-session-id", "s-1")],
                Json(json!({"jsonrpc": "2.0", "id": id, "result": {
                    "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                    "serverInfo": {"name": "paged", "version": "0"}}})),
            )
                .into_response(),
            "notifications/initialized" if in_session => StatusCode::ACCEPTED.into_response(),
            "tools/list" if in_session => {
                let page: usize = body["params"]["cursor"]
                    .as_str()
                    .and_then(|c| c.parse().ok())
                    .unwrap_or(0);
                let tools: Vec<Value> = (0..2)
                    .map(|i| json!({"name": format!("t{page}{i}"), "inputSchema": {"type": "object"}}))
                    .collect();
                let mut result = json!({"tools": tools});
                if page + 1 < PAGES {
                    result["nextCursor"] = json!((page + 1).to_string());
                }
                let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
                if page == 1 {
                    let note = json!({"jsonrpc": "2.0", "method": "notifications/message",
                        "params": {"level": "info", "data": "page 1"}});
                    let stream = format!(": hi\n\nid: 1\ndata: {note}\n\ndata: {answer}\n\n");
                    ([("content-type", "text/event-stream")], stream).into_response()
                } else {
                    Json(answer).into_response()
                }
            }
            _ => (
                StatusCode::BAD_REQUEST,
                Json(json!({"jsonrpc": "2.0", "id": null,
                    "error": {"code": -32000, "message": "Bad Request: No valid session ID provided"}})),
            )
                .into_response(),
        }
    }

    /// Serves on 127.0.0.1 port 0 until the test's runtime ends: the endpoint's URL.
    pub(crate) async fn serve() -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        tokio::spawn(async move {
            axum::serve(listener, Router::new().route("/mcp", post(handle))).await
        });
        url
    }
}

#[tokio::test]
async fn a_session_era_server_is_initialized_and_its_pages_followed() {
    let url = paged::serve().await;
    let client = Client::builder(&url).connect().await.unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_06_18);
    assert_eq!(client.session_id(), Some("s-1"));
    let names: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(names, ["t00", "t01", "t10", "t11", "t20", "t21"]);
    let notes = client.drain_notifications();
    assert_eq!(notes.len(), 1);
    assert_eq!(notes[0].params().unwrap()["data"], "page 1");
}

#[tokio::test]
async fn a_listing_with_more_pages_than_allowed_is_refused_naming_the_limit() {
    let url = paged::serve().await;
    let client = Client::builder(&url).max_pages(2).connect().await.unwrap();
    let err = client.list_tools().await.unwrap_err();
    assert_eq!(err.limit(), Some(Limit::Pages { max: 2 }));
    assert_eq!(
        err.to_string(),
        "tools/list: refused: the server exceeded the pages of one listing \
         (at most 2 pages, ClientBuilder::max_pages)"
    );
}

#[tokio::test]
async fn a_tools_refusal_is_a_result_marked_as_an_error() {
    let http = serve().await;
    for versions in [&ProtocolVersion::ALL[..], &ProtocolVersion::SESSION_ERA[..]] {
        let client = Client::builder(&http.url)
            .versions(versions.iter().copied())
            .connect()
            .await
            .unwrap();
        let result = client
            .call_tool("refuse", json!({"text": "never"}))
            .await
            .unwrap();
        assert!(result.is_error());
        assert!(result.text().contains("no: never"), "{}", result.text());
    }
}

#[tokio::test]
async fn an_unknown_tool_is_a_typed_json_rpc_error() {
    let http = serve().await;
    let client = Client::builder(&http.url).connect().await.unwrap();
    let err = client.call_tool("nope", json!({})).await.unwrap_err();
    assert_eq!(err.rpc_error().map(|e| e.code()), Some(-32602), "{err:?}");
}

#[tokio::test]
async fn a_call_past_the_timeout_fails_with_the_timeout() {
    let http = serve().await;
    for versions in [&ProtocolVersion::ALL[..], &ProtocolVersion::SESSION_ERA[..]] {
        let client = Client::builder(&http.url)
            .versions(versions.iter().copied())
            .timeout(Duration::from_millis(300))
            .connect()
            .await
            .unwrap();
        let err = client.call_tool("sleep", json!({})).await.unwrap_err();
        assert!(err.is_timeout(), "{err:?}");
        assert_eq!(err.to_string(), "tools/call: no answer within 300ms");
    }
}

#[tokio::test]
async fn an_answer_over_the_size_limit_is_refused_naming_the_limit() {
    let http = serve().await;
    for versions in [&ProtocolVersion::ALL[..], &ProtocolVersion::SESSION_ERA[..]] {
        let client = Client::builder(&http.url)
            .versions(versions.iter().copied())
            .max_answer_bytes(16 * 1024)
            .connect()
            .await
            .unwrap();
        let err = client.call_tool("big", json!({})).await.unwrap_err();
        assert_eq!(err.limit(), Some(Limit::AnswerBytes { max: 16 * 1024 }));
        assert_eq!(
            err.to_string(),
            "tools/call: refused: the server exceeded the answer's size \
             (at most 16384 bytes, ClientBuilder::max_answer_bytes)"
        );
        // Below the limit, the same client still works.
        assert_eq!(
            client
                .call_tool("echo", json!({"text": "ok"}))
                .await
                .unwrap()
                .text(),
            "ok"
        );
    }
}

#[tokio::test]
async fn notifications_before_the_answer_are_queued_up_to_the_limit() {
    let http = serve().await;
    for versions in [&ProtocolVersion::ALL[..], &ProtocolVersion::SESSION_ERA[..]] {
        let client = Client::builder(&http.url)
            .versions(versions.iter().copied())
            .max_notifications(2)
            .connect()
            .await
            .unwrap();
        let era = client.protocol_version();
        let result = client.call_tool("chatty", json!({})).await.unwrap();
        assert_eq!(result.text(), "said three things");
        let notes = client.drain_notifications();
        let data: Vec<&Value> = notes.iter().map(|n| &n.params().unwrap()["data"]).collect();
        assert_eq!(data, [&json!(0), &json!(1)], "{era}");
        assert!(
            notes
                .iter()
                .all(|n| n.method() == "notifications/test/chatter")
        );
        assert_eq!(client.dropped_notifications(), 1, "{era}");
        assert!(client.drain_notifications().is_empty());
    }
}

#[tokio::test]
async fn an_sse_event_over_the_limit_is_refused_naming_the_limit() {
    let http = serve().await;
    let client = Client::builder(&http.url)
        .versions(ProtocolVersion::SESSION_ERA)
        .max_event_bytes(100)
        .connect()
        .await
        .unwrap();
    // The notifications make the answer a stream; its final event is over 100 bytes.
    let err = client.call_tool("chatty", json!({})).await.unwrap_err();
    assert_eq!(err.limit(), Some(Limit::EventBytes { max: 100 }));
}

#[tokio::test]
async fn misconfiguration_and_an_absent_server_are_typed_errors() {
    let err = Client::builder("ftp://example.com/mcp")
        .connect()
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::InvalidUrl { .. }), "{err:?}");
    let err = Client::builder("http://127.0.0.1:1/mcp")
        .header("bad header", "x")
        .connect()
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::InvalidHeader { ref name } if name == "bad header"));
    // Port 0 bound then released: nothing listens there.
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let err = Client::builder(format!("http://{addr}/mcp"))
        .connect()
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::Transport { .. }), "{err:?}");
}

#[tokio::test]
async fn extra_headers_reach_the_server() {
    // A bearer token the server requires: without it the handshake is refused with 401.
    let http = Http::serve(
        StreamableHttp::builder({
            let mut builder = Server::builder().name("client-test");
            builder = builder.plain_tool(Fixture { name: "echo" });
            builder.build().unwrap()
        })
        .auth(BearerAuth::new().token("t0ken", Identity::new("alice"))),
    )
    .await;
    let err = Client::builder(&http.url).connect().await.unwrap_err();
    assert_eq!(err.status(), Some(401), "{err:?}");
    let client = Client::builder(&http.url)
        .bearer_token("t0ken")
        .connect()
        .await
        .unwrap();
    assert_eq!(
        client
            .call_tool("echo", json!({"text": "in"}))
            .await
            .unwrap()
            .text(),
        "in"
    );
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
        vec![PromptArgument::required("who")]
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

#[tokio::test]
async fn resources_prompts_and_completion_in_both_eras() {
    let server = Server::builder()
        .name("client-resources")
        .page_size(1)
        .resource(Resource::text("test://a", "a", "text of a").mime_type("text/plain"))
        .resource(Resource::text("test://b", "b", "text of b"))
        .prompt(Greet)
        .prompt_completion(
            "greet",
            "who",
            CompletionValues::new(["ada", "alan", "grace"]),
        )
        .build()
        .unwrap();
    let http = Http::serve(StreamableHttp::builder(server)).await;
    for versions in [&ProtocolVersion::ALL[..], &ProtocolVersion::SESSION_ERA[..]] {
        let client = Client::builder(&http.url)
            .versions(versions.iter().copied())
            .connect()
            .await
            .unwrap();
        let era = client.protocol_version();
        // One resource a page: the listing follows the cursor.
        let uris: Vec<Value> = client
            .list_resources()
            .await
            .unwrap()
            .iter()
            .map(|r| r["uri"].clone())
            .collect();
        assert_eq!(uris, [json!("test://a"), json!("test://b")], "{era}");
        assert_eq!(
            client.list_resource_templates().await.unwrap(),
            Vec::<Value>::new()
        );
        let read = client.read_resource("test://a").await.unwrap();
        assert_eq!(
            read["contents"],
            json!([{"uri": "test://a", "mimeType": "text/plain", "text": "text of a"}]),
            "{era}"
        );
        let unknown = client.read_resource("test://nope").await.unwrap_err();
        assert!(unknown.rpc_error().is_some(), "{unknown:?}");
        let prompts = client.list_prompts().await.unwrap();
        assert_eq!(prompts.len(), 1);
        assert_eq!(prompts[0]["name"], "greet");
        let prompt = client
            .get_prompt("greet", json!({"who": "Ada"}))
            .await
            .unwrap();
        assert_eq!(
            prompt["messages"],
            json!([{"role": "user", "content": {"type": "text", "text": "Hello, Ada!"}}]),
            "{era}"
        );
        let completion = client
            .complete(json!({"type": "ref/prompt", "name": "greet"}), "who", "a")
            .await
            .unwrap();
        assert_eq!(completion["values"], json!(["ada", "alan"]), "{era}");
        if !era.is_stateless() {
            client.set_logging_level(LogLevel::Warning).await.unwrap();
            client.subscribe("test://a").await.unwrap();
            client.unsubscribe("test://a").await.unwrap();
        }
        client.close().await.unwrap();
    }
}

#[tokio::test]
async fn the_servers_sampling_request_is_answered_on_the_answers_stream() {
    let http = Http::serve(StreamableHttp::builder(ctx_fixture::server())).await;
    let client = Client::builder(&http.url)
        .versions(ProtocolVersion::SESSION_ERA)
        .on_sampling(|params| async move {
            let asked = params["messages"][0]["content"]["text"].clone();
            Ok(json!({"role": "assistant", "model": "echo-model",
                      "content": {"type": "text", "text": format!("echo: {}", asked.as_str().unwrap_or(""))}}))
        })
        .connect()
        .await
        .unwrap();
    let result = client
        .call_tool("ctx", json!({"op": "sample"}))
        .await
        .unwrap();
    let body: Value = serde_json::from_str(&result.text()).unwrap();
    assert_eq!(body["ok"]["model"], "echo-model", "{body}");
    assert_eq!(
        body["ok"]["content"]["text"], "echo: Summarize this",
        "{body}"
    );
    // Without a handler the capability is not declared: the server does not ask.
    let plain = Client::builder(&http.url)
        .versions(ProtocolVersion::SESSION_ERA)
        .connect()
        .await
        .unwrap();
    let refused = plain
        .call_tool("ctx", json!({"op": "sample"}))
        .await
        .unwrap();
    let body: Value = serde_json::from_str(&refused.text()).unwrap();
    assert!(body.get("error").is_some(), "{body}");
    client.close().await.unwrap();
    plain.close().await.unwrap();
}

/// Waits up to 10 s on the call's cancellation token, from a task of its own so that it
/// outlives the call's future: `fired` is notified when the token is cancelled, which in the
/// session era only `notifications/cancelled` does (a call dropped by the server is not
/// cancelled).
struct Watched {
    fired: std::sync::Arc<tokio::sync::Notify>,
}

impl PlainTool for Watched {
    fn name(&self) -> &str {
        "watched"
    }
    fn description(&self) -> &str {
        "Waits for its cancellation"
    }
    fn input_schema(&self) -> Map<String, Value> {
        json!({"type": "object"}).as_object().cloned().unwrap()
    }
    async fn run(&self, _arguments: Map<String, Value>, ctx: Context) -> CallResult {
        let token = ctx.cancellation().clone();
        let fired = self.fired.clone();
        tokio::spawn(async move {
            if tokio::time::timeout(Duration::from_secs(10), token.cancelled())
                .await
                .is_ok()
            {
                fired.notify_one();
            }
        });
        tokio::time::sleep(Duration::from_secs(10)).await;
        Ok(CallOutput::text("not cancelled"))
    }
}

#[tokio::test]
async fn a_call_timed_out_or_dropped_is_cancelled_over_http() {
    let fired = std::sync::Arc::new(tokio::sync::Notify::new());
    let server = Server::builder()
        .name("client-cancel")
        .plain_tool(Watched {
            fired: fired.clone(),
        })
        .build()
        .unwrap();
    let http = Http::serve(StreamableHttp::builder(server)).await;
    let client = Client::builder(&http.url)
        .versions(ProtocolVersion::SESSION_ERA)
        .timeout(Duration::from_millis(300))
        .connect()
        .await
        .unwrap();
    // Past the timeout.
    let err = client.call_tool("watched", json!({})).await.unwrap_err();
    assert!(err.is_timeout(), "{err:?}");
    tokio::time::timeout(Duration::from_secs(5), fired.notified())
        .await
        .expect("the server cancelled the timed-out call");
    // The call's future dropped by its caller.
    let dropped = tokio::time::timeout(
        Duration::from_millis(100),
        client.call_tool("watched", json!({})),
    )
    .await;
    assert!(dropped.is_err(), "the call answered: {dropped:?}");
    tokio::time::timeout(Duration::from_secs(5), fired.notified())
        .await
        .expect("the server cancelled the dropped call");
    client.close().await.unwrap();
}

#[tokio::test]
async fn log_messages_arrive_at_the_level_asked_in_both_eras() {
    let http = Http::serve(StreamableHttp::builder(ctx_fixture::server())).await;
    for versions in [&ProtocolVersion::ALL[..], &ProtocolVersion::SESSION_ERA[..]] {
        let client = Client::builder(&http.url)
            .versions(versions.iter().copied())
            .connect()
            .await
            .unwrap();
        let era = client.protocol_version();
        // At 2026-07-28 the level rides on each request; in a session, `logging/setLevel`.
        client.set_logging_level(LogLevel::Info).await.unwrap();
        client.call_tool("ctx", json!({"op": "log"})).await.unwrap();
        let levels: Vec<Value> = client
            .drain_notifications()
            .iter()
            .filter(|n| n.method() == "notifications/message")
            .map(|n| n.params().unwrap()["level"].clone())
            .collect();
        assert_eq!(levels, [json!("info"), json!("error")], "{era}");
        client.close().await.unwrap();
    }
}
