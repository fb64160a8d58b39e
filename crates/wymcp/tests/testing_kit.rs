//! `wymcp::testing`: the in-process client, the outcomes it tells apart, the assertion helpers'
//! messages, and the content and response helpers (behaviour-spec §9).

#![allow(clippy::unwrap_used, missing_docs)]

use serde_json::{Value, json};
use wymcp::testing::{
    Outcome, TEST_SESSION_ID, TestClient, assert_fault, assert_gate_error, assert_hint, assert_ok,
    assert_tool_error, build_action_request, build_call_request, error_response, json_response,
    test_context, text_response, unwrap_json, unwrap_single, unwrap_text,
};
use wymcp::tool::Failure;
use wymcp::{
    ActionResult, ActionTool, Actions, Content, Context, Data, Hint, ProtocolVersion, Reply, Server,
};

struct Probe;

impl ActionTool for Probe {
    fn name(&self) -> &str {
        "probe"
    }
    fn description(&self) -> &str {
        "Answers what the test asks for"
    }
    fn actions(&self) -> Actions {
        wymcp::actions!({
            "echo": {
                "description": "Echo the data and the context",
                "properties": {"n": {"type": "integer", "minimum": 0}},
                "required": ["n"]
            },
            "fail": {"description": "Fail with a hint", "properties": {}},
            "panic": {"description": "Panic", "properties": {}},
            "count": {"description": "Count calls in the assigns", "properties": {}}
        })
    }
    async fn run_action(&self, action: &str, data: Data, ctx: Context) -> ActionResult {
        match action {
            "echo" => Ok(Reply::new(json!({
                "n": data["n"],
                "session_id": ctx.session_id(),
                "request_id": ctx.request_id(),
                "version": ctx.protocol_version().as_str(),
                "user": ctx.assigns().get("user"),
            }))),
            "fail" => Err(Failure::msg("nope").with_hint_context(json!({}))),
            "count" => {
                let n = ctx.assigns().get("n").and_then(Value::as_i64).unwrap_or(0) + 1;
                ctx.assign("n", json!(n));
                ctx.progress(n as f64, None, None);
                Ok(Reply::new(json!({"n": n})))
            }
            _ => panic!("probe asked to panic"),
        }
    }
    fn hints(&self, _action: &str, _hint_context: &Value) -> Vec<Hint> {
        vec![Hint::new("probe", "echo", "Try echo instead")]
    }
}

fn client() -> TestClient {
    TestClient::new(Server::builder().tool(Probe).build().unwrap())
}

#[tokio::test]
async fn outcomes_are_told_apart() {
    let client = client();
    let ok = client.call("probe", "echo", json!({"n": 1})).await.unwrap();
    assert_eq!(ok.outcome(), Outcome::Ok);
    let refused = client.call("probe", "echo", json!({})).await.unwrap();
    assert_eq!(refused.outcome(), Outcome::GateError);
    let failed = client.call("probe", "fail", json!({})).await.unwrap();
    assert_eq!(failed.outcome(), Outcome::ToolError);
    assert!(failed.gate_error().is_none());
    let faulted = client.call("probe", "panic", json!({})).await.unwrap();
    assert_eq!(faulted.outcome(), Outcome::Fault);

    assert_eq!(assert_tool_error(&failed), "Operation failed: nope");
    assert_hint(&failed, "probe", "echo");
    assert_eq!(assert_fault(&faulted)["errorType"], "tool_fault");
    let gate = assert_gate_error(&refused, "missing_required_fields");
    assert_eq!(gate.payload["missing"], json!(["n"]));
    assert_eq!(gate.message(), Some("Required fields missing: n"));
}

#[tokio::test]
async fn calls_are_served_in_a_session_of_their_own_with_shared_assigns() {
    let client = client()
        .with_version(ProtocolVersion::V2025_06_18)
        .with_assign("user", json!("u1"));
    let first = assert_ok(&client.call("probe", "echo", json!({"n": 1})).await.unwrap());
    // The client's first request opened a session through the serving core.
    let session = client.session_id().expect("a session was opened");
    assert_ne!(session, TEST_SESSION_ID);
    assert_eq!(first["session_id"], session);
    assert_eq!(first["request_id"], 1);
    assert_eq!(first["version"], "2025-06-18");
    assert_eq!(first["user"], "u1");
    let second = assert_ok(&client.call("probe", "echo", json!({"n": 2})).await.unwrap());
    assert_eq!(second["request_id"], 2);

    client.call("probe", "count", json!(null)).await.unwrap();
    let counted = client
        .call_with_progress("probe", "count", json!({}), json!("t"))
        .await
        .unwrap();
    assert_eq!(assert_ok(&counted)["n"], 2, "assigns outlive a call");
    assert_eq!(client.assigns()["n"], 2);
    let sent = client.take_notifications();
    assert_eq!(sent.len(), 1, "progress only with a token");
    assert_eq!(sent[0]["params"]["progressToken"], "t");
    assert!(client.notifications().is_empty());

    let ctx = test_context().build();
    assert_eq!(ctx.session_id(), Some(TEST_SESSION_ID));
    assert_eq!(
        ctx.client_info(),
        Some(&json!({"name": "test", "version": "1.0"}))
    );
}

#[tokio::test]
async fn protocol_errors_are_errors_not_results() {
    let client = client();
    assert_eq!(
        client
            .call_tool("nope", json!({}))
            .await
            .unwrap_err()
            .code(),
        -32602
    );
    assert_eq!(
        client
            .call_tool("probe", json!([1]))
            .await
            .unwrap_err()
            .code(),
        -32602
    );
    let missing = client.call_tool("probe", Value::Null).await.unwrap();
    assert_gate_error(&missing, "missing_action");
}

#[tokio::test]
#[should_panic(expected = "expected success, got GateError")]
async fn assert_ok_quotes_the_refusal() {
    let result = client().call("probe", "echo", json!({})).await.unwrap();
    assert_ok(&result);
}

#[tokio::test]
#[should_panic(
    expected = "expected gate error \"invalid_values\", got gate error \"missing_required_fields\""
)]
async fn assert_gate_error_names_both_errors() {
    let result = client().call("probe", "echo", json!({})).await.unwrap();
    assert_gate_error(&result, "invalid_values");
}

#[tokio::test]
#[should_panic(expected = "expected a tool error, got Ok")]
async fn assert_tool_error_refuses_a_success() {
    let result = client()
        .call("probe", "echo", json!({"n": 0}))
        .await
        .unwrap();
    assert_tool_error(&result);
}

#[test]
fn content_helpers() {
    assert_eq!(unwrap_text(&[Content::text("done")]).unwrap(), "done");
    assert_eq!(
        unwrap_json(&[Content::text("{\"id\":7}")]).unwrap(),
        json!({"id": 7})
    );
    let error = unwrap_single(&[Content::text("a"), Content::text("b")]).unwrap_err();
    assert!(
        error
            .message()
            .starts_with("expected single content item, got: ")
    );
    assert!(error.message().contains("\"b\""));
    assert!(unwrap_text(&[Content::image("AA==", "image/png")]).is_err());
}

#[test]
fn request_builders() {
    assert_eq!(
        build_call_request("tasks", json!({"action": "get"}))["method"],
        "tools/call"
    );
    assert_eq!(
        build_action_request("tasks", "get", json!({"id": "7"}))["params"]["arguments"],
        json!({"action": "get", "data": {"id": "7"}})
    );
    assert_eq!(
        build_action_request("tasks", "list", json!({}))["params"]["arguments"],
        json!({"action": "list"})
    );
}

#[tokio::test]
async fn response_helpers_read_wire_results() {
    let client = client();
    let version = ProtocolVersion::V2025_11_25;
    let ok = client.call("probe", "echo", json!({"n": 3})).await.unwrap();
    let wire = json!({"jsonrpc": "2.0", "id": 1, "result": ok.to_value(version)});
    assert_eq!(json_response(&wire).unwrap()["n"], 3);
    assert!(
        error_response(&wire)
            .unwrap_err()
            .message()
            .starts_with("expected error, got success")
    );
    let refused = client.call("probe", "echo", json!({})).await.unwrap();
    let wire = json!({"jsonrpc": "2.0", "id": 1, "result": refused.to_value(version)});
    assert!(
        error_response(&wire)
            .unwrap()
            .contains("missing_required_fields")
    );
    assert!(
        text_response(&wire)
            .unwrap_err()
            .message()
            .starts_with("expected success, got error")
    );
}

/// At 2026-07-28 the client opens no session: every request carries the era's envelope and
/// the core serves it statelessly (the tool sees the revision, no session id).
#[tokio::test]
async fn at_2026_07_28_requests_carry_the_envelope_and_open_no_session() {
    let client = client().with_version(ProtocolVersion::V2026_07_28);
    let echoed = assert_ok(&client.call("probe", "echo", json!({"n": 1})).await.unwrap()).clone();
    assert_eq!(echoed["version"], "2026-07-28");
    assert_eq!(echoed["session_id"], Value::Null);
    assert_eq!(client.session_id(), None);
    // A method of this era only is served; one it removed is not.
    let discovered = client.request("server/discover", None).await.unwrap();
    assert_eq!(discovered["resultType"], "complete");
    let ping = client.request("ping", None).await.unwrap_err();
    assert_eq!(ping.code(), -32601);
}
