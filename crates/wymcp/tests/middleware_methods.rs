//! Operation middleware around the requests other than `tools/call`, over every path (HTTP
//! and stdio, each in both eras): a server layer sees `tools/list`, the resources, prompts and
//! completion methods (with their method and name) while call, tool and action layers see
//! calls only; the protocol's own machinery passes no layer; a layer's refusal of such a
//! request is the JSON-RPC error `-32000` carrying the gates' payload; a layer may change the
//! params; the ready-made policies refuse them as documented; the audit layer names them.

#![allow(clippy::unwrap_used, missing_docs)]

mod http_harness;
#[allow(unused)]
mod matrix_kit;
mod mcp_schema;
mod middleware_fixture;

use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tower::ServiceExt;
use tower::layer::{LayerFn, layer_fn};
use wymcp::completion::{Complete, Completion, CompletionRequest};
use wymcp::middleware::{
    AuditLayer, BoxOperation, CallTimeoutLayer, Operation, RateLimitLayer, Refusal,
    ResultSizeLimitLayer,
};
use wymcp::{Context, ServerBuilder, ToolPolicy};

use matrix_kit::{Client, Path};
use middleware_fixture::spans::Spans;
use middleware_fixture::{PATHS, action, builder_with};

/// The notes' documents: a guide, a page that waits, a page of any size.
#[derive(Clone)]
struct Docs;

#[wymcp::resources]
impl Docs {
    /// How to keep notes
    #[wymcp(uri = "notes://guide")]
    async fn guide(&self) -> String {
        "Tag notes when you add them.".to_owned()
    }

    /// A page that takes `ms` milliseconds to read
    #[wymcp(template = "notes://wait/{ms}")]
    async fn wait(&self, ms: u64) -> String {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        format!("waited {ms}")
    }

    /// A page of `size` characters
    #[wymcp(template = "notes://big/{size}")]
    async fn big(&self, size: usize) -> String {
        "x".repeat(size)
    }
}

/// Ask for a summary of the notes carrying a tag
#[wymcp::prompt]
async fn summarize(tag: String) -> String {
    format!("Summarize the notes tagged {tag}.")
}

/// Completes a tag from the ones in use.
struct Tags;

impl Complete for Tags {
    async fn complete(&self, request: CompletionRequest, _ctx: Context) -> Completion {
        let tags = ["errands", "work"].into_iter();
        Completion::new(tags.filter(|t| t.starts_with(&request.value)))
    }
}

/// The fixture's notes tool with the documents, the prompt and its completion.
fn with_features() -> ServerBuilder {
    with_features_and(ToolPolicy::new())
}

/// [`with_features`], `notes` registered with `policy`.
fn with_features_and(policy: ToolPolicy) -> ServerBuilder {
    builder_with(policy)
        .resource(Docs.guide_resource())
        .resource_template(Docs.wait_resource())
        .resource_template(Docs.big_resource())
        .prompt(summarize)
        .prompt_completion("summarize", "tag", Tags)
}

type Log = Arc<Mutex<Vec<String>>>;

/// A layer that logs `name`, the operation's method and name, then calls on.
fn logging(
    name: &'static str,
    log: &Log,
) -> LayerFn<impl Fn(BoxOperation) -> BoxOperation + Clone + use<>> {
    let log = log.clone();
    layer_fn(move |inner: BoxOperation| {
        let log = log.clone();
        BoxOperation::new(tower::service_fn(move |op: Operation| {
            let entry = format!("{name} {} {}", op.method(), op.name().unwrap_or("-"));
            log.lock().unwrap().push(entry);
            inner.clone().oneshot(op)
        }))
    })
}

fn n(value: u32) -> NonZeroU32 {
    NonZeroU32::new(value).unwrap()
}

/// `completion/complete` of the prompt's `tag` from `value`.
fn complete_tag(value: &str) -> Value {
    json!({"ref": {"type": "ref/prompt", "name": "summarize"},
        "argument": {"name": "tag", "value": value}})
}

#[tokio::test]
async fn a_server_layer_sees_every_request_and_call_tool_and_action_layers_only_calls() {
    let log = Log::default();
    let policy = ToolPolicy::new()
        .layer(logging("tool", &log))
        .action_layer("list", logging("action", &log));
    let server = with_features_and(policy)
        .layer(logging("server", &log))
        .call_layer(logging("calls", &log))
        .build()
        .unwrap();
    for path in PATHS {
        let mut client = Client::open_serving(path, server.clone()).await;
        log.lock().unwrap().clear();
        let tools = client.request("tools/list", json!({})).await.result();
        assert_eq!(tools["tools"][0]["name"], "notes", "{path:?}");
        client.request("resources/list", json!({})).await.result();
        client
            .request("resources/templates/list", json!({}))
            .await
            .result();
        let read = client
            .request("resources/read", json!({"uri": "notes://guide"}))
            .await
            .result();
        assert_eq!(read["contents"][0]["text"], "Tag notes when you add them.");
        client.request("prompts/list", json!({})).await.result();
        let prompt = json!({"name": "summarize", "arguments": {"tag": "work"}});
        client.request("prompts/get", prompt).await.result();
        let completed = client
            .request("completion/complete", complete_tag("er"))
            .await
            .result();
        assert_eq!(completed["completion"]["values"], json!(["errands"]));
        client.call("notes", action("list", json!({}))).await;
        // The protocol's own machinery passes no layer.
        client.request("ping", json!({})).await;
        let expected = [
            "server tools/list -",
            "server resources/list -",
            "server resources/templates/list -",
            "server resources/read notes://guide",
            "server prompts/list -",
            "server prompts/get summarize",
            "server completion/complete -",
            "server tools/call notes",
            "calls tools/call notes",
            "tool tools/call notes",
            "action tools/call notes",
        ];
        assert_eq!(*log.lock().unwrap(), expected, "{path:?}");
        client.close().await;
    }
}

#[tokio::test]
async fn a_layers_refusal_of_another_method_is_error_32000_with_the_gates_payload() {
    let no_guide = layer_fn(|inner: BoxOperation| {
        BoxOperation::new(tower::service_fn(move |op: Operation| {
            let inner = inner.clone();
            async move {
                if op.name() == Some("notes://guide") {
                    let refusal = Refusal::new("forbidden", "The guide is for humans.")
                        .detail("help", json!("help {}"));
                    return Err(refusal.into());
                }
                inner.oneshot(op).await
            }
        }))
    });
    let server = with_features().layer(no_guide).build().unwrap();
    for path in PATHS {
        let mut client = Client::open_serving(path, server.clone()).await;
        let refused = client
            .request("resources/read", json!({"uri": "notes://guide"}))
            .await;
        assert_eq!(
            *refused.error(),
            json!({"code": -32000, "message": "The guide is for humans.",
                "data": {"errorType": "forbidden", "method": "resources/read", "help": "help {}"}}),
            "{path:?}"
        );
        let read = client
            .request("resources/read", json!({"uri": "notes://big/3"}))
            .await;
        assert_eq!(read.result()["contents"][0]["text"], "xxx", "{path:?}");
        client.close().await;
    }
}

#[tokio::test]
async fn a_layer_may_change_a_requests_params_before_its_handler_sees_them() {
    let always_errands = layer_fn(|inner: BoxOperation| {
        BoxOperation::new(tower::service_fn(move |mut op: Operation| {
            if op.method() == "prompts/get" {
                op.data_mut()["arguments"]["tag"] = json!("errands");
            }
            inner.clone().oneshot(op)
        }))
    });
    let server = with_features().layer(always_errands).build().unwrap();
    for path in PATHS {
        let mut client = Client::open_serving(path, server.clone()).await;
        let prompt = json!({"name": "summarize", "arguments": {"tag": "work"}});
        let got = client.request("prompts/get", prompt).await.result();
        let text = &got["messages"][0]["content"]["text"];
        assert_eq!(text, "Summarize the notes tagged errands.", "{path:?}");
        client.close().await;
    }
}

#[tokio::test]
async fn a_server_rate_limit_counts_every_request_and_a_call_layers_only_calls() {
    // A server per path: over HTTP both eras count the one client, 127.0.0.1, by its address.
    for path in PATHS {
        let server = with_features()
            .layer(RateLimitLayer::per_minute(n(2)))
            .build()
            .unwrap();
        let mut client = Client::open_serving(path, server).await;
        client.request("tools/list", json!({})).await.result();
        client.call("notes", action("list", json!({}))).await;
        let refused = client.request("prompts/list", json!({})).await;
        let error = refused.error();
        assert_eq!(error["code"], -32000, "{path:?}");
        assert_eq!(error["data"]["errorType"], "rate_limited", "{path:?}");
        assert_eq!(error["data"]["method"], "prompts/list", "{path:?}");
        assert_eq!(error["data"]["limit"], "2/min", "{path:?}");
        assert!(
            error["data"]["retryAfterMs"].as_u64().unwrap() > 0,
            "{error}"
        );
        let message = error["message"].as_str().unwrap();
        assert!(
            message.starts_with("Rate limit reached: at most 2/min for each caller."),
            "{message}"
        );
        client.close().await;
    }
    for path in PATHS {
        let calls_only = with_features()
            .call_layer(RateLimitLayer::per_minute(n(1)))
            .build()
            .unwrap();
        let mut client = Client::open_serving(path, calls_only).await;
        for _ in 0..3 {
            client.request("tools/list", json!({})).await.result();
        }
        let first = client.call("notes", action("list", json!({}))).await;
        assert_eq!(first.tool_json(), json!({"notes": []}), "{path:?}");
        let second = client.call("notes", action("list", json!({}))).await;
        assert_eq!(second.tool_json()["errorType"], "rate_limited", "{path:?}");
        client.close().await;
    }
}

#[tokio::test]
async fn the_result_size_limit_and_the_call_timeout_refuse_a_read_as_documented() {
    let server = with_features()
        .layer(ResultSizeLimitLayer::new(1_000))
        .layer(CallTimeoutLayer::new(Duration::from_millis(100)))
        .build()
        .unwrap();
    for path in PATHS {
        let mut client = Client::open_serving(path, server.clone()).await;
        let big = client
            .request("resources/read", json!({"uri": "notes://big/5000"}))
            .await;
        let error = big.error();
        assert_eq!(error["code"], -32000, "{path:?}");
        let data = &error["data"];
        assert_eq!(data["errorType"], "result_too_large", "{path:?}");
        assert_eq!(data["limit_bytes"], 1_000, "{path:?}");
        assert!(data["size_bytes"].as_u64().unwrap() > 5_000, "{data}");
        let slow = client
            .request("resources/read", json!({"uri": "notes://wait/5000"}))
            .await;
        assert_eq!(
            *slow.error(),
            json!({"code": -32000, "message": "The call ran longer than its limit of 100 ms \
                (CallTimeoutLayer) and was aborted. Ask for less work per call, or retry later.",
                "data": {"errorType": "timeout", "method": "resources/read", "timeout_ms": 100}}),
            "{path:?}"
        );
        let small = client
            .request("resources/read", json!({"uri": "notes://wait/1"}))
            .await;
        assert_eq!(
            small.result()["contents"][0]["text"],
            "waited 1",
            "{path:?}"
        );
        client.close().await;
    }
}

#[tokio::test]
async fn the_audit_layer_names_reads_and_prompts_and_records_their_errors() {
    let spans = Spans::default();
    let _guard = tracing::subscriber::set_default(spans.clone());
    let server = with_features().layer(AuditLayer::new()).build().unwrap();
    for path in [Path::HttpSession, Path::StdioStateless] {
        let mut client = Client::open_serving(path, server.clone()).await;
        spans.0.lock().unwrap().clear();
        let read = json!({"uri": "notes://guide"});
        client.request("resources/read", read).await.result();
        let prompt = json!({"name": "summarize", "arguments": {"tag": "work"}});
        client.request("prompts/get", prompt).await.result();
        let unknown = json!({"uri": "notes://nowhere"});
        client.request("resources/read", unknown).await.error();
        client.close().await;
        let audited = spans.audited();
        assert_eq!(audited.len(), 3, "{path:?}: {audited:?}");
        let (read, prompt, unknown) = (&audited[0], &audited[1], &audited[2]);
        assert_eq!(
            read["otel.name"], "resources/read notes://guide",
            "{path:?}"
        );
        assert_eq!(read["mcp.method.name"], "resources/read");
        assert_eq!(read["mcp.resource.uri"], "notes://guide");
        assert_eq!(read["wymcp.outcome"], "ok");
        assert!(!read.contains_key("gen_ai.tool.name"), "{read:?}");
        assert!(!read.contains_key("gen_ai.operation.name"), "{read:?}");
        assert_eq!(prompt["otel.name"], "prompts/get summarize");
        assert_eq!(prompt["gen_ai.prompt.name"], "summarize");
        assert_eq!(unknown["wymcp.outcome"], "error");
        let code = path.by_era("-32002", "-32602");
        assert_eq!(unknown["error.type"], code, "{path:?}");
    }
}
