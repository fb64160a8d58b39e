//! What a task leaves behind when the runtime that ran it ends first (issue 48: the
//! `task_states` fuzz target, building a server per run, grew about 70 KB a run). Each cycle
//! builds a runtime, serves task-augmented calls over stdio (2026-07-28) that are still running
//! (one parked on input, one sleeping) when the input ends, then drops the runtime and the
//! server: nothing keeps the server alive afterwards. A server that outlives its runtime
//! (served again on another) does not count the dropped calls as running: their tasks are
//! reported failed once their heartbeat is stale, and the caller's running cap is free again.

#![allow(clippy::unwrap_used, missing_docs)]

use std::sync::{Arc, Weak};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, DuplexStream, Lines};
use tokio::io::{ReadHalf, WriteHalf};
use tokio_util::sync::CancellationToken;
use wymcp::session::Elicitation;
use wymcp::task::TaskSupport;
use wymcp::transport::stdio::{StdioConfig, serve_io};
use wymcp::{CallError, CallOutput, CallResult, Context, PlainTool, Server, ToolPolicy};

/// Waits `ms`, or asks the user when `ask` is set; holds `alive`, so that the test sees when
/// the server holding the tool is gone.
struct Park {
    _alive: Arc<()>,
}

impl PlainTool for Park {
    fn name(&self) -> &str {
        "park"
    }
    fn description(&self) -> &str {
        "Waits, or asks"
    }
    fn input_schema(&self) -> Map<String, Value> {
        json!({"type": "object", "properties": {"ms": {"type": "integer", "minimum": 0},
            "ask": {"type": "boolean"}}})
        .as_object()
        .cloned()
        .unwrap()
    }
    async fn run(&self, arguments: Map<String, Value>, ctx: Context) -> CallResult {
        if arguments.get("ask").and_then(Value::as_bool) == Some(true) {
            let question = Elicitation::form(
                "Go on?",
                json!({"type": "object", "properties": {"go": {"type": "boolean"}}}),
            );
            return match ctx.elicit(question).await {
                Ok(answer) => Ok(CallOutput::json(json!({"answer": answer}))),
                Err(e) => Err(CallError::tool(e.to_string())),
            };
        }
        let ms = arguments.get("ms").and_then(Value::as_u64).unwrap_or(0);
        tokio::time::sleep(Duration::from_millis(ms)).await;
        Ok(CallOutput::text(format!("waited {ms} ms")))
    }
}

/// A server of `park` as a task, whose tool holds `alive`.
fn server(alive: Arc<()>, heartbeat: Duration) -> Server {
    Server::builder()
        .plain_tool_with(
            Park { _alive: alive },
            ToolPolicy::new().task_support(TaskSupport::Optional),
        )
        .task_heartbeat(heartbeat)
        .task_max_running_per_principal(2)
        .build()
        .unwrap()
}

/// One stdio connection to a server, at 2026-07-28 with the tasks extension declared.
struct Client {
    out: WriteHalf<DuplexStream>,
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    next_id: u64,
    serving: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Client {
    fn connect(server: Server) -> Self {
        let (client, serving_end) = tokio::io::duplex(1 << 16);
        let (server_in, server_out) = tokio::io::split(serving_end);
        let (client_in, out) = tokio::io::split(client);
        let config = StdioConfig::default().shutdown_grace(Duration::from_millis(100));
        let serving = tokio::spawn(serve_io(
            server,
            config,
            server_in,
            server_out,
            CancellationToken::new(),
            |_| {},
        ));
        Client {
            out,
            lines: BufReader::new(client_in).lines(),
            next_id: 0,
            serving,
        }
    }

    /// Sends `method` and reads up to its answer.
    async fn request(&mut self, method: &str, mut params: Value) -> Value {
        self.next_id += 1;
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities":
                {"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}},
            "io.modelcontextprotocol/clientInfo": {"name": "teardown", "version": "0"},
        });
        let message = json!({"jsonrpc": "2.0", "id": self.next_id, "method": method,
            "params": params});
        self.out
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
        for _ in 0..100 {
            let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
                .await
                .expect("an answer within 10 s")
                .unwrap()
                .expect("the connection is open");
            let value: Value = serde_json::from_str(&line).unwrap();
            if value.get("method").is_none() && value["id"] == json!(self.next_id) {
                return value;
            }
        }
        panic!("no answer to {method} among 100 lines");
    }

    /// Starts `park` with `arguments` as a task: its id.
    async fn start(&mut self, arguments: Value) -> String {
        let created = self
            .request(
                "tools/call",
                json!({"name": "park", "arguments": arguments}),
            )
            .await;
        assert_eq!(created["result"]["resultType"], "task", "{created}");
        assert_eq!(created["result"]["status"], "working", "{created}");
        created["result"]["taskId"].as_str().unwrap().to_owned()
    }

    /// Ends the input and waits for `serve_io` to return.
    async fn close(mut self) {
        self.out.shutdown().await.unwrap();
        drop(self.lines);
        let ended = tokio::time::timeout(Duration::from_secs(10), self.serving)
            .await
            .expect("serve_io returns once the input ends");
        assert!(matches!(ended, Ok(Ok(()))), "serve_io ended with {ended:?}");
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Serves `server` on a runtime of its own: two tasks started (one asking the user, parked
/// `input_required`; one sleeping a minute), the input ended while both still run, the runtime
/// dropped. Returns the tasks' ids.
fn serve_and_drop_runtime(server: Server) -> (String, String) {
    let runtime = runtime();
    let ids = runtime.block_on(async {
        let mut client = Client::connect(server);
        let asking = client.start(json!({"ask": true})).await;
        let sleeping = client.start(json!({"ms": 60_000})).await;
        // The asking task shows its question before the connection ends.
        for _ in 0..200 {
            let task = client.request("tasks/get", json!({"taskId": asking})).await;
            if task["result"]["status"] == "input_required" {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let task = client.request("tasks/get", json!({"taskId": asking})).await;
        assert_eq!(task["result"]["status"], "input_required", "{task}");
        client.close().await;
        (asking, sleeping)
    });
    drop(runtime);
    ids
}

#[test]
fn a_server_whose_tasks_were_running_when_its_runtime_ended_is_freed() {
    let mut freed = Vec::new();
    for _ in 0..3 {
        let alive = Arc::new(());
        let watch: Weak<()> = Arc::downgrade(&alive);
        let server = server(alive, wymcp::task::HEARTBEAT);
        serve_and_drop_runtime(server);
        freed.push(watch.strong_count() == 0);
    }
    assert_eq!(
        freed,
        [true, true, true],
        "each cycle's server (and the tool it holds) is dropped with its last handle"
    );
}

#[test]
fn a_server_serving_again_on_another_runtime_fails_the_tasks_the_last_one_dropped() {
    let heartbeat = Duration::from_millis(50);
    let server = server(Arc::new(()), heartbeat);
    let (asking, sleeping) = serve_and_drop_runtime(server.clone());

    let runtime = runtime();
    runtime.block_on(async {
        let mut client = Client::connect(server.clone());
        // Three heartbeats missed: both tasks were left by their runs, and are reported so.
        tokio::time::sleep(heartbeat * 4).await;
        for id in [&asking, &sleeping] {
            let task = client.request("tasks/get", json!({"taskId": id})).await;
            assert_eq!(task["result"]["status"], "failed", "{task}");
            assert_eq!(
                task["result"]["error"]["message"],
                "The node running this task stopped, or could not record its end, before the \
                 task ended; call the tool again",
                "{task}"
            );
        }
        // The caller's cap (2) is free again: two more tasks are admitted.
        client.start(json!({"ms": 0})).await;
        client.start(json!({"ms": 0})).await;
        client.close().await;
    });
}
