//! SSE polling (SEP-1699) through the gateway, over real sockets on 127.0.0.1: a wymcp
//! upstream served with SSE polling whose tool closes its call's stream mid-call, reached by
//! the gateway in the session era (`Era::Session`), and the gateway served with SSE polling
//! too. The upstream's close reaches the downstream caller: its POST stream opens with a
//! priming event (an id, `retry`) and ends before the answer, which a GET with
//! `Last-Event-ID` then replays, as the upstream served directly does (the conformance suite's
//! `server-sse-polling`). wymcp's own client downstream resumes on its own and is told of
//! the close ([`wymcp::client::ClientBuilder::on_stream_closed`]).

#![allow(clippy::unwrap_used, missing_docs)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::header::CONTENT_TYPE;
use serde_json::{Map, Value, json};
use wymcp::client::Client;
use wymcp::transport::http::{HttpServer, StreamableHttp};
use wymcp::{CallOutput, CallResult, Context, PlainTool, ProtocolVersion, Server};
use wymcp_gateway::{Era, Expose, Gateway, GatewayConfig, UpstreamConfig};

const ANSWER: &str = "answered after the stream closed";

/// Closes its call's SSE stream, then answers after a short while.
struct Closer;

impl PlainTool for Closer {
    fn name(&self) -> &str {
        "closer"
    }
    fn description(&self) -> &str {
        "Closes its SSE stream mid-call, then answers"
    }
    fn input_schema(&self) -> Map<String, Value> {
        Map::from_iter([("type".to_owned(), json!("object"))])
    }
    async fn run(&self, _arguments: Map<String, Value>, ctx: Context) -> CallResult {
        let closed = ctx.close_sse_stream();
        tokio::time::sleep(Duration::from_millis(100)).await;
        Ok(CallOutput::text(format!("{ANSWER} (closed: {closed})")))
    }
}

/// Serves `http` on 127.0.0.1: its `/mcp` URL.
async fn serve(http: StreamableHttp) -> String {
    let http = HttpServer::bind("127.0.0.1:0", http).await.unwrap();
    let url = format!("http://{}/mcp", http.local_addr().unwrap());
    tokio::spawn(http.run());
    url
}

/// The upstream (SSE polling on) behind the gateway (its link of `era`, SSE polling on), in
/// `tools` mode with no prefix: the gateway's URL.
async fn gateway(era: Era) -> String {
    let server = Server::builder().plain_tool(Closer).build().unwrap();
    let upstream = serve(
        StreamableHttp::builder(server)
            .sse_polling(true)
            .sse_retry(Duration::from_millis(100)),
    )
    .await;
    let config = GatewayConfig::new().upstream(
        UpstreamConfig::http("up", upstream)
            .expose(Expose::Tools)
            .prefix("")
            .era(era)
            .timeout(Duration::from_secs(10)),
    );
    let gateway = Gateway::start(config).await;
    let server = gateway
        .register(Server::builder().name("polling-gateway"))
        .build()
        .unwrap();
    serve(
        StreamableHttp::builder(server)
            .sse_polling(true)
            .sse_retry(Duration::from_millis(200)),
    )
    .await
}

/// A session-era session opened on `url` with raw requests: its id.
async fn open_session(http: &reqwest::Client, url: &str) -> String {
    let response = http
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let initialized = http
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .send()
        .await
        .unwrap();
    assert_eq!(initialized.status(), 202);
    session
}

/// The `field:` values of an SSE body's lines.
fn field<'a>(body: &'a str, name: &str) -> Vec<&'a str> {
    let prefix = format!("{name}:");
    body.lines()
        .filter_map(|line| line.strip_prefix(prefix.as_str()))
        .map(str::trim)
        .collect()
}

/// A session-era `tools/call` of the upstream's `closer` with request id `id`, accepting SSE.
async fn call_closer(
    http: &reqwest::Client,
    url: &str,
    session: &str,
    id: u64,
) -> reqwest::Response {
    http.post(url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", "2025-11-25")
        .json(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                      "params": {"name": "closer", "arguments": {}}}))
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn the_upstreams_close_ends_the_callers_stream_and_the_answer_is_resumed_on_get() {
    let url = gateway(Era::Session).await;
    let http = reqwest::Client::new();
    let session = open_session(&http, &url).await;
    let call = call_closer(&http, &url, &session, 7).await;
    assert_eq!(call.status(), 200);
    assert_eq!(call.headers()[CONTENT_TYPE], "text/event-stream");
    // The stream ends (bounded by the timeout) with the priming event alone: no answer.
    let body = tokio::time::timeout(Duration::from_secs(10), call.text())
        .await
        .expect("the POST stream ends before the answer")
        .unwrap();
    let ids = field(&body, "id");
    assert_eq!(ids.len(), 1, "one priming event: {body:?}");
    assert_eq!(field(&body, "retry"), ["200"], "{body:?}");
    assert!(
        field(&body, "data").iter().all(|data| data.is_empty()),
        "{body:?}"
    );

    // Resumed after the priming event: the answer, relayed from the upstream.
    let resumed = http
        .get(&url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .header("last-event-id", ids[0])
        .send()
        .await
        .unwrap();
    assert_eq!(resumed.status(), 200);
    let mut resumed = resumed;
    let mut text = String::new();
    let answer = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let chunk = resumed.chunk().await.unwrap().expect("the answer first");
            text.push_str(std::str::from_utf8(&chunk).unwrap());
            let found = field(&text, "data")
                .into_iter()
                .filter_map(|data| serde_json::from_str::<Value>(data).ok())
                .find(|message| message["id"] == 7);
            if let Some(message) = found {
                return message;
            }
        }
    })
    .await
    .expect("the answer on the resumed stream");
    assert_eq!(
        answer["result"]["content"][0]["text"],
        format!("{ANSWER} (closed: true)"),
        "{answer}"
    );
}

#[tokio::test]
async fn wymcps_client_downstream_is_told_of_the_close_and_gets_the_answer() {
    let url = gateway(Era::Session).await;
    let closes: Arc<Mutex<Vec<Option<Value>>>> = Arc::default();
    let client = Client::builder(&url)
        .versions([ProtocolVersion::V2025_11_25])
        .timeout(Duration::from_secs(10))
        .on_stream_closed({
            let closes = Arc::clone(&closes);
            move |token| closes.lock().unwrap().push(token.cloned())
        })
        .connect()
        .await
        .unwrap();
    let result = client
        .call_tool_with_progress("closer", json!({}), "downstream-call")
        .await
        .unwrap();
    assert_eq!(result.text(), format!("{ANSWER} (closed: true)"));
    // Once, for this call: the gateway ended its stream when the upstream ended its own.
    assert_eq!(*closes.lock().unwrap(), [Some(json!("downstream-call"))]);
}

#[tokio::test]
async fn a_stateless_link_cannot_pass_the_close_on_and_the_caller_gets_json() {
    // The default link speaks 2026-07-28 with the upstream, whose streams are not resumable:
    // nothing is closed, the call is answered in one JSON response.
    let url = gateway(Era::Auto).await;
    let http = reqwest::Client::new();
    let session = open_session(&http, &url).await;
    let call = call_closer(&http, &url, &session, 8).await;
    assert_eq!(call.status(), 200);
    assert_eq!(call.headers()[CONTENT_TYPE], "application/json");
    let answer: Value = call.json().await.unwrap();
    assert_eq!(answer["id"], 8, "{answer}");
    assert_eq!(
        answer["result"]["content"][0]["text"],
        format!("{ANSWER} (closed: false)"),
        "{answer}"
    );
}
