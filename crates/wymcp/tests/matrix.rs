//! One scripted conversation over every path a request can take (HTTP and stdio, each in the
//! session era after `initialize` and at 2026-07-28 with the envelope on every request):
//! opening, `tools/list`, a call that succeeds, every gate refusal, JSON-RPC and framing
//! refusals, `help`, progress and logging, elicitation and sampling, resources, prompts,
//! completion, cancellation, the end of the conversation, and a capability the client did not
//! declare. Each step asserts the exact payload where the eras agree and each era's own answer
//! where they differ (HTTP statuses and SSE or JSON framing included); every message read is
//! checked against its era's official schema; the last test runs every path and compares their
//! transcripts whole. Only the wire is used: a real HTTP server on 127.0.0.1 and `serve_io`
//! over an in-memory pipe (`matrix_kit`).

#![allow(clippy::unwrap_used, missing_docs)]

mod http_harness;
mod matrix_kit;
mod mcp_schema;

use serde_json::{Value, json};

use matrix_kit::{Client, Path, Transcript, refusals};
use matrix_kit::{INSTRUCTIONS, NAME, README, SESSION_VERSION, STATELESS_VERSION, VERSION};

/// The whole conversation on `path`: what it answered where the eras agree.
async fn conversation(path: Path) -> Transcript {
    let mut transcript = Transcript::new(path);
    let mut client = Client::open(path).await;
    opening(&client, &mut transcript);
    tools_list(&mut client, &mut transcript).await;
    successful_call(&mut client, &mut transcript).await;
    gate_refusals(&mut client, &mut transcript).await;
    rpc_refusals(&mut client, &mut transcript).await;
    framing_refusals(&mut client, &mut transcript).await;
    help(&mut client, &mut transcript).await;
    progress_and_logging(&mut client, &mut transcript).await;
    elicitation_and_sampling(&mut client, &mut transcript).await;
    resources(&mut client, &mut transcript).await;
    prompts(&mut client, &mut transcript).await;
    completion(&mut client, &mut transcript).await;
    cancellation(&mut client, &mut transcript).await;
    client.close().await;
    undeclared_capability(path, &mut transcript).await;
    transcript
}

/// `initialize` (session era) or `server/discover` (2026-07-28): the same server, its
/// instructions and capabilities, in each era's own shape.
fn opening(client: &Client, transcript: &mut Transcript) {
    let path = client.path();
    let opened = &client.opened;
    opened.assert_answer(200, false);
    let mut result = opened.result();
    let expected = match path.stateless() {
        false => json!({
            "protocolVersion": SESSION_VERSION,
            "serverInfo": {"name": NAME, "version": VERSION},
            "instructions": INSTRUCTIONS,
            "capabilities": {"completions": {}, "logging": {},
                "prompts": {"listChanged": false},
                "resources": {"listChanged": false, "subscribe": true},
                "tools": {"listChanged": true}},
        }),
        // serverInfo travels in `_meta` (checked by `settle`); no listChanged is promised.
        true => json!({
            "supportedVersions": [STATELESS_VERSION, "2025-11-25", "2025-06-18", "2025-03-26"],
            "instructions": INSTRUCTIONS,
            "capabilities": {"completions": {}, "logging": {}, "prompts": {},
                "resources": {"subscribe": true}, "tools": {}},
        }),
    };
    assert_eq!(result, expected, "{path:?}");
    assert!(
        opened.notes.is_empty() && opened.asked.is_empty(),
        "{opened:?}"
    );
    transcript.record("opening: instructions", result["instructions"].take());
}

async fn tools_list(client: &mut Client, transcript: &mut Transcript) {
    let path = client.path();
    let list = client.request("tools/list", json!({})).await;
    list.assert_answer(200, false);
    let result = list.result();
    let names: Vec<&str> = result["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["tasks", "steps", "ask", "slow", "help"], "{path:?}");
    assert_eq!(
        result["tools"][0],
        json!({"name": "tasks", "description": "Task management", "inputSchema": {
            "type": "object", "required": ["action"], "properties": {
                "action": {"type": "string", "enum": ["create"],
                           "description": "create: Create a task"},
                "data": {"type": "object"}}}}),
        "{path:?}"
    );
    assert_eq!(
        result["tools"][1],
        json!({"name": "steps", "description": "Sends progress and log messages",
               "inputSchema": {"type": "object"}}),
        "{path:?}"
    );
    transcript.record("tools/list", result);
}

async fn successful_call(client: &mut Client, transcript: &mut Transcript) {
    let path = client.path();
    let arguments = json!({"action": "create", "data": {"title": "Buy milk", "priority": 2}});
    let call = client.call("tasks", arguments).await;
    call.assert_answer(200, false);
    assert_eq!((call.rounds, call.notes.len(), call.asked.len()), (1, 0, 0));
    let payload = call.tool_payload(false);
    assert_eq!(
        payload,
        json!({"created": "Buy milk", "priority": 2}),
        "{path:?}"
    );
    transcript.record("tools/call tasks create", call.result());
}

/// Every gate, in the gates' order: each an `isError` result with its exact payload.
async fn gate_refusals(client: &mut Client, transcript: &mut Transcript) {
    let path = client.path();
    for case in refusals::gates() {
        let call = client.call("tasks", case.arguments).await;
        call.assert_answer(200, false);
        let payload = call.tool_payload(true);
        assert_eq!(payload, case.payload, "{path:?} {}", case.label);
        transcript.record(case.label, call.result());
    }
}

/// Refusals at the JSON-RPC level: codes, messages, data, and HTTP statuses.
async fn rpc_refusals(client: &mut Client, transcript: &mut Transcript) {
    let path = client.path();
    for case in refusals::rpc_cases() {
        let refused = client.request(case.method, case.params).await;
        refused.assert_answer(case.status, false);
        assert_eq!(*refused.error(), case.error, "{path:?} {}", case.label);
        transcript.record(case.label, refused.error().clone());
    }
    // `ping` is the session era's; 2026-07-28 removed it.
    let ping = client.request("ping", json!({})).await;
    ping.assert_answer(path.by_era(200, 404), false);
    match path.stateless() {
        false => assert_eq!(ping.result(), json!({}), "{path:?}"),
        true => assert_eq!(
            *ping.error(),
            json!({"code": -32601, "message": "Method not found"}),
            "{path:?}"
        ),
    }
}

/// What is not one JSON-RPC request: a parse error, a batch, JSON-RPC 1.0 (each refused with
/// HTTP 400 and its code, worded per transport); and a notification nobody knows, ignored.
async fn framing_refusals(client: &mut Client, transcript: &mut Transcript) {
    let path = client.path();
    let request = client.body("tools/list", json!({}));
    for case in refusals::framing_cases(path, &request) {
        let (status, answer) = client.send_text(&case.text).await;
        let label = case.label;
        assert_eq!(
            status,
            path.http().then_some(400),
            "{path:?} {label}: {answer}"
        );
        let expected = json!({"jsonrpc": "2.0", "id": case.id, "error": case.error});
        assert_eq!(answer, expected, "{path:?} {label}");
        transcript.record(label, answer["error"]["code"].clone());
    }
    let status = client.notify("notifications/frobnicated", json!({})).await;
    assert_eq!(status, path.http().then_some(202), "{path:?}");
}

/// `help` answers the same index of the tools on every path.
async fn help(client: &mut Client, transcript: &mut Transcript) {
    let path = client.path();
    let call = client.call("help", json!({"tool": "tasks"})).await;
    call.assert_answer(200, false);
    let result = call.result();
    assert_eq!(result["isError"], false, "{path:?}: {result}");
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("Create a task"), "{path:?}: {text}");
    transcript.record("help tasks", result);
}

/// A `notifications/progress` for `token`, out of 2.
fn progress(token: Value, n: f64, message: Option<&str>) -> Value {
    let mut params = json!({"progressToken": token, "progress": n, "total": 2.0});
    if let Some(message) = message {
        params["message"] = json!(message);
    }
    json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})
}

/// The log message `steps` sends at `level`.
fn logged(level: &str) -> Value {
    let params = match level {
        "debug" => json!({"level": "debug", "data": "details"}),
        _ => json!({"level": "warning", "logger": "steps", "data": {"careful": true}}),
    };
    json!({"jsonrpc": "2.0", "method": "notifications/message", "params": params})
}

/// `steps` reports progress twice and logs at debug and warning: the session era logs at the
/// session's level (`logging/setLevel`), 2026-07-28 at the request's own `logLevel`; both
/// answer as SSE over HTTP when something goes out besides the result.
async fn progress_and_logging(client: &mut Client, transcript: &mut Transcript) {
    let path = client.path();
    let steps = json!({"name": "steps", "arguments": {}});
    before_a_level(client, &steps).await;

    let set = client.set_log_level("warning").await;
    set.assert_answer(path.by_era(200, 404), false);
    match path.stateless() {
        false => assert_eq!(set.result(), json!({}), "{path:?}"),
        true => assert_eq!(
            *set.error(),
            json!({"code": -32601, "message": "Method not found"})
        ),
    }

    let token = json!(7);
    let call = client
        .request_with("tools/call", steps.clone(), Some(token.clone()))
        .await;
    call.assert_answer(200, true);
    let expected = [
        progress(token.clone(), 1.0, Some("half way")),
        logged("warning"),
        progress(token, 2.0, None),
    ];
    assert_eq!(call.notes, expected, "{path:?}: at warning");
    let sent = call.tool_payload(false);
    let expected = json!({"first": true, "debug": false, "warning": true, "second": true});
    assert_eq!(sent, expected, "{path:?}");
    transcript.record("steps at warning: notes", json!(call.notes));
    transcript.record("steps at warning", call.result());

    // Without a progress token: the log message alone.
    let call = client.request("tools/call", steps).await;
    call.assert_answer(200, true);
    assert_eq!(call.notes, [logged("warning")], "{path:?}: no token");
    let sent = call.tool_payload(false);
    let expected = json!({"first": false, "debug": false, "warning": true, "second": false});
    assert_eq!(sent, expected, "{path:?}");
    transcript.record("steps without a token", call.result());
}

/// No level set: the session era logs every level, 2026-07-28 nothing.
async fn before_a_level(client: &mut Client, steps: &Value) {
    let path = client.path();
    let token = json!("p1");
    let call = client
        .request_with("tools/call", steps.clone(), Some(token.clone()))
        .await;
    call.assert_answer(200, true);
    let mut expected = vec![progress(token.clone(), 1.0, Some("half way"))];
    if !path.stateless() {
        expected.extend([logged("debug"), logged("warning")]);
    }
    expected.push(progress(token, 2.0, None));
    assert_eq!(call.notes, expected, "{path:?}: before a level is set");
    let sent = call.tool_payload(false);
    let logs = !path.stateless();
    let expected = json!({"first": true, "debug": logs, "warning": logs, "second": true});
    assert_eq!(sent, expected, "{path:?}");
}

/// `ask` elicits a name and samples a summary in one round: server→client requests answered
/// on the wire (session era) or one `input_required` round answered by a retry (2026-07-28).
async fn elicitation_and_sampling(client: &mut Client, transcript: &mut Transcript) {
    let path = client.path();
    let call = client.call("ask", json!({})).await;
    // The session era asks on the call's own stream; 2026-07-28 answers each round as JSON.
    call.assert_answer(200, !path.stateless());
    assert_eq!(call.rounds, path.by_era(1, 2), "{path:?}");
    assert!(call.notes.is_empty(), "{path:?}: {:?}", call.notes);
    let expected = json!([
        {"method": "elicitation/create", "params": {"message": "What is your name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}},
                                "required": ["name"]}}},
        {"method": "sampling/createMessage", "params": {"maxTokens": 50, "messages": [
            {"role": "user", "content": {"type": "text", "text": "Summarize the task"}}]}},
    ]);
    assert_eq!(json!(call.asked), expected, "{path:?}");
    let answered = call.tool_payload(false);
    assert_eq!(
        answered,
        json!({"name": "Ada", "summary": "A short summary.", "model": "matrix-model"}),
        "{path:?}"
    );
    transcript.record("ask: asked", json!(call.asked));
    transcript.record("ask", call.result());
}

async fn resources(client: &mut Client, transcript: &mut Transcript) {
    let path = client.path();
    let list = client.request("resources/list", json!({})).await;
    let expected = json!({"resources": [{"uri": README, "name": "readme", "size": 14}]});
    assert_eq!(list.result(), expected, "{path:?}");
    let read = client
        .request("resources/read", json!({"uri": README}))
        .await;
    read.assert_answer(200, false);
    let expected = json!({"contents": [{"uri": README, "text": "Read me first."}]});
    assert_eq!(read.result(), expected, "{path:?}");
    let templates = client.request("resources/templates/list", json!({})).await;
    assert_eq!(
        templates.result(),
        json!({"resourceTemplates": []}),
        "{path:?}"
    );
    transcript.record("resources/list", list.result());
    transcript.record("resources/read", read.result());

    // Subscribing is the session era's; 2026-07-28 listens instead (subscriptions/listen).
    let subscribe = client
        .request("resources/subscribe", json!({"uri": README}))
        .await;
    subscribe.assert_answer(path.by_era(200, 404), false);
    match path.stateless() {
        false => assert_eq!(subscribe.result(), json!({}), "{path:?}"),
        true => assert_eq!(
            *subscribe.error(),
            json!({"code": -32601, "message": "Method not found"}),
            "{path:?}"
        ),
    }

    // Not found: -32002 up to 2025-11-25, -32602 from 2026-07-28.
    let missing = client
        .request("resources/read", json!({"uri": "test://nowhere"}))
        .await;
    missing.assert_answer(200, false);
    let code = path.by_era(-32002, -32602);
    assert_eq!(
        *missing.error(),
        json!({"code": code, "message": "Resource not found: test://nowhere",
               "data": {"uri": "test://nowhere"}}),
        "{path:?}"
    );
}

async fn prompts(client: &mut Client, transcript: &mut Transcript) {
    let path = client.path();
    let list = client.request("prompts/list", json!({})).await;
    let expected = json!({"prompts": [{"name": "greeting", "description": "Greets someone",
        "arguments": [{"name": "name", "description": "Who to greet", "required": true},
                      {"name": "tone", "required": false}]}]});
    assert_eq!(list.result(), expected, "{path:?}");
    let params = json!({"name": "greeting", "arguments": {"name": "Ada"}});
    let got = client.request("prompts/get", params).await;
    got.assert_answer(200, false);
    let expected = json!({"description": "a greeting", "messages": [
        {"role": "user", "content": {"type": "text", "text": "Hello, Ada!"}}]});
    assert_eq!(got.result(), expected, "{path:?}");
    transcript.record("prompts/list", list.result());
    transcript.record("prompts/get", got.result());
}

async fn completion(client: &mut Client, transcript: &mut Transcript) {
    let path = client.path();
    let params = json!({"ref": {"type": "ref/prompt", "name": "greeting"},
                        "argument": {"name": "name", "value": "A"}});
    let completed = client.request("completion/complete", params).await;
    completed.assert_answer(200, false);
    let expected = json!({"completion": {"values": ["Ada", "Alan"], "total": 2, "hasMore": false}});
    assert_eq!(completed.result(), expected, "{path:?}");
    transcript.record("completion/complete", completed.result());
}

/// A running `slow` call cancelled by `notifications/cancelled`: it answers nothing more and
/// its tool sees the cancellation. HTTP at 2026-07-28 has no session to tie the notification
/// to its POST: it is accepted and changes nothing; the client cancels by hanging up.
async fn cancellation(client: &mut Client, transcript: &mut Transcript) {
    let path = client.path();
    let started = client.start_slow().await;
    let expected = json!({"jsonrpc": "2.0", "method": "notifications/progress",
        "params": {"progressToken": "slow-1", "progress": 1.0, "message": "started"}});
    assert_eq!(started.first, expected, "{path:?}");
    let probe = path.by_era("ping", "server/discover");
    let cancelled = client.cancel(&started, probe).await;
    assert_eq!(cancelled.status, path.http().then_some(202), "{path:?}");
    assert_eq!(
        cancelled.by_notification,
        path != Path::HttpStateless,
        "{path:?}: {cancelled:?}"
    );
    assert!(cancelled.after.is_empty(), "{path:?}: {cancelled:?}");
    assert!(cancelled.tool_saw_it, "{path:?}: {cancelled:?}");
    // The conversation goes on.
    let call = client
        .call(
            "tasks",
            json!({"action": "create", "data": {"title": "Next"}}),
        )
        .await;
    let payload = call.tool_payload(false);
    assert_eq!(
        payload,
        json!({"created": "Next", "priority": null}),
        "{path:?}"
    );
    transcript.record("after the cancellation", call.result());
}

/// `ask` for a client that declared elicitation but not sampling: the session era asks the
/// name and tells the tool `NotSupported` for the summary, and the tool answers its own error;
/// 2026-07-28 refuses the call `-32021` naming sampling, and asks nothing.
async fn undeclared_capability(path: Path, transcript: &mut Transcript) {
    let mut client = Client::open_declaring(path, json!({"elicitation": {}})).await;
    let call = client.call("ask", json!({})).await;
    match path.stateless() {
        false => {
            call.assert_answer(200, true);
            let asked: Vec<&Value> = call.asked.iter().map(|a| &a["method"]).collect();
            assert_eq!(asked, ["elicitation/create"], "{path:?}");
            let result = call.result();
            let expected = json!({"isError": true, "content": [{"type": "text",
                "text": "not supported by the client or the negotiated revision"}]});
            assert_eq!(result, expected, "{path:?}");
            transcript.record("undeclared: tool error", result);
        }
        true => {
            call.assert_answer(400, false);
            assert!(call.asked.is_empty(), "{path:?}: {:?}", call.asked);
            assert_eq!(
                *call.error(),
                json!({"code": -32021,
                       "message": "Server requires the sampling capability for this request",
                       "data": {"requiredCapabilities": {"sampling": {}}}}),
                "{path:?}"
            );
        }
    }
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_in_the_session_era() {
    conversation(Path::HttpSession).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_at_2026_07_28() {
    conversation(Path::HttpStateless).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_in_the_session_era() {
    conversation(Path::StdioSession).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_at_2026_07_28() {
    conversation(Path::StdioStateless).await;
}

/// Every path answered every agreed step alike (the payloads whole, not only the fields the
/// steps assert).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_path_answers_alike_where_the_eras_agree() {
    let (http_session, http_stateless, stdio_session, stdio_stateless) = tokio::join!(
        conversation(Path::HttpSession),
        conversation(Path::HttpStateless),
        conversation(Path::StdioSession),
        conversation(Path::StdioStateless),
    );
    assert!(http_session.len() > 20, "{http_session:?}");
    http_stateless.assert_same_as(&stdio_stateless);
    http_session.assert_same_as(&stdio_session);
    // The eras share every step but the session era's own tool error.
    let shared = |t: Transcript| Transcript::without(t, "undeclared: tool error");
    shared(http_session).assert_same_as(&shared(http_stateless));
}
