//! A task whose node stopped, of a tool declared safe to run again
//! (`TaskResume::Rerun`): the node that next reads it takes it over and runs the call again
//! from its arguments, as its caller (its identity, its capabilities), to its result. Of
//! several nodes reading it at once, one takes it over. Two nodes on 127.0.0.1 sharing one
//! task store; the runner's stop is its heartbeat going stale in the store.
//! `wymcp-redis`'s `task_restart.rs` kills a real node process instead.

#![allow(clippy::unwrap_used, missing_docs)]

mod http_harness;
mod tasks_kit;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use http_harness::Http;
use serde_json::{Map, Value, json};
use tasks_kit::{call, poll_until_terminal, serve_server};
use wymcp::backend::{InMemoryTaskStore, TaskStore};
use wymcp::task::{TaskResume, TaskSupport};
use wymcp::{CallOutput, CallResult, Context, PlainTool, Server, ToolPolicy};

const ALICE: &str = "alice-token";

/// Counts its runs: the first never ends (until cancelled), a later one answers at once.
struct Count(Arc<AtomicUsize>);

impl PlainTool for Count {
    fn name(&self) -> &str {
        "count"
    }
    fn description(&self) -> &str {
        "Counts its runs"
    }
    fn input_schema(&self) -> Map<String, Value> {
        json!({"type": "object", "properties": {"label": {"type": "string"}}})
            .as_object()
            .cloned()
            .unwrap()
    }
    async fn run(&self, arguments: Map<String, Value>, ctx: Context) -> CallResult {
        let run = self.0.fetch_add(1, Ordering::SeqCst) + 1;
        if run == 1 {
            ctx.cancellation().cancelled().await;
        }
        let who = ctx.identity().map(|i| i.subject().to_owned());
        Ok(CallOutput::json(
            json!({"run": run, "label": arguments.get("label"), "caller": who}),
        ))
    }
}

/// A node: `count` runs as a task and is rerun when its node stops.
async fn node(store: Arc<InMemoryTaskStore>, runs: Arc<AtomicUsize>) -> Http {
    let server = Server::builder()
        .plain_tool_with(
            Count(runs),
            ToolPolicy::new()
                .task_support(TaskSupport::Optional)
                .task_resume(TaskResume::Rerun),
        )
        .backends(wymcp::backend::Backends::new().tasks(store))
        .build()
        .unwrap();
    serve_server(server).await
}

/// Makes the task's heartbeat stale, as the stop of its node would.
async fn stop_renewing(store: &InMemoryTaskStore, id: &str) {
    let mut record = store.get(id).await.unwrap().unwrap();
    record.heartbeat_ms -= 60_000;
    store.put(record).await.unwrap();
}

async fn get(http: &Http, who: &str, id: &str) -> Value {
    call(http, who, true, "tasks/get", json!({"taskId": id}))
        .await
        .json()
}

#[tokio::test]
async fn a_rerun_tools_task_left_by_a_stopped_node_runs_again_to_its_result() {
    let store = Arc::new(InMemoryTaskStore::default());
    let runs = Arc::new(AtomicUsize::new(0));
    let runner = node(store.clone(), runs.clone()).await;
    let other = node(store.clone(), runs.clone()).await;
    let args = json!({"name": "count", "arguments": {"label": "nightly"}});
    let created = call(&runner, ALICE, true, "tools/call", args).await.json();
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    // The call as made is kept with the task: its params and its caller.
    let record = store.get(&id).await.unwrap().unwrap();
    let kept = record.call.as_ref().unwrap();
    assert_eq!(kept.params["arguments"], json!({"label": "nightly"}));
    assert_eq!(kept.identity.as_ref().unwrap()["subject"], "alice");

    stop_renewing(&store, &id).await;
    // Another principal reading it takes nothing over: not found, and no run.
    let bob = get(&other, "bob-token", &id).await;
    assert_eq!(bob["error"]["code"], -32602, "{bob}");
    let taken = get(&other, ALICE, &id).await;
    assert_eq!(taken["result"]["status"], "working", "{taken}");
    let done = poll_until_terminal(&other, &id).await;
    assert_eq!(done["status"], "completed", "{done}");
    let text = done["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(text).unwrap(),
        json!({"run": 2, "label": "nightly", "caller": "alice"})
    );
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn of_two_nodes_reading_a_left_task_at_once_one_runs_it_again() {
    let store = Arc::new(InMemoryTaskStore::default());
    let runs = Arc::new(AtomicUsize::new(0));
    let runner = node(store.clone(), runs.clone()).await;
    let (b, c) = (
        node(store.clone(), runs.clone()).await,
        node(store.clone(), runs.clone()).await,
    );
    let args = json!({"name": "count", "arguments": {}});
    let created = call(&runner, ALICE, true, "tools/call", args).await.json();
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    stop_renewing(&store, &id).await;
    let (seen_b, seen_c) = tokio::join!(get(&b, ALICE, &id), get(&c, ALICE, &id));
    for seen in [&seen_b, &seen_c] {
        let status = &seen["result"]["status"];
        assert!(status == "working" || status == "completed", "{seen}");
    }
    let done = poll_until_terminal(&b, &id).await;
    assert_eq!(done["status"], "completed", "{done}");
    // Give a second taker, if there were one, the time to have run.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(runs.load(Ordering::SeqCst), 2, "one rerun only");
}
