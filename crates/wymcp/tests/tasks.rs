//! The tasks extension (SEP-2663) over real HTTP at 2026-07-28, against a server on
//! 127.0.0.1 with bearer auth: a task-supporting tool answered with a task handle, polled to
//! its result, cancelled (its tool observes the cancellation), invisible to another
//! principal, forgotten after its TTL; the refusals a client that does not declare the
//! extension gets.

#![allow(clippy::unwrap_used)]

mod http_harness;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use http_harness::{Answer, Http, borrowed, modern_headers};
use serde_json::{Map, Value, json};
use wymcp::task::{InMemoryTaskStore, TaskStatus, TaskStore, TaskSupport};
use wymcp::transport::http::{BearerAuth, Identity, StreamableHttp};
use wymcp::{CallError, CallOutput, CallResult, Context, PlainTool, Server};

/// Waits `ms` milliseconds (or until cancelled, which it records), then answers.
struct Wait {
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

struct Harness {
    http: Http,
    observed_cancel: Arc<AtomicBool>,
}

fn serve_with(store: Arc<InMemoryTaskStore>, ttl: Duration) -> impl Future<Output = Harness> {
    let observed_cancel = Arc::new(AtomicBool::new(false));
    let server = Server::builder()
        .plain_tool(Wait {
            observed_cancel: observed_cancel.clone(),
        })
        .task_support("wait", TaskSupport::Optional)
        .task_store(Shared(store))
        .task_ttl(ttl)
        .build()
        .unwrap();
    let auth = BearerAuth::new()
        .token("alice-token", Identity::new("alice"))
        .token("bob-token", Identity::new("bob"));
    async move {
        Harness {
            http: Http::serve(StreamableHttp::builder(server).auth(auth)).await,
            observed_cancel,
        }
    }
}

/// A store the test can look into while the server uses it.
struct Shared(Arc<InMemoryTaskStore>);

impl TaskStore for Shared {
    fn put(&self, task: wymcp::task::TaskRecord) -> Result<(), wymcp::task::TaskStoreError> {
        self.0.put(task)
    }
    fn get(
        &self,
        id: &str,
    ) -> Result<Option<wymcp::task::TaskRecord>, wymcp::task::TaskStoreError> {
        self.0.get(id)
    }
    fn remove(&self, id: &str) -> Result<(), wymcp::task::TaskStoreError> {
        self.0.remove(id)
    }
    fn remove_expired(&self, now_ms: u64) -> Result<usize, wymcp::task::TaskStoreError> {
        self.0.remove_expired(now_ms)
    }
}

/// A 2026-07-28 request of `who` (a bearer token), declaring the tasks extension or not.
async fn call(http: &Http, who: &str, tasks: bool, method: &str, params: Value) -> Answer {
    let caps = if tasks {
        json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})
    } else {
        json!({})
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
    http.post_raw(&borrowed(&headers), body.to_string()).await
}

async fn start(http: &Http, ms: u64) -> String {
    let args = json!({"name": "wait", "arguments": {"ms": ms}});
    let created = call(http, "alice-token", true, "tools/call", args)
        .await
        .json();
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    created["result"]["taskId"].as_str().unwrap().to_owned()
}

async fn poll_until_terminal(http: &Http, id: &str) -> Value {
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

#[tokio::test]
async fn a_task_is_created_polled_and_completed_with_its_result_inlined() {
    let h = serve_with(Arc::default(), Duration::from_secs(60)).await;
    let discover = call(&h.http, "alice-token", false, "server/discover", json!({})).await;
    assert_eq!(
        discover.json()["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/tasks"],
        json!({})
    );
    let args = json!({"name": "wait", "arguments": {"ms": 50}});
    let created = call(&h.http, "alice-token", true, "tools/call", args)
        .await
        .json();
    let handle = &created["result"];
    assert_eq!(handle["status"], "working");
    assert_eq!(handle["ttlMs"], 60_000);
    assert_eq!(handle["taskId"].as_str().unwrap().len(), 32);
    assert!(handle.get("result").is_none() && handle.get("content").is_none());
    let id = handle["taskId"].as_str().unwrap();
    let done = poll_until_terminal(&h.http, id).await;
    assert_eq!(done["status"], "completed");
    assert_eq!(done["resultType"], "complete");
    assert_eq!(done["result"]["content"][0]["text"], "waited 50 ms");

    // Without the extension the same tool answers its result at once.
    let args = json!({"name": "wait", "arguments": {"ms": 0}});
    let sync = call(&h.http, "alice-token", false, "tools/call", args)
        .await
        .json();
    assert_eq!(sync["result"]["resultType"], "complete");
    assert_eq!(sync["result"]["content"][0]["text"], "waited 0 ms");
}

#[tokio::test]
async fn another_principal_cannot_see_update_or_cancel_a_task() {
    let h = serve_with(Arc::default(), Duration::from_secs(60)).await;
    let id = start(&h.http, 5_000).await;
    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        let params = json!({"taskId": id, "inputResponses": {}});
        let answer = call(&h.http, "bob-token", true, method, params)
            .await
            .json();
        assert_eq!(answer["error"]["code"], -32602, "{method}: {answer}");
        assert_eq!(
            answer["error"]["data"]["reason"],
            format!("Unknown task {id}: no task with this id exists for this caller")
        );
    }
    // Still alice's, still running.
    let got = call(
        &h.http,
        "alice-token",
        true,
        "tasks/get",
        json!({"taskId": id}),
    )
    .await;
    assert_eq!(got.json()["result"]["status"], "working");
}

#[tokio::test]
async fn a_cancelled_task_ends_cancelled_and_its_tool_observes_it() {
    let h = serve_with(Arc::default(), Duration::from_secs(60)).await;
    let id = start(&h.http, 60_000).await;
    let ack = call(
        &h.http,
        "alice-token",
        true,
        "tasks/cancel",
        json!({"taskId": id}),
    )
    .await;
    let ack = ack.json()["result"].clone();
    assert_eq!(ack["resultType"], "complete");
    assert!(ack.get("taskId").is_none() && ack.get("status").is_none());
    let done = poll_until_terminal(&h.http, &id).await;
    assert_eq!(done["status"], "cancelled");
    assert!(done.get("result").is_none());
    for _ in 0..100 {
        if h.observed_cancel.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        h.observed_cancel.load(Ordering::SeqCst),
        "the tool saw no cancellation"
    );
    // Cancelling an ended task is the same acknowledgement.
    let again = call(
        &h.http,
        "alice-token",
        true,
        "tasks/cancel",
        json!({"taskId": id}),
    )
    .await;
    assert_eq!(again.json()["result"]["resultType"], "complete");
}

#[tokio::test]
async fn a_task_is_forgotten_after_its_ttl() {
    let store = Arc::new(InMemoryTaskStore::default());
    let h = serve_with(store.clone(), Duration::from_millis(200)).await;
    let id = start(&h.http, 0).await;
    let done = poll_until_terminal(&h.http, &id).await;
    assert_eq!(done["status"], "completed");
    assert_eq!(
        store.get(&id).unwrap().unwrap().status,
        TaskStatus::Completed
    );
    tokio::time::sleep(Duration::from_millis(250)).await;
    let gone = call(
        &h.http,
        "alice-token",
        true,
        "tasks/get",
        json!({"taskId": id}),
    )
    .await;
    assert_eq!(gone.json()["error"]["code"], -32602);
    assert!(
        store.get(&id).unwrap().is_none(),
        "an expired task is removed"
    );
}

#[tokio::test]
async fn a_client_without_the_extension_is_refused_the_task_methods() {
    let h = serve_with(Arc::default(), Duration::from_secs(60)).await;
    let answer = call(
        &h.http,
        "alice-token",
        false,
        "tasks/get",
        json!({"taskId": "x"}),
    )
    .await;
    assert_eq!(answer.status, reqwest::StatusCode::BAD_REQUEST);
    let error = &answer.json()["error"];
    assert_eq!(error["code"], -32021);
    assert_eq!(
        error["data"]["requiredCapabilities"],
        json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})
    );
}

#[test]
fn task_support_for_an_unknown_tool_fails_build() {
    let refused = Server::builder()
        .task_support("nope", TaskSupport::Required)
        .build()
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "task support is declared for unknown tool \"nope\""
    );
}
