//! The tool context over Streamable HTTP (127.0.0.1, port 0): logging, progress, sampling and
//! elicitation round trips and their failure vocabulary (behaviour-spec §7.5, CTX-*), and
//! runtime tools with the dirty tool list (HTTP-40, HTTP-41, LIST-8, HELP-3, HELP-16, DEF-29).

#![allow(clippy::unwrap_used, missing_docs)]

mod ctx_fixture;
mod http_harness;
mod mcp_schema;

use futures_util::future::BoxFuture;
use http_harness::{BOTH, Http, Sse};
use reqwest::StatusCode;
use serde_json::Map;
use serde_json::{Value, json};
use wymcp::session::{ClientRequestError, Sampling};
use wymcp::transport::http::{SessionHooks, SessionStart, StreamableHttp};
use wymcp::{Context, ProtocolVersion};

use ctx_fixture::{FakeHelp, Ghost, Named};

struct Harness {
    http: Http,
}

http_harness::serves_http!(Harness);

const JSON_ONLY: &str = "application/json";

async fn start() -> Harness {
    start_with(|b| b).await
}

async fn start_with(configure: impl FnOnce(StreamableHttp) -> StreamableHttp) -> Harness {
    let builder = configure(StreamableHttp::builder(ctx_fixture::server()));
    Harness {
        http: Http::serve(builder).await,
    }
}

impl Harness {
    async fn post(&self, session: Option<&str>, accept: &str, body: &Value) -> reqwest::Response {
        let mut headers = vec![("accept", accept)];
        headers.extend(session.map(|s| ("mcp-session-id", s)));
        self.post_with(&headers, body.to_string()).await
    }

    /// A ready session at `version` declaring `capabilities`.
    async fn ready(&self, version: &str, capabilities: Value) -> String {
        let (session, answer) = self
            .initialize_with(
                &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                    "protocolVersion": version,
                    "capabilities": capabilities,
                    "clientInfo": {"name": "ctx-test", "version": "0"}
                }}),
            )
            .await;
        let body = answer.json();
        assert_eq!(body["result"]["capabilities"]["tools"]["listChanged"], true);
        self.initialized(&session, &[]).await;
        session
    }

    async fn rpc(&self, session: &str, body: Value) -> Value {
        let resp = self.post(Some(session), JSON_ONLY, &body).await;
        assert_eq!(resp.status(), StatusCode::OK);
        resp.json().await.unwrap()
    }

    async fn tool_names(&self, session: &str) -> Vec<String> {
        let body = self
            .rpc(
                session,
                json!({"jsonrpc": "2.0", "id": "l", "method": "tools/list"}),
            )
            .await;
        body["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    }

    /// A `ctx` call answered as SSE.
    async fn call_sse(&self, session: &str, id: i64, arguments: Value, meta: Option<Value>) -> Sse {
        let mut params = json!({"name": "ctx", "arguments": arguments});
        if let Some(meta) = meta {
            params["_meta"] = meta;
        }
        let resp = self
            .post(
                Some(session),
                BOTH,
                &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}),
            )
            .await;
        assert_eq!(resp.status(), StatusCode::OK);
        Sse::new(resp)
    }

    /// A `ctx` call answered as plain JSON: the tool's JSON body.
    async fn call_json(&self, session: &str, arguments: Value) -> Value {
        let body = self
            .rpc(
                session,
                json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "ctx", "arguments": arguments}}),
            )
            .await;
        tool_body(&body)
    }

    async fn answer(&self, session: &str, message: Value) {
        let resp = self.post(Some(session), BOTH, &message).await;
        assert_eq!(resp.status(), StatusCode::ACCEPTED);
        assert!(resp.text().await.unwrap().is_empty());
    }

    async fn get_stream(&self, session: &str) -> Sse {
        let resp = self
            .client
            .get(&self.url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", session)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        Sse::new(resp)
    }

    /// Pushes a sentinel on the GET stream and answers every message read before it.
    async fn drain_get(&self, session: &str, sse: &mut Sse) -> Vec<Value> {
        assert!(
            self.service
                .push(
                    session,
                    &json!({"jsonrpc": "2.0", "method": "test/sentinel"})
                )
                .await
                .unwrap()
        );
        sse.until("test/sentinel").await.1
    }
}

/// The JSON a tool answered (`content[0].text` decoded).
fn tool_body(response: &Value) -> Value {
    let text = response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text content: {response}"));
    serde_json::from_str(text).unwrap()
}

fn valid(message: &Value, definition: &str) {
    mcp_schema::assert_valid(ProtocolVersion::V2025_11_25, definition, message);
}

// ---------------------------------------------------------------------------------------------
// Logging and progress

/// CTX-4: log messages carry level, data and logger; the session's level filters them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctx_4_log_messages_are_filtered_by_the_session_level() {
    let h = start().await;
    let session = h.ready("2025-11-25", json!({})).await;
    let mut sse = h.call_sse(&session, 1, json!({"op": "log"}), None).await;
    let mut messages = Vec::new();
    while let Some(message) = sse.message().await {
        messages.push(message);
    }
    assert_eq!(messages.len(), 4, "{messages:?}");
    assert_eq!(
        messages[0],
        json!({"jsonrpc": "2.0", "method": "notifications/message",
               "params": {"level": "info", "data": "Processing started"}})
    );
    assert_eq!(messages[1]["params"]["logger"], "database");
    assert_eq!(messages[1]["params"]["level"], "error");
    // No level set: debug passes.
    assert_eq!(messages[2]["params"]["level"], "debug");
    for message in &messages[..3] {
        valid(message, "LoggingMessageNotification");
    }
    assert_eq!(
        tool_body(&messages[3]),
        json!({"info": true, "db": true, "debug": true})
    );

    let set = h
        .rpc(
            &session,
            json!({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel",
                   "params": {"level": "warning"}}),
        )
        .await;
    assert_eq!(set["result"], json!({}));
    let mut sse = h.call_sse(&session, 3, json!({"op": "log"}), None).await;
    let first = sse.message().await.unwrap();
    assert_eq!(first["params"]["level"], "error");
    let last = sse.message().await.unwrap();
    assert_eq!(
        tool_body(&last),
        json!({"info": false, "db": true, "debug": false})
    );
    assert!(sse.message().await.is_none());
}

/// CTX-2, CTX-3: progress on the request's token, totals and messages only when given,
/// strictly increasing; nothing without a token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctx_3_progress_follows_the_token_and_increases() {
    let h = start().await;
    let session = h.ready("2025-11-25", json!({})).await;
    let mut sse = h
        .call_sse(
            &session,
            1,
            json!({"op": "progress"}),
            Some(json!({"progressToken": "tok-1"})),
        )
        .await;
    let first = sse.message().await.unwrap();
    assert_eq!(first["method"], "notifications/progress");
    assert_eq!(
        first["params"],
        json!({"progressToken": "tok-1", "progress": 50.0, "total": 100.0,
               "message": "Halfway there"})
    );
    valid(&first, "ProgressNotification");
    let second = sse.message().await.unwrap();
    assert_eq!(
        second["params"],
        json!({"progressToken": "tok-1", "progress": 60.0})
    );
    let last = sse.message().await.unwrap();
    assert_eq!(
        tool_body(&last),
        json!({"first": true, "not_increasing": false, "second": true})
    );

    // Without a token nothing is sent: the answer is plain JSON.
    let resp = h
        .post(
            Some(&session),
            BOTH,
            &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                   "params": {"name": "ctx", "arguments": {"op": "progress"}}}),
        )
        .await;
    assert!(
        resp.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/json")
    );
    let body: Value = resp.json().await.unwrap();
    assert_eq!(
        tool_body(&body),
        json!({"first": false, "not_increasing": false, "second": false})
    );
}

/// CTX-2, CTX-3, CTX-4, CTX-6: outside a session everything is quietly nothing, and round
/// trips answer `no_session`.
#[tokio::test]
async fn ctx_without_a_session_sends_nothing_and_round_trips_answer_no_session() {
    let ctx = Context::builder()
        .progress_token(json!("abc123"))
        .client_capabilities(json!({"sampling": {}}))
        .build();
    assert_eq!(ctx.progress_token(), Some(&json!("abc123")));
    assert_eq!(Context::default().progress_token(), None);
    assert!(!ctx.progress(1.0, None, None));
    assert!(!ctx.log(wymcp::protocol::LogLevel::Error, json!("x")));
    assert_eq!(
        ctx.sample(Sampling::prompt("hi")).await,
        Err(ClientRequestError::NoSession)
    );
}

/// Progress stops once the call is complete.
#[tokio::test]
async fn progress_is_not_sent_after_completion() {
    let sent = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = sent.clone();
    let ctx = Context::builder()
        .progress_token(json!("t"))
        .notifier(wymcp::session::Notifier::new(move |m| {
            seen.lock().unwrap().push(m)
        }))
        .build();
    assert!(ctx.progress(1.0, None, None));
    assert!(!ctx.progress(1.0, None, None), "not increasing");
    assert!(!ctx.progress(f64::NAN, None, None));
    ctx.complete();
    assert!(!ctx.progress(2.0, None, None), "after completion");
    assert_eq!(sent.lock().unwrap().len(), 1);
}

/// CTX-1: the content builders.
#[test]
fn ctx_1_content_builders() {
    use wymcp::Content;
    let value = |c: Content| serde_json::to_value(c).unwrap();
    assert_eq!(
        value(Content::text("hello")),
        json!({"type": "text", "text": "hello"})
    );
    assert_eq!(
        value(Content::image("b", "image/png")),
        json!({"type": "image", "data": "b", "mimeType": "image/png"})
    );
    assert_eq!(
        value(Content::audio("b", "audio/wav")),
        json!({"type": "audio", "data": "b", "mimeType": "audio/wav"})
    );
    let json_item = Content::json(&json!({"key": "value"}));
    assert_eq!(
        serde_json::from_str::<Value>(json_item.as_text().unwrap()).unwrap(),
        json!({"key": "value"})
    );
    assert_eq!(
        value(Content::embedded_text("file:///a.txt", "text/plain", "hi")),
        json!({"type": "resource",
               "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "hi"}})
    );
    assert_eq!(
        value(Content::resource_link("file:///a.txt", "a")),
        json!({"type": "resource_link", "uri": "file:///a.txt", "name": "a"})
    );
}

// ---------------------------------------------------------------------------------------------
// Sampling and elicitation

/// CTX-5: sampling/createMessage on the POST's stream; the client's answer is returned verbatim.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctx_5_sampling_round_trip_on_the_post_stream() {
    let h = start().await;
    let session = h.ready("2025-11-25", json!({"sampling": {}})).await;
    let mut sse = h.call_sse(&session, 1, json!({"op": "sample"}), None).await;
    let request = sse.message().await.unwrap();
    assert_eq!(request["method"], "sampling/createMessage");
    assert_eq!(
        request["params"]["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "Summarize this"}}])
    );
    assert_eq!(request["params"]["maxTokens"], 500);
    let id = request["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("srv-"), "{id}");
    assert!(id.contains(wymcp::backend::node_id()), "{id}");
    valid(&request, "CreateMessageRequest");
    let result = json!({"role": "assistant", "content": {"type": "text", "text": "Short."},
                        "model": "test-model", "stopReason": "endTurn"});
    h.answer(
        &session,
        json!({"jsonrpc": "2.0", "id": id, "result": result}),
    )
    .await;
    let last = sse.message().await.unwrap();
    assert_eq!(last["id"], 1);
    assert_eq!(tool_body(&last), json!({"ok": result}));
    // Answering again (unknown id now) is accepted and ignored.
    h.answer(&session, json!({"jsonrpc": "2.0", "id": id, "result": {}}))
        .await;
}

/// CTX-6: without the client's capability, nothing is pushed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctx_6_sampling_without_the_capability_is_not_supported() {
    let h = start().await;
    let session = h.ready("2025-11-25", json!({"elicitation": {}})).await;
    let body = h.call_json(&session, json!({"op": "sample"})).await;
    assert_eq!(body, json!({"error": "not_supported"}));
}

/// CTX-7: elicitation/create carries message and requestedSchema; the answer comes back
/// verbatim, a client error as the error object.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctx_7_elicitation_round_trip_and_client_errors() {
    let h = start().await;
    let session = h.ready("2025-06-18", json!({"elicitation": {}})).await;
    let mut sse = h.call_sse(&session, 1, json!({"op": "elicit"}), None).await;
    let request = sse.message().await.unwrap();
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["message"], "Which branch?");
    assert_eq!(
        request["params"]["requestedSchema"]["properties"]["branch"],
        json!({"type": "string"})
    );
    assert!(request["params"].get("mode").is_none());
    let answer = json!({"action": "accept", "content": {"branch": "main"}});
    h.answer(
        &session,
        json!({"jsonrpc": "2.0", "id": request["id"], "result": answer}),
    )
    .await;
    assert_eq!(
        tool_body(&sse.message().await.unwrap()),
        json!({"ok": answer})
    );

    let mut sse = h.call_sse(&session, 2, json!({"op": "elicit"}), None).await;
    let request = sse.message().await.unwrap();
    let error = json!({"code": -32603, "message": "user went away"});
    h.answer(
        &session,
        json!({"jsonrpc": "2.0", "id": request["id"], "error": error}),
    )
    .await;
    assert_eq!(
        tool_body(&sse.message().await.unwrap()),
        json!({"error": {"client_error": error}})
    );
}

/// CTX-8: elicitation needs 2025-06-18 or later; URL mode needs 2025-11-25 and
/// `elicitation.url`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctx_8_elicitation_is_gated_by_revision_and_mode() {
    let h = start().await;
    let old = h.ready("2025-03-26", json!({"elicitation": {}})).await;
    assert_eq!(
        h.call_json(&old, json!({"op": "elicit"})).await,
        json!({"error": "not_supported"})
    );
    let form_only = h.ready("2025-11-25", json!({"elicitation": {}})).await;
    assert_eq!(
        h.call_json(&form_only, json!({"op": "elicit_url"})).await,
        json!({"error": "not_supported"})
    );
    let url = h
        .ready(
            "2025-11-25",
            json!({"elicitation": {"form": {}, "url": {}}}),
        )
        .await;
    let mut sse = h.call_sse(&url, 1, json!({"op": "elicit_url"}), None).await;
    let request = sse.message().await.unwrap();
    assert_eq!(request["params"]["mode"], "url");
    assert_eq!(request["params"]["url"], "https://example.com/login");
    valid(&request, "ElicitRequest");
    h.answer(
        &url,
        json!({"jsonrpc": "2.0", "id": request["id"], "result": {"action": "accept"}}),
    )
    .await;
    assert_eq!(
        tool_body(&sse.message().await.unwrap()),
        json!({"ok": {"action": "accept"}})
    );
}

/// CTX-9: a JSON-only POST with no GET stream has nowhere to send the request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctx_9_round_trip_without_a_stream_is_no_stream() {
    let h = start().await;
    let session = h.ready("2025-11-25", json!({"sampling": {}})).await;
    assert_eq!(
        h.call_json(&session, json!({"op": "sample"})).await,
        json!({"error": "no_stream"})
    );
}

/// A JSON-only POST sends its server request on the session's GET stream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn round_trip_of_a_json_only_post_travels_on_the_get_stream() {
    let h = start().await;
    let session = h.ready("2025-11-25", json!({"sampling": {}})).await;
    let mut get = h.get_stream(&session).await;
    let call = {
        let url = h.url.clone();
        let client = h.client.clone();
        let session = session.clone();
        tokio::spawn(async move {
            client
                .post(url)
                .header("content-type", "application/json")
                .header("accept", JSON_ONLY)
                .header("mcp-session-id", session)
                .body(
                    json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                           "params": {"name": "ctx", "arguments": {"op": "sample"}}})
                    .to_string(),
                )
                .send()
                .await
                .unwrap()
                .json::<Value>()
                .await
                .unwrap()
        })
    };
    let (request, _) = get.until("sampling/createMessage").await;
    assert!(request["id"].as_str().unwrap().contains(".get."));
    h.answer(
        &session,
        json!({"jsonrpc": "2.0", "id": request["id"], "result": {"role": "assistant",
               "content": {"type": "text", "text": "ok"}, "model": "m"}}),
    )
    .await;
    let body = call.await.unwrap();
    assert_eq!(tool_body(&body)["ok"]["model"], "m");
}

/// CTX-9: no answer within the timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctx_9_round_trip_times_out() {
    let h = start().await;
    let session = h.ready("2025-11-25", json!({"sampling": {}})).await;
    let mut sse = h
        .call_sse(&session, 1, json!({"op": "sample", "timeout_ms": 30}), None)
        .await;
    let request = sse.message().await.unwrap();
    assert_eq!(request["method"], "sampling/createMessage");
    assert_eq!(
        tool_body(&sse.message().await.unwrap()),
        json!({"error": "timeout"})
    );
}

/// CTX-10: assigns set upstream (here by the session hook) reach the tool; framework-internal
/// keys do not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctx_10_upstream_assigns_reach_the_tool_without_internal_keys() {
    struct Hooks;
    impl SessionHooks for Hooks {
        fn on_start<'a>(
            &'a self,
            _start: SessionStart<'a>,
        ) -> BoxFuture<'a, Result<Map<String, Value>, String>> {
            Box::pin(async {
                let mut assigns = Map::new();
                assigns.insert("current_scope".into(), json!({"team": 1}));
                assigns.insert("wymcp_internal_flag".into(), json!(true));
                assigns.insert("wymcp".into(), json!({}));
                Ok(assigns)
            })
        }
    }
    let h = start_with(|b| b.session_hooks(Hooks)).await;
    let session = h.ready("2025-11-25", json!({})).await;
    let assigns = h.call_json(&session, json!({"op": "assigns"})).await;
    assert_eq!(assigns, json!({"current_scope": {"team": 1}}));
}

// ---------------------------------------------------------------------------------------------
// Runtime tools

/// DEF-29: a bad runtime tool errors in the caller; the session's list is unchanged. The
/// reserved name is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn def_29_a_bad_runtime_tool_errors_in_the_caller() {
    let h = start().await;
    let session = h.ready("2025-11-25", json!({})).await;
    let handle = h.service.session(&session).await.unwrap().unwrap();
    let err = handle.register_tool(Ghost).unwrap_err();
    assert_eq!(err.tool(), Some("ghost"));
    assert!(err.to_string().contains("ghost"), "{err}");
    let err = handle.register_tool(FakeHelp).unwrap_err();
    assert!(
        err.to_string().ends_with("cannot be replaced at runtime."),
        "{err}"
    );
    assert!(!handle.is_tool_list_dirty());
    assert_eq!(h.tool_names(&session).await, ["ctx", "A", "help"]);
    assert!(
        h.service
            .session("no-such-session")
            .await
            .unwrap()
            .is_none()
    );
}

/// LIST-8: runtime tools come first, most recent first; help stays last.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_8_runtime_tools_come_first_newest_first() {
    let h = start().await;
    let session = h.ready("2025-11-25", json!({})).await;
    let handle = h.service.session(&session).await.unwrap().unwrap();
    handle
        .register_tool(Named("runtime_tool", "A runtime tool"))
        .unwrap();
    assert_eq!(
        h.tool_names(&session).await,
        ["runtime_tool", "ctx", "A", "help"]
    );
    handle.register_tool(Named("other", "Another")).unwrap();
    assert_eq!(
        h.tool_names(&session).await,
        ["other", "runtime_tool", "ctx", "A", "help"]
    );
    // Other sessions do not see them.
    let other = h.ready("2025-11-25", json!({})).await;
    assert_eq!(h.tool_names(&other).await, ["ctx", "A", "help"]);
    // A runtime tool is callable.
    let body = h
        .rpc(
            &session,
            json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                   "params": {"name": "other", "arguments": {"action": "run"}}}),
        )
        .await;
    assert_eq!(tool_body(&body)["ran"], "other");
}

/// HELP-3, HELP-16: a tool registering a tool mid-session is seen by help at once; help and
/// tools/call never clear the dirty flag, tools/list does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn help_3_and_help_16_help_reads_the_session_list_without_clearing() {
    let h = start().await;
    let session = h.ready("2025-11-25", json!({})).await;
    let body = h.call_json(&session, json!({"op": "register"})).await;
    assert_eq!(body["tools"], json!(["widgets", "ctx", "A", "help"]));
    assert_eq!(body["dirty"], true);
    let help = h
        .rpc(
            &session,
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                   "params": {"name": "help", "arguments": {}}}),
        )
        .await;
    let index: Vec<Value> = tool_body(&help)["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tool"].clone())
        .collect();
    assert_eq!(index, ["widgets", "ctx", "A", "help"]);
    let handle = h.service.session(&session).await.unwrap().unwrap();
    assert!(handle.is_tool_list_dirty(), "help does not clear the flag");
    let tool = h
        .rpc(
            &session,
            json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                   "params": {"name": "help", "arguments": {"tool": "widgets"}}}),
        )
        .await;
    assert_eq!(
        tool_body(&tool)["actions"]["create"]["required"],
        json!(["name"])
    );
    assert!(handle.is_tool_list_dirty());
    h.tool_names(&session).await;
    assert!(!handle.is_tool_list_dirty(), "tools/list clears the flag");
}

/// HTTP-40: list_changed on the clean→dirty edge only, and only when the served set changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_40_list_changed_on_the_clean_to_dirty_edge_only() {
    let h = start().await;
    let session = h.ready("2025-11-25", json!({})).await;
    let handle = h.service.session(&session).await.unwrap().unwrap();
    let mut get = h.get_stream(&session).await;
    let changed = |messages: &[Value]| {
        messages
            .iter()
            .filter(|m| m["method"] == "notifications/tools/list_changed")
            .count()
    };

    handle.register_tool(Named("x", "X")).unwrap();
    let seen = h.drain_get(&session, &mut get).await;
    assert_eq!(changed(&seen), 1);
    valid(&seen[0], "ToolListChangedNotification");
    handle.register_tool(Named("y", "Y")).unwrap();
    assert_eq!(changed(&h.drain_get(&session, &mut get).await), 0);

    h.tool_names(&session).await;
    assert!(handle.unregister_tool("y"));
    assert_eq!(changed(&h.drain_get(&session, &mut get).await), 1);

    h.tool_names(&session).await;
    assert!(!handle.unregister_tool("never_registered"));
    assert!(!handle.is_tool_list_dirty());
    // The same tool again: nothing changes.
    handle.register_tool(Named("x", "X")).unwrap();
    assert!(!handle.is_tool_list_dirty());
    // A tool served identically to the configured one: no change, but it is now a runtime
    // tool (listed first).
    handle
        .register_tool(Named("A", "Configured tool A"))
        .unwrap();
    assert!(!handle.is_tool_list_dirty());
    assert_eq!(handle.tool_names(), ["A", "x", "ctx", "help"]);
    assert_eq!(changed(&h.drain_get(&session, &mut get).await), 0);
    // A different tool under the configured name shadows it.
    handle.register_tool(Named("A", "A different A")).unwrap();
    assert_eq!(changed(&h.drain_get(&session, &mut get).await), 1);
    let list = h
        .rpc(
            &session,
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        )
        .await;
    let a: Vec<&Value> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["name"] == "A")
        .collect();
    assert_eq!(a.len(), 1);
    assert_eq!(a[0]["description"], "A different A");
}

/// HTTP-41: registering with no stream marks the list dirty; a stream attaching while dirty
/// hears about it (each attach), and only tools/list clears the flag.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_41_dirty_without_a_stream_and_resent_on_attach() {
    let h = start().await;
    let session = h.ready("2025-11-25", json!({})).await;
    let handle = h.service.session(&session).await.unwrap().unwrap();
    handle
        .register_plain_tool(ctx_fixture::CtxToolAlias)
        .unwrap();
    assert!(handle.is_tool_list_dirty());
    let mut first = h.get_stream(&session).await;
    assert_eq!(
        first.message().await.unwrap()["method"],
        "notifications/tools/list_changed"
    );
    let mut second = h.get_stream(&session).await;
    assert_eq!(
        second.message().await.unwrap()["method"],
        "notifications/tools/list_changed"
    );
    assert!(handle.is_tool_list_dirty());
    h.tool_names(&session).await;
    assert!(!handle.is_tool_list_dirty());
    let mut third = h.get_stream(&session).await;
    assert!(h.drain_get(&session, &mut third).await.is_empty());
}
