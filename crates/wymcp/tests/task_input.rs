//! Input inside a task (SEP-2663 with SEP-2322) over real HTTP at 2026-07-28: a task whose
//! tool asks the user parks as `input_required` with its `inputRequests`, and `tasks/update`
//! resumes it (one answer at a time when it asked two questions at once; a misshapen answer
//! or another principal's update changes nothing); a tool that hands off answers its
//! multi round-trip round first and its task handle on the retry; nodes sharing a store: an
//! answer or a cancel given to the node that does not run the task reaches it at its next
//! heartbeat, and a task left by a node that stopped is reported failed.

#![allow(clippy::unwrap_used)]

mod http_harness;
mod tasks_kit;

use std::sync::Arc;
use std::time::Duration;

use http_harness::Http;
use serde_json::{Value, json};
use tasks_kit::{call, poll_until_terminal, serve_node, serve_with, start};
use wymcp::backend::{InMemoryTaskStore, TaskStore};

const ALICE: &str = "alice-token";

/// Starts `ask` with `questions` as a task of alice's: its id.
async fn ask(http: &Http, questions: u64) -> String {
    let args = json!({"name": "ask", "arguments": {"questions": questions}});
    let created = call(http, ALICE, true, "tools/call", args).await.json();
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    created["result"]["taskId"].as_str().unwrap().to_owned()
}

async fn get(http: &Http, id: &str) -> Value {
    let answer = call(http, ALICE, true, "tasks/get", json!({"taskId": id})).await;
    answer.json()["result"].clone()
}

/// Polls `tasks/get` until the task shows `keys` outstanding requests.
async fn until_asking(http: &Http, id: &str, keys: usize) -> Value {
    for _ in 0..200 {
        let task = get(http, id).await;
        if task["status"] == "input_required"
            && task["inputRequests"].as_object().map(serde_json::Map::len) == Some(keys)
        {
            return task;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("task {id} never asked {keys} questions");
}

async fn update(http: &Http, who: &str, id: &str, responses: Value) -> Value {
    let params = json!({"taskId": id, "inputResponses": responses});
    call(http, who, true, "tasks/update", params).await.json()
}

fn word(word: &str) -> Value {
    json!({"action": "accept", "content": {"word": word}})
}

#[tokio::test]
async fn a_task_parked_on_input_resumes_after_tasks_update() {
    let h = serve_with(Arc::default(), Duration::from_secs(60)).await;
    let id = ask(&h.http, 1).await;
    let parked = until_asking(&h.http, &id, 1).await;
    let request = &parked["inputRequests"]["first"];
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["message"], "A word?");
    assert!(parked.get("result").is_none());

    // An answer of the wrong shape, and a key nobody asked, change nothing.
    let ack = update(
        &h.http,
        ALICE,
        &id,
        json!({"first": 42, "other": word("x")}),
    )
    .await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    let fields: Vec<_> = ack["result"].as_object().unwrap().keys().cloned().collect();
    assert_eq!(
        fields,
        ["_meta", "resultType"],
        "an ack without task fields"
    );
    assert_eq!(
        until_asking(&h.http, &id, 1).await["inputRequests"],
        parked["inputRequests"]
    );

    let ack = update(&h.http, ALICE, &id, json!({"first": word("kiwi")})).await;
    assert_eq!(ack["result"]["resultType"], "complete");
    let done = poll_until_terminal(&h.http, &id).await;
    assert_eq!(done["status"], "completed");
    assert_eq!(done["result"]["content"][0]["text"], "\"kiwi\"");
    assert!(done.get("inputRequests").is_none());
}

#[tokio::test]
async fn two_questions_asked_at_once_are_answered_one_at_a_time() {
    let h = serve_with(Arc::default(), Duration::from_secs(60)).await;
    let id = ask(&h.http, 2).await;
    let parked = until_asking(&h.http, &id, 2).await;
    let keys: Vec<_> = parked["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(keys, ["first", "second"]);

    update(&h.http, ALICE, &id, json!({"second": word("pear")})).await;
    // Acknowledged after the record changed: the very next read sees it.
    let half = get(&h.http, &id).await;
    assert_eq!(half["status"], "input_required");
    let left: Vec<_> = half["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(left, ["first"]);
    // An answered key is not asked again: answering it twice is ignored.
    update(&h.http, ALICE, &id, json!({"second": word("fig")})).await;
    update(&h.http, ALICE, &id, json!({"first": word("plum")})).await;
    let done = poll_until_terminal(&h.http, &id).await;
    assert_eq!(done["result"]["content"][0]["text"], "\"plum\" \"pear\"");
}

#[tokio::test]
async fn another_principal_cannot_answer_and_a_cancel_ends_a_parked_task() {
    let h = serve_with(Arc::default(), Duration::from_secs(60)).await;
    let id = ask(&h.http, 1).await;
    until_asking(&h.http, &id, 1).await;
    let refused = update(&h.http, "bob-token", &id, json!({"first": word("evil")})).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert_eq!(
        until_asking(&h.http, &id, 1).await["status"],
        "input_required"
    );

    let not_object = update(&h.http, ALICE, &id, json!([1])).await;
    assert_eq!(not_object["error"]["code"], -32602);
    assert_eq!(
        not_object["error"]["data"]["reason"],
        "invalid_input_responses"
    );

    call(&h.http, ALICE, true, "tasks/cancel", json!({"taskId": id})).await;
    let cancelled = get(&h.http, &id).await;
    assert_eq!(cancelled["status"], "cancelled");
    assert!(cancelled.get("inputRequests").is_none());
    // An answer after the end is acknowledged and ignored.
    let late = update(&h.http, ALICE, &id, json!({"first": word("late")})).await;
    assert_eq!(late["result"]["resultType"], "complete");
    assert_eq!(get(&h.http, &id).await["status"], "cancelled");
}

#[tokio::test]
async fn a_tool_that_hands_off_answers_its_input_round_then_its_task() {
    let h = serve_with(Arc::default(), Duration::from_secs(60)).await;
    let args = json!({"name": "greet_later", "arguments": {}});
    let round = call(&h.http, ALICE, true, "tools/call", args.clone())
        .await
        .json();
    let round = &round["result"];
    assert_eq!(round["resultType"], "input_required", "{round}");
    assert!(round.get("taskId").is_none());
    assert_eq!(
        round["inputRequests"]["name"]["method"],
        "elicitation/create"
    );

    let mut retry = args.clone();
    retry["inputResponses"] = json!({"name": word("Ada")});
    retry["requestState"] = round["requestState"].clone();
    let handle = call(&h.http, ALICE, true, "tools/call", retry).await.json();
    let handle = &handle["result"];
    assert_eq!(handle["resultType"], "task", "{handle}");
    assert!(handle.get("requestState").is_none() && handle.get("inputRequests").is_none());
    let id = handle["taskId"].as_str().unwrap();
    let done = poll_until_terminal(&h.http, id).await;
    assert_eq!(done["status"], "completed");
    assert_eq!(
        done["result"]["content"][0]["text"],
        "Hello, Ada (task: true)"
    );

    // Without the extension the same code runs to its end as a plain call (two rounds).
    let round = call(&h.http, ALICE, false, "tools/call", args.clone())
        .await
        .json();
    let mut retry = args;
    retry["inputResponses"] = json!({"name": word("Bo")});
    retry["requestState"] = round["result"]["requestState"].clone();
    let plain = call(&h.http, ALICE, false, "tools/call", retry)
        .await
        .json();
    assert_eq!(plain["result"]["resultType"], "complete", "{plain}");
    assert_eq!(
        plain["result"]["content"][0]["text"],
        "Hello, Bo (task: false)"
    );
}

#[tokio::test]
async fn a_task_left_by_a_stopped_node_is_reported_failed() {
    let store = Arc::new(InMemoryTaskStore::default());
    let runner = serve_with(store.clone(), Duration::from_secs(60)).await;
    let other = serve_with(store.clone(), Duration::from_secs(60)).await;
    let id = ask(&runner.http, 1).await;
    until_asking(&runner.http, &id, 1).await;
    // The other node sees the task its runner keeps alive.
    assert_eq!(get(&other.http, &id).await["status"], "input_required");

    // The runner stops renewing its heartbeat (as a node that stopped would).
    let mut record = store.get(&id).await.unwrap().unwrap();
    record.heartbeat_ms -= 60_000;
    store.put(record).await.unwrap();
    let failed = get(&other.http, &id).await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["error"]["code"], -32603);
    assert_eq!(
        failed["error"]["message"],
        "The node running this task stopped, or could not record its end, before the task \
         ended; call the tool again"
    );
    assert!(failed.get("inputRequests").is_none());
}

#[tokio::test]
async fn answers_and_cancels_given_to_another_node_reach_the_running_task() {
    let store = Arc::new(InMemoryTaskStore::default());
    let beat = Duration::from_millis(50);
    let runner = serve_node(store.clone(), Duration::from_secs(60), beat).await;
    let other = serve_node(store.clone(), Duration::from_secs(60), beat).await;
    let id = ask(&runner.http, 2).await;
    until_asking(&other.http, &id, 2).await;
    // Answers for keys nobody asked are not kept.
    update(
        &other.http,
        ALICE,
        &id,
        json!({"first": word("fig"), "zzz": word("x")}),
    )
    .await;
    let recorded = store.get(&id).await.unwrap().unwrap().pending_answers;
    assert!(
        recorded.as_ref().is_none_or(|a| a.keys().eq(["first"])),
        "{recorded:?}"
    );
    let half = until_asking(&other.http, &id, 1).await;
    assert!(half["inputRequests"].get("second").is_some());
    update(&other.http, ALICE, &id, json!({"second": word("kiwi")})).await;
    let done = poll_until_terminal(&other.http, &id).await;
    assert_eq!(done["result"]["content"][0]["text"], "\"fig\" \"kiwi\"");

    let id = start(&runner.http, 60_000).await;
    call(
        &other.http,
        ALICE,
        true,
        "tasks/cancel",
        json!({"taskId": id}),
    )
    .await;
    assert_eq!(get(&runner.http, &id).await["status"], "cancelled");
    for _ in 0..100 {
        if runner
            .observed_cancel
            .load(std::sync::atomic::Ordering::SeqCst)
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the running node's tool never saw the cancel made on the other node");
}
