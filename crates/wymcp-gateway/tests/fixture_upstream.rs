//! The gateway in front of a small stdio upstream (`fixtures/upstream.py`, Python's standard
//! library) that records every line it reads: the gates refuse a bad call without a request
//! reaching it, the tools mode keeps its definition, and each fault (exit mid-call, hang,
//! non-JSON, an answer over the limit, no answer to `initialize`) is a clear refusal naming
//! the upstream and the reason, within the timeout; a dead upstream is restarted.

#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use wymcp::ProtocolVersion;
use wymcp::testing::{TestClient, assert_gate_error, assert_ok, assert_tool_error};
use wymcp_gateway::{Expose, Gateway, GatewayConfig, Notice, UpstreamConfig};

use support::{call_action, received, record, starts};

/// The fixture in `mode`, recording to `record`.
fn fixture(name: &str, python: &str, mode: &str, record: &Path) -> UpstreamConfig {
    UpstreamConfig::stdio(name, python).args([
        support::fixture("upstream.py"),
        mode.to_owned(),
        record.display().to_string(),
    ])
}

async fn serve(config: GatewayConfig) -> (TestClient, Vec<Notice>) {
    let gateway = Gateway::start(config).await;
    let notices = gateway.notices().to_vec();
    let server = gateway
        .register(wymcp::Server::builder().name("gateway-test"))
        .build()
        .unwrap();
    (TestClient::new(server), notices)
}

#[tokio::test]
async fn the_gates_refuse_a_bad_call_before_the_upstream_sees_it() {
    let Some(python) = support::python() else {
        return;
    };
    let record = record("gates");
    let (client, notices) =
        serve(GatewayConfig::new().upstream(fixture("fx", python, "ok", &record))).await;
    assert_eq!(notices, []);
    let tools = client.list_tools(ProtocolVersion::V2025_11_25);
    assert_eq!(tools["tools"][0]["name"], "fx");
    assert_eq!(
        tools["tools"][0]["annotations"],
        json!({"readOnlyHint": true})
    );

    let unknown = call_action(&client, "fx", "work", json!({"n": 1, "lable": "x"})).await;
    assert_gate_error(&unknown, "unknown_params");
    let wrong_type = call_action(&client, "fx", "work", json!({"n": "one"})).await;
    assert_gate_error(&wrong_type, "invalid_values");
    let missing = call_action(&client, "fx", "work", json!({"label": "x"})).await;
    assert_gate_error(&missing, "missing_required_fields");
    let no_action = call_action(&client, "fx", "rest", json!({})).await;
    assert_gate_error(&no_action, "unknown_action");
    assert_eq!(
        received(&record, "tools/call"),
        0,
        "no call reached the upstream"
    );

    let ok = assert_ok(&call_action(&client, "fx", "work", json!({"n": 2, "label": "y"})).await);
    assert_eq!(
        ok,
        json!({"content": [{"type": "text", "text": "worked 2 y"}]})
    );
    assert_eq!(received(&record, "tools/call"), 1);

    // help lists the upstream tool as an action, its description's first line the summary,
    // the rest and its hint in the notes.
    let index = assert_ok(&client.help(Some("fx"), None).await);
    let shown = index.to_string();
    assert!(
        shown.contains("work") && shown.contains("Does work"),
        "{shown}"
    );
    let action = assert_ok(&client.help(Some("fx"), Some("work")).await).to_string();
    assert!(
        action.contains("Second line of the description.") && action.contains("Read-only."),
        "{action}"
    );
}

#[tokio::test]
async fn the_tools_mode_serves_each_tool_under_its_prefix() {
    let Some(python) = support::python() else {
        return;
    };
    let record = record("tools-mode");
    let upstream = fixture("fx", python, "ok", &record).expose(Expose::Tools);
    let (client, _) = serve(GatewayConfig::new().upstream(upstream)).await;
    let tools = client.list_tools(ProtocolVersion::V2025_11_25);
    let work = &tools["tools"][0];
    assert_eq!(work["name"], "fx_work");
    assert_eq!(
        work["description"],
        "Does work\nSecond line of the description."
    );
    assert_eq!(work["annotations"], json!({"readOnlyHint": true}));
    assert_eq!(work["inputSchema"]["required"], json!(["n"]));

    let ok = client.call_tool("fx_work", json!({"n": 3})).await.unwrap();
    assert_eq!(ok.text(), Some("worked 3 None"));
    let refused = client
        .call_tool("fx_work", json!({"n": 3, "m": 1}))
        .await
        .unwrap();
    assert_gate_error(&refused, "unknown_params");
    assert_eq!(received(&record, "tools/call"), 1);
}

#[tokio::test]
async fn a_schema_wymcp_refuses_is_reported_and_widened_or_left_out() {
    let Some(python) = support::python() else {
        return;
    };
    let widened = record("odd");
    let (client, notices) =
        serve(GatewayConfig::new().upstream(fixture("fx", python, "odd", &widened))).await;
    let [notice] = notices.as_slice() else {
        panic!("one notice: {notices:?}")
    };
    assert_eq!(notice.tool(), Some("odd"));
    let shown = notice.to_string();
    assert!(
        shown.starts_with("upstream fx: tool odd: input schema refused (")
            && shown.ends_with("): served with any value for each of its properties"),
        "{shown}"
    );
    // Widened: `x` of any value, still required, no other key.
    let ok = call_action(&client, "fx", "odd", json!({"x": 5})).await;
    assert_eq!(
        assert_ok(&ok),
        json!({"content": [{"type": "text", "text": "worked None None"}]})
    );
    assert_gate_error(
        &call_action(&client, "fx", "odd", json!({"x": 5, "y": 1})).await,
        "unknown_params",
    );
    assert_gate_error(
        &call_action(&client, "fx", "odd", json!({})).await,
        "missing_required_fields",
    );
    assert_eq!(received(&widened, "tools/call"), 1);

    let omitted = record("odd-omitted");
    let upstream = fixture("fx", python, "odd", &omitted)
        .on_unacceptable_schema(wymcp_gateway::SchemaFallback::Omit);
    let (client, notices) = serve(GatewayConfig::new().upstream(upstream)).await;
    assert!(
        notices[0].to_string().ends_with("): left out"),
        "{notices:?}"
    );
    assert_gate_error(
        &call_action(&client, "fx", "odd", json!({"x": "a"})).await,
        "unknown_action",
    );
    assert_eq!(
        assert_ok(&call_action(&client, "fx", "work", json!({"n": 1})).await)["content"][0]["text"],
        "worked 1 None"
    );
}

/// The refusal text of a call to the fixture in `mode` through the gateway.
async fn fault(
    name: &str,
    mode: &str,
    upstream: impl FnOnce(UpstreamConfig) -> UpstreamConfig,
) -> Option<(String, TestClient)> {
    let python = support::python()?;
    let record = record(name);
    let (client, notices) =
        serve(GatewayConfig::new().upstream(upstream(fixture(name, python, mode, &record)))).await;
    assert_eq!(notices, []);
    let started = tokio::time::Instant::now();
    let result = call_action(&client, name, "work", json!({"n": 1})).await;
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "answered within the timeout"
    );
    Some((assert_tool_error(&result), client))
}

#[tokio::test]
async fn an_upstream_error_is_the_callers_error_in_both_modes() {
    let Some((text, _)) = fault("fails", "fail", |u| u).await else {
        return;
    };
    assert_eq!(text, "upstream fails answered an error: it failed: 1");
    let Some(python) = support::python() else {
        return;
    };
    let record = record("fails-tools");
    let upstream = fixture("fails", python, "fail", &record).expose(Expose::Tools);
    let (client, _) = serve(GatewayConfig::new().upstream(upstream)).await;
    let result = client
        .call_tool("fails_work", json!({"n": 4}))
        .await
        .unwrap();
    assert_eq!(assert_tool_error(&result), "it failed: 4");
}

#[tokio::test]
async fn an_upstream_that_hangs_is_refused_at_its_timeout() {
    let Some((text, _)) = fault("hangs", "hang", |u| u.timeout(Duration::from_millis(500))).await
    else {
        return;
    };
    assert_eq!(text, "upstream hangs: no answer within 500ms (timeout_ms)");
}

#[tokio::test]
async fn an_upstream_printing_non_json_is_refused_at_its_timeout() {
    // Three seconds, not less: the timeout bounds `initialize` too, and a Python start on a
    // loaded machine took over 500 ms (a local run beside other builds, 7 December).
    let Some((text, _)) = fault("garbage", "garbage", |u| u.timeout(Duration::from_secs(3))).await
    else {
        return;
    };
    assert_eq!(text, "upstream garbage: no answer within 3s (timeout_ms)");
}

#[tokio::test]
async fn an_answer_over_the_limit_is_refused_naming_it() {
    let Some((text, _)) = fault("big", "big", |u| u.max_answer_bytes(10_000)).await else {
        return;
    };
    assert_eq!(
        text,
        "upstream big: tools/call: refused: the server exceeded one stdout line's size \
         (at most 10000 bytes, ClientBuilder::max_line_bytes)"
    );
}

#[tokio::test]
async fn an_upstream_exiting_mid_call_is_refused_then_restarted() {
    let Some(python) = support::python() else {
        return;
    };
    let record = record("dies");
    let upstream = fixture("dies", python, "die-once", &record)
        .restart_backoff(Duration::from_millis(100), Duration::from_secs(1));
    let (client, _) = serve(GatewayConfig::new().upstream(upstream)).await;
    let died = call_action(&client, "dies", "work", json!({"n": 1})).await;
    assert_eq!(
        assert_tool_error(&died),
        "upstream dies: tools/call: the server's process ended or closed its stdout"
    );
    // The next call restarts it (after the backoff) and is answered.
    let again = call_action(&client, "dies", "work", json!({"n": 2})).await;
    assert_eq!(
        assert_ok(&again),
        json!({"content": [{"type": "text", "text": "worked 2 None"}]})
    );
    assert_eq!(starts(&record), 2);
}

#[tokio::test]
async fn an_upstream_that_stays_dead_is_refused_with_the_backoff() {
    let Some(python) = support::python() else {
        return;
    };
    let record = record("stays-dead");
    let upstream = fixture("dead", python, "die", &record)
        .timeout(Duration::from_secs(1))
        .restart_backoff(Duration::from_secs(5), Duration::from_secs(60));
    let (client, _) = serve(GatewayConfig::new().upstream(upstream)).await;
    let died = call_action(&client, "dead", "work", json!({"n": 1})).await;
    assert_tool_error(&died);
    // Within the backoff (5 s, longer than the timeout): refused at once, no restart yet.
    let refused = assert_tool_error(&call_action(&client, "dead", "work", json!({"n": 1})).await);
    assert!(
        refused.starts_with("upstream dead: unavailable (tools/call: the server's process ended or closed its stdout); next restart attempt in"),
        "{refused}"
    );
    assert_eq!(starts(&record), 1);
}

#[tokio::test]
async fn an_upstream_that_never_answers_initialize_is_reported_and_the_rest_served() {
    let Some(python) = support::python() else {
        return;
    };
    let silent = record("noinit");
    let fine = record("fine");
    let config = GatewayConfig::new()
        .upstream(fixture("silent", python, "noinit", &silent).timeout(Duration::from_millis(500)))
        .upstream(fixture("fine", python, "ok", &fine));
    let (client, notices) = serve(config).await;
    let shown: Vec<String> = notices.iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        ["upstream silent: not served: no answer within 500ms (timeout_ms)"]
    );
    let names: Vec<Value> = client.list_tools(ProtocolVersion::V2025_11_25)["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert_eq!(names, [json!("fine"), json!("help")]);
}
