//! Server-wide byte budgets (issue 48, N3): a per-session bound is not an aggregate bound, so
//! what all sessions keep together is bounded too. Over real Streamable HTTP on 127.0.0.1,
//! with budgets small enough to reach in a test: the refusal names the limit, and room comes
//! back when sessions end.

#![allow(clippy::unwrap_used, missing_docs)]

mod hostile_fixture;
mod http_harness;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use hostile_fixture::call;
use http_harness::{Http, read_to_end};
use reqwest::StatusCode;
use serde_json::{Map, Value, json};
use wymcp::Limits;
use wymcp::limits::json_weight;
use wymcp::transport::http::StreamableHttp;

async fn serve(limits: Limits) -> Http {
    let server = hostile_fixture::server(limits, Arc::new(AtomicBool::new(false)));
    Http::serve(StreamableHttp::builder(server)).await
}

/// An `initialize` declaring 500 one-letter-ish capability keys (about 6 kB of text).
fn heavy_init() -> (Value, usize) {
    let capabilities: Map<String, Value> = (0..500).map(|i| (format!("k{i}"), json!(0))).collect();
    let info = json!({"name": "t", "version": "0"});
    let weight = json_weight(&Value::Object(capabilities.clone())) + json_weight(&info);
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": info}});
    (init, weight)
}

#[tokio::test]
async fn n3_sessions_initialize_data_is_bounded_server_wide() {
    let (init, weight) = heavy_init();
    // Room for three such sessions, not four.
    let http = serve(Limits::default().max_initialize_params_total(3 * weight + weight / 2)).await;
    let mut sessions = Vec::new();
    for _ in 0..3 {
        sessions.push(http.initialize_with(&init).await.0);
    }
    let answer = http.post(None, &init).await;
    assert_eq!(
        answer.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        answer.text
    );
    assert!(answer.header("mcp-session-id").is_none());
    let body = answer.json();
    assert_eq!(body["error"]["code"], -32600, "{body}");
    let reason = answer.refusal_reason();
    let held = 3 * weight;
    let max = 3 * weight + weight / 2;
    assert_eq!(
        reason,
        format!(
            "Too much session data: the live sessions' initialize params (client capabilities \
             and info) weigh {held} of at most {max} bytes on this server \
             (Limits::max_initialize_params_total). Try again later, or send smaller \
             capabilities."
        )
    );
    // A session's end gives its weight back.
    http.delete(&sessions.pop().unwrap()).await;
    let (again, _) = http.initialize_with(&init).await;
    http.initialized(&again, &[]).await;
    let answer = http
        .post(Some(&again), &call(1, "tag", json!({"project": "p"})))
        .await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
}

/// The SSE events of a `progress` call of `steps` steps in `session`, as text.
async fn progress_stream(http: &Http, session: &str, id: u64, steps: u64) -> String {
    let mut body = call(id, "progress", json!({"steps": steps}));
    body["params"]["_meta"] = json!({"progressToken": id});
    let mut resp = http.post_stream(Some(session), &body).await;
    assert_eq!(resp.status(), StatusCode::OK);
    let mut text = String::new();
    read_to_end(&mut resp, &mut text).await;
    text
}

/// The events of an SSE text that carry data, each as its lines.
fn data_events(text: &str) -> Vec<Vec<&str>> {
    text.split("\n\n")
        .map(|event| event.lines().collect::<Vec<_>>())
        .filter(|lines| lines.iter().any(|l| l.starts_with("data: ") && l.len() > 6))
        .collect()
}

fn progress_events<'a>(events: &[Vec<&'a str>]) -> Vec<Vec<&'a str>> {
    events
        .iter()
        .filter(|lines| lines.iter().any(|l| l.contains("notifications/progress")))
        .cloned()
        .collect()
}

#[tokio::test]
async fn n3_the_event_log_is_bounded_over_all_sessions() {
    // Each progress note is about 1.1 kB: one session's two notes fill the log's total.
    let http = serve(Limits::default().max_logged_bytes_total(3_000)).await;
    let first = http.ready("2025-11-25").await;
    let second = http.ready("2025-11-25").await;

    let text = progress_stream(&http, &first, 1, 2).await;
    let events = data_events(&text);
    let notes = progress_events(&events);
    assert_eq!(notes.len(), 2, "{events:?}");
    assert!(notes.iter().all(|e| e[0].starts_with("id: ")), "{events:?}");

    // The second session has nothing of its own to drop: its notes are sent live, without
    // an id (not an empty `id:` line, which would reset the client's last event id), and
    // its answer still arrives.
    let text = progress_stream(&http, &second, 2, 2).await;
    let events = data_events(&text);
    let notes = progress_events(&events);
    assert_eq!(notes.len(), 2, "{text}");
    assert!(notes.iter().all(|e| e[0] == "event: message"), "{text}");
    assert!(!text.contains("id: \n"), "{text}");
    assert!(text.contains(r#"\"steps\":2"#), "{text}");

    // The first session makes room from its own oldest events: its new notes are logged.
    let text = progress_stream(&http, &first, 3, 2).await;
    let events = data_events(&text);
    let notes = progress_events(&events);
    assert_eq!(notes.len(), 2, "{events:?}");
    assert!(notes.iter().all(|e| e[0].starts_with("id: ")), "{events:?}");

    // Once the first session ends, its bytes are free for the second.
    http.delete(&first).await;
    let text = progress_stream(&http, &second, 4, 2).await;
    let events = data_events(&text);
    let notes = progress_events(&events);
    assert!(notes.iter().all(|e| e[0].starts_with("id: ")), "{events:?}");
}
