//! The relays between a downstream client and an upstream, end to end over real processes and
//! sockets: the gateway served over Streamable HTTP on 127.0.0.1, wymcp's client downstream
//! (sampling, elicitation and roots handlers installed), and as the upstream either
//! `@modelcontextprotocol/server-everything` spawned over stdio or a wymcp server of this test
//! served over HTTP. The upstream's sampling, elicitation and roots requests reach the
//! downstream client and its answers come back into the tool's result; progress and log
//! messages reach the downstream caller; a downstream cancellation cancels the upstream call.

#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use wymcp::client::{Client, Notification};
use wymcp::protocol::LogLevel;
use wymcp::session::{Elicitation, ListRoots, Sampling};
use wymcp::transport::http::{HttpServer, StreamableHttp};
use wymcp::{
    CallError, CallOutput, CallResult, Content, Context, PlainTool, ProtocolVersion, Server,
};
use wymcp_gateway::{Expose, Gateway, GatewayConfig, UpstreamConfig};

/// Serves `server` over Streamable HTTP on 127.0.0.1: its `/mcp` URL.
async fn serve_http(server: Server) -> String {
    let http = HttpServer::bind("127.0.0.1:0", StreamableHttp::builder(server))
        .await
        .unwrap();
    let url = format!("http://{}/mcp", http.local_addr().unwrap());
    tokio::spawn(http.run());
    url
}

/// The gateway in front of `upstream`, in `tools` mode with no prefix, served over HTTP.
async fn gateway(upstream: UpstreamConfig) -> String {
    let gateway =
        Gateway::start(GatewayConfig::new().upstream(upstream.expose(Expose::Tools).prefix("")))
            .await;
    // Every upstream tool is served (a wymcp upstream's own `help` aside: the gateway has one).
    for notice in gateway.notices() {
        assert_eq!(notice.tool(), Some("help"), "{notice}");
    }
    let server = gateway
        .register(Server::builder().name("relay-gateway"))
        .build()
        .unwrap();
    serve_http(server).await
}

/// The downstream client of the gateway at `url`, speaking `versions`, answering sampling
/// (`sampled[<first message's text>]`), elicitation (`Ada`, and the message asked) and roots
/// (one root) when `handlers`.
async fn downstream(url: &str, versions: &[ProtocolVersion], handlers: bool) -> Client {
    let mut builder = Client::builder(url)
        .versions(versions.iter().copied())
        .timeout(Duration::from_secs(30));
    if handlers {
        builder = builder
            .on_sampling(|params| async move {
                let text = params["messages"][0]["content"]["text"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                Ok(json!({
                    "role": "assistant",
                    "content": {"type": "text", "text": format!("sampled[{text}]")},
                    "model": "relay-test-model",
                    "stopReason": "endTurn"
                }))
            })
            .on_elicitation(|params| async move {
                let asked = params["message"].as_str().unwrap_or_default().to_owned();
                Ok(json!({
                    "action": "accept",
                    "content": {"name": "Ada", "check": true, "asked": asked}
                }))
            })
            .on_roots(|_| async {
                Ok(json!({"roots": [{"uri": "file:///work/relay-project", "name": "relay-project"}]}))
            });
    }
    builder.connect().await.unwrap()
}

/// The eras the downstream client speaks in these tests: a session (2025-11-25) and the
/// stateless era (2026-07-28), where the gateway's context asks through input rounds.
const ERAS: [&[ProtocolVersion]; 2] = [
    &[ProtocolVersion::V2025_11_25],
    &[ProtocolVersion::V2026_07_28],
];

fn notes_of<'a>(notes: &'a [Notification], method: &str) -> Vec<&'a Value> {
    notes
        .iter()
        .filter(|n| n.method() == method)
        .filter_map(Notification::params)
        .collect()
}

#[tokio::test]
async fn server_everything_over_stdio_samples_elicits_lists_roots_and_reports_progress() {
    let Some(entry) = support::npm_server("everything") else {
        return;
    };
    let url = gateway(
        UpstreamConfig::stdio("everything", "node")
            .args([entry, "stdio".to_owned()])
            .timeout(Duration::from_secs(20)),
    )
    .await;
    for versions in ERAS {
        let era = versions[0];
        let client = downstream(&url, versions, true).await;

        let sampled = client
            .call_tool(
                "trigger-sampling-request",
                json!({"prompt": "relay me", "maxTokens": 20}),
            )
            .await
            .unwrap();
        assert!(!sampled.is_error(), "{era}: {}", sampled.text());
        // The upstream's prompt reached the downstream handler, whose answer is in the result.
        assert!(
            sampled
                .text()
                .contains("sampled[Resource trigger-sampling-request context: relay me]"),
            "{era}: {}",
            sampled.text()
        );
        assert!(sampled.text().contains("relay-test-model"), "{era}");

        let elicited = client
            .call_tool("trigger-elicitation-request", json!({}))
            .await
            .unwrap();
        let text = elicited.text();
        assert!(
            text.contains("User provided the requested information"),
            "{era}: {text}"
        );
        assert!(text.contains("- Name: Ada"), "{era}: {text}");
        assert!(text.contains("- Agreed to terms: true"), "{era}: {text}");
        assert!(
            text.contains("Please provide inputs for the following fields:"),
            "{era}: the upstream's message reached the downstream: {text}"
        );

        let roots = client.call_tool("get-roots-list", json!({})).await.unwrap();
        assert!(
            roots.text().contains("URI: file:///work/relay-project"),
            "{era}: {}",
            roots.text()
        );

        // tools mode keeps the upstream's content annotations.
        let annotated = client
            .call_tool(
                "get-annotated-message",
                json!({"messageType": "error", "includeImage": false}),
            )
            .await
            .unwrap();
        assert_eq!(
            annotated.raw()["content"],
            json!([{"type": "text", "text": "Error: Operation failed",
                    "annotations": {"priority": 1, "audience": ["user", "assistant"]}}]),
            "{era}"
        );

        client.drain_notifications();
        let long = client
            .call_tool_with_progress(
                "trigger-long-running-operation",
                json!({"duration": 0.3, "steps": 3}),
                "down-progress",
            )
            .await
            .unwrap();
        assert!(long.text().contains("Steps: 3"), "{era}: {}", long.text());
        let notes = client.drain_notifications();
        let progress: Vec<Value> = notes_of(&notes, "notifications/progress")
            .into_iter()
            .cloned()
            .collect();
        assert_eq!(
            progress,
            [1, 2, 3].map(
                |i| json!({"progressToken": "down-progress", "progress": i as f64, "total": 3.0})
            ),
            "{era}: the upstream's progress arrived as the downstream call's own"
        );
    }
}

/// What a tool of the test's upstream does.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// Samples the prompt it is given; answers the text sampled.
    Sample,
    /// Elicits; answers the answer.
    Elicit,
    /// Lists the client's roots; answers them.
    Roots,
    /// Reports progress 1 and 2 of 2, logs at info and at debug.
    Report,
    /// Waits (at most 30 s) for its cancellation; tells `events` how it ended.
    Wait,
    /// Answers content items with `annotations` and `_meta`.
    Annotated,
    /// Reports progress 1 to 3 of 3 and logs each step at info, then answers at once: its
    /// last notifications and its answer leave the upstream together.
    Burst,
}

#[derive(Debug)]
struct UpTool {
    name: &'static str,
    kind: Kind,
    events: mpsc::UnboundedSender<String>,
}

/// Tells `events` how the call ended, however its future ends: its cancellation token fired
/// (a session's `notifications/cancelled`), or its future was dropped before it finished (the
/// stateless era's cancellation: the request's connection closed), or it finished.
struct Ended {
    ctx: Context,
    finished: bool,
    events: mpsc::UnboundedSender<String>,
}

impl Drop for Ended {
    fn drop(&mut self) {
        let how = if self.ctx.is_cancelled() {
            "cancelled"
        } else if self.finished {
            "finished"
        } else {
            "dropped unfinished"
        };
        let _ = self.events.send(how.to_owned());
    }
}

impl PlainTool for UpTool {
    fn name(&self) -> &str {
        self.name
    }

    fn description(&self) -> &str {
        "a tool of the relay test's upstream"
    }

    fn input_schema(&self) -> Map<String, Value> {
        json!({"type": "object", "properties": {"prompt": {"type": "string"}}})
            .as_object()
            .cloned()
            .unwrap()
    }

    async fn run(&self, arguments: Map<String, Value>, ctx: Context) -> CallResult {
        let failed =
            |what: &str, e: &dyn std::fmt::Display| CallError::tool(format!("{what} failed: {e}"));
        match self.kind {
            Kind::Sample => {
                let prompt = arguments["prompt"].as_str().unwrap_or_default();
                let answer = ctx
                    .sample(Sampling::prompt(prompt).max_tokens(10))
                    .await
                    .map_err(|e| failed("sampling", &e))?;
                Ok(CallOutput::text(format!(
                    "upstream got {}",
                    answer["content"]["text"].as_str().unwrap_or_default()
                )))
            }
            Kind::Elicit => {
                let ask = Elicitation::form(
                    "Your name?",
                    json!({"type": "object", "properties": {"name": {"type": "string"}}}),
                );
                let answer = ctx
                    .elicit(ask)
                    .await
                    .map_err(|e| failed("elicitation", &e))?;
                Ok(CallOutput::text(format!("upstream got {answer}")))
            }
            Kind::Roots => {
                let answer = ctx
                    .list_roots(ListRoots::new())
                    .await
                    .map_err(|e| failed("roots", &e))?;
                Ok(CallOutput::text(format!("upstream got {answer}")))
            }
            Kind::Report => {
                for step in [1.0, 2.0] {
                    ctx.progress(step, Some(2.0), Some("stepping"));
                    ctx.log(LogLevel::Info, json!(format!("info {step}")));
                    ctx.log(LogLevel::Debug, json!(format!("debug {step}")));
                    tokio::time::sleep(Duration::from_millis(30)).await;
                }
                Ok(CallOutput::text("reported"))
            }
            Kind::Wait => {
                let mut ended = Ended {
                    ctx: ctx.clone(),
                    finished: false,
                    events: self.events.clone(),
                };
                let _ = self.events.send("started".to_owned());
                tokio::select! {
                    () = ctx.cancellation().cancelled() => {}
                    () = tokio::time::sleep(Duration::from_secs(30)) => {}
                }
                ended.finished = true;
                Ok(CallOutput::text("waited"))
            }
            Kind::Burst => {
                for step in [1.0, 2.0, 3.0] {
                    ctx.progress(step, Some(3.0), None);
                    ctx.log(LogLevel::Info, json!(format!("burst {step}")));
                }
                Ok(CallOutput::text("burst"))
            }
            Kind::Annotated => {
                let object = |v: Value| v.as_object().cloned().unwrap();
                Ok(CallOutput::new(vec![
                    Content::text("for the user")
                        .with_annotations(object(json!({"audience": ["user"], "priority": 0.9})))
                        .with_meta(object(json!({"example.com/trace": "t-1"}))),
                    Content::image("aW1n", "image/png")
                        .with_annotations(object(json!({"lastModified": "2026-12-07T00:00:00Z"}))),
                ]))
            }
        }
    }
}

/// The test's upstream, a wymcp server over HTTP: its URL and what its `wait` tool tells.
async fn http_upstream() -> (String, mpsc::UnboundedReceiver<String>) {
    let (events, told) = mpsc::unbounded_channel();
    let mut builder = Server::builder().name("relay-upstream");
    for (name, kind) in [
        ("sample", Kind::Sample),
        ("elicit", Kind::Elicit),
        ("roots", Kind::Roots),
        ("report", Kind::Report),
        ("wait", Kind::Wait),
        ("annotated", Kind::Annotated),
        ("burst", Kind::Burst),
    ] {
        builder = builder.plain_tool(UpTool {
            name,
            kind,
            events: events.clone(),
        });
    }
    (serve_http(builder.build().unwrap()).await, told)
}

#[tokio::test]
async fn an_http_upstream_relays_to_the_call_that_caused_each_request() {
    let (upstream, mut told) = http_upstream().await;
    let url = gateway(UpstreamConfig::http("up", upstream).timeout(Duration::from_secs(20))).await;
    for versions in ERAS {
        let era = versions[0];
        let client = Arc::new(downstream(&url, versions, true).await);

        // Calls in flight together on the one upstream connection: each request of the
        // upstream reaches the downstream call that caused it.
        let mut calls = tokio::task::JoinSet::new();
        for i in 0..3 {
            let client = Arc::clone(&client);
            calls.spawn(async move {
                let prompt = format!("prompt {i}");
                let result = client
                    .call_tool("sample", json!({"prompt": prompt}))
                    .await
                    .unwrap();
                (prompt, result.text(), result.is_error())
            });
        }
        while let Some(joined) = calls.join_next().await {
            let (prompt, text, is_error) = joined.unwrap();
            assert!(!is_error, "{era}: {text}");
            assert_eq!(text, format!("upstream got sampled[{prompt}]"), "{era}");
        }

        let elicited = client.call_tool("elicit", json!({})).await.unwrap();
        assert_eq!(
            elicited.text(),
            r#"upstream got {"action":"accept","content":{"asked":"Your name?","check":true,"name":"Ada"}}"#,
            "{era}"
        );
        let roots = client.call_tool("roots", json!({})).await.unwrap();
        assert_eq!(
            roots.text(),
            r#"upstream got {"roots":[{"name":"relay-project","uri":"file:///work/relay-project"}]}"#,
            "{era}"
        );

        // Progress as the downstream call's own; log messages at the downstream's level.
        client.set_logging_level(LogLevel::Info).await.unwrap();
        client.drain_notifications();
        let reported = client
            .call_tool_with_progress("report", json!({}), "down-7")
            .await
            .unwrap();
        assert_eq!(reported.text(), "reported", "{era}");
        let notes = client.drain_notifications();
        let progress: Vec<&Value> = notes_of(&notes, "notifications/progress");
        assert_eq!(
            progress,
            [1.0, 2.0]
                .map(|p| json!({"progressToken": "down-7", "progress": p, "total": 2.0, "message": "stepping"}))
                .iter()
                .collect::<Vec<_>>(),
            "{era}"
        );
        let logged: Vec<&Value> = notes_of(&notes, "notifications/message")
            .into_iter()
            .map(|p| &p["data"])
            .collect();
        assert_eq!(
            logged,
            [json!("info 1"), json!("info 2")]
                .iter()
                .collect::<Vec<_>>(),
            "{era}: info relayed, debug below the downstream's level not"
        );

        // A downstream call given up (its future dropped: the client cancels it) is
        // cancelled upstream: the upstream's call ends long before its 30 s, cut short (this
        // upstream speaks the stateless era, whose cancellation is the request's connection
        // closed: the upstream drops the call).
        let waiting = client.call_tool("wait", json!({}));
        let gave_up = tokio::time::timeout(Duration::from_millis(1500), waiting).await;
        assert!(gave_up.is_err(), "{era}: the wait tool answered early");
        let mut seen = Vec::new();
        for _ in 0..2 {
            match tokio::time::timeout(Duration::from_secs(10), told.recv()).await {
                Ok(Some(event)) => seen.push(event),
                _ => break,
            }
        }
        assert_eq!(seen.first().map(String::as_str), Some("started"), "{era}");
        assert!(
            matches!(
                seen.get(1).map(String::as_str),
                Some("cancelled" | "dropped unfinished")
            ),
            "{era}: {seen:?}"
        );
    }
}

/// The race conformance found through the gateway (stop 54): a task pumping the upstream's
/// notifications let the call's answer overtake its last progress and log messages. Now the
/// client hands each to the relay on its reader, before the answer: every one of 25 calls
/// whose notifications and answer leave the upstream together has them all, in order, when
/// its answer arrives, in both eras. (On two worker threads, as the gateway binary runs; with
/// the pump this failed in 2 of 3 runs.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_calls_progress_and_log_messages_all_arrive_before_its_answer() {
    let (upstream, _told) = http_upstream().await;
    let url = gateway(UpstreamConfig::http("up", upstream).timeout(Duration::from_secs(20))).await;
    for versions in ERAS {
        let era = versions[0];
        let client = downstream(&url, versions, false).await;
        client.set_logging_level(LogLevel::Info).await.unwrap();
        for round in 0..25 {
            client.drain_notifications();
            let token = format!("burst-{round}");
            let answer = client
                .call_tool_with_progress("burst", json!({}), &token)
                .await
                .unwrap();
            assert_eq!(answer.text(), "burst", "{era}");
            let notes = client.drain_notifications();
            let progress: Vec<f64> = notes_of(&notes, "notifications/progress")
                .into_iter()
                .inspect(|p| assert_eq!(p["progressToken"], json!(token), "{era}"))
                .filter_map(|p| p["progress"].as_f64())
                .collect();
            assert_eq!(progress, [1.0, 2.0, 3.0], "{era}, round {round}");
            let logged: Vec<&Value> = notes_of(&notes, "notifications/message")
                .into_iter()
                .map(|p| &p["data"])
                .collect();
            assert_eq!(
                logged,
                [json!("burst 1"), json!("burst 2"), json!("burst 3")]
                    .iter()
                    .collect::<Vec<_>>(),
                "{era}, round {round}"
            );
        }
    }
}

#[tokio::test]
async fn tools_mode_keeps_each_content_items_annotations_and_meta() {
    let (upstream, _told) = http_upstream().await;
    let url = gateway(UpstreamConfig::http("up", upstream)).await;
    let client = downstream(&url, &[ProtocolVersion::V2025_11_25], false).await;
    let result = client.call_tool("annotated", json!({})).await.unwrap();
    assert_eq!(
        result.raw()["content"],
        json!([
            {"type": "text", "text": "for the user",
             "annotations": {"audience": ["user"], "priority": 0.9},
             "_meta": {"example.com/trace": "t-1"}},
            {"type": "image", "data": "aW1n", "mimeType": "image/png",
             "annotations": {"lastModified": "2026-12-07T00:00:00Z"}}
        ])
    );
}

#[tokio::test]
async fn a_downstream_without_the_capability_is_named_in_the_upstreams_error() {
    let (upstream, _told) = http_upstream().await;
    let url = gateway(UpstreamConfig::http("up", upstream).timeout(Duration::from_secs(20))).await;
    let client = downstream(&url, &[ProtocolVersion::V2025_11_25], false).await;
    let sampled = client
        .call_tool("sample", json!({"prompt": "anyone?"}))
        .await
        .unwrap();
    assert!(sampled.is_error());
    // The upstream speaks the stateless era: the forwarded call declared the downstream's
    // capabilities (none), and the upstream refused it as it refuses any such request; the
    // gateway's call fails naming the upstream and why.
    assert_eq!(
        sampled.text(),
        "upstream up: tools/call: HTTP status 400 (JSON-RPC error -32021: Server requires the sampling capability for this request)"
    );
    // A stateless downstream gets the upstream's `-32021` as its own, naming the capability.
    let stateless = downstream(&url, &[ProtocolVersion::V2026_07_28], false).await;
    let refused = stateless
        .call_tool("sample", json!({"prompt": "anyone?"}))
        .await
        .unwrap_err();
    assert_eq!(refused.status(), Some(400), "{refused}");
    let error = refused.rpc_error().unwrap();
    assert_eq!(error.code(), -32021, "{refused}");
    assert_eq!(
        error.message(),
        "Server requires the sampling capability for this request"
    );
    assert_eq!(
        error.data(),
        Some(&json!({"requiredCapabilities": {"sampling": {}}}))
    );
}
