//! The tasks extension (SEP-2663) over real HTTP at 2026-07-28, against a server on
//! 127.0.0.1 with bearer auth: a task-supporting tool answered with a task handle, polled to
//! its result, cancelled (its tool observes the cancellation), invisible to another
//! principal, forgotten after its TTL; the refusals a client that does not declare the
//! extension gets.

#![allow(clippy::unwrap_used)]

mod http_harness;
mod tasks_kit;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::json;
use tasks_kit::{call, poll_until_terminal, serve_with, start};
use wymcp::backend::{InMemoryTaskStore, TaskStore};
use wymcp::task::{TaskStatus, TaskSupport};
use wymcp::transport::http::StreamableHttp;
use wymcp::{Server, ToolPolicy};

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
        store.get(&id).await.unwrap().unwrap().status,
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
        store.get(&id).await.unwrap().is_none(),
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

/// A server whose `wait` runs as a task, at most one running per principal.
fn waiting_server_capped_at_one() -> Server {
    Server::builder()
        .plain_tool_with(
            tasks_kit::Wait::default(),
            ToolPolicy::new().task_support(TaskSupport::Optional),
        )
        .task_max_running_per_principal(1)
        .build()
        .unwrap()
}

#[tokio::test]
async fn one_principal_cannot_take_every_running_place() {
    let server = waiting_server_capped_at_one();
    let http = tasks_kit::serve_server(server).await;
    let first = start(&http, 5_000).await;
    let args = json!({"name": "wait", "arguments": {"ms": 5_000}});
    let refused = call(&http, "alice-token", true, "tools/call", args.clone())
        .await
        .json();
    assert_eq!(refused["error"]["code"], -32603, "{refused}");
    assert_eq!(
        refused["error"]["message"],
        "Too many tasks running for this caller: at most 1 at once \
         (ServerBuilder::task_max_running_per_principal); wait for one to end"
    );
    let bob = call(&http, "bob-token", true, "tools/call", args.clone())
        .await
        .json();
    assert_eq!(bob["result"]["resultType"], "task", "{bob}");
    // A place freed by a cancel is alice's again.
    call(
        &http,
        "alice-token",
        true,
        "tasks/cancel",
        json!({"taskId": first}),
    )
    .await;
    let again = call(&http, "alice-token", true, "tools/call", args)
        .await
        .json();
    assert_eq!(again["result"]["resultType"], "task", "{again}");
}

/// Issue 48, N14: without auth, a task's owner is its client's address: one anonymous client
/// at its cap does not take another's places (every anonymous caller shared one set), and an
/// anonymous task is not another address's to read.
#[tokio::test]
async fn anonymous_callers_are_counted_and_kept_apart_by_their_address() {
    let server = waiting_server_capped_at_one();
    let http = http_harness::Http::serve(StreamableHttp::builder(server)).await;
    let from = |address: &str| {
        reqwest::Client::builder()
            .local_address(address.parse::<std::net::IpAddr>().unwrap())
            .build()
            .unwrap()
    };
    let (one, two) = (from("127.0.0.1"), from("127.0.0.2"));
    let send = |client: &reqwest::Client, method: &str, params: serde_json::Value| {
        let mut params = params;
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities":
                {"extensions": {"io.modelcontextprotocol/tasks": {}}},
        });
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let mut request = client.post(&http.url).json(&body);
        for (name, value) in http_harness::modern_headers(&body) {
            request = request.header(name, value);
        }
        if let Some(id) = body["params"]["taskId"].as_str() {
            request = request.header("Mcp-Name", id);
        }
        let request = request.header("Accept", "application/json, text/event-stream");
        async move {
            request
                .send()
                .await
                .unwrap()
                .json::<serde_json::Value>()
                .await
                .unwrap()
        }
    };
    let wait = json!({"name": "wait", "arguments": {"ms": 5_000}});
    let first = send(&one, "tools/call", wait.clone()).await;
    assert_eq!(first["result"]["resultType"], "task", "{first}");
    let refused = send(&one, "tools/call", wait.clone()).await;
    assert_eq!(refused["error"]["code"], -32603, "{refused}");
    let other = send(&two, "tools/call", wait).await;
    assert_eq!(other["result"]["resultType"], "task", "{other}");
    // The first client's task is not the second's to read.
    let id = first["result"]["taskId"].as_str().unwrap();
    let foreign = send(&two, "tasks/get", json!({"taskId": id})).await;
    assert_eq!(foreign["error"]["code"], -32602, "{foreign}");
    let own = send(&one, "tasks/get", json!({"taskId": id})).await;
    assert_eq!(own["result"]["status"], "working", "{own}");
}

/// `read` at once, `export` always a task.
struct Reports;

impl wymcp::ActionTool for Reports {
    fn name(&self) -> &str {
        "reports"
    }
    fn description(&self) -> &str {
        "Reads and exports reports"
    }
    fn actions(&self) -> wymcp::Actions {
        wymcp::Actions::new()
            .action("read", wymcp::ActionSchema::new("Read a report"))
            .action(
                "export",
                wymcp::ActionSchema::new("Export every report (slow)"),
            )
    }
    async fn run_action(
        &self,
        action: &str,
        _data: wymcp::Data,
        _ctx: wymcp::Context,
    ) -> wymcp::ActionResult {
        Ok(wymcp::Reply::new(json!({"done": action})))
    }
}

#[tokio::test]
async fn one_action_of_an_action_tool_runs_as_a_task_and_the_others_do_not() {
    let server = Server::builder()
        .tool_with(
            Reports,
            ToolPolicy::new().action_task_support("export", TaskSupport::Required),
        )
        .build()
        .unwrap();
    let http = tasks_kit::serve_server(server).await;
    let args =
        |action: &str| json!({"name": "reports", "arguments": {"action": action, "data": {}}});
    let export = call(&http, "alice-token", true, "tools/call", args("export"))
        .await
        .json();
    assert_eq!(export["result"]["resultType"], "task", "{export}");
    let id = export["result"]["taskId"].as_str().unwrap().to_owned();
    let done = poll_until_terminal(&http, &id).await;
    let text = done["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(text, r#"{"done":"export"}"#, "{done}");
    let read = call(&http, "alice-token", true, "tools/call", args("read"))
        .await
        .json();
    assert_eq!(read["result"]["resultType"], "complete", "{read}");
    let refused = call(&http, "alice-token", false, "tools/call", args("export")).await;
    assert_eq!(refused.json()["error"]["code"], -32021);

    let unknown = Server::builder()
        .tool_with(
            Reports,
            ToolPolicy::new().action_task_support("nope", TaskSupport::Optional),
        )
        .build()
        .unwrap_err();
    assert_eq!(
        unknown.to_string(),
        "task support is declared for unknown tool \"reports (action nope)\""
    );
}

/// The error both of `Quota`'s ways fail their request with.
fn quota_exhausted() -> wymcp::RpcError {
    wymcp::RpcError::new(
        -32050,
        "Quota exhausted",
        Some(json!({"retryAfterMs": 60000})),
    )
}

/// Fails every call with a JSON-RPC error: `charge` (plain) with `CallError::protocol`,
/// `ledger`'s `close` (an action) with `Failure::protocol`.
struct Quota;

impl wymcp::PlainTool for Quota {
    fn name(&self) -> &str {
        "charge"
    }
    fn description(&self) -> &str {
        "Charges the account"
    }
    fn input_schema(&self) -> serde_json::Map<String, serde_json::Value> {
        json!({"type": "object"}).as_object().cloned().unwrap()
    }
    async fn run(
        &self,
        _arguments: serde_json::Map<String, serde_json::Value>,
        _ctx: wymcp::Context,
    ) -> wymcp::CallResult {
        Err(wymcp::CallError::protocol(quota_exhausted()))
    }
}

impl wymcp::ActionTool for Quota {
    fn name(&self) -> &str {
        "ledger"
    }
    fn description(&self) -> &str {
        "Closes the ledger"
    }
    fn actions(&self) -> wymcp::Actions {
        wymcp::Actions::new().action("close", wymcp::ActionSchema::new("Close the ledger"))
    }
    async fn run_action(
        &self,
        _action: &str,
        _data: wymcp::Data,
        _ctx: wymcp::Context,
    ) -> wymcp::ActionResult {
        Err(wymcp::tool::Failure::protocol(quota_exhausted()))
    }
}

#[tokio::test]
async fn a_tool_that_fails_its_call_with_a_protocol_error_fails_its_task_with_that_error() {
    let optional = || ToolPolicy::new().task_support(TaskSupport::Optional);
    let server = Server::builder()
        .plain_tool_with(Quota, optional())
        .tool_with(Quota, optional())
        .build()
        .unwrap();
    let http = tasks_kit::serve_server(server).await;
    let expected =
        json!({"code": -32050, "message": "Quota exhausted", "data": {"retryAfterMs": 60000}});
    let calls = [
        json!({"name": "charge", "arguments": {}}),
        json!({"name": "ledger", "arguments": {"action": "close", "data": {}}}),
    ];
    for args in calls {
        // As a task: the task ends `failed`, its error the tool's, as it is.
        let created = call(&http, "alice-token", true, "tools/call", args.clone())
            .await
            .json();
        assert_eq!(created["result"]["resultType"], "task", "{created}");
        let id = created["result"]["taskId"].as_str().unwrap().to_owned();
        let failed = poll_until_terminal(&http, &id).await;
        assert_eq!(failed["status"], "failed", "{failed}");
        assert_eq!(failed["error"], expected, "{failed}");
        assert!(failed.get("result").is_none(), "{failed}");
        // A plain call: the request is answered with the error, not with a result.
        let plain = call(&http, "alice-token", false, "tools/call", args)
            .await
            .json();
        assert_eq!(plain["error"], expected, "{plain}");
        assert!(plain.get("result").is_none(), "{plain}");
    }
}

#[tokio::test]
async fn through_layers_a_protocol_error_is_seen_as_an_error_result_and_answered_as_itself() {
    use tower::ServiceExt;
    use wymcp::middleware::{BoxOperation, Operation};
    // A layer that notes what each call answered it: whether an error, and its text.
    let seen = Arc::new(std::sync::Mutex::new(Vec::<(bool, Option<String>)>::new()));
    let noted = seen.clone();
    let layer = tower::layer::layer_fn(move |inner: BoxOperation| {
        let noted = noted.clone();
        BoxOperation::new(tower::service_fn(move |op: Operation| {
            let (inner, noted) = (inner.clone(), noted.clone());
            async move {
                let response = inner.oneshot(op).await?;
                let call = response
                    .as_call()
                    .map(|r| (r.is_error(), r.text().map(str::to_owned)));
                noted.lock().unwrap().extend(call);
                Ok(response)
            }
        }))
    });
    let server = Server::builder()
        .plain_tool(Quota)
        .tool(Quota)
        .layer(layer)
        .build()
        .unwrap();
    let calls = [
        ("charge", json!({})),
        ("ledger", json!({"action": "close", "data": {}})),
    ];
    for (name, arguments) in calls {
        let answer =
            wymcp::testing::call_tool(&server, name, Some(arguments), wymcp::Context::default())
                .await;
        let error = answer.expect_err("the request fails with the tool's error");
        assert_eq!(error.code(), -32050);
        assert_eq!(error.message(), "Quota exhausted");
        assert_eq!(error.data(), Some(&json!({"retryAfterMs": 60000})));
    }
    // The layer saw each as a tool's error result.
    let expected = vec![(true, Some("Quota exhausted".to_owned())); 2];
    assert_eq!(*seen.lock().unwrap(), expected);
}
