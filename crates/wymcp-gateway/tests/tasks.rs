//! Task-augmented calls through the gateway (the tasks extension, MCP 2026-07-28), end to end:
//! a wymcp server of this test served over Streamable HTTP on 127.0.0.1 as the upstream, its
//! tools running as tasks; the gateway in `tools` mode in front of it, served over HTTP; wymcp's
//! client downstream. The downstream's call answers a task handle; `tasks/get` shows it working,
//! then completed with the upstream's result; input the upstream's task asks shows in the
//! gateway's task and `tasks/update` answers it; `tasks/cancel` cancels the upstream's call.

#![allow(clippy::unwrap_used, missing_docs)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::sync::Notify;
use wymcp::client::Client;
use wymcp::live::{LiveTools, ToolChange};
use wymcp::session::Elicitation;
use wymcp::task::TaskSupport;
use wymcp::transport::http::{HttpServer, StreamableHttp};
use wymcp::{
    CallError, CallOutput, CallResult, Context, PlainTool, ProtocolVersion, RpcError, Server,
    ToolPolicy,
};
use wymcp_gateway::{Expose, Gateway, GatewayConfig, UpstreamConfig};

/// What the upstream's tools share with the test.
#[derive(Debug, Default)]
struct Shared {
    /// `report` ends once this is notified.
    release: Notify,
    /// Set when a `report` call saw its cancellation.
    cancelled: AtomicBool,
}

/// The upstream's tools.
#[derive(Debug, Clone)]
enum Job {
    /// Waits for the test's release (or its cancellation), then answers a text.
    Report(Arc<Shared>),
    /// Asks the user to confirm, then answers what they said.
    Confirm,
    /// Panics: its task fails `-32603` "The tool faulted".
    Explode,
    /// Fails its call with a JSON-RPC error of its own (`CallError::protocol`).
    Quota,
}

impl PlainTool for Job {
    fn name(&self) -> &str {
        match self {
            Job::Report(_) => "report",
            Job::Confirm => "confirm",
            Job::Explode => "explode",
            Job::Quota => "quota",
        }
    }

    fn description(&self) -> &str {
        "A job of the tasks test"
    }

    fn input_schema(&self) -> Map<String, Value> {
        json!({"type": "object", "properties": {"month": {"type": "string"}}})
            .as_object()
            .cloned()
            .unwrap()
    }

    async fn run(&self, arguments: Map<String, Value>, ctx: Context) -> CallResult {
        match self {
            Job::Report(shared) => {
                let month = arguments["month"].as_str().unwrap_or("?").to_owned();
                tokio::select! {
                    () = shared.release.notified() => {}
                    () = ctx.cancellation().cancelled() => {
                        shared.cancelled.store(true, Ordering::SeqCst);
                        return Err(CallError::tool("cancelled"));
                    }
                }
                Ok(CallOutput::text(format!("report for {month}")))
            }
            Job::Confirm => {
                let ask = Elicitation::form(
                    "Delete the report?",
                    json!({"type": "object", "properties": {"confirm": {"type": "boolean"}}}),
                )
                .key("confirm");
                let answer = ctx
                    .elicit(ask)
                    .await
                    .map_err(|e| CallError::tool(e.to_string()))?;
                Ok(CallOutput::text(format!(
                    "confirmed: {}",
                    answer["content"]["confirm"]
                )))
            }
            Job::Explode => panic!("the report blew up"),
            Job::Quota => Err(CallError::protocol(RpcError::new(
                -32050,
                "Quota exhausted",
                Some(json!({"retryAfterMs": 60000})),
            ))),
        }
    }
}

/// Serves `server` over Streamable HTTP on 127.0.0.1: its `/mcp` URL.
async fn serve_http(server: Server) -> String {
    let http = HttpServer::bind("127.0.0.1:0", StreamableHttp::builder(server))
        .await
        .unwrap();
    let url = format!("http://{}/mcp", http.local_addr().unwrap());
    tokio::spawn(http.run());
    url
}

/// The upstream (its tools running as tasks when the client declares the extension), the
/// gateway in front of it in `tools` mode with no prefix, and a downstream client of the
/// gateway speaking 2026-07-28 with an elicitation handler installed.
async fn setup(shared: &Arc<Shared>) -> Client {
    setup_with_timeout(shared, Duration::from_secs(30)).await
}

/// [`setup`] with the upstream's `timeout`.
async fn setup_with_timeout(shared: &Arc<Shared>, timeout: Duration) -> Client {
    setup_exposed(shared, timeout, Expose::Tools).await
}

/// [`setup`] with the upstream's `timeout`, its tools exposed as `expose` says (as the
/// actions of the tool `up` in `actions` mode).
async fn setup_exposed(shared: &Arc<Shared>, timeout: Duration, expose: Expose) -> Client {
    let runs_as_task = || ToolPolicy::new().task_support(TaskSupport::Optional);
    let upstream = Server::builder()
        .name("tasks-upstream")
        .plain_tool_with(Job::Report(Arc::clone(shared)), runs_as_task())
        .plain_tool_with(Job::Confirm, runs_as_task())
        .plain_tool_with(Job::Explode, runs_as_task())
        .plain_tool_with(Job::Quota, runs_as_task())
        .build()
        .unwrap();
    let upstream = UpstreamConfig::http("up", serve_http(upstream).await)
        .expose(expose)
        .prefix("")
        .timeout(timeout);
    let gateway = Gateway::start(GatewayConfig::new().upstream(upstream)).await;
    let server = gateway
        .register(Server::builder().name("tasks-gateway"))
        .build()
        .unwrap();
    let url = serve_http(server).await;
    Client::builder(&url)
        .versions([ProtocolVersion::V2026_07_28])
        .timeout(Duration::from_secs(10))
        .on_elicitation(|_| async { Ok(json!({"action": "decline"})) })
        .connect()
        .await
        .unwrap()
}

/// A task-augmented call of `tool` with `arguments` under the task token `token`: asserts the
/// answer is a task's and returns its id.
async fn start(client: &Client, tool: &str, arguments: Value, token: &str) -> String {
    let handle = client
        .call_tool_with_tasks(tool, arguments, token)
        .await
        .unwrap();
    assert_eq!(handle["resultType"], "task", "{handle}");
    handle["taskId"].as_str().unwrap().to_owned()
}

/// `tasks/get` of `id` until its status is `status`, at most 200 times, 50 ms apart.
async fn until(client: &Client, id: &str, status: &str) -> Value {
    let mut task = Value::Null;
    for _ in 0..200 {
        task = client.get_task(id).await.unwrap();
        if task["status"] == status {
            return task;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("task {id} never became {status}: {task}");
}

/// An empty acknowledgement: `resultType: "complete"` and the server's `_meta`, nothing of a
/// task.
fn assert_ack(ack: &Value) {
    assert_eq!(ack["resultType"], "complete", "{ack}");
    let mut members: Vec<&str> = ack
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    members.sort_unstable();
    assert_eq!(members, ["_meta", "resultType"], "{ack}");
}

#[tokio::test]
async fn a_task_augmented_call_through_the_gateway_runs_as_a_task_and_ends_with_the_upstreams_result()
 {
    let shared = Arc::new(Shared::default());
    let client = setup(&shared).await;
    // The gateway declares the extension, as its upstream does.
    assert!(
        client.server_capabilities()["extensions"]["io.modelcontextprotocol/tasks"].is_object(),
        "{}",
        client.server_capabilities()
    );

    let handle = client
        .call_tool_with_tasks("report", json!({"month": "2026-11"}), "down-1")
        .await
        .unwrap();
    assert_eq!(handle["resultType"], "task", "{handle}");
    assert_eq!(handle["status"], "working", "{handle}");
    for absent in ["result", "error", "inputRequests", "requestState"] {
        assert!(handle.get(absent).is_none(), "{absent} in {handle}");
    }
    let id = handle["taskId"].as_str().unwrap().to_owned();

    // The upstream's call waits for the release: the gateway's task is working.
    let working = client.get_task(&id).await.unwrap();
    assert_eq!(working["taskId"], id.as_str());
    assert_eq!(working["status"], "working", "{working}");
    assert!(working.get("result").is_none(), "{working}");

    shared.release.notify_one();
    let completed = until(&client, &id, "completed").await;
    assert_eq!(
        completed["result"],
        json!({
            "content": [{"type": "text", "text": "report for 2026-11"}],
            "isError": false
        }),
        "{completed}"
    );
    assert!(completed.get("error").is_none(), "{completed}");
}

#[tokio::test]
async fn input_the_upstreams_task_asks_is_asked_in_the_gateways_task() {
    let shared = Arc::new(Shared::default());
    let client = setup(&shared).await;
    let id = start(&client, "confirm", json!({}), "down-2").await;

    let waiting = until(&client, &id, "input_required").await;
    assert_eq!(
        waiting["inputRequests"],
        json!({"confirm": {"method": "elicitation/create", "params": {
            "message": "Delete the report?",
            "requestedSchema": {"type": "object", "properties": {"confirm": {"type": "boolean"}}}
        }}}),
        "{waiting}"
    );
    let mut answer = Map::new();
    answer.insert(
        "confirm".to_owned(),
        json!({"action": "accept", "content": {"confirm": true}}),
    );
    let ack = client.update_task(&id, answer).await.unwrap();
    assert_ack(&ack);
    let completed = until(&client, &id, "completed").await;
    assert_eq!(
        completed["result"],
        json!({"content": [{"type": "text", "text": "confirmed: true"}], "isError": false}),
        "{completed}"
    );
}

#[tokio::test]
async fn cancelling_the_gateways_task_cancels_the_upstreams() {
    let shared = Arc::new(Shared::default());
    let client = setup(&shared).await;
    let id = start(&client, "report", json!({"month": "2026-12"}), "down-3").await;
    assert_eq!(
        client.get_task(&id).await.unwrap()["status"],
        "working",
        "{id}"
    );

    let ack = client.cancel_task(&id).await.unwrap();
    assert_ack(&ack);
    let cancelled = client.get_task(&id).await.unwrap();
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    // The upstream's call saw its cancellation: the gateway sent `tasks/cancel` upstream.
    for _ in 0..200 {
        if shared.cancelled.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        shared.cancelled.load(Ordering::SeqCst),
        "the upstream's report was not cancelled"
    );
    // The task never completes: the release no longer has a call to end.
    shared.release.notify_one();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(client.get_task(&id).await.unwrap()["status"], "cancelled");
}

#[tokio::test]
async fn a_client_without_the_extension_gets_the_result_at_once() {
    let shared = Arc::new(Shared::default());
    let client = setup(&shared).await;
    shared.release.notify_one();
    let plain = client
        .call_tool("report", json!({"month": "2027-01"}))
        .await
        .unwrap();
    assert_eq!(
        plain.raw()["content"],
        json!([{"type": "text", "text": "report for 2027-01"}])
    );
    assert!(plain.raw().get("taskId").is_none(), "{:?}", plain.raw());
}

#[tokio::test]
async fn an_input_request_left_unanswered_ends_the_task_at_the_upstreams_timeout() {
    let shared = Arc::new(Shared::default());
    let client = setup_with_timeout(&shared, Duration::from_millis(500)).await;
    let id = start(&client, "confirm", json!({}), "down-4").await;
    until(&client, &id, "input_required").await;
    // Nobody answers: after the upstream's timeout the gateway's task ends, naming why.
    let ended = until(&client, &id, "completed").await;
    assert_eq!(ended["result"]["isError"], true, "{ended}");
    let text = ended["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("upstream up: task "), "{text}");
    assert!(
        text.ends_with(": input request confirm not answered: no answer within the timeout"),
        "{text}"
    );
}

#[tokio::test]
async fn an_upstream_task_that_fails_fails_the_gateways_task_with_the_upstreams_error() {
    let shared = Arc::new(Shared::default());
    let client = setup(&shared).await;
    let id = start(&client, "explode", json!({}), "down-5").await;
    let failed = until(&client, &id, "failed").await;
    assert!(failed.get("result").is_none(), "{failed}");
    // The upstream's error as the upstream's task store recorded it: its tool faulted, and
    // `data` is the upstream's fault result, naming its tool and its panic.
    let error = &failed["error"];
    assert_eq!(error["code"], -32603, "{failed}");
    assert_eq!(error["message"], "The tool faulted", "{failed}");
    assert_eq!(error["data"]["isError"], true, "{failed}");
    let fault: Value =
        serde_json::from_str(error["data"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        fault,
        json!({"errorType": "tool_fault", "tool": "explode", "exception": "panic",
               "message": "the report blew up"}),
        "{failed}"
    );

    // A JSON-RPC error of the upstream's own making reaches the downstream as it is.
    let id = start(&client, "quota", json!({}), "down-6").await;
    let failed = until(&client, &id, "failed").await;
    assert_eq!(
        failed["error"],
        json!({"code": -32050, "message": "Quota exhausted", "data": {"retryAfterMs": 60000}}),
        "{failed}"
    );
}

/// `{"action": action, "data": data}`: a call of the upstream's action tool `up`.
fn action(action: &str, data: Value) -> Value {
    json!({"action": action, "data": data})
}

#[tokio::test]
async fn in_actions_mode_a_task_augmented_call_of_an_action_runs_as_the_gateways_task() {
    let shared = Arc::new(Shared::default());
    let client = setup_exposed(&shared, Duration::from_secs(30), Expose::Actions).await;
    assert!(
        client.server_capabilities()["extensions"]["io.modelcontextprotocol/tasks"].is_object(),
        "{}",
        client.server_capabilities()
    );
    let id = start(
        &client,
        "up",
        action("report", json!({"month": "2027-02"})),
        "down-7",
    )
    .await;
    let working = client.get_task(&id).await.unwrap();
    assert_eq!(working["status"], "working", "{working}");
    shared.release.notify_one();
    let completed = until(&client, &id, "completed").await;
    // The action's reply: the upstream's content, as `actions` mode answers any call.
    let result = &completed["result"];
    assert_eq!(result["isError"], false, "{completed}");
    let reply: Value =
        serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        reply,
        json!({"content": [{"type": "text", "text": "report for 2027-02"}]}),
        "{completed}"
    );

    // Its input requests are asked in the gateway's task, under the upstream's keys.
    let id = start(&client, "up", action("confirm", json!({})), "down-8").await;
    let waiting = until(&client, &id, "input_required").await;
    assert_eq!(
        waiting["inputRequests"]["confirm"]["method"], "elicitation/create",
        "{waiting}"
    );
    let mut answer = Map::new();
    answer.insert(
        "confirm".to_owned(),
        json!({"action": "accept", "content": {"confirm": true}}),
    );
    assert_ack(&client.update_task(&id, answer).await.unwrap());
    let completed = until(&client, &id, "completed").await;
    let text = completed["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("confirmed: true"), "{completed}");

    // A failed upstream task fails the action's task with the upstream's error.
    let id = start(&client, "up", action("quota", json!({})), "down-9").await;
    let failed = until(&client, &id, "failed").await;
    assert_eq!(
        failed["error"],
        json!({"code": -32050, "message": "Quota exhausted", "data": {"retryAfterMs": 60000}}),
        "{failed}"
    );

    // The gates still refuse a bad call before the upstream sees it, and a client without
    // the extension gets the action's result at once.
    let refused = client
        .call_tool_with_tasks("up", action("report", json!({"month": 7})), "down-10")
        .await
        .unwrap();
    assert_eq!(refused["isError"], true, "{refused}");
    shared.release.notify_one();
    let plain = client
        .call_tool("up", action("report", json!({"month": "2027-03"})))
        .await
        .unwrap();
    assert!(plain.raw().get("taskId").is_none(), "{:?}", plain.raw());
    assert!(
        plain.text().contains("report for 2027-03"),
        "{}",
        plain.text()
    );
}

/// Adds the tool `later` (running as a task) to the upstream that serves it, and tells its
/// caller so on the call's own stream (`notifications/tools/list_changed`), as a 2026-07-28
/// server may: the gateway's client of the upstream gets it, and the gateway re-lists.
#[derive(Debug, Clone)]
struct Install(LiveTools);

impl PlainTool for Install {
    fn name(&self) -> &str {
        "install"
    }

    fn description(&self) -> &str {
        "Adds the tool later"
    }

    fn input_schema(&self) -> Map<String, Value> {
        json!({"type": "object"}).as_object().cloned().unwrap()
    }

    async fn run(&self, _: Map<String, Value>, ctx: Context) -> CallResult {
        let runs_as_task = ToolPolicy::new().task_support(TaskSupport::Optional);
        self.0
            .change(ToolChange::new().plain_tool_with(Later, runs_as_task))
            .map_err(|e| CallError::tool(e.to_string()))?;
        assert!(ctx.notify("notifications/tools/list_changed", json!({})));
        Ok(CallOutput::text("installed"))
    }
}

/// The tool [`Install`] adds: answers a text naming its month.
#[derive(Debug, Clone)]
struct Later;

impl PlainTool for Later {
    fn name(&self) -> &str {
        "later"
    }

    fn description(&self) -> &str {
        "Added while the upstream runs"
    }

    fn input_schema(&self) -> Map<String, Value> {
        Job::Confirm.input_schema()
    }

    async fn run(&self, arguments: Map<String, Value>, _: Context) -> CallResult {
        let month = arguments["month"].as_str().unwrap_or("?");
        Ok(CallOutput::text(format!("later for {month}")))
    }
}

/// An upstream serving `confirm` as a task and [`Install`], the gateway in front of it as
/// `expose` says (no prefix), and a downstream client speaking 2026-07-28 that has called
/// `install` and seen the gateway serve `later` (in `tools` mode the tool, in `actions` mode
/// the action of `up`).
async fn installed(expose: Expose) -> Client {
    let live = LiveTools::new();
    let upstream = Server::builder()
        .name("installing-upstream")
        .plain_tool_with(
            Job::Confirm,
            ToolPolicy::new().task_support(TaskSupport::Optional),
        )
        .plain_tool(Install(live.clone()))
        .live_tools(&live)
        .build()
        .unwrap();
    let upstream = UpstreamConfig::http("up", serve_http(upstream).await)
        .expose(expose)
        .prefix("");
    let gateway = Gateway::start(GatewayConfig::new().upstream(upstream)).await;
    let server = gateway
        .register(Server::builder().name("installing-gateway"))
        .build()
        .unwrap();
    let client = Client::builder(&serve_http(server).await)
        .versions([ProtocolVersion::V2026_07_28])
        .timeout(Duration::from_secs(10))
        .connect()
        .await
        .unwrap();
    let called = match expose {
        Expose::Tools => client.call_tool("install", json!({})).await,
        _ => client.call_tool("up", action("install", json!({}))).await,
    };
    assert!(called.unwrap().text().contains("installed"));
    // The gateway re-lists the upstream's tools on its notification: `later` is served.
    for _ in 0..200 {
        let tools = client.list_tools().await.unwrap();
        let served = tools.iter().any(|tool| match expose {
            Expose::Tools => tool.name() == "later",
            _ => tool.name() == "up" && tool.raw().to_string().contains("later"),
        });
        if served {
            return client;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the gateway never served later");
}

#[tokio::test]
async fn a_tool_the_upstream_adds_while_it_runs_runs_as_a_task_through_the_gateway() {
    let client = installed(Expose::Tools).await;
    let id = start(&client, "later", json!({"month": "2027-04"}), "down-11").await;
    let completed = until(&client, &id, "completed").await;
    assert_eq!(
        completed["result"],
        json!({"content": [{"type": "text", "text": "later for 2027-04"}], "isError": false}),
        "{completed}"
    );
}

#[tokio::test]
async fn an_action_the_upstream_adds_while_it_runs_runs_as_a_task_through_the_gateway() {
    let client = installed(Expose::Actions).await;
    let id = start(
        &client,
        "up",
        action("later", json!({"month": "2027-05"})),
        "down-12",
    )
    .await;
    let completed = until(&client, &id, "completed").await;
    let result = &completed["result"];
    assert_eq!(result["isError"], false, "{completed}");
    let reply: Value =
        serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        reply,
        json!({"content": [{"type": "text", "text": "later for 2027-05"}]}),
        "{completed}"
    );
}
