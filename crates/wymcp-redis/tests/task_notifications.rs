//! Task status notifications across nodes: two node processes sharing one real
//! `redis-server`, a client sending each request to the other node in turn. A task runs on
//! the first node; a `subscriptions/listen` stream opened on the second hears every status
//! change (each input request, the answers recorded on either node, the result), as
//! `tasks/get` answers it.

#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use serde_json::{Value, json};

use support::redis_server::RedisServer;
use support::{Client, NodeProcess, Sse};

/// Not a test of its own: with `WYMCP_TEST_NODE_REDIS` set, one node process of the tests here
/// (serving until killed); without it, it returns at once.
#[test]
fn node_process() {
    support::serve_as_node_process();
}

/// Reads the stream's `notifications/tasks` until `done` holds for one (at most ten).
async fn until(stream: &mut Sse, done: impl Fn(&Value) -> bool) -> Value {
    let mut seen = Vec::new();
    for _ in 0..10 {
        let message = stream.message().await;
        assert_eq!(message["method"], "notifications/tasks", "{message}");
        let task = message["params"].clone();
        if done(&task) {
            return task;
        }
        seen.push(task);
    }
    panic!("the awaited notification never came: {seen:?}");
}

fn asks(task: &Value, key: &str) -> bool {
    task["status"] == "input_required" && task["inputRequests"].get(key).is_some()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_on_one_node_hears_a_task_the_other_node_runs() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let nodes: Vec<NodeProcess> = (0..2)
        .map(|_| NodeProcess::spawn_with_tasks("node_process", &redis.url()))
        .collect();
    let mut client = Client::new(nodes.iter().map(|n| n.url.clone()).collect(), true);

    // Node 0 runs the task; node 1 holds the stream.
    let call = json!({"name": "ask", "arguments": {}});
    let handle = client.request(1, "tools/call", call).await.last().await;
    assert_eq!(handle["result"]["resultType"], "task", "{handle}");
    let id = handle["result"]["taskId"].as_str().unwrap().to_owned();
    let filter = json!({"notifications": {"taskIds": [id]}});
    let mut stream = client
        .request(2, "subscriptions/listen", filter)
        .await
        .stream();
    let ack = stream.message().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["notifications"], json!({"taskIds": [id]}));

    let asking = until(&mut stream, |t| asks(t, "name")).await;
    assert_eq!(asking["taskId"], id);
    assert_eq!(
        asking["inputRequests"]["name"]["method"],
        "elicitation/create"
    );
    // Answered on node 0, which runs the task.
    let name = json!({"name": {"action": "accept", "content": {"name": "Ada"}}});
    let params = json!({"taskId": id, "inputResponses": name});
    let acked = client.request(3, "tasks/update", params).await.last().await;
    assert_eq!(acked["result"]["resultType"], "complete", "{acked}");

    let sampling = until(&mut stream, |t| asks(t, "summary")).await;
    assert_eq!(
        sampling["inputRequests"]["summary"]["method"],
        "sampling/createMessage"
    );
    // Answered on node 1: recorded in Redis, delivered by node 0 at its next heartbeat.
    let summary = json!({"summary": {"role": "assistant", "model": "m",
        "content": {"type": "text", "text": "A summary"}}});
    let params = json!({"taskId": id, "inputResponses": summary});
    let acked = client.request(4, "tasks/update", params).await.last().await;
    assert_eq!(acked["result"]["resultType"], "complete", "{acked}");

    let done = until(&mut stream, |t| t["status"] == "completed").await;
    let text = done["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(text).unwrap(),
        json!({"name": "Ada", "summary": "A summary"}),
        "{done}"
    );
    let got = client
        .request(5, "tasks/get", json!({"taskId": id}))
        .await
        .last()
        .await;
    assert_eq!(got["result"]["result"], done["result"]);
}
