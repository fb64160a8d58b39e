//! Tasks kept in Redis outlive the node process that ran them: after the node is killed and
//! a new process starts on the same Redis, a task that completed still answers its result,
//! and the tasks it was running (one working, one waiting for input) are reported failed,
//! naming why; an answer sent for them afterwards changes nothing. A task of a tool declared
//! safe to rerun (`nap`) is run again by the new process, to its result.

#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use std::time::Duration;

use serde_json::{Value, json};

use support::redis_server::RedisServer;
use support::{Client, NodeProcess};

/// Not a test of its own: with `WYMCP_TEST_NODE_REDIS` set, one node process of the tests here
/// (serving until killed); without it, it returns at once.
#[test]
fn node_process() {
    support::serve_as_node_process();
}

async fn request(client: &mut Client, method: &str, params: Value) -> Value {
    let answer = client.request(1, method, params).await.last().await;
    answer["result"].clone()
}

/// Calls `tool` as a task: its id.
async fn start(client: &mut Client, tool: &str) -> String {
    start_with(client, tool, json!({})).await
}

async fn start_with(client: &mut Client, tool: &str, arguments: Value) -> String {
    let call = json!({"name": tool, "arguments": arguments});
    let handle = request(client, "tools/call", call).await;
    assert_eq!(handle["resultType"], "task", "{handle}");
    handle["taskId"].as_str().unwrap().to_owned()
}

/// Polls `tasks/get` of `id` until `done` holds (bounded: 100 polls, 50 ms apart).
async fn until(client: &mut Client, id: &str, done: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..100 {
        let task = request(client, "tasks/get", json!({"taskId": id})).await;
        if done(&task) {
            return task;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("task {id} never reached the state awaited");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_in_redis_outlive_a_restart_of_their_node() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let node = NodeProcess::spawn_with_tasks("node_process", &redis.url());
    let mut client = Client::new(vec![node.url.clone()], true);
    let finished = start(&mut client, "steps").await;
    until(&mut client, &finished, |t| t["status"] == "completed").await;
    let working = start(&mut client, "slow").await;
    let napping = start_with(&mut client, "nap", json!({"ms": 1500})).await;
    let asking = start(&mut client, "ask").await;
    let parked = until(&mut client, &asking, |t| t["status"] == "input_required").await;
    assert_eq!(
        parked["inputRequests"]["name"]["method"],
        "elicitation/create"
    );

    drop(node); // killed
    let restarted = NodeProcess::spawn_with_tasks("node_process", &redis.url());
    let mut client = Client::new(vec![restarted.url.clone()], true);
    let kept = request(&mut client, "tasks/get", json!({"taskId": finished})).await;
    assert_eq!(kept["status"], "completed");
    let text = kept["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(text).unwrap(),
        json!({"steps": 2}),
        "{kept}"
    );

    for id in [&working, &asking] {
        let failed = until(&mut client, id, |t| {
            t["status"] != "working" && t["status"] != "input_required"
        })
        .await;
        assert_eq!(failed["status"], "failed", "{failed}");
        assert_eq!(
            failed["error"]["message"],
            "The node running this task stopped, or could not record its end, before the task \
         ended; call the tool again"
        );
        assert!(failed.get("inputRequests").is_none());
    }
    let late = json!({"taskId": asking, "inputResponses": {"name": {"action": "accept",
        "content": {"name": "Ada"}}}});
    assert_eq!(
        request(&mut client, "tasks/update", late).await["resultType"],
        "complete"
    );
    let still = request(&mut client, "tasks/get", json!({"taskId": asking})).await;
    assert_eq!(still["status"], "failed");

    // `nap` was rerun by the new node (its own nap of 1.5 s), as it was called.
    let napped = until(&mut client, &napping, |t| t["status"] != "working").await;
    assert_eq!(napped["status"], "completed", "{napped}");
    let text = napped["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(text).unwrap(),
        json!({"napped": 1500})
    );
}
