//! Hostile clients against the serving core's limits (issue 19, rows D1–D6, D9–D11, D15, D17
//! and the call timeout), over real Streamable HTTP on 127.0.0.1: each test sends the hostile
//! input, asserts the refusal or the bounded answer, then that a normal request is answered
//! right after.

#![allow(clippy::unwrap_used, missing_docs)]

mod hostile_fixture;
mod http_harness;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use hostile_fixture::{call, payload};
use http_harness::Http;
use reqwest::StatusCode;
use serde_json::{Value, json};
use wymcp::Identity;
use wymcp::Limits;
use wymcp::backend::{EventLog, InMemoryEventLog};
use wymcp::transport::http::{BearerAuth, StreamableHttp};

async fn serve(limits: Limits) -> (Http, Arc<AtomicBool>) {
    let release = Arc::new(AtomicBool::new(false));
    let server = hostile_fixture::server(limits, release.clone());
    (Http::serve(StreamableHttp::builder(server)).await, release)
}

fn ping(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "ping"})
}

/// A normal call in `session` is answered (the server is still serving).
async fn still_serves(http: &Http, session: &str) {
    let answer = http
        .post(Some(session), &call(99, "tag", json!({"project": "p"})))
        .await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
    assert_eq!(payload(&answer.json()["result"]), json!({"tagged": "p"}));
}

#[tokio::test]
async fn d1_a_batch_over_the_limit_is_refused_whole_with_a_small_answer() {
    let (http, _) = serve(Limits::default()).await;
    let session = http.ready("2025-03-26").await;
    let ones = format!("[{}1]", "1,".repeat(999_999));
    let answer = http.post_raw(&[("mcp-session-id", &session)], ones).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert!(answer.text.len() < 1024, "{} bytes", answer.text.len());
    let body = answer.json();
    assert_eq!(body["error"]["code"], -32600);
    let reason = answer.refusal_reason();
    assert!(reason.contains("Batch of 1000000 messages"), "{reason}");
    assert!(reason.contains("Limits::max_batch"), "{reason}");
    let hundred: Vec<Value> = (0..100).map(ping).collect();
    let answer = http.post(Some(&session), &Value::Array(hundred)).await;
    assert_eq!(answer.json().as_array().unwrap().len(), 100);
    still_serves(&http, &session).await;
}

#[tokio::test]
async fn d2_a_huge_invalid_array_costs_one_walk_and_reports_its_first_problem() {
    let (http, _) = serve(Limits::default()).await;
    let session = http.ready("2025-11-25").await;
    let tags = vec![7; 1_390_000];
    let answer = http
        .post(Some(&session), &call(2, "tag", json!({"tags": tags})))
        .await;
    assert!(answer.text.len() < 4096, "{} bytes", answer.text.len());
    let result = &answer.json()["result"];
    assert_eq!(result["isError"], true, "{}", answer.text);
    let refusal = payload(result);
    assert_eq!(refusal["error"], "invalid_values", "{refusal}");
    assert_eq!(refusal["invalid_count_complete"], false);
    assert_eq!(refusal["invalid"][0]["path"], "/tags/0");
    assert!(refusal["note"].as_str().unwrap().contains("50000 values"));
    // Under the bound, every problem is counted.
    let answer = http
        .post(
            Some(&session),
            &call(3, "tag", json!({"tags": [1, 2, "ok", 4]})),
        )
        .await;
    let refusal = payload(&answer.json()["result"]);
    assert_eq!(refusal["invalid_count"], 3);
    assert!(refusal.get("invalid_count_complete").is_none());
    still_serves(&http, &session).await;
}

#[tokio::test]
async fn d3_tool_prompt_and_resource_error_texts_are_bounded() {
    let limits = Limits::default().max_error_text(500);
    let (http, _) = serve(limits).await;
    let session = http.ready("2025-11-25").await;
    let huge = "p".repeat(3 << 20);
    let answer = http
        .post(Some(&session), &call(4, "fail", json!({"text": huge})))
        .await;
    assert!(answer.text.len() < 2048, "{} bytes", answer.text.len());
    let text = answer.json()["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    // The default `handle_error` words it "Operation failed: <the tool's text>".
    assert!(text.starts_with("Operation failed: Project 'ppp"), "{text}");
    assert!(
        text.ends_with(&format!("…(+{} chars)", (3 << 20) + 38 - 500)),
        "{text}"
    );
    let prompt = json!({"jsonrpc": "2.0", "id": 5, "method": "prompts/get",
        "params": {"name": "plan_my_day", "arguments": {"hours": "9".repeat(1 << 20)}}});
    let answer = http.post(Some(&session), &prompt).await;
    assert!(answer.text.len() < 2048, "{} bytes", answer.text.len());
    assert_eq!(answer.json()["error"]["code"], -32602);
    let read = json!({"jsonrpc": "2.0", "id": 6, "method": "resources/read",
        "params": {"uri": format!("rec://{}", "r".repeat(1 << 20))}});
    let answer = http.post(Some(&session), &read).await;
    assert!(answer.text.len() < 2048, "{} bytes", answer.text.len());
    assert!(
        answer.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("chars)")
    );
    still_serves(&http, &session).await;
}

#[tokio::test]
async fn d4_one_principal_cannot_take_every_session() {
    let release = Arc::new(AtomicBool::new(false));
    let server = hostile_fixture::server(Limits::default().max_sessions_per_client(3), release);
    let auth = BearerAuth::new()
        .token("greedy-token", Identity::new("greedy"))
        .token("other-token", Identity::new("other"));
    let http = Http::serve(StreamableHttp::builder(server).auth(auth)).await;
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "greedy", "version": "0"}}});
    let open = |token: &'static str| {
        let auth = format!("Bearer {token}");
        let http = &http;
        let init = init.to_string();
        async move { http.post_raw(&[("authorization", &auth)], init).await }
    };
    let mut greedy = Vec::new();
    for _ in 0..3 {
        let answer = open("greedy-token").await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
        greedy.push(answer.header("mcp-session-id").unwrap().to_owned());
    }
    let answer = open("greedy-token").await;
    assert_eq!(answer.status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(answer.header("mcp-session-id").is_none());
    assert!(
        answer.text.contains("Limits::max_sessions_per_client"),
        "{}",
        answer.text
    );
    // Another principal is not shut out.
    assert_eq!(open("other-token").await.status, StatusCode::OK);
    // Ending one of the greedy sessions frees a place.
    let resp = http
        .send(
            reqwest::Method::DELETE,
            &[
                ("mcp-session-id", &greedy[0]),
                ("authorization", "Bearer greedy-token"),
            ],
        )
        .await;
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(open("greedy-token").await.status, StatusCode::OK);
}

/// Without auth, behind a trusted reverse proxy: sessions count against the address the proxy
/// forwards; from an untrusted peer the header is ignored (a loopback peer counts against no one).
#[tokio::test]
async fn d4_without_auth_a_forwarded_address_cannot_take_every_session() {
    let limits = Limits::default().max_sessions_per_client(2);
    let release = Arc::new(AtomicBool::new(false));
    let behind_proxy = Http::serve(
        StreamableHttp::builder(hostile_fixture::server(limits.clone(), release.clone()))
            .trusted_proxies([std::net::Ipv4Addr::LOCALHOST.into()]),
    )
    .await;
    async fn from(http: &Http, forwarded: &str) -> http_harness::Answer {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "greedy", "version": "0"}}});
        http.post_raw(&[("x-forwarded-for", forwarded)], init.to_string())
            .await
    }
    // The client forges a left-most entry; the proxy appended the real address.
    let greedy = "198.51.100.66, 203.0.113.7";
    for _ in 0..2 {
        assert_eq!(from(&behind_proxy, greedy).await.status, StatusCode::OK);
    }
    let refused = from(&behind_proxy, greedy).await;
    assert_eq!(refused.status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(refused.header("mcp-session-id").is_none());
    assert!(
        refused.text.contains("Limits::max_sessions_per_client"),
        "{}",
        refused.text
    );
    // Another client behind the same proxy is not shut out.
    assert_eq!(
        from(&behind_proxy, "203.0.113.8").await.status,
        StatusCode::OK
    );
    // Without trusted proxies the header is nobody's word: the loopback peer is not counted.
    let direct = Http::serve(StreamableHttp::builder(hostile_fixture::server(
        limits, release,
    )))
    .await;
    for _ in 0..3 {
        assert_eq!(from(&direct, greedy).await.status, StatusCode::OK);
    }
}

#[tokio::test]
async fn d5_a_huge_initialize_creates_no_session() {
    let (http, _) = serve(Limits::default()).await;
    let capabilities: serde_json::Map<String, Value> =
        (0..20_000).map(|i| (format!("k{i}"), json!(i))).collect();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": capabilities,
        "clientInfo": {"name": "big", "version": "0"}}});
    let answer = http.post(None, &init).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert!(answer.header("mcp-session-id").is_none());
    let body = answer.json();
    assert_eq!(body["error"]["code"], -32602);
    let reason = body["error"]["data"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("65536 bytes (Limits::max_initialize_params)"),
        "{reason}"
    );
    let session = http.ready("2025-11-25").await;
    still_serves(&http, &session).await;
}

#[tokio::test]
async fn d6_the_event_log_keeps_a_bounded_tail_of_a_session_across_streams() {
    let log = InMemoryEventLog::with_limits(100, 64 * 1024);
    let mut first = None;
    for stream in 0..20_000 {
        let id = log
            .append("s", &format!("post{stream}"), "e".repeat(1500))
            .await
            .unwrap();
        first.get_or_insert(id);
    }
    assert_eq!(
        log.replay_after("s", first.as_deref().unwrap())
            .await
            .unwrap(),
        None
    );
    // 64 KiB of 1,500-byte events: the newest 43 remain; the 43rd newest still resumes.
    let kept = log.replay_after("s", "post19957.19958").await.unwrap();
    assert_eq!(kept, Some(Vec::new()));
    assert_eq!(
        log.replay_after("s", "post19956.19957").await.unwrap(),
        None
    );
    // Over HTTP: many progress-reporting calls, and the session still serves.
    let (http, _) = serve(Limits::default().max_logged_events(10)).await;
    let session = http.ready("2025-11-25").await;
    for id in 0..50 {
        let mut body = call(id, "progress", json!({"steps": 3}));
        body["params"]["_meta"] = json!({"progressToken": id});
        let answer = http.post(Some(&session), &body).await;
        assert!(answer.text.contains("\"steps\\\":3"), "{}", answer.text);
    }
    still_serves(&http, &session).await;
}

#[tokio::test]
async fn d9_a_null_id_is_refused_and_an_inexact_id_is_never_echoed_changed() {
    let (http, _) = serve(Limits::default()).await;
    let session = http.ready("2025-11-25").await;
    let answer = http
        .post(
            Some(&session),
            &json!({"jsonrpc": "2.0", "id": null, "method": "ping"}),
        )
        .await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert_eq!(answer.json()["error"]["code"], -32600);
    assert!(answer.text.contains("must not be null"), "{}", answer.text);
    let raw = r#"{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}"#;
    let answer = http.post_raw(&[("mcp-session-id", &session)], raw).await;
    assert_eq!(answer.json()["id"], Value::Null);
    assert_eq!(answer.json()["error"]["code"], -32600);
    let answer = http.post(Some(&session), &ping(u64::MAX)).await;
    assert!(
        answer.text.contains("18446744073709551615"),
        "{}",
        answer.text
    );
    still_serves(&http, &session).await;
}

#[tokio::test]
async fn d10_a_running_call_keeps_its_session_alive() {
    let release = Arc::new(AtomicBool::new(false));
    let server = hostile_fixture::server(Limits::default(), release);
    let builder = StreamableHttp::builder(server).session_ttl(Duration::from_millis(300));
    let http = Http::serve(builder).await;
    let session = http.ready("2025-11-25").await;
    let answer = http
        .post(Some(&session), &call(1, "sleep", json!({"ms": 1500})))
        .await;
    assert_eq!(payload(&answer.json()["result"]), json!({"slept_ms": 1500}));
    still_serves(&http, &session).await;
}

#[tokio::test]
async fn d11_calls_and_subscriptions_per_session_are_capped() {
    let limits = Limits::default()
        .max_calls_per_session(2)
        .max_subscriptions_per_session(2);
    let (http, _) = serve(limits).await;
    let http = Arc::new(http);
    let session = http.ready("2025-11-25").await;
    let running: Vec<_> = (0..2)
        .map(|id| {
            let (http, session) = (http.clone(), session.clone());
            tokio::spawn(async move {
                http.post(Some(&session), &call(id, "sleep", json!({"ms": 1500})))
                    .await
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(400)).await;
    let answer = http.post(Some(&session), &call(7, "tag", json!({}))).await;
    assert_eq!(answer.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(answer.json()["error"]["code"], -32000);
    assert!(
        answer.text.contains("Limits::max_calls_per_session"),
        "{}",
        answer.text
    );
    for call in running {
        assert_eq!(call.await.unwrap().status, StatusCode::OK);
    }
    still_serves(&http, &session).await;
    let subscribe = |id: u64, uri: &str| json!({"jsonrpc": "2.0", "id": id, "method": "resources/subscribe", "params": {"uri": uri}});
    for (id, uri) in [(10, "rec://a"), (11, "rec://b"), (12, "rec://a")] {
        let answer = http.post(Some(&session), &subscribe(id, uri)).await;
        assert_eq!(answer.json()["result"], json!({}), "{}", answer.text);
    }
    let answer = http.post(Some(&session), &subscribe(13, "rec://c")).await;
    assert_eq!(answer.json()["error"]["code"], -32602);
    assert!(
        answer.text.contains("max_subscriptions_per_session"),
        "{}",
        answer.text
    );
    let unsubscribe = json!({"jsonrpc": "2.0", "id": 14, "method": "resources/unsubscribe",
        "params": {"uri": "rec://a"}});
    http.post(Some(&session), &unsubscribe).await;
    let answer = http.post(Some(&session), &subscribe(15, "rec://c")).await;
    assert_eq!(answer.json()["result"], json!({}), "{}", answer.text);
}

#[tokio::test]
async fn d15_a_huge_panic_message_reaches_the_client_bounded() {
    let (http, _) = serve(Limits::default()).await;
    let session = http.ready("2025-11-25").await;
    let message = "line\nforged: level=ERROR\n".repeat(40_000);
    let answer = http
        .post(Some(&session), &call(1, "crash", json!({"text": message})))
        .await;
    assert!(answer.text.len() < 2048, "{} bytes", answer.text.len());
    let fault = payload(&answer.json()["result"]);
    assert_eq!(fault["errorType"], "tool_fault");
    assert!(fault["message"].as_str().unwrap().ends_with("chars)"));
    still_serves(&http, &session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn d17_cpu_bound_calls_on_blocking_threads_leave_ping_answered() {
    let (http, release) = serve(Limits::default()).await;
    let http = Arc::new(http);
    let session = http.ready("2025-11-25").await;
    let spinning: Vec<_> = (0..2)
        .map(|id| {
            let (http, session) = (http.clone(), session.clone());
            tokio::spawn(async move {
                http.post(Some(&session), &call(id, "spin", json!({})))
                    .await
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Both workers would be taken by the spins if they ran on them: ping answers anyway.
    let answer = http.post(Some(&session), &ping(5)).await;
    assert_eq!(answer.json()["result"], json!({}));
    release.store(true, Ordering::Release);
    for spin in spinning {
        let answer = spin.await.unwrap();
        assert_eq!(payload(&answer.json()["result"]), json!({"spun": true}));
    }
}

#[tokio::test]
async fn a_call_past_its_timeout_is_aborted_and_answered_timeout() {
    let limits = Limits::default().tool_call_timeout("work", Duration::from_millis(200));
    let (http, _) = serve(limits).await;
    let session = http.ready("2025-11-25").await;
    let answer = http
        .post(Some(&session), &call(1, "sleep", json!({"ms": 60_000})))
        .await;
    let result = &answer.json()["result"];
    assert_eq!(result["isError"], true);
    let body = payload(result);
    assert_eq!(body["errorType"], "timeout");
    assert_eq!(body["timeout_ms"], 200);
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("Limits::call_timeout")
    );
    still_serves(&http, &session).await;
}

#[tokio::test]
async fn the_2026_era_meets_the_same_limits() {
    let limits = Limits::default().tool_call_timeout("work", Duration::from_millis(200));
    let (http, _) = serve(limits).await;
    let body = http_harness::request(
        json!(1),
        "tools/call",
        json!({"name": "work", "arguments": {"action": "sleep", "data": {"ms": 60_000}}}),
    );
    let headers = http_harness::modern_headers(&body);
    let answer = http
        .post_raw(&http_harness::borrowed(&headers), body.to_string())
        .await;
    assert_eq!(payload(&answer.json()["result"])["errorType"], "timeout");
    let body = http_harness::request(
        json!(2),
        "tools/call",
        json!({"name": "work", "arguments": {"action": "fail", "data": {"text": "q".repeat(9000)}}}),
    );
    let headers = http_harness::modern_headers(&body);
    let answer = http
        .post_raw(&http_harness::borrowed(&headers), body.to_string())
        .await;
    let text = answer.json()["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        text.chars().count(),
        2000 + "…(+7038 chars)".chars().count(),
        "{text}"
    );
}

#[tokio::test]
async fn the_server_wide_subscription_cap_holds_across_sessions() {
    let (http, _) = serve(Limits::default().max_subscriptions(3)).await;
    let (one, two) = (
        http.ready("2025-11-25").await,
        http.ready("2025-11-25").await,
    );
    let subscribe = |id: u64, uri: &str| json!({"jsonrpc": "2.0", "id": id, "method": "resources/subscribe", "params": {"uri": uri}});
    for (id, session, uri) in [
        (1, &one, "rec://a"),
        (2, &one, "rec://b"),
        (3, &two, "rec://a"),
    ] {
        let answer = http.post(Some(session), &subscribe(id, uri)).await;
        assert_eq!(answer.json()["result"], json!({}), "{}", answer.text);
    }
    let answer = http.post(Some(&two), &subscribe(4, "rec://c")).await;
    assert!(
        answer.text.contains("Limits::max_subscriptions)"),
        "{}",
        answer.text
    );
    // A session that ends frees its subscriptions.
    http.delete(&one).await;
    let answer = http.post(Some(&two), &subscribe(5, "rec://c")).await;
    assert_eq!(answer.json()["result"], json!({}), "{}", answer.text);
}

#[tokio::test]
async fn the_server_wide_call_timeout_applies_to_every_tool() {
    let (http, _) = serve(Limits::default().call_timeout(Duration::from_millis(150))).await;
    let session = http.ready("2025-11-25").await;
    let answer = http
        .post(Some(&session), &call(1, "sleep", json!({"ms": 60_000})))
        .await;
    assert_eq!(payload(&answer.json()["result"])["timeout_ms"], 150);
    let answer = http
        .post(Some(&session), &call(2, "sleep", json!({"ms": 10})))
        .await;
    assert_eq!(payload(&answer.json()["result"]), json!({"slept_ms": 10}));
}

/// Issue 48, N5: a call's notes wait for a client that reads slowly, or not at all, in a
/// bounded queue. A tool sending 20,000 progress notes of 1 kB in one go used to make the
/// server hold all of them (20 MB for one call; three slow readers of 300,000 grew it by
/// 1.4 GB); now at most `max_queued_notes` wait, the newest kept, and the answer follows them.
#[tokio::test]
async fn n5_a_calls_notes_wait_in_a_bounded_queue_the_newest_kept() {
    let (http, _) = serve(Limits::default().max_queued_notes(16)).await;
    let session = http.ready("2025-11-25").await;
    let mut body = call(1, "progress", json!({"steps": 20_000}));
    body["params"]["_meta"] = json!({"progressToken": "p"});
    let answer = http.post(Some(&session), &body).await;
    assert_eq!(answer.status, StatusCode::OK);
    let messages = http_harness::data_lines(&answer.text);
    let (last, notes) = messages.split_last().unwrap();
    assert_eq!(last["id"], 1, "the answer comes last: {last}");
    assert_eq!(payload(&last["result"]), json!({"steps": 20_000}));
    let steps: Vec<f64> = notes
        .iter()
        .map(|n| {
            assert_eq!(n["method"], "notifications/progress");
            n["params"]["progress"].as_f64().unwrap()
        })
        .collect();
    assert_eq!(steps.len(), 16, "only the bound's worth waited");
    assert_eq!(steps.first(), Some(&19_984.0), "the oldest were dropped");
    assert_eq!(steps.last(), Some(&19_999.0), "the newest progress is kept");
    still_serves(&http, &session).await;
}
