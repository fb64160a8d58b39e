//! The task state machine (`tasks/*`, MCP 2026-07-28's tasks extension) over one stdio
//! connection, in virtual time: a sequence of task-augmented calls (a tool that waits, fails or
//! asks the user), `tasks/get`, `tasks/cancel` and `tasks/update` on the ids handed
//! out (or made up), with pauses between. (A tool that panics is left out: libFuzzer's panic
//! hook aborts on a panic even where wymcp catches it.) Never a panic; every request is answered once, with
//! a result or an error; a task's status is one of the five and, once terminal (`completed`,
//! `failed`, `cancelled`), never changes again; an id never handed out is unknown.
#![no_main]

use std::collections::HashMap;
use std::time::Duration;

use arbitrary::{Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio_util::sync::CancellationToken;
use wymcp::session::Elicitation;
use wymcp::task::TaskSupport;
use wymcp::transport::stdio::{StdioConfig, serve_io};
use wymcp::{CallError, CallOutput, CallResult, Context, PlainTool, Server, ToolPolicy};

/// Waits, fails or asks, as its arguments say.
struct Work;

impl PlainTool for Work {
    fn name(&self) -> &str {
        "work"
    }
    fn description(&self) -> &str {
        "Works for a while"
    }
    fn input_schema(&self) -> Map<String, Value> {
        json!({"type": "object", "properties": {"ms": {"type": "integer", "minimum": 0},
            "end": {"type": "string"}}})
        .as_object()
        .cloned()
        .unwrap_or_default()
    }
    async fn run(&self, arguments: Map<String, Value>, ctx: Context) -> CallResult {
        let ms = arguments.get("ms").and_then(Value::as_u64).unwrap_or(0);
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(ms)) => {}
            () = ctx.cancellation().cancelled() => return Err(CallError::tool("cancelled")),
        }
        match arguments.get("end").and_then(Value::as_str) {
            Some("fail") => Err(CallError::tool("failed as asked")),
            Some("ask") => {
                let asked = Elicitation::form(
                    "Go on?",
                    json!({"type": "object",
                    "properties": {"go": {"type": "boolean"}}}),
                );
                match ctx.elicit(asked).await {
                    Ok(answer) => Ok(CallOutput::json(json!({"answer": answer}))),
                    Err(e) => Err(CallError::tool(e.to_string())),
                }
            }
            _ => Ok(CallOutput::text(format!("worked {ms} ms"))),
        }
    }
}

/// The fixture, built anew for each run, so that no run sees another's tasks (a server per run
/// leaked about 70 KB until issue 48's fix: docs/fuzzing.md).
fn server() -> Server {
    Server::builder()
        .name("task-fuzz")
        .plain_tool_with(Work, ToolPolicy::new().task_support(TaskSupport::Optional))
        .task_ttl(Duration::from_secs(30))
        .build()
        .expect("the task fixture builds")
}

#[derive(Arbitrary, Debug)]
enum Step {
    Call { ms: u16, end: u8, as_task: bool },
    Get(u8),
    Cancel(u8),
    Update { task: u8, answer: bool },
    Unknown,
    Pause(u16),
}

const TERMINAL: [&str; 3] = ["completed", "failed", "cancelled"];
const STATUSES: [&str; 5] = [
    "working",
    "input_required",
    "completed",
    "failed",
    "cancelled",
];

fn request(id: u64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":
            {"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "fuzz", "version": "0"},
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fuzz_target!(|bytes: &[u8]| {
    let mut u = Unstructured::new(bytes);
    let mut steps = Vec::new();
    while steps.len() < 24 {
        match u.arbitrary::<Step>() {
            Ok(step) => steps.push(step),
            Err(_) => break,
        }
    }
    wymcp_fuzz::runtime().block_on(drive(steps));
});

async fn drive(steps: Vec<Step>) {
    let (client, serving_end) = tokio::io::duplex(1 << 20);
    let (server_in, server_out) = tokio::io::split(serving_end);
    let (client_in, mut client_out) = tokio::io::split(client);
    let config = StdioConfig::default().shutdown_grace(Duration::from_secs(1));
    let serving = tokio::spawn(serve_io(
        server(),
        config,
        server_in,
        server_out,
        CancellationToken::new(),
        |_| {},
    ));
    let mut lines = BufReader::new(client_in).lines();
    let mut tasks: Vec<String> = Vec::new();
    let mut ended: HashMap<String, String> = HashMap::new();
    let mut next_id = 0u64;
    for step in steps {
        let pick = |i: u8| tasks.get(usize::from(i) % tasks.len().max(1)).cloned();
        let (method, params) = match step {
            Step::Pause(ms) => {
                tokio::time::sleep(Duration::from_millis(u64::from(ms))).await;
                continue;
            }
            Step::Call { ms, end, as_task } => {
                let end = ["done", "fail", "ask"][usize::from(end % 3)];
                let mut params =
                    json!({"name": "work", "arguments": {"ms": ms % 5_000, "end": end}});
                if !as_task {
                    params["_meta"] = json!({});
                }
                ("tools/call", params)
            }
            Step::Get(i) => match pick(i) {
                Some(id) => ("tasks/get", json!({"taskId": id})),
                None => continue,
            },
            Step::Cancel(i) => match pick(i) {
                Some(id) => ("tasks/cancel", json!({"taskId": id})),
                None => continue,
            },
            Step::Update { task, answer } => match pick(task) {
                Some(id) => {
                    let responses = json!({"any": {"action": if answer { "accept" } else { "decline" },
                        "content": {"go": true}}});
                    (
                        "tasks/update",
                        json!({"taskId": id, "inputResponses": responses}),
                    )
                }
                None => continue,
            },
            Step::Unknown => (
                "tasks/get",
                json!({"taskId": "0123456789abcdef0123456789abcdef"}),
            ),
        };
        next_id += 1;
        let message = request(next_id, method, params);
        let sent = client_out
            .write_all(format!("{message}\n").as_bytes())
            .await;
        if sent.is_err() {
            break;
        }
        // Read until this request's answer (the server's own messages may come first).
        let answer = tokio::time::timeout(Duration::from_secs(600), async {
            loop {
                let line = lines.next_line().await.ok()??;
                let value: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("a line that is not JSON ({e}): {line}"));
                if value.get("method").is_none() && value["id"] == json!(next_id) {
                    return Some(value);
                }
            }
        })
        .await
        .expect("every request is answered (virtual time)");
        let Some(answer) = answer else { break };
        assert!(
            answer.get("result").is_some() != answer.get("error").is_some(),
            "neither a result nor an error: {answer}"
        );
        if matches!(step, Step::Unknown) {
            assert!(
                answer.get("error").is_some(),
                "an unknown task was found: {answer}"
            );
        }
        let result = &answer["result"];
        if let Some(status) = result["status"].as_str() {
            assert!(STATUSES.contains(&status), "status {status:?}: {answer}");
            if let Some(id) = result["taskId"].as_str() {
                if !tasks.iter().any(|t| t == id) {
                    tasks.push(id.to_owned());
                }
                if let Some(before) = ended.get(id) {
                    assert_eq!(
                        before, status,
                        "task {id} left its terminal status: {answer}"
                    );
                }
                if TERMINAL.contains(&status) {
                    ended.insert(id.to_owned(), status.to_owned());
                }
            }
        }
    }
    client_out.shutdown().await.ok();
    drop(lines);
    let ended = tokio::time::timeout(Duration::from_secs(600), serving)
        .await
        .expect("serve_io returns once the input ends");
    assert!(matches!(ended, Ok(Ok(()))), "serve_io ended with {ended:?}");
}
