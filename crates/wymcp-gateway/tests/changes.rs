//! An upstream whose tools change while the gateway serves it (`fixtures/upstream.py` in its
//! `changing` mode): its `notifications/tools/list_changed` makes the gateway re-list its
//! tools, serve the new ones and tell the downstream clients; a call to a tool it no longer
//! lists is refused without a request reaching it. A downstream `resources/subscribe` is
//! forwarded upstream, and the upstream's `notifications/resources/updated` reaches the
//! subscribed session. A wymcp upstream reached at 2026-07-28 tells its changes on the
//! `subscriptions/listen` stream the gateway opens to it: a tool it adds is served, and its
//! resource updates reach a downstream session subscribed and a downstream listen stream.

#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::broadcast;
use wymcp::client::{Client, Notification, Subscriptions};
use wymcp::live::{LiveTools, ToolChange};
use wymcp::resource::ServerNotification;
use wymcp::testing::{TestClient, assert_gate_error, assert_ok, assert_tool_error};
use wymcp::transport::http::{HttpServer, StreamableHttp};
use wymcp::{CallOutput, CallResult, Context, PlainTool, ProtocolVersion, Resource, Server};
use wymcp_gateway::{Expose, Gateway, GatewayConfig, UpstreamConfig};

use support::{call_action, received, record};

fn fixture(python: &str, record: &Path) -> UpstreamConfig {
    UpstreamConfig::stdio("fx", python).args([
        support::fixture("upstream.py"),
        "changing".to_owned(),
        record.display().to_string(),
    ])
}

async fn serve(upstream: UpstreamConfig) -> Server {
    let gateway = Gateway::start(GatewayConfig::new().upstream(upstream)).await;
    assert_eq!(gateway.notices(), []);
    gateway
        .register(Server::builder().name("gateway-test"))
        .build()
        .unwrap()
}

/// The next notification of `method` the server sends its sessions (within 10 s).
async fn next(
    rx: &mut broadcast::Receiver<ServerNotification>,
    method: &str,
) -> ServerNotification {
    let wait = async {
        loop {
            let sent = rx.recv().await.unwrap();
            if sent.method() == method {
                return sent;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), wait)
        .await
        .unwrap_or_else(|_| panic!("no {method} within 10 s"))
}

fn tool_names(client: &TestClient) -> Vec<String> {
    let tools = client.list_tools(ProtocolVersion::V2025_11_25);
    tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn actions_follow_the_upstreams_list_changed() {
    let Some(python) = support::python() else {
        return;
    };
    let record = record("changes-actions");
    let server = serve(fixture(python, &record)).await;
    let mut sessions = server.notifications();
    let client = TestClient::new(server.clone());
    let before = client.list_tools(ProtocolVersion::V2025_11_25);
    assert!(
        before["tools"][0]["description"]
            .as_str()
            .unwrap()
            .contains("actions: work.")
    );

    let swap = call_action(&client, "fx", "work", json!({"n": 1, "label": "swap"})).await;
    assert_ok(&swap);
    next(&mut sessions, "notifications/tools/list_changed").await;

    let after = client.list_tools(ProtocolVersion::V2025_11_25);
    let description = after["tools"][0]["description"].as_str().unwrap();
    assert!(description.contains("actions: fresh."), "{description}");
    let fresh = call_action(&client, "fx", "fresh", json!({"word": "hi"})).await;
    assert_ok(&fresh);
    let reply: Value = serde_json::from_str(&support::text(&fresh)).unwrap();
    assert_eq!(reply["content"][0]["text"], "fresh hi");
    assert_eq!(received(&record, "tools/call"), 2);

    // `work` is gone: the gates refuse it, and the upstream sees nothing.
    let gone = call_action(&client, "fx", "work", json!({"n": 2})).await;
    assert_gate_error(&gone, "unknown_action");
    let wrong = call_action(&client, "fx", "fresh", json!({"word": 3})).await;
    assert_gate_error(&wrong, "invalid_values");
    assert_eq!(received(&record, "tools/call"), 2);
    // Listed twice: at start and after the change.
    assert_eq!(received(&record, "tools/list"), 2);
}

#[tokio::test]
async fn tools_follow_the_upstreams_list_changed() {
    let Some(python) = support::python() else {
        return;
    };
    let record = record("changes-tools");
    let server = serve(fixture(python, &record).expose(Expose::Tools)).await;
    let mut sessions = server.notifications();
    let client = TestClient::new(server.clone());
    assert_eq!(tool_names(&client), ["fx_work", "help"]);

    let args = json!({"n": 1, "label": "swap"});
    let swap = client.call_tool("fx_work", args).await.unwrap();
    assert_ok(&swap);
    next(&mut sessions, "notifications/tools/list_changed").await;

    assert_eq!(tool_names(&client), ["fx_fresh", "help"]);
    let fresh = client
        .call_tool("fx_fresh", json!({"word": "hi"}))
        .await
        .unwrap();
    assert_eq!(support::text(&fresh), "fresh hi");
    let gone = client
        .call_tool("fx_work", json!({"n": 2}))
        .await
        .unwrap_err();
    assert_eq!(gone.code(), -32602);
    assert_eq!(received(&record, "tools/call"), 2);
}

#[tokio::test]
async fn a_subscribe_is_forwarded_and_the_upstreams_update_relayed() {
    let Some(python) = support::python() else {
        return;
    };
    let record = record("changes-resources");
    let server = serve(fixture(python, &record)).await;
    let mut sessions = server.notifications();
    let client = TestClient::new(server.clone());
    let note = Some(json!({"uri": "fixture://note"}));
    client
        .request("resources/subscribe", note.clone())
        .await
        .unwrap();
    assert_eq!(received(&record, "resources/subscribe"), 1);

    let touch = call_action(&client, "fx", "work", json!({"n": 1, "label": "touch"})).await;
    assert_ok(&touch);
    let updated = next(&mut sessions, "notifications/resources/updated").await;
    assert_eq!(updated.message["params"]["uri"], "fixture://note");
    assert_eq!(updated.session_id.as_deref(), client.session_id());

    client.request("resources/unsubscribe", note).await.unwrap();
    assert_eq!(received(&record, "resources/unsubscribe"), 1);
}

/// The methods of the notifications the server sends its sessions up to the first of
/// `method` (within 10 s), that one included.
async fn sent_until(rx: &mut broadcast::Receiver<ServerNotification>, method: &str) -> Vec<String> {
    let mut sent = Vec::new();
    let wait = async {
        loop {
            let note = rx.recv().await.unwrap();
            sent.push(note.method().to_owned());
            if note.method() == method {
                return;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), wait)
        .await
        .unwrap_or_else(|_| panic!("no {method} within 10 s"));
    sent
}

#[tokio::test]
async fn prompts_and_resources_follow_the_upstreams_list_changed() {
    let Some(python) = support::python() else {
        return;
    };
    let record = record("changes-lists");
    let server = serve(fixture(python, &record)).await;
    let mut sessions = server.notifications();
    let client = TestClient::new(server.clone());
    assert_eq!(server.prompt_names(), ["greet"]);
    assert_eq!(server.resource_uris(), ["fixture://note"]);
    assert!(server.resource_template_uris().is_empty());

    // Prompts: re-listed, swapped in, told; the one gone is refused without a request.
    let reprompt = call_action(&client, "fx", "work", json!({"n": 1, "label": "reprompt"})).await;
    assert_ok(&reprompt);
    next(&mut sessions, "notifications/prompts/list_changed").await;
    assert_eq!(server.prompt_names(), ["farewell"]);
    let listed = client.request("prompts/list", None).await.unwrap();
    assert_eq!(listed["prompts"][0]["name"], "farewell");
    let got = client
        .request(
            "prompts/get",
            Some(json!({"name": "farewell", "arguments": {"who": "Ann"}})),
        )
        .await
        .unwrap();
    assert_eq!(got["messages"][0]["content"]["text"], "farewell, Ann");
    let gone = client
        .request(
            "prompts/get",
            Some(json!({"name": "greet", "arguments": {"who": "Ann"}})),
        )
        .await
        .unwrap_err();
    assert_eq!(gone.code(), -32602);
    assert!(
        gone.message().contains("Unknown prompt: greet"),
        "{}",
        gone.message()
    );
    assert_eq!(received(&record, "prompts/get"), 1);

    // Resources and templates: re-listed, swapped in, told; a read through the new template
    // is forwarded.
    let relist = call_action(&client, "fx", "work", json!({"n": 2, "label": "relist"})).await;
    assert_ok(&relist);
    next(&mut sessions, "notifications/resources/list_changed").await;
    assert_eq!(
        server.resource_uris(),
        ["fixture://note", "fixture://extra"]
    );
    assert_eq!(server.resource_template_uris(), ["fixture://item/{id}"]);
    let templates = client
        .request("resources/templates/list", None)
        .await
        .unwrap();
    assert_eq!(
        templates["resourceTemplates"][0]["uriTemplate"],
        "fixture://item/{id}"
    );
    let read = client
        .request("resources/read", Some(json!({"uri": "fixture://item/7"})))
        .await
        .unwrap();
    assert_eq!(read["contents"][0]["text"], "read fixture://item/7");

    // A refresh that fails changes nothing and tells nothing: the upstream's prompts/list
    // and resources/list fail; its tools' refresh, which runs after them, tells the clients.
    while sessions.try_recv().is_ok() {}
    let broken = call_action(&client, "fx", "work", json!({"n": 3, "label": "break"})).await;
    assert_ok(&broken);
    let sent = sent_until(&mut sessions, "notifications/tools/list_changed").await;
    assert_eq!(sent, ["notifications/tools/list_changed"]);
    assert_eq!(received(&record, "prompts/list"), 3);
    assert_eq!(received(&record, "resources/list"), 3);
    assert_eq!(server.prompt_names(), ["farewell"]);
    assert_eq!(
        server.resource_uris(),
        ["fixture://note", "fixture://extra"]
    );
    assert_eq!(server.resource_template_uris(), ["fixture://item/{id}"]);
}

/// Serves `server` over Streamable HTTP on 127.0.0.1, its idle sessions expiring after
/// `ttl`: its `/mcp` URL.
async fn serve_http(server: Server, ttl: Duration) -> String {
    let http = HttpServer::bind(
        "127.0.0.1:0",
        StreamableHttp::builder(server).session_ttl(ttl),
    )
    .await
    .unwrap();
    let url = format!("http://{}/mcp", http.local_addr().unwrap());
    tokio::spawn(http.run());
    url
}

/// A session-era session over HTTP at `url`, initialized: its id.
async fn open_session(http: &reqwest::Client, url: &str) -> String {
    let init = http
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "gateway-changes-test", "version": "1"}}}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(init.status(), 200);
    let session = init.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let initialized = session_post(
        http,
        url,
        &session,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert_eq!(initialized.status(), 202);
    session
}

async fn session_post(
    http: &reqwest::Client,
    url: &str,
    session: &str,
    body: Value,
) -> reqwest::Response {
    http.post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("Mcp-Session-Id", session)
        .header("MCP-Protocol-Version", "2025-11-25")
        .json(&body)
        .send()
        .await
        .unwrap()
}

/// Subscribes `session` to `fixture://note`.
async fn subscribe_note(http: &reqwest::Client, url: &str, session: &str) {
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe",
        "params": {"uri": "fixture://note"}});
    let answer: Value = session_post(http, url, session, body)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(answer["result"], json!({}), "{answer}");
}

/// Waits (within 15 s) until the upstream received `count` requests of `method`.
async fn received_within(record: &Path, method: &str, count: usize) {
    for _ in 0..150 {
        if received(record, method) >= count {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(received(record, method), count, "{method}");
}

#[tokio::test]
async fn a_session_that_ends_without_unsubscribing_unsubscribes_upstream() {
    let Some(python) = support::python() else {
        return;
    };
    let record = record("changes-ended");
    let server = serve(fixture(python, &record)).await;
    let url = serve_http(server, Duration::from_secs(4)).await;
    let http = reqwest::Client::new();

    // Deleted: two sessions subscribe (forwarded once); the first deleted keeps the upstream
    // subscribed for the second, the second deleted unsubscribes it.
    let (first, second) = (
        open_session(&http, &url).await,
        open_session(&http, &url).await,
    );
    subscribe_note(&http, &url, &first).await;
    subscribe_note(&http, &url, &second).await;
    assert_eq!(received(&record, "resources/subscribe"), 1);
    for session in [&first, &second] {
        let deleted = http
            .delete(&url)
            .header("Mcp-Session-Id", session.as_str())
            .header("MCP-Protocol-Version", "2025-11-25")
            .send()
            .await
            .unwrap();
        assert!(deleted.status().is_success(), "{}", deleted.status());
        if session == &first {
            // The second still holds it: a session subscribing now is not forwarded.
            let third = open_session(&http, &url).await;
            subscribe_note(&http, &url, &third).await;
            assert_eq!(received(&record, "resources/subscribe"), 1);
            assert_eq!(received(&record, "resources/unsubscribe"), 0);
            let body = json!({"jsonrpc": "2.0", "id": 3, "method": "resources/unsubscribe",
                "params": {"uri": "fixture://note"}});
            session_post(&http, &url, &third, body).await;
        }
    }
    received_within(&record, "resources/unsubscribe", 1).await;

    // Expired: a session that subscribes and goes idle past the TTL unsubscribes it too.
    let idle = open_session(&http, &url).await;
    subscribe_note(&http, &url, &idle).await;
    assert_eq!(received(&record, "resources/subscribe"), 2);
    received_within(&record, "resources/unsubscribe", 2).await;
}

#[tokio::test]
async fn a_restarted_upstream_is_subscribed_again() {
    let Some(python) = support::python() else {
        return;
    };
    let record = record("changes-restart");
    let upstream = fixture(python, &record)
        .restart_backoff(Duration::from_millis(100), Duration::from_secs(1));
    let server = serve(upstream).await;
    let client = TestClient::new(server.clone());
    let note = Some(json!({"uri": "fixture://note"}));
    client.request("resources/subscribe", note).await.unwrap();
    assert_eq!(received(&record, "resources/subscribe"), 1);

    let crashed = call_action(&client, "fx", "work", json!({"n": 1, "label": "crash"})).await;
    assert_eq!(
        assert_tool_error(&crashed),
        "upstream fx: tools/call: the server's process ended or closed its stdout"
    );
    // The next call restarts it, and the restarted process is subscribed again.
    let again = call_action(&client, "fx", "work", json!({"n": 2})).await;
    assert_ok(&again);
    assert_eq!(support::starts(&record), 2);
    received_within(&record, "resources/subscribe", 2).await;
    let last = std::fs::read_to_string(&record).unwrap();
    let after_restart = last.rsplit("\nstart\n").next().unwrap();
    assert!(
        after_restart.contains(r#""uri": "fixture://note""#)
            || after_restart.contains(r#""uri":"fixture://note""#),
        "{after_restart}"
    );
}

/// A tool of the wymcp upstream: answers its name.
struct Named(&'static str);

impl PlainTool for Named {
    fn name(&self) -> &str {
        self.0
    }
    fn description(&self) -> &str {
        "Answers its name"
    }
    fn input_schema(&self) -> serde_json::Map<String, Value> {
        serde_json::Map::from_iter([("type".to_owned(), json!("object"))])
    }
    async fn run(&self, _: serde_json::Map<String, Value>, _: Context) -> CallResult {
        Ok(CallOutput::text(self.0))
    }
}

/// A wymcp server served over HTTP (it offers 2026-07-28, which the gateway's link speaks),
/// its tools changed through the `LiveTools` answered; the gateway serving it in `tools`
/// mode, served over HTTP: its URL.
async fn stateless_upstream_through_gateway() -> (Server, LiveTools, String) {
    let live = LiveTools::new();
    let upstream = Server::builder()
        .name("listen-upstream")
        .list_changed(true)
        .plain_tool(Named("early"))
        .resource(Resource::text("up://note", "note", "a note"))
        .live_tools(&live)
        .build()
        .unwrap();
    let upstream_url = serve_http(upstream.clone(), Duration::from_secs(60)).await;
    let config = UpstreamConfig::http("up", upstream_url).expose(Expose::Tools);
    let gateway = serve(config).await;
    let url = serve_http(gateway, Duration::from_secs(60)).await;
    (upstream, live, url)
}

/// The next notification of `method` the downstream `client` gets (within 10 s).
async fn next_of(client: &Client, method: &str) -> Notification {
    let wait = async {
        loop {
            let note = client.next_notification().await;
            if note.method() == method {
                return note;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), wait)
        .await
        .unwrap_or_else(|_| panic!("no {method} within 10 s"))
}

async fn names(client: &Client) -> Vec<String> {
    let tools = client.list_tools().await.unwrap();
    let mut names: Vec<String> = tools.iter().map(|t| t.name().to_owned()).collect();
    names.sort();
    names
}

/// The downstream `client` sees the tool the upstream adds, and the update of `up://note`.
async fn sees_the_upstreams_changes(upstream: &Server, live: &LiveTools, client: &Client) {
    // The upstream's own `help` is served too, as `up_help`.
    assert_eq!(names(client).await, ["help", "up_early", "up_help"]);
    live.change(ToolChange::new().plain_tool(Named("late")))
        .unwrap();
    next_of(client, "notifications/tools/list_changed").await;
    assert_eq!(
        names(client).await,
        ["help", "up_early", "up_help", "up_late"]
    );
    let late = client.call_tool("up_late", json!({})).await.unwrap();
    assert_eq!(late.text(), "late");

    assert_eq!(upstream.notify_resource_updated("up://note").await, 1);
    let updated = next_of(client, "notifications/resources/updated").await;
    assert_eq!(updated.params().unwrap()["uri"], "up://note");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_upstreams_changes_reach_a_downstream_session() {
    let (upstream, live, url) = stateless_upstream_through_gateway().await;
    let client = Client::builder(&url)
        .versions(ProtocolVersion::SESSION_ERA)
        .connect()
        .await
        .unwrap();
    client.subscribe("up://note").await.unwrap();
    sees_the_upstreams_changes(&upstream, &live, &client).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_upstreams_changes_reach_a_downstream_listen_stream() {
    let (upstream, live, url) = stateless_upstream_through_gateway().await;
    let client = Client::builder(&url).connect().await.unwrap();
    assert!(client.protocol_version().is_stateless());
    let listening = client
        .listen(
            Subscriptions::new()
                .tools_list_changed()
                .resource("up://note"),
        )
        .await
        .unwrap();
    assert_eq!(
        *listening.honoured(),
        json!({"toolsListChanged": true, "resourceSubscriptions": ["up://note"]})
    );
    sees_the_upstreams_changes(&upstream, &live, &client).await;
}
