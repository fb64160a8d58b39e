//! `subscriptions/listen` (MCP 2026-07-28) over real HTTP on 127.0.0.1 port 0: the
//! acknowledgement and its honoured filter, tagging, filtering, list changes and resource
//! updates pushed to open streams, the stream limit and the slot a disconnect frees, refusals,
//! keep-alives, graceful closure, a lagging stream, request-scoped logging and progress, and
//! `Server::notify_tools_list_changed` on the session era's GET stream. Wire messages are
//! validated against the official 2026-07-28 schema (2025-11-25 for the session era).

#![allow(clippy::unwrap_used, missing_docs)]

mod http_harness;
mod mcp_schema;

use std::time::Duration;

use http_harness::{BOTH, Event, Http, Sse, borrowed, envelope, modern_headers, request};
use reqwest::StatusCode;
use serde_json::{Map, Value, json};
use tokio::time::{Instant, timeout};
use wymcp::Prompt;
use wymcp::Resource;
use wymcp::prompt::{GetPromptResult, PromptArguments, PromptError, PromptMessage};
use wymcp::protocol::LogLevel;
use wymcp::transport::http::StreamableHttp;
use wymcp::{CallOutput, CallResult, Content, Context, PlainTool, ProtocolVersion, Server};

const ID_KEY: &str = "io.modelcontextprotocol/subscriptionId";
/// The longest any single wait in these tests may take.
const WAIT: Duration = Duration::from_secs(5);

/// Logs at every level from debug to error and reports progress twice.
struct Chatty;

impl PlainTool for Chatty {
    fn name(&self) -> &str {
        "chatty"
    }
    fn description(&self) -> &str {
        "Logs at four levels and reports progress"
    }
    fn input_schema(&self) -> Map<String, Value> {
        Map::from_iter([("type".to_owned(), json!("object"))])
    }
    async fn run(&self, _arguments: Map<String, Value>, ctx: Context) -> CallResult {
        let mut logged = Vec::new();
        for level in [
            LogLevel::Debug,
            LogLevel::Info,
            LogLevel::Warning,
            LogLevel::Error,
        ] {
            if ctx.log(level, json!(level.as_str())) {
                logged.push(level.as_str());
            }
        }
        let progressed = ctx.progress(1.0, Some(2.0), None) && ctx.progress(2.0, Some(2.0), None);
        Ok(CallOutput::json(
            json!({"logged": logged, "progressed": progressed}),
        ))
    }
}

/// A prompt, so the server declares `prompts`.
struct Greeting;

impl Prompt for Greeting {
    fn name(&self) -> &str {
        "greeting"
    }
    async fn get(
        &self,
        _arguments: PromptArguments,
        _ctx: Context,
    ) -> Result<GetPromptResult, PromptError> {
        Ok(GetPromptResult::new(vec![PromptMessage::user(
            Content::text("hi"),
        )]))
    }
}

fn full_server() -> Server {
    Server::builder()
        .name("listen-test")
        .version("0.1.0")
        .list_changed(true)
        .plain_tool(Chatty)
        .resource(Resource::text("test://a", "a", "A"))
        .resource(Resource::text("test://b", "b", "B"))
        .prompt(Greeting)
        .build()
        .unwrap()
}

struct Harness {
    http: Http,
    server: Server,
}

http_harness::serves_http!(Harness);

async fn start_with(
    server: Server,
    http: impl FnOnce(StreamableHttp) -> StreamableHttp,
) -> Harness {
    let builder = http(StreamableHttp::builder(server.clone()));
    Harness {
        http: Http::serve(builder).await,
        server,
    }
}

async fn start() -> Harness {
    start_with(full_server(), |http| http).await
}

fn listen_request(id: Value, filter: Value) -> Value {
    request(id, "subscriptions/listen", json!({"notifications": filter}))
}

fn valid(definition: &str, value: &Value) {
    mcp_schema::assert_valid(ProtocolVersion::V2026_07_28, definition, value);
}

impl Harness {
    async fn post_accepting(&self, body: &Value, accept: &str) -> reqwest::Response {
        let headers = modern_headers(body);
        let mut headers = borrowed(&headers);
        headers.push(("accept", accept));
        let req = self.post_request(&headers, body.to_string());
        timeout(WAIT, req.send())
            .await
            .expect("the answer starts in time")
            .unwrap()
    }

    async fn post(&self, body: &Value) -> reqwest::Response {
        self.post_accepting(body, BOTH).await
    }

    /// Opens a listen stream; panics unless it is one.
    async fn listen(&self, id: Value, filter: Value) -> Sse {
        let resp = self.post(&listen_request(id, filter)).await;
        assert_eq!(resp.status(), StatusCode::OK);
        assert_eq!(resp.headers()["content-type"], "text/event-stream");
        assert_eq!(resp.headers()["x-accel-buffering"], "no");
        Sse::bounded(resp, WAIT)
    }

    /// Opens a listen stream and reads its acknowledgement.
    async fn listening(&self, id: Value, filter: Value) -> Sse {
        let mut sse = self.listen(id.clone(), filter).await;
        let ack = sse.message().await.expect("the acknowledgement");
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
        assert_eq!(ack["params"]["_meta"][ID_KEY], id);
        sse
    }

    async fn refusal(&self, body: &Value, accept: &str) -> (StatusCode, Value) {
        let resp = self.post_accepting(body, accept).await;
        let status = resp.status();
        (
            status,
            serde_json::from_str(&resp.text().await.unwrap()).unwrap(),
        )
    }
}

#[tokio::test]
async fn the_first_frame_acknowledges_the_honoured_filter_under_the_request_id() {
    let h = start().await;
    let filter = json!({
        "toolsListChanged": true,
        "promptsListChanged": true,
        "resourcesListChanged": false,
        "resourceSubscriptions": ["test://a", "test://nowhere", "test://a"],
        "someFutureKind": true
    });
    let mut sse = h.listen(json!("sub-1"), filter).await;
    let ack = sse.message().await.unwrap();
    valid("SubscriptionsAcknowledgedNotification", &ack);
    assert_eq!(
        ack,
        json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
               "params": {"_meta": {ID_KEY: "sub-1"}, "notifications": {
                   "toolsListChanged": true, "promptsListChanged": true,
                   "resourceSubscriptions": ["test://a"]}}})
    );

    // A server without prompts and without listChanged honours only resource updates.
    let bare = Server::builder()
        .resource(Resource::text("test://a", "a", "A"))
        .build()
        .unwrap();
    let h = start_with(bare, |http| http).await;
    let filter = json!({"toolsListChanged": true, "promptsListChanged": true,
                        "resourcesListChanged": true, "resourceSubscriptions": ["test://a"]});
    let mut sse = h.listen(json!(42), filter).await;
    let ack = sse.message().await.unwrap();
    valid("SubscriptionsAcknowledgedNotification", &ack);
    assert_eq!(
        ack["params"],
        json!({"_meta": {ID_KEY: 42}, "notifications": {"resourceSubscriptions": ["test://a"]}})
    );
}

#[tokio::test]
async fn list_changes_are_pushed_to_open_streams_tagged_with_the_subscription() {
    let h = start().await;
    let all = json!({"toolsListChanged": true, "promptsListChanged": true,
                     "resourcesListChanged": true});
    let mut one = h.listening(json!(1), all.clone()).await;
    let mut two = h.listening(json!("two"), all).await;
    assert!(h.server.notify_tools_list_changed());
    assert!(h.server.notify_prompts_list_changed());
    assert!(h.server.notify_resources_list_changed());
    for (sse, id) in [(&mut one, json!(1)), (&mut two, json!("two"))] {
        for (list, definition) in [
            ("tools", "ToolListChangedNotification"),
            ("prompts", "PromptListChangedNotification"),
            ("resources", "ResourceListChangedNotification"),
        ] {
            let message = sse.message().await.unwrap();
            valid(definition, &message);
            assert_eq!(
                message,
                json!({"jsonrpc": "2.0", "method": format!("notifications/{list}/list_changed"),
                       "params": {"_meta": {ID_KEY: id}}})
            );
        }
    }
}

#[tokio::test]
async fn a_stream_gets_only_the_kinds_and_uris_it_asked_for() {
    let h = start().await;
    let mut prompts = h
        .listening(json!(1), json!({"promptsListChanged": true}))
        .await;
    let mut resource = h
        .listening(json!(2), json!({"resourceSubscriptions": ["test://a"]}))
        .await;
    // Sent first, so a leak would arrive before the change each stream asked for.
    h.server.notify_tools_list_changed();
    h.server.notify_resources_list_changed();
    assert_eq!(h.server.notify_resource_updated("test://b").await, 1);
    h.server.notify_prompts_list_changed();
    assert_eq!(h.server.notify_resource_updated("test://a").await, 1);

    let message = prompts.message().await.unwrap();
    assert_eq!(message["method"], "notifications/prompts/list_changed");

    let message = resource.message().await.unwrap();
    valid("ResourceUpdatedNotification", &message);
    assert_eq!(
        message,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
               "params": {"uri": "test://a", "_meta": {ID_KEY: 2}}})
    );
}

#[tokio::test]
async fn the_number_of_open_streams_is_limited() {
    let h = start_with(full_server(), |http| http.max_listen_streams(2)).await;
    let filter = json!({"toolsListChanged": true});
    let _one = h.listening(json!(1), filter.clone()).await;
    let _two = h.listening(json!(2), filter.clone()).await;
    let (status, body) = h.refusal(&listen_request(json!(3), filter), BOTH).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    valid("JSONRPCErrorResponse", &body);
    assert_eq!(
        body,
        json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32600, "message": "Invalid Request",
               "data": {"error": "Too many listen streams: the limit of 2 open subscriptions/listen streams is reached. Close one or try again later."}}})
    );
}

#[tokio::test]
async fn a_client_going_away_frees_its_slot() {
    let h = start_with(full_server(), |http| {
        http.max_listen_streams(1)
            .keepalive(Duration::from_millis(20))
    })
    .await;
    let filter = json!({"toolsListChanged": true});
    let first = h.listening(json!(1), filter.clone()).await;
    let (status, _) = h
        .refusal(&listen_request(json!(2), filter.clone()), BOTH)
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    drop(first);
    // The server notices at its next write (a keep-alive at the latest).
    let deadline = Instant::now() + WAIT;
    loop {
        let resp = h.post(&listen_request(json!(3), filter.clone())).await;
        if resp.status() == StatusCode::OK {
            break;
        }
        assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(Instant::now() < deadline, "the slot was never freed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn listen_is_method_not_found_when_nothing_can_be_delivered() {
    let h = start_with(Server::builder().build().unwrap(), |http| http).await;
    let discover = request(json!(1), "server/discover", json!({}));
    let resp = h.post(&discover).await;
    let body: Value = serde_json::from_str(&resp.text().await.unwrap()).unwrap();
    let caps = &body["result"]["capabilities"];
    assert!(caps["tools"].get("listChanged").is_none(), "{caps}");
    assert!(caps.get("resources").is_none() && caps.get("prompts").is_none());
    let (status, body) = h
        .refusal(
            &listen_request(json!(9), json!({"toolsListChanged": true})),
            BOTH,
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    valid("JSONRPCErrorResponse", &body);
    assert_eq!(body["error"]["code"], -32601);
    assert_eq!(body["id"], 9);
}

#[tokio::test]
async fn listen_needs_sse_and_a_well_formed_filter() {
    let h = start().await;
    let (status, body) = h
        .refusal(
            &listen_request(json!(1), json!({"toolsListChanged": true})),
            "application/json",
        )
        .await;
    assert_eq!(status, StatusCode::NOT_ACCEPTABLE);
    assert_eq!(body["id"], 1);
    assert_eq!(body["error"]["code"], -32600);
    assert_eq!(
        body["error"]["data"]["error"],
        "Not Acceptable: subscriptions/listen is answered as a text/event-stream; the client must accept it"
    );
    for (filter, message) in [
        (
            None,
            "Invalid params: params.notifications must be an object (the notification filter)",
        ),
        (
            Some(json!({"toolsListChanged": "yes"})),
            "Invalid params: params.notifications.toolsListChanged must be a boolean",
        ),
        (
            Some(json!({"resourceSubscriptions": ["test://a", 3]})),
            "Invalid params: params.notifications.resourceSubscriptions must be an array of strings",
        ),
    ] {
        let params = filter.map_or_else(|| json!({}), |f| json!({"notifications": f}));
        let body = request(json!(2), "subscriptions/listen", params);
        let (status, answer) = h.refusal(&body, BOTH).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
        valid("JSONRPCErrorResponse", &answer);
        assert_eq!(answer["error"]["code"], -32602);
        assert_eq!(answer["error"]["message"], message);
        assert_eq!(answer["id"], 2);
    }
}

#[tokio::test]
async fn quiet_streams_carry_keep_alive_comments() {
    let h = start_with(full_server(), |http| {
        http.keepalive(Duration::from_millis(20))
    })
    .await;
    let mut sse = h
        .listening(json!(1), json!({"toolsListChanged": true}))
        .await;
    assert!(matches!(sse.event().await, Some(Event::Comment)));
    h.server.notify_tools_list_changed();
    assert_eq!(
        sse.message().await.unwrap()["method"],
        "notifications/tools/list_changed"
    );
}

#[tokio::test]
async fn a_shutdown_ends_each_stream_with_its_listen_response() {
    let mut h = start().await;
    let mut sse = h
        .listening(json!("s"), json!({"toolsListChanged": true}))
        .await;
    h.http.shut_down();
    let last = sse.message().await.expect("the graceful-closure response");
    valid("SubscriptionsListenResultResponse", &last);
    assert_eq!(last["id"], "s");
    assert_eq!(last["result"]["resultType"], "complete");
    assert_eq!(last["result"]["_meta"][ID_KEY], "s");
    assert!(sse.message().await.is_none(), "the stream ends after it");
}

#[tokio::test]
async fn a_lagging_stream_resends_every_kind_it_honours_and_lives_on() {
    let h = start().await;
    let mut sse = h
        .listening(
            json!(1),
            json!({"toolsListChanged": true, "resourceSubscriptions": ["test://a"]}),
        )
        .await;
    // This runtime has one thread: the stream cannot read while these are sent, so it
    // falls behind the hub's 256 buffered changes.
    for _ in 0..300 {
        h.server.notify_tools_list_changed();
    }
    h.server.notify_prompts_list_changed(); // not asked for: a marker that is never sent
    h.server.notify_resource_updated("test://a").await;
    let first = sse.message().await.unwrap();
    assert_eq!(first["method"], "notifications/tools/list_changed");
    let second = sse.message().await.unwrap();
    assert_eq!(
        second["params"],
        json!({"uri": "test://a", "_meta": {ID_KEY: 1}})
    );
    // Then what the hub kept: the last 256 changes, ending with the update of test://a.
    let mut kept = 0;
    loop {
        let message = sse.message().await.unwrap();
        kept += 1;
        if message["method"] == "notifications/resources/updated" {
            break;
        }
        assert_eq!(message["method"], "notifications/tools/list_changed");
    }
    assert_eq!(kept, 255, "256 kept, the prompts change not asked for");
    let discover = h
        .post(&request(json!(5), "server/discover", json!({})))
        .await;
    assert_eq!(discover.status(), StatusCode::OK);
}

#[tokio::test]
async fn logs_and_progress_stay_on_the_requests_own_stream_at_its_level() {
    let h = start().await;
    let mut listening = h
        .listening(
            json!("l"),
            json!({"toolsListChanged": true, "promptsListChanged": true,
                   "resourcesListChanged": true, "resourceSubscriptions": ["test://a"]}),
        )
        .await;
    let call = |meta: Value| {
        request(
            json!(3),
            "tools/call",
            json!({"name": "chatty", "arguments": {}, "_meta": meta}),
        )
    };
    // No logLevel, no progressToken: nothing is sent, the answer is plain JSON.
    let resp = h.post(&call(envelope())).await;
    assert_eq!(resp.headers()["content-type"], "application/json");
    let body: Value = serde_json::from_str(&resp.text().await.unwrap()).unwrap();
    let result: Value =
        serde_json::from_str(body["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(result, json!({"logged": [], "progressed": false}));

    // logLevel warning and a token: warning and error, then progress, then the response.
    let mut meta = envelope();
    meta["io.modelcontextprotocol/logLevel"] = json!("warning");
    meta["progressToken"] = json!("p");
    let resp = h.post(&call(meta)).await;
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let mut sse = Sse::bounded(resp, WAIT);
    let mut messages = Vec::new();
    while let Some(message) = sse.message().await {
        messages.push(message);
    }
    assert_eq!(messages.len(), 5, "{messages:?}");
    for (message, level) in messages.iter().zip(["warning", "error"]) {
        valid("LoggingMessageNotification", message);
        assert_eq!(message["params"]["level"], level);
    }
    for (message, progress) in messages[2..4].iter().zip([1.0, 2.0]) {
        valid("ProgressNotification", message);
        assert_eq!(message["params"]["progressToken"], "p");
        assert_eq!(message["params"]["progress"], progress);
    }
    valid("JSONRPCResultResponse", &messages[4]);
    assert_eq!(messages[4]["id"], 3);

    // None of it reached the listen stream: the next thing there is the change sent now.
    h.server.notify_tools_list_changed();
    let next = listening.message().await.unwrap();
    assert_eq!(next["method"], "notifications/tools/list_changed");
}

#[tokio::test]
async fn session_get_streams_get_server_wide_tool_list_changes_too() {
    let h = start().await;
    let sid = h.open_session(json!({})).await;
    let get = h
        .get_stream(&sid, &[("mcp-protocol-version", "2025-11-25")])
        .await;
    let mut stream = Sse::bounded(get, WAIT);
    // The priming event (empty data) says the stream is attached.
    assert!(matches!(stream.event().await, Some(Event::Comment)));
    let mut listening = h
        .listening(json!(1), json!({"toolsListChanged": true}))
        .await;

    assert!(h.server.notify_tools_list_changed());
    let message = stream.message().await.unwrap();
    mcp_schema::assert_valid(
        ProtocolVersion::V2025_11_25,
        "ToolListChangedNotification",
        &message,
    );
    assert_eq!(message["method"], "notifications/tools/list_changed");
    let message = listening.message().await.unwrap();
    assert_eq!(message["method"], "notifications/tools/list_changed");
    assert_eq!(message["params"]["_meta"][ID_KEY], 1);
}
