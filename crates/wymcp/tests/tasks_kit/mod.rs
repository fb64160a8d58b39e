//! What the tasks tests share: a server on 127.0.0.1 with bearer auth (alice, bob) serving
//! `wait` (a task that sleeps), `ask` (a task that asks the user one or two questions) and
//! `greet_later` (asks a name in a multi round-trip round, then hands off to a task), and
//! the requests of the 2026-07-28 era they send.

#![allow(dead_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::http_harness::{Answer, Http, borrowed, modern_headers};
use serde_json::{Map, Value, json};
use wymcp::Identity;
use wymcp::backend::InMemoryTaskStore;
use wymcp::session::Elicitation;
use wymcp::task::{TaskStart, TaskSupport};
use wymcp::transport::http::{BearerAuth, StreamableHttp};
use wymcp::{CallError, CallOutput, CallResult, Context, PlainTool, Server, ToolPolicy};

/// Waits `ms` milliseconds (or until cancelled, which it records), then answers.
#[derive(Default)]
pub(crate) struct Wait {
    observed_cancel: Arc<AtomicBool>,
}

impl PlainTool for Wait {
    fn name(&self) -> &str {
        "wait"
    }
    fn description(&self) -> &str {
        "Waits ms milliseconds"
    }
    fn input_schema(&self) -> Map<String, Value> {
        json!({"type": "object", "properties": {"ms": {"type": "integer", "minimum": 0}}})
            .as_object()
            .cloned()
            .unwrap()
    }
    async fn run(&self, arguments: Map<String, Value>, ctx: Context) -> CallResult {
        let ms = arguments.get("ms").and_then(Value::as_u64).unwrap_or(0);
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(ms)) => {
                Ok(CallOutput::text(format!("waited {ms} ms")))
            }
            () = ctx.cancellation().cancelled() => {
                self.observed_cancel.store(true, Ordering::SeqCst);
                Err(CallError::tool("cancelled"))
            }
        }
    }
}

pub(crate) struct Harness {
    pub(crate) http: Http,
    pub(crate) observed_cancel: Arc<AtomicBool>,
}

pub(crate) fn serve_with(
    store: Arc<InMemoryTaskStore>,
    ttl: Duration,
) -> impl Future<Output = Harness> {
    serve_node(store, ttl, wymcp::task::HEARTBEAT)
}

/// A node renewing its tasks' heartbeats every `heartbeat`.
pub(crate) fn serve_node(
    store: Arc<InMemoryTaskStore>,
    ttl: Duration,
    heartbeat: Duration,
) -> impl Future<Output = Harness> {
    let observed_cancel = Arc::new(AtomicBool::new(false));
    let server = Server::builder()
        .plain_tool_with(
            Wait {
                observed_cancel: observed_cancel.clone(),
            },
            ToolPolicy::new().task_support(TaskSupport::Optional),
        )
        .plain_tool_with(Ask, ToolPolicy::new().task_support(TaskSupport::Optional))
        .plain_tool_with(
            GreetLater,
            ToolPolicy::new()
                .task_support(TaskSupport::Optional)
                .task_start(TaskStart::OnHandOff),
        )
        .backends(wymcp::backend::Backends::new().tasks(store))
        .task_ttl(ttl)
        .task_heartbeat(heartbeat)
        .build()
        .unwrap();
    async move {
        Harness {
            http: serve_server(server).await,
            observed_cancel,
        }
    }
}

/// `server` on 127.0.0.1 with the tokens of alice and bob.
pub(crate) async fn serve_server(server: Server) -> Http {
    let auth = BearerAuth::new()
        .token("alice-token", Identity::new("alice"))
        .token("bob-token", Identity::new("bob"));
    Http::serve(StreamableHttp::builder(server).auth(auth)).await
}

/// A 2026-07-28 request of `who` (a bearer token), declaring elicitation, and the tasks
/// extension or not.
pub(crate) async fn call(
    http: &Http,
    who: &str,
    tasks: bool,
    method: &str,
    params: Value,
) -> Answer {
    Answer::read(send(http, who, tasks, method, params).await).await
}

/// [`call`]'s request; the response unread (a `subscriptions/listen` stream, say).
pub(crate) async fn send(
    http: &Http,
    who: &str,
    tasks: bool,
    method: &str,
    params: Value,
) -> reqwest::Response {
    let caps = if tasks {
        json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}})
    } else {
        json!({"elicitation": {}})
    };
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps,
    });
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let mut headers = modern_headers(&body);
    if let Some(id) = body["params"]["taskId"].as_str() {
        headers.push(("Mcp-Name".into(), id.into()));
    }
    headers.push(("Authorization".into(), format!("Bearer {who}")));
    http.post_with(&borrowed(&headers), body.to_string()).await
}

pub(crate) async fn start(http: &Http, ms: u64) -> String {
    let args = json!({"name": "wait", "arguments": {"ms": ms}});
    let created = call(http, "alice-token", true, "tools/call", args)
        .await
        .json();
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    created["result"]["taskId"].as_str().unwrap().to_owned()
}

pub(crate) async fn poll_until_terminal(http: &Http, id: &str) -> Value {
    for _ in 0..200 {
        let got = call(
            http,
            "alice-token",
            true,
            "tasks/get",
            json!({"taskId": id}),
        )
        .await;
        let result = got.json()["result"].clone();
        if matches!(
            result["status"].as_str(),
            Some("completed" | "failed" | "cancelled")
        ) {
            return result;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("task {id} did not end");
}

/// Asks `questions` (1 or 2) at once, each under its own key, and answers what came back.
struct Ask;

impl PlainTool for Ask {
    fn name(&self) -> &str {
        "ask"
    }
    fn description(&self) -> &str {
        "Asks the user one or two questions"
    }
    fn input_schema(&self) -> Map<String, Value> {
        json!({"type": "object", "properties": {"questions": {"type": "integer"}}})
            .as_object()
            .cloned()
            .unwrap()
    }
    async fn run(&self, arguments: Map<String, Value>, ctx: Context) -> CallResult {
        let failed = |e: wymcp::session::ClientRequestError| CallError::tool(e.to_string());
        if arguments.get("questions").and_then(Value::as_u64) == Some(2) {
            let (a, b) = tokio::join!(
                ctx.elicit(question("first")),
                ctx.elicit(question("second"))
            );
            let (a, b) = (a.map_err(failed)?, b.map_err(failed)?);
            return Ok(CallOutput::text(format!(
                "{} {}",
                a["content"]["word"], b["content"]["word"]
            )));
        }
        let a = ctx.elicit(question("first")).await.map_err(failed)?;
        Ok(CallOutput::text(format!("{}", a["content"]["word"])))
    }
}

fn question(key: &str) -> Elicitation {
    Elicitation::form(
        "A word?",
        json!({"type": "object", "properties": {"word": {"type": "string"}}}),
    )
    .key(key)
}

/// Asks a name (a multi round-trip round), hands off, then greets from the task.
struct GreetLater;

impl PlainTool for GreetLater {
    fn name(&self) -> &str {
        "greet_later"
    }
    fn description(&self) -> &str {
        "Asks a name, then greets from a task"
    }
    fn input_schema(&self) -> Map<String, Value> {
        json!({"type": "object"}).as_object().cloned().unwrap()
    }
    async fn run(&self, _arguments: Map<String, Value>, ctx: Context) -> CallResult {
        let answer = ctx
            .elicit(question("name"))
            .await
            .map_err(|e| CallError::tool(e.to_string()))?;
        let handed_off = ctx.hand_off_to_task().await;
        tokio::time::sleep(Duration::from_millis(30)).await;
        Ok(CallOutput::text(format!(
            "Hello, {} (task: {handed_off})",
            answer["content"]["word"].as_str().unwrap_or("?")
        )))
    }
}
