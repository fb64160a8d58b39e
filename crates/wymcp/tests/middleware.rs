//! Operation middleware over every path (HTTP and stdio, each in both eras): a layer's
//! refusal reaches the model as an `isError` result with its `errorType`; server, tool and
//! action layers run in the documented order and see the admitted data; tower's own layers
//! (`TimeoutLayer`, `ConcurrencyLimitLayer`, `LoadShedLayer`, `MapResponseLayer`, `layer_fn`)
//! work unchanged; `build()` refuses a layer on a tool or action that does not exist.

#![allow(clippy::unwrap_used, missing_docs)]

mod http_harness;
#[allow(unused)]
mod matrix_kit;
mod mcp_schema;
mod middleware_fixture;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tower::ServiceExt;
use tower::layer::{LayerFn, layer_fn};
use tower::limit::ConcurrencyLimitLayer;
use tower::load_shed::LoadShedLayer;
use tower::timeout::TimeoutLayer;
use tower::util::MapResponseLayer;
use wymcp::middleware::{BoxOperation, Operation, Refusal, Response};
use wymcp::{Context, ToolPolicy};

use matrix_kit::Client;
use middleware_fixture::{PATHS, action, builder, builder_with};

/// What the layers saw, in order.
pub(crate) type Log = Arc<Mutex<Vec<String>>>;

/// The logged entries.
pub(crate) fn entries(log: &Log) -> Vec<String> {
    log.lock().unwrap().clone()
}

/// A layer of one's own (`layer_fn`): it logs `name` and what the operation says, then calls on.
pub(crate) fn logging(
    name: &'static str,
    log: &Log,
) -> LayerFn<impl Fn(BoxOperation) -> BoxOperation + Clone + use<>> {
    let log = log.clone();
    layer_fn(move |inner: BoxOperation| {
        let log = log.clone();
        BoxOperation::new(tower::service_fn(move |op: Operation| {
            log.lock().unwrap().push(format!(
                "{name} {} {} {}",
                op.tool().unwrap_or(op.method()),
                op.action().unwrap_or("-"),
                Value::Object(op.data().clone())
            ));
            inner.clone().oneshot(op)
        }))
    })
}

#[tokio::test]
async fn a_layers_refusal_reaches_the_model_as_an_is_error_result_on_every_path() {
    let refuse_add = layer_fn(|inner: BoxOperation| {
        BoxOperation::new(tower::service_fn(move |op: Operation| {
            let inner = inner.clone();
            async move {
                if op.data()["text"] == "secret" {
                    let refusal = Refusal::new("forbidden", "Do not write secrets in notes.")
                        .detail("help", json!("help {\"tool\": \"notes\"}"));
                    return Err(refusal.into());
                }
                inner.oneshot(op).await
            }
        }))
    });
    let server = builder_with(ToolPolicy::new().action_layer("add", refuse_add))
        .build()
        .unwrap();
    for path in PATHS {
        let mut client = Client::open_serving(path, server.clone()).await;
        let refused = client
            .call("notes", action("add", json!({"text": "secret"})))
            .await;
        assert_eq!(refused.result()["isError"], true, "{path:?}");
        assert_eq!(
            refused.tool_json(),
            json!({"errorType": "forbidden", "tool": "notes", "action": "add",
                "message": "Do not write secrets in notes.", "help": "help {\"tool\": \"notes\"}"}),
            "{path:?}"
        );
        let passed = client
            .call("notes", action("add", json!({"text": "milk"})))
            .await;
        assert_eq!(passed.result()["isError"], false, "{path:?}");
        assert_eq!(passed.tool_json(), json!({"added": "milk"}), "{path:?}");
        client.close().await;
    }
}

#[tokio::test]
async fn server_then_tool_then_action_layers_run_in_order_after_the_gates_on_every_path() {
    let log = Log::default();
    let policy = ToolPolicy::new()
        .action_layer("add", logging("action", &log))
        .layer(logging("tool", &log));
    let server = builder_with(policy)
        .layer(logging("server-1", &log))
        .layer(logging("server-2", &log))
        .build()
        .unwrap();
    for path in PATHS {
        log.lock().unwrap().clear();
        let mut client = Client::open_serving(path, server.clone()).await;
        let added = client
            .call("notes", action("add", json!({"text": "milk"})))
            .await;
        assert_eq!(added.tool_json(), json!({"added": "milk"}), "{path:?}");
        let data = r#"{"text":"milk"}"#;
        let expected: Vec<String> = ["server-1", "server-2", "tool", "action"]
            .iter()
            .map(|name| format!("{name} notes add {data}"))
            .collect();
        assert_eq!(entries(&log), expected, "{path:?}");
        // Another action passes the server's and the tool's layers only.
        log.lock().unwrap().clear();
        client.call("notes", action("list", json!({}))).await;
        assert_eq!(
            entries(&log),
            [
                "server-1 notes list {}",
                "server-2 notes list {}",
                "tool notes list {}"
            ],
            "{path:?}"
        );
        // A call the gates refuse, and help, pass no layer.
        log.lock().unwrap().clear();
        let refused = client.call("notes", action("add", json!({}))).await;
        assert_eq!(refused.tool_json()["error"], "missing_required_fields");
        client.call("help", json!({})).await;
        assert!(entries(&log).is_empty(), "{path:?}: {:?}", entries(&log));
        client.close().await;
    }
}

#[tokio::test]
async fn towers_timeout_layer_answers_timeout_on_every_path() {
    let timeout = TimeoutLayer::new(Duration::from_millis(50));
    let server = builder_with(ToolPolicy::new().action_layer("slow", timeout))
        .build()
        .unwrap();
    for path in PATHS {
        let mut client = Client::open_serving(path, server.clone()).await;
        let slow = client
            .call("notes", action("slow", json!({"ms": 5_000})))
            .await;
        assert_eq!(slow.result()["isError"], true, "{path:?}");
        let body = slow.tool_json();
        assert_eq!(body["errorType"], "timeout", "{path:?}");
        assert_eq!(body["action"], "slow", "{path:?}");
        assert!(
            body["message"]
                .as_str()
                .unwrap()
                .contains("a layer's timeout"),
            "{body}"
        );
        let quick = client.call("notes", action("slow", json!({"ms": 1}))).await;
        assert_eq!(quick.tool_json(), json!({"waited": 1}), "{path:?}");
        client.close().await;
    }
}

#[tokio::test]
async fn towers_map_response_layer_sees_every_result_on_every_path() {
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = seen.clone();
    let server = builder()
        .layer(MapResponseLayer::new(move |result: Response| {
            counter.fetch_add(1, Ordering::SeqCst);
            result
        }))
        .build()
        .unwrap();
    for (n, path) in PATHS.into_iter().enumerate() {
        let mut client = Client::open_serving(path, server.clone()).await;
        let listed = client.call("notes", action("list", json!({}))).await;
        assert_eq!(listed.tool_json(), json!({"notes": []}), "{path:?}");
        assert_eq!(seen.load(Ordering::SeqCst), n + 1, "{path:?}");
        client.close().await;
    }
}

/// Two calls of `slow` at once, directly: what each answered.
async fn two_at_once(server: &wymcp::Server) -> [Value; 2] {
    let call = |ms: u64| {
        let server = server.clone();
        async move {
            let args = action("slow", json!({"ms": ms}));
            let result =
                wymcp::testing::call_tool(&server, "notes", Some(args), Context::default());
            result.await.unwrap().json().unwrap()
        }
    };
    let first = tokio::spawn(call(300));
    tokio::time::sleep(Duration::from_millis(50)).await;
    let second = call(1).await;
    [first.await.unwrap(), second]
}

#[tokio::test]
async fn towers_concurrency_limit_waits_and_load_shed_refuses_overloaded() {
    // ConcurrencyLimitLayer alone queues the second call: both complete.
    let queued = builder_with(ToolPolicy::new().layer(ConcurrencyLimitLayer::new(1)))
        .build()
        .unwrap();
    assert_eq!(
        two_at_once(&queued).await,
        [json!({"waited": 300}), json!({"waited": 1})]
    );
    // With LoadShedLayer outside it, the second is refused at once, as `overloaded`.
    let policy = ToolPolicy::new()
        .layer(LoadShedLayer::new())
        .layer(ConcurrencyLimitLayer::new(1));
    let shed = builder_with(policy).build().unwrap();
    let [first, second] = two_at_once(&shed).await;
    assert_eq!(first, json!({"waited": 300}));
    assert_eq!(second["errorType"], "overloaded", "{second}");
    assert_eq!(second["action"], "slow");
    // The slot is free again afterwards.
    let [first, second] = two_at_once(&shed).await;
    assert_eq!(first, json!({"waited": 300}));
    assert_eq!(second["errorType"], "overloaded");
}

#[tokio::test]
async fn load_shed_over_http_refuses_the_second_of_two_concurrent_calls() {
    let server = builder()
        .layer(LoadShedLayer::new())
        .layer(ConcurrencyLimitLayer::new(1))
        .build()
        .unwrap();
    let mut slow_client =
        Client::open_serving(matrix_kit::Path::HttpStateless, server.clone()).await;
    let mut quick_client = Client::open_serving(matrix_kit::Path::HttpStateless, server).await;
    let slow = slow_client.call("notes", action("slow", json!({"ms": 400})));
    let quick = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        quick_client.call("notes", action("list", json!({}))).await
    };
    let (slow, quick) = tokio::join!(slow, quick);
    assert_eq!(slow.tool_json(), json!({"waited": 400}));
    assert_eq!(quick.result()["isError"], true);
    assert_eq!(quick.tool_json()["errorType"], "overloaded");
}

#[test]
fn build_refuses_a_layer_on_an_action_the_tool_does_not_have() {
    let timeout = TimeoutLayer::new(Duration::from_secs(1));
    let error = builder_with(ToolPolicy::new().action_layer("erase", timeout))
        .build()
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "a layer is attached to action \"erase\", which tool \"notes\" does not have"
    );
}
