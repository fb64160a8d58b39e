//! The ready-made policies of `wymcp::middleware` over every path (HTTP and stdio, each in
//! both eras): each refuses as documented (its `errorType`, its exact message, its figures)
//! and lets the next call through when allowed; the rate limit and the concurrency limit
//! count per principal; the audit layer opens one span per operation with OpenTelemetry's
//! field names.

#![allow(clippy::unwrap_used, missing_docs)]

mod http_harness;
#[allow(unused)]
mod matrix_kit;
mod mcp_schema;
mod middleware_fixture;

use std::num::NonZeroU32;
use std::time::Duration;

use serde_json::{Value, json};
use wymcp::Context;
use wymcp::middleware::{
    AuditLayer, CallConcurrencyLayer, CallTimeoutLayer, Per, RateLimitLayer, ResultSizeLimitLayer,
};

use matrix_kit::{Client, Path};
use middleware_fixture::spans::Spans;
use middleware_fixture::{PATHS, action, builder, builder_with};
use wymcp::ToolPolicy;

fn n(value: u32) -> NonZeroU32 {
    NonZeroU32::new(value).unwrap()
}

/// A context for a direct call by `subject`.
fn signed_in(subject: &str) -> Context {
    Context::builder()
        .assign("identity", json!({"subject": subject, "claims": {}}))
        .build()
}

/// A direct call of `notes` `act` by `ctx`: what it answered.
async fn direct(server: &wymcp::Server, act: &str, data: Value, ctx: Context) -> Value {
    let result = wymcp::testing::call_tool(server, "notes", Some(action(act, data)), ctx).await;
    result.unwrap().json().unwrap()
}

#[tokio::test]
async fn the_rate_limit_refuses_rate_limited_with_retry_after_then_lets_the_next_call_through() {
    for path in PATHS {
        let server = builder()
            .layer(RateLimitLayer::per_second(n(1)).burst(n(2)))
            .build()
            .unwrap();
        let mut client = Client::open_serving(path, server).await;
        for _ in 0..2 {
            let listed = client.call("notes", action("list", json!({}))).await;
            assert_eq!(listed.tool_json(), json!({"notes": []}), "{path:?}");
        }
        let refused = client.call("notes", action("list", json!({}))).await;
        assert_eq!(refused.result()["isError"], true, "{path:?}");
        let body = refused.tool_json();
        let wait = body["retryAfterMs"].as_u64().unwrap();
        assert!((1..=1000).contains(&wait), "{path:?}: {body}");
        assert_eq!(
            body,
            json!({"errorType": "rate_limited", "tool": "notes", "action": "list",
                "limit": "1/s", "retryAfterMs": wait,
                "message": format!("Rate limit reached: at most 1/s for each caller. Retry after {wait} ms.")}),
            "{path:?}"
        );
        tokio::time::sleep(Duration::from_millis(wait)).await;
        let after = client.call("notes", action("list", json!({}))).await;
        assert_eq!(after.tool_json(), json!({"notes": []}), "{path:?}");
        client.close().await;
    }
}

/// Issue 48, N8: without auth, an HTTP client's budget is its address's in both eras: a
/// client that opens more sessions gets no more calls (keyed by session, each new session had
/// a budget of its own: 298 calls/s against a limit of 5/s).
#[tokio::test]
async fn the_rate_limit_counts_an_http_client_by_its_address_however_many_sessions_it_opens() {
    for path in [Path::HttpSession, Path::HttpStateless] {
        let server = builder()
            .call_layer(RateLimitLayer::per_minute(n(2)))
            .build()
            .unwrap();
        let mut clients = Vec::new();
        for _ in 0..3 {
            clients.push(Client::open_serving(path, server.clone()).await);
        }
        for client in &mut clients[..2] {
            let listed = client.call("notes", action("list", json!({}))).await;
            assert_eq!(listed.tool_json(), json!({"notes": []}), "{path:?}");
        }
        let refused = clients[2].call("notes", action("list", json!({}))).await;
        assert_eq!(refused.result()["isError"], true, "{path:?}");
        assert_eq!(refused.tool_json()["errorType"], "rate_limited", "{path:?}");
        assert_eq!(refused.tool_json()["limit"], "2/min", "{path:?}");
        for client in clients {
            client.close().await;
        }
    }
}

#[tokio::test]
async fn the_rate_limit_counts_per_principal_and_per_action_when_asked() {
    let server = builder()
        .layer(RateLimitLayer::per_minute(n(1)))
        .build()
        .unwrap();
    let first = direct(&server, "list", json!({}), signed_in("alice")).await;
    assert_eq!(first, json!({"notes": []}));
    let again = direct(&server, "list", json!({}), signed_in("alice")).await;
    assert_eq!(again["errorType"], "rate_limited");
    assert_eq!(again["limit"], "1/min");
    // Bob has a bucket of his own.
    let bob = direct(&server, "list", json!({}), signed_in("bob")).await;
    assert_eq!(bob, json!({"notes": []}));

    let limit = RateLimitLayer::per_minute(n(1)).per(Per::CallerAndAction);
    let per_action = builder_with(ToolPolicy::new().layer(limit))
        .build()
        .unwrap();
    let ctx = || signed_in("alice");
    assert_eq!(
        direct(&per_action, "list", json!({}), ctx()).await,
        json!({"notes": []})
    );
    let refused = direct(&per_action, "list", json!({}), ctx()).await;
    assert_eq!(
        refused["message"].as_str().unwrap().split(". Retry").next(),
        Some("Rate limit reached: at most 1/min for each caller on this action")
    );
    let added = direct(&per_action, "add", json!({"text": "milk"}), ctx()).await;
    assert_eq!(added, json!({"added": "milk"}));
}

#[tokio::test]
async fn the_concurrency_limit_refuses_a_callers_extra_call_and_not_another_callers() {
    let server = builder()
        .layer(CallConcurrencyLayer::new(1))
        .build()
        .unwrap();
    let slow = {
        let server = server.clone();
        tokio::spawn(async move {
            direct(&server, "slow", json!({"ms": 300}), signed_in("alice")).await
        })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    let refused = direct(&server, "list", json!({}), signed_in("alice")).await;
    assert_eq!(
        refused,
        json!({"errorType": "concurrency_limited", "tool": "notes", "action": "list",
            "limit": 1, "message": "At most 1 calls may run at once for each caller, and 1 are \
            running. Wait for one to finish, then retry."})
    );
    let bob = direct(&server, "list", json!({}), signed_in("bob")).await;
    assert_eq!(bob, json!({"notes": []}));
    assert_eq!(slow.await.unwrap(), json!({"waited": 300}));
    let after = direct(&server, "list", json!({}), signed_in("alice")).await;
    assert_eq!(after, json!({"notes": []}));
}

#[tokio::test]
async fn the_concurrency_limit_counts_one_http_client_by_its_address() {
    let server = builder_with(ToolPolicy::new().layer(CallConcurrencyLayer::new(1)))
        .build()
        .unwrap();
    let mut one = Client::open_serving(Path::HttpStateless, server.clone()).await;
    let mut two = Client::open_serving(Path::HttpStateless, server).await;
    let slow = one.call("notes", action("slow", json!({"ms": 400})));
    let quick = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        two.call("notes", action("list", json!({}))).await
    };
    let (slow, quick) = tokio::join!(slow, quick);
    assert_eq!(slow.tool_json(), json!({"waited": 400}));
    assert_eq!(quick.tool_json()["errorType"], "concurrency_limited");
    let after = two.call("notes", action("list", json!({}))).await;
    assert_eq!(after.tool_json(), json!({"notes": []}));
}

#[tokio::test]
async fn the_result_size_limit_refuses_a_large_result_whole_on_every_path() {
    let server =
        builder_with(ToolPolicy::new().action_layer("big", ResultSizeLimitLayer::new(300)))
            .build()
            .unwrap();
    for path in PATHS {
        let mut client = Client::open_serving(path, server.clone()).await;
        let large = client
            .call("notes", action("big", json!({"size": 1000})))
            .await;
        assert_eq!(large.result()["isError"], true, "{path:?}");
        let body = large.tool_json();
        let size = body["size_bytes"].as_u64().unwrap();
        assert!(size > 1000, "{path:?}: {body}");
        assert_eq!(
            body,
            json!({"errorType": "result_too_large", "tool": "notes", "action": "big",
                "limit_bytes": 300, "size_bytes": size,
                "message": format!("The result is {size} bytes, over the limit of 300 bytes \
                    (ResultSizeLimitLayer). Ask for less per call: a narrower filter, a smaller page.")}),
            "{path:?}"
        );
        let small = client
            .call("notes", action("big", json!({"size": 10})))
            .await;
        assert_eq!(small.tool_json(), json!({"text": "xxxxxxxxxx"}), "{path:?}");
        client.close().await;
    }
}

#[tokio::test]
async fn the_call_timeout_layer_answers_as_the_limits_timeout_does_on_every_path() {
    let timeout = CallTimeoutLayer::new(Duration::from_millis(50));
    let server = builder_with(ToolPolicy::new().layer(timeout))
        .build()
        .unwrap();
    for path in PATHS {
        let mut client = Client::open_serving(path, server.clone()).await;
        let slow = client
            .call("notes", action("slow", json!({"ms": 5_000})))
            .await;
        assert_eq!(slow.result()["isError"], true, "{path:?}");
        assert_eq!(
            slow.tool_json(),
            json!({"errorType": "timeout", "tool": "notes", "timeout_ms": 50,
                "message": "The call ran longer than its limit of 50 ms (CallTimeoutLayer) and \
                    was aborted. Ask for less work per call, or retry later."}),
            "{path:?}"
        );
        let quick = client.call("notes", action("slow", json!({"ms": 1}))).await;
        assert_eq!(quick.tool_json(), json!({"waited": 1}), "{path:?}");
        client.close().await;
    }
}

// ---------------------------------------------------------------------------------------------
// A subscriber that records every span of `wymcp::audit` with its fields, as text.

/// A span's name and its fields.
#[tokio::test]
async fn the_audit_layer_opens_one_span_per_operation_with_semantic_convention_fields() {
    let spans = Spans::default();
    let _guard = tracing::subscriber::set_default(spans.clone());
    for path in PATHS {
        // A server per path: over HTTP both eras count the one client, 127.0.0.1, by its
        // address.
        let server = builder()
            .layer(AuditLayer::new())
            .layer(RateLimitLayer::per_minute(n(1)).per(Per::CallerAndAction))
            .build()
            .unwrap();
        spans.0.lock().unwrap().clear();
        let mut client = Client::open_serving(path, server.clone()).await;
        client.call("notes", action("list", json!({}))).await;
        client.call("notes", action("list", json!({}))).await;
        client.close().await;
        let audited = spans.audited();
        assert_eq!(audited.len(), 2, "{path:?}: {audited:?}");
        let (ok, refused) = (&audited[0], &audited[1]);
        let transport = if path.http() { "tcp" } else { "pipe" };
        for span in [ok, refused] {
            assert_eq!(span["otel.name"], "tools/call notes", "{path:?}");
            assert_eq!(span["mcp.method.name"], "tools/call");
            assert_eq!(span["gen_ai.operation.name"], "execute_tool");
            assert_eq!(span["gen_ai.tool.name"], "notes");
            assert_eq!(span["wymcp.action"], "list");
            assert_eq!(span["network.transport"], transport, "{path:?}");
            let version = path.by_era("2025-11-25", "2026-07-28");
            assert_eq!(span["mcp.protocol.version"], version, "{path:?}");
            assert!(span.contains_key("wymcp.duration_ms"), "{path:?}");
            assert!(span.contains_key("jsonrpc.request.id"), "{path:?}");
            assert_eq!(
                span.contains_key("mcp.session.id"),
                !path.stateless(),
                "{path:?}"
            );
        }
        assert_eq!(ok["wymcp.outcome"], "ok", "{path:?}");
        assert!(!ok.contains_key("error.type"), "{path:?}");
        assert_eq!(refused["wymcp.outcome"], "refused", "{path:?}");
        assert_eq!(refused["error.type"], "rate_limited", "{path:?}");
    }
}
