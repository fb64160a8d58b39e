//! Task status notifications (SEP-2663's `notifications/tasks`) over real HTTP at 2026-07-28,
//! against a server on 127.0.0.1 with bearer auth: a `subscriptions/listen` stream naming
//! tasks in `taskIds` is acknowledged with the tasks its caller may see, carries each one's
//! state at once, then every status change as `tasks/get` would answer it (input asked, input
//! answered, the result; a cancel); another principal's task is not honoured; a client that
//! does not declare the extension is refused `-32021`; the list is bounded. Over stdio, the
//! same stream shares stdout with the answers.

#![allow(clippy::unwrap_used, missing_docs)]

mod http_harness;
mod tasks_kit;

use std::sync::Arc;
use std::time::Duration;

use http_harness::{Answer, Http, Sse};
use serde_json::{Value, json};
use tasks_kit::{Wait, call, send, serve_with, start};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio_util::sync::CancellationToken;
use wymcp::task::TaskSupport;
use wymcp::transport::stdio::{StdioConfig, serve_io};
use wymcp::{Server, ToolPolicy};

const ALICE: &str = "alice-token";
const ID_KEY: &str = "io.modelcontextprotocol/subscriptionId";
/// The longest any single wait for an event may take.
const WAIT: Duration = Duration::from_secs(5);

/// Opens `who`'s listen stream for `task_ids` (declaring the tasks extension or not).
async fn listen(http: &Http, who: &str, tasks: bool, task_ids: Value) -> reqwest::Response {
    let filter = json!({"notifications": {"taskIds": task_ids}});
    send(http, who, tasks, "subscriptions/listen", filter).await
}

/// The next `notifications/tasks` of the stream: its params, checked to carry the stream's
/// subscription id (the listen request's id, 1).
async fn next_task(stream: &mut Sse) -> Value {
    let (message, before) = stream.until("notifications/tasks").await;
    assert!(before.is_empty(), "only task notifications: {before:?}");
    let mut params = message["params"].clone();
    let meta = params.as_object_mut().unwrap().remove("_meta").unwrap();
    assert_eq!(meta, json!({ ID_KEY: 1 }));
    params
}

/// Reads the stream's task notifications until one has `status`: the statuses it saw.
async fn until_status(stream: &mut Sse, status: &str) -> (Value, Vec<String>) {
    let mut seen = Vec::new();
    for _ in 0..10 {
        let task = next_task(stream).await;
        seen.push(task["status"].as_str().unwrap().to_owned());
        if task["status"] == status {
            return (task, seen);
        }
    }
    panic!("no {status} notification among {seen:?}");
}

/// `tasks/get` of `id` for alice, without what only a response carries (`resultType`, the
/// server's info in `_meta`).
async fn get(http: &Http, id: &str) -> Value {
    let answer = call(http, ALICE, true, "tasks/get", json!({"taskId": id})).await;
    let mut task = answer.json()["result"].clone();
    let fields = task.as_object_mut().unwrap();
    assert_eq!(fields.remove("resultType"), Some(json!("complete")));
    assert!(fields.remove("_meta").is_some());
    task
}

#[tokio::test]
async fn a_listen_stream_carries_each_status_of_a_task_up_to_its_result() {
    let h = serve_with(Arc::default(), Duration::from_secs(60)).await;
    let args = json!({"name": "ask", "arguments": {"questions": 1}});
    let created = call(&h.http, ALICE, true, "tools/call", args).await.json();
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();

    let resp = listen(&h.http, ALICE, true, json!([id, id, "f".repeat(32)])).await;
    assert_eq!(resp.status(), reqwest::StatusCode::OK);
    let mut stream = Sse::bounded(resp, WAIT);
    let ack = stream.message().await.unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    // Listed twice, one unknown: the task once.
    assert_eq!(ack["params"]["notifications"], json!({"taskIds": [id]}));
    assert_eq!(ack["params"]["_meta"], json!({ ID_KEY: 1 }));

    // Its state now (working, or already asking), then asking.
    let (asking, _) = until_status(&mut stream, "input_required").await;
    assert_eq!(asking["taskId"], id);
    let request = &asking["inputRequests"]["first"];
    assert_eq!(request["method"], "elicitation/create", "{asking}");
    assert_eq!(asking, get(&h.http, &id).await, "as tasks/get answers it");

    let answer = json!({"first": {"action": "accept", "content": {"word": "hi"}}});
    let params = json!({"taskId": id, "inputResponses": answer});
    let acked = call(&h.http, ALICE, true, "tasks/update", params).await;
    assert_eq!(acked.json()["result"]["resultType"], "complete");

    let (done, seen) = until_status(&mut stream, "completed").await;
    assert!(
        seen.iter()
            .all(|s| s == "working" || s == "input_required" || s == "completed"),
        "{seen:?}"
    );
    assert_eq!(done["result"]["content"][0]["text"], "\"hi\"", "{done}");
    assert_eq!(done["result"]["isError"], false);
    assert_eq!(done, get(&h.http, &id).await);
}

#[tokio::test]
async fn a_cancel_is_announced_on_the_stream() {
    let h = serve_with(Arc::default(), Duration::from_secs(60)).await;
    let id = start(&h.http, 5_000).await;
    let mut stream = Sse::bounded(listen(&h.http, ALICE, true, json!([id])).await, WAIT);
    stream.message().await.unwrap(); // the acknowledgement
    let now = next_task(&mut stream).await;
    assert_eq!(now["status"], "working");
    assert_eq!(now["taskId"], id);
    for field in ["createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"] {
        assert!(now.get(field).is_some(), "{field} in {now}");
    }
    let cancel = call(&h.http, ALICE, true, "tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(cancel.json()["result"]["resultType"], "complete");
    let cancelled = next_task(&mut stream).await;
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    assert!(cancelled.get("result").is_none());
}

#[tokio::test]
async fn another_principals_task_is_not_honoured() {
    let h = serve_with(Arc::default(), Duration::from_secs(60)).await;
    let id = start(&h.http, 5_000).await;
    let resp = listen(&h.http, "bob-token", true, json!([id])).await;
    let mut stream = Sse::bounded(resp, WAIT);
    let ack = stream.message().await.unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["notifications"], json!({}), "{ack}");
}

#[tokio::test]
async fn task_ids_need_the_extension_and_are_bounded() {
    let h = serve_with(Arc::default(), Duration::from_secs(60)).await;
    let id = start(&h.http, 5_000).await;
    let refused = Answer::read(listen(&h.http, ALICE, false, json!([id])).await).await;
    assert_eq!(refused.status, reqwest::StatusCode::BAD_REQUEST);
    let error = &refused.json()["error"];
    assert_eq!(error["code"], -32021, "{error}");
    assert_eq!(
        error["data"]["requiredCapabilities"],
        json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})
    );

    let many: Vec<String> = (0..101).map(|n| format!("{n:032x}")).collect();
    let refused = Answer::read(listen(&h.http, ALICE, true, json!(many)).await).await;
    assert_eq!(refused.status, reqwest::StatusCode::BAD_REQUEST);
    assert_eq!(
        refused.json()["error"]["message"],
        "Invalid params: params.notifications.taskIds lists 101 task ids; at most 100 are allowed \
         (Limits::max_listen_task_ids)"
    );
    let refused = Answer::read(listen(&h.http, ALICE, true, json!([1])).await).await;
    assert_eq!(
        refused.json()["error"]["message"],
        "Invalid params: params.notifications.taskIds must be an array of strings"
    );
}

#[tokio::test]
async fn over_stdio_the_stream_shares_stdout_with_the_answers() {
    let server = Server::builder()
        .plain_tool_with(
            Wait::default(),
            ToolPolicy::new().task_support(TaskSupport::Optional),
        )
        .build()
        .unwrap();
    let (client, served) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(served);
    let stop = CancellationToken::new();
    tokio::spawn(serve_io(
        server,
        StdioConfig::default(),
        read,
        write,
        stop.clone(),
        |_| {},
    ));
    let (client_read, mut client_write) = tokio::io::split(client);
    let mut lines = BufReader::new(client_read).lines();
    let envelope = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":
            {"extensions": {"io.modelcontextprotocol/tasks": {}}},
    });
    let mut send = async |id: i64, method: &str, mut params: Value| {
        params["_meta"] = envelope.clone();
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let line = format!("{message}\n");
        client_write.write_all(line.as_bytes()).await.unwrap();
    };
    let mut recv = async || -> Value {
        let line = tokio::time::timeout(WAIT, lines.next_line()).await.unwrap();
        serde_json::from_str(&line.unwrap().unwrap()).unwrap()
    };

    send(
        1,
        "tools/call",
        json!({"name": "wait", "arguments": {"ms": 200}}),
    )
    .await;
    let handle = recv().await;
    assert_eq!(handle["result"]["resultType"], "task", "{handle}");
    let id = handle["result"]["taskId"].clone();
    send(
        2,
        "subscriptions/listen",
        json!({"notifications": {"taskIds": [id]}}),
    )
    .await;
    let ack = recv().await;
    assert_eq!(
        ack["params"]["notifications"],
        json!({"taskIds": [id]}),
        "{ack}"
    );
    let mut statuses = Vec::new();
    while statuses.last().map(String::as_str) != Some("completed") && statuses.len() < 5 {
        let task = recv().await;
        assert_eq!(task["method"], "notifications/tasks", "{task}");
        assert_eq!(task["params"]["_meta"][ID_KEY], 2);
        assert_eq!(task["params"]["taskId"], id);
        statuses.push(task["params"]["status"].as_str().unwrap().to_owned());
        if task["params"]["status"] == "completed" {
            assert_eq!(
                task["params"]["result"]["content"][0]["text"],
                "waited 200 ms"
            );
        }
    }
    // Its state when the stream opened (working, unless the machine took 200 ms to open it),
    // then its end.
    assert!(
        statuses == ["working", "completed"] || statuses == ["completed"],
        "{statuses:?}"
    );
    stop.cancel();
}
