//! `tools/call`: the dispatch gate chain, the value gate, results, hints, context and fault
//! containment — the CALL-1 … CALL-43 checks of behaviour-spec §3.14 that have a Rust meaning.
//!
//! Data paths are RFC 6901 JSON Pointers (decisions O3): the spec's `bogus` is `/bogus`,
//! `address.zpi` is `/address/zpi`, `items[3].skuu` is `/items/3/skuu`, and `data` is `""`.
//!
//! Checks without a Rust meaning, or out of scope here:
//!
//! * CALL-32 (exit / throw): Rust has one fault kind, the panic. Its non-string-payload case is
//!   checked instead (decisions O12: `"non-string panic payload"`).
//! * CALL-33 (a `run` returning a classification outside the vocabulary): impossible by type;
//!   `CallError` has two constructors, `tool` and `dispatch`, and `CallResult` is a closed
//!   `Result`. Its classification half is checked through `CallToolResult::error_kind`.
//! * CALL-35 (`{ok, content, assigns_updates}`): no tuple vocabulary in Rust (decisions O9); a
//!   tool updates assigns through `Context::assign`, checked with a shared assigns map.
//! * CALL-40 (`action_context` returning a string): impossible by type, `action_context`
//!   returns `Option<Map<String, Value>>`.
//! * CALL-43 (`id: null` echoed in the envelope): the JSON-RPC envelope belongs to the
//!   transport; here only the `-32602` half is checked.
//! * Telemetry (a later issue): the `wymcp.tool.start`/`stop`/`error` events of CALL-4, CALL-11,
//!   CALL-27, CALL-31, CALL-33, CALL-34, and the warning log line of CALL-37. The classification
//!   those events carry (`error_kind`) is asserted through `CallToolResult::error_kind`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use wymcp::testing::TestClient;
use wymcp::tool::{CallToolResult, ErrorKind, Failure};
use wymcp::{
    ActionError, ActionResult, ActionSchema, ActionTool, Actions, CallError, CallOutput,
    CallResult, Context, Data, Hint, PlainTool, ProtocolVersion, Reply, RpcError, Server,
};

// ---------------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------------

/// The reason `failing` fails with; `handle_error` downcasts it.
#[derive(Debug)]
struct NotFound(u64);

impl std::fmt::Display for NotFound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "not_found {}", self.0)
    }
}

impl std::error::Error for NotFound {}

/// The spec's fixture `widgets` tool, plus the actions the schema-shape checks need.
struct Widgets {
    runs: Arc<AtomicUsize>,
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("fixture expects an object, got {other}"),
    }
}

impl ActionTool for Widgets {
    fn name(&self) -> &str {
        "widgets"
    }

    fn description(&self) -> &str {
        "Widget management"
    }

    fn actions(&self) -> Actions {
        let id_or_name_color = [vec!["id"], vec!["name", "color"]];
        Actions::new()
            .action(
                "create",
                ActionSchema::new("Create a widget")
                    .property("name", json!({"type": "string"}))
                    .property("color", json!({"type": "string"}))
                    .required(["name"])
                    .default_value("color", json!("blue")),
            )
            .action(
                "list",
                ActionSchema::new("List widgets")
                    .property("limit", json!({"type": "integer"}))
                    .default_value("limit", json!(10)),
            )
            .action("failing", ActionSchema::new("Always fails"))
            .action(
                "failing_with_hints",
                ActionSchema::new("Always fails, with hints"),
            )
            .action(
                "bare",
                ActionSchema::new("One string property").property("x", json!({"type": "string"})),
            )
            .action(
                "identify",
                ActionSchema::new("Identify a widget")
                    .property("id", json!({"type": "integer"}))
                    .property("name", json!({"type": "string"}))
                    .property("color", json!({"type": "string"}))
                    .required_one_of(id_or_name_color.clone()),
            )
            .action(
                "locate",
                ActionSchema::new("Locate a widget")
                    .property("path", json!({"type": "string"}))
                    .property("id", json!({"type": "integer"}))
                    .property("name", json!({"type": "string"}))
                    .property("color", json!({"type": "string"}))
                    .required(["path"])
                    .required_one_of(id_or_name_color.clone()),
            )
            .action(
                "identify_with_default",
                ActionSchema::new("Identify a widget, color defaulted")
                    .property("id", json!({"type": "integer"}))
                    .property("name", json!({"type": "string"}))
                    .property("color", json!({"type": "string"}))
                    .required_one_of(id_or_name_color)
                    .default_value("color", json!("blue")),
            )
            .action(
                "paint",
                ActionSchema::new("Paint a widget, color nullable")
                    .property("color", json!({"type": ["string", "null"]}))
                    .default_value("color", json!("blue")),
            )
            .action(
                "shape",
                ActionSchema::new("Nested shapes")
                    .property(
                        "address",
                        json!({"type": "object", "properties": {"zip": {"type": "string"}}}),
                    )
                    .property(
                        "meta",
                        json!({"type": "object", "additionalProperties": true}),
                    )
                    .property("tags", json!({"type": "object"}))
                    .property(
                        "empty",
                        json!({"type": "object", "additionalProperties": false}),
                    )
                    .property(
                        "labels",
                        json!({"type": "object", "additionalProperties": {
                            "type": "object",
                            "properties": {"v": {"type": "integer"}}
                        }}),
                    )
                    .property(
                        "items",
                        json!({"type": "array", "items": {
                            "type": "object",
                            "properties": {
                                "sku": {"type": "string"},
                                "qty": {"type": "integer"}
                            }
                        }}),
                    ),
            )
            .action(
                "measure",
                ActionSchema::new("An integer").property("n", json!({"type": "integer"})),
            )
            .action(
                "schedule",
                ActionSchema::new("A date-time")
                    .property("when", json!({"type": "string", "format": "date-time"})),
            )
            .action("bulk", {
                let mut schema = ActionSchema::new("Fifteen integers");
                for i in 1..=15 {
                    schema = schema.property(format!("p{i:02}"), json!({"type": "integer"}));
                }
                schema
            })
    }

    async fn run_action(&self, action: &str, data: Data, _ctx: Context) -> ActionResult {
        self.runs.fetch_add(1, Ordering::SeqCst);
        match action {
            "create" => {
                let name = data.get("name").and_then(Value::as_str).unwrap_or_default();
                let color = data.get("color").cloned().unwrap_or(Value::Null);
                Ok(
                    Reply::new(json!({"message": format!("Created {name}"), "color": color}))
                        .with_hint_context(json!({"id": 42})),
                )
            }
            "list" => Ok(Reply::new(
                json!({"limit": data.get("limit").cloned().unwrap_or(Value::Null)}),
            )),
            "failing" => Err(Failure::new(NotFound(99))),
            "failing_with_hints" => {
                Err(Failure::new(NotFound(99)).with_hint_context(json!({"id": 99})))
            }
            _ => Ok(Reply::new(
                json!({"action": action, "data": data.into_value()}),
            )),
        }
    }

    fn hints(&self, action: &str, hint_context: &Value) -> Vec<Hint> {
        match action {
            "create" => vec![
                Hint::new("widgets", "get", "View it")
                    .with_example(object(json!({"id": hint_context["id"]}))),
            ],
            "failing_with_hints" => vec![Hint::new("widgets", "create", "Create it instead")],
            _ => Vec::new(),
        }
    }

    fn handle_error(&self, reason: &ActionError) -> String {
        match reason.downcast_ref::<NotFound>() {
            Some(NotFound(id)) => format!("Widget {id} not found"),
            None => format!("Operation failed: {reason}"),
        }
    }

    fn action_context(&self, action: &str, ctx: &Context) -> Option<Map<String, Value>> {
        if action != "list" {
            return None;
        }
        let mut context = Map::new();
        context.insert("tip".into(), json!("2 widgets need attention"));
        if let Some(scope) = ctx.assigns().get("current_scope") {
            context.insert("seen_scope".into(), scope.clone());
        }
        Some(context)
    }
}

/// The widgets actions, sorted (what `valid_actions` lists).
const WIDGET_ACTIONS: [&str; 13] = [
    "bare",
    "bulk",
    "create",
    "failing",
    "failing_with_hints",
    "identify",
    "identify_with_default",
    "list",
    "locate",
    "measure",
    "paint",
    "schedule",
    "shape",
];

/// Where each fault of `crasher` happens.
struct Crasher;

impl ActionTool for Crasher {
    fn name(&self) -> &str {
        "crasher"
    }

    fn description(&self) -> &str {
        "Panics in every place a tool's code runs"
    }

    fn actions(&self) -> Actions {
        let mut actions = Actions::new();
        for name in [
            "boom",
            "owned",
            "opaque",
            "in_hints",
            "in_handle_error",
            "in_action_context",
            "in_error_action_context",
            "fine",
            "quiet_failure",
            "hinted_no_hints",
            "scalar_with_context",
            "failure_with_context",
        ] {
            actions = actions.action(name, ActionSchema::new(format!("Faults: {name}")));
        }
        actions
    }

    async fn run_action(&self, action: &str, _data: Data, _ctx: Context) -> ActionResult {
        match action {
            "boom" => panic!("boom"),
            "owned" => {
                let id = 7;
                panic!("widget {id} exploded")
            }
            "opaque" => std::panic::panic_any(42_u32),
            "in_hints" => Ok(Reply::new(json!({"ok": true})).with_hint_context(json!({}))),
            "in_handle_error" => Err(Failure::msg("nope")),
            "in_error_action_context" => Err(Failure::msg("nope").with_hint_context(json!({}))),
            "quiet_failure" => Err(Failure::msg("quiet").with_hint_context(json!({"id": 1}))),
            "hinted_no_hints" => Ok(Reply::new(json!({"ok": true})).with_hint_context(json!({}))),
            "scalar_with_context" => Ok(Reply::new(json!(7))),
            "failure_with_context" => Err(Failure::msg("plain")),
            _ => Ok(Reply::new(json!({"ok": true}))),
        }
    }

    fn hints(&self, action: &str, _hint_context: &Value) -> Vec<Hint> {
        if action == "in_hints" {
            panic!("hints exploded");
        }
        Vec::new()
    }

    fn handle_error(&self, reason: &ActionError) -> String {
        format!("handled: {reason}")
    }

    fn action_context(&self, action: &str, _ctx: &Context) -> Option<Map<String, Value>> {
        match action {
            "in_action_context" | "in_error_action_context" => panic!("context exploded"),
            "scalar_with_context" | "failure_with_context" => Some(object(json!({"n": 1}))),
            _ => None,
        }
    }
}

/// A tool whose `handle_error` always panics.
struct BadHandler;

impl ActionTool for BadHandler {
    fn name(&self) -> &str {
        "bad_handler"
    }
    fn description(&self) -> &str {
        "handle_error panics"
    }
    fn actions(&self) -> Actions {
        Actions::new().action("fail", ActionSchema::new("Fails"))
    }
    async fn run_action(&self, _action: &str, _data: Data, _ctx: Context) -> ActionResult {
        Err(Failure::msg("reason"))
    }
    fn handle_error(&self, _reason: &ActionError) -> String {
        panic!("handler exploded")
    }
}

/// An action tool with an output schema (CALL-36/37).
struct Stats;

impl ActionTool for Stats {
    fn name(&self) -> &str {
        "stats"
    }
    fn description(&self) -> &str {
        "Counts"
    }
    fn actions(&self) -> Actions {
        Actions::new()
            .action("good", ActionSchema::new("Conforms to the output schema"))
            .action("bad", ActionSchema::new("Does not conform"))
            .action("scalar", ActionSchema::new("Not an object"))
    }
    async fn run_action(&self, action: &str, _data: Data, _ctx: Context) -> ActionResult {
        Ok(Reply::new(match action {
            "good" => json!({"count": 42, "label": "test"}),
            "bad" => json!({"count": "x"}),
            _ => json!(7),
        }))
    }
    fn output_schema(&self) -> Option<Map<String, Value>> {
        Some(object(json!({
            "type": "object",
            "properties": {"count": {"type": "integer"}, "label": {"type": "string"}},
            "required": ["count", "label"]
        })))
    }
}

/// Actions literally named like framework words (CALL-42).
struct Namesakes;

impl ActionTool for Namesakes {
    fn name(&self) -> &str {
        "namesakes"
    }
    fn description(&self) -> &str {
        "Actions named help and describe"
    }
    fn actions(&self) -> Actions {
        Actions::new()
            .action("help", ActionSchema::new("The consumer's own help"))
            .action("describe", ActionSchema::new("The consumer's own describe"))
    }
    async fn run_action(&self, action: &str, _data: Data, _ctx: Context) -> ActionResult {
        Ok(Reply::new(json!({"ran": action})))
    }
}

/// A plain tool with a closed input schema, a nested object and an integer.
struct Plainer;

impl PlainTool for Plainer {
    fn name(&self) -> &str {
        "plainer"
    }
    fn description(&self) -> &str {
        "A plain tool"
    }
    fn input_schema(&self) -> Map<String, Value> {
        object(json!({
            "type": "object",
            "properties": {
                "x": {"type": "string"},
                "n": {"type": "integer"},
                "nested": {"type": "object", "properties": {"a": {"type": "integer"}}}
            },
            "required": ["x"]
        }))
    }
    async fn run(&self, arguments: Map<String, Value>, _ctx: Context) -> CallResult {
        Ok(CallOutput::json(json!({"arguments": arguments})))
    }
}

/// A plain tool that classifies its own refusals (CALL-34) and counts in the assigns (CALL-35).
struct Counter;

impl PlainTool for Counter {
    fn name(&self) -> &str {
        "counter"
    }
    fn description(&self) -> &str {
        "Counts calls in the session's assigns"
    }
    fn input_schema(&self) -> Map<String, Value> {
        object(json!({
            "type": "object",
            "properties": {"mode": {"type": "string"}}
        }))
    }
    async fn run(&self, arguments: Map<String, Value>, ctx: Context) -> CallResult {
        match arguments.get("mode").and_then(Value::as_str) {
            Some("dispatch") => Err(CallError::dispatch("rejected: bad mode")),
            Some("tool") => Err(CallError::tool("the backend said no")),
            _ => {
                let count = ctx
                    .assigns()
                    .get("count")
                    .and_then(Value::as_u64)
                    .unwrap_or(0)
                    + 1;
                ctx.assign("count", json!(count));
                Ok(CallOutput::text(count.to_string()))
            }
        }
    }
}

/// A plain tool with an output schema (CALL-36 for plain tools).
struct PlainStats;

impl PlainTool for PlainStats {
    fn name(&self) -> &str {
        "plain_stats"
    }
    fn description(&self) -> &str {
        "Counts, plainly"
    }
    fn input_schema(&self) -> Map<String, Value> {
        object(json!({"type": "object", "properties": {"mode": {"type": "string"}}}))
    }
    async fn run(&self, arguments: Map<String, Value>, _ctx: Context) -> CallResult {
        Ok(match arguments.get("mode").and_then(Value::as_str) {
            Some("text") => CallOutput::text("not json"),
            Some("bad") => CallOutput::json(json!({"count": "x"})),
            _ => CallOutput::json(json!({"count": 42, "label": "test"})),
        })
    }
    fn output_schema(&self) -> Option<Map<String, Value>> {
        Stats.output_schema()
    }
}

/// A plain tool with a given input schema that answers its arguments.
struct Schemaed {
    name: &'static str,
    schema: Value,
}

impl PlainTool for Schemaed {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        "Answers its arguments"
    }
    fn input_schema(&self) -> Map<String, Value> {
        object(self.schema.clone())
    }
    async fn run(&self, arguments: Map<String, Value>, _ctx: Context) -> CallResult {
        Ok(CallOutput::json(json!({"arguments": arguments})))
    }
}

struct Fixture {
    server: Server,
    runs: Arc<AtomicUsize>,
}

fn fixture() -> Fixture {
    let runs = Arc::new(AtomicUsize::new(0));
    let server = Server::builder()
        .name("fixture")
        .tool(Widgets { runs: runs.clone() })
        .tool(Crasher)
        .tool(BadHandler)
        .tool(Stats)
        .tool(Namesakes)
        .plain_tool(Plainer)
        .plain_tool(Counter)
        .plain_tool(PlainStats)
        .plain_tool(Schemaed {
            name: "loose",
            schema: json!({"type": "object"}),
        })
        .plain_tool(Schemaed {
            name: "open",
            schema: json!({"type": "object", "properties": {"a": {}}, "additionalProperties": true}),
        })
        .plain_tool(Schemaed {
            name: "sealed",
            schema: json!({"type": "object", "additionalProperties": false}),
        })
        .build()
        .expect("the fixture server builds");
    Fixture { server, runs }
}

async fn call_with(server: &Server, tool: &str, arguments: Value, ctx: Context) -> CallToolResult {
    wymcp::testing::call_tool(server, tool, Some(arguments), ctx)
        .await
        .expect("the call reaches the tool")
}

async fn call(server: &Server, tool: &str, arguments: Value) -> CallToolResult {
    call_with(server, tool, arguments, Context::default()).await
}

/// The first text item as JSON.
fn payload(result: &CallToolResult) -> Value {
    result.json().expect("the first content item is JSON text")
}

/// Asserts a gate refusal: `isError`, classified dispatch, no structured content; its payload.
fn refusal(result: &CallToolResult) -> Value {
    assert!(result.is_error(), "expected a refusal, got {result:?}");
    assert_eq!(result.error_kind(), Some(ErrorKind::Dispatch));
    assert_eq!(result.structured_content(), None);
    assert_eq!(result.content().len(), 1);
    payload(result)
}

/// Asserts success; its payload.
fn success(result: &CallToolResult) -> Value {
    assert!(!result.is_error(), "expected success, got {result:?}");
    assert_eq!(result.error_kind(), None);
    payload(result)
}

/// Asserts a contained fault of `tool`; its payload.
fn fault(result: &CallToolResult, tool: &str) -> Value {
    assert!(result.is_error(), "expected a fault, got {result:?}");
    assert_eq!(result.error_kind(), None, "a fault carries no error kind");
    assert_eq!(result.structured_content(), None);
    let body = payload(result);
    assert_eq!(body["errorType"], "tool_fault");
    assert_eq!(body["tool"], tool);
    assert_eq!(body["exception"], "panic");
    assert_eq!(
        body.as_object().map(Map::len),
        Some(4),
        "errorType, tool, exception, message only: {body}"
    );
    body
}

fn keys(value: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = value
        .as_object()
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default();
    keys.sort_unstable();
    keys
}

const WIDGETS_HELP: &str = r#"help {tool: "widgets"}"#;

fn action_help(action: &str) -> String {
    format!(r#"help {{tool: "widgets", action: "{action}"}}"#)
}

fn rpc_reason(error: &RpcError) -> &str {
    error
        .data()
        .and_then(|d| d["reason"].as_str())
        .expect("the error carries data.reason")
}

// ---------------------------------------------------------------------------------------------
// Envelope level: CALL-1 … CALL-4, CALL-43
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn call_1_missing_or_invalid_name_is_invalid_params() {
    let f = fixture();
    for params in [
        None,
        Some(Value::Null),
        Some(json!({})),
        Some(json!({"arguments": {}})),
        Some(json!({"name": 5})),
        Some(json!({"name": null, "arguments": {}})),
        Some(json!({"name": ["widgets"]})),
    ] {
        let err = TestClient::new(f.server.clone())
            .request("tools/call", params.clone())
            .await
            .expect_err("a tools/call without a string name is refused");
        assert_eq!(err.code(), -32602, "{params:?}");
        assert_eq!(err.message(), "Invalid params");
        assert_eq!(rpc_reason(&err), "Missing or invalid 'name' in params");
    }
    // On the wire, params that are not an object are no valid MCP request (the envelope's
    // check, before the method's).
    let err = TestClient::new(f.server.clone())
        .request("tools/call", Some(json!([1, 2])))
        .await
        .expect_err("params that are not an object are refused");
    assert_eq!(err.code(), -32600);
    assert_eq!(err.message(), "Invalid Request");
}

#[tokio::test]
async fn call_2_arguments_not_an_object_is_invalid_params() {
    let f = fixture();
    for arguments in [
        json!(5),
        json!("x"),
        json!(true),
        json!([{"action": "list"}]),
    ] {
        let err = TestClient::new(f.server.clone())
            .request(
                "tools/call",
                Some(json!({"name": "widgets", "arguments": arguments})),
            )
            .await
            .expect_err("arguments that are not an object are refused");
        assert_eq!(err.code(), -32602);
        assert!(
            rpc_reason(&err).contains("expected an object"),
            "{}",
            rpc_reason(&err)
        );
        let err = wymcp::testing::call_tool(
            &f.server,
            "widgets",
            Some(arguments.clone()),
            Context::default(),
        )
        .await
        .expect_err("call_tool refuses them too");
        assert_eq!(
            rpc_reason(&err),
            "Invalid 'arguments' in params: expected an object"
        );
    }
    assert_eq!(f.runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn call_3_absent_or_null_arguments_read_as_empty() {
    let f = fixture();
    for arguments in [None, Some(Value::Null)] {
        let result = wymcp::testing::call_tool(&f.server, "help", arguments, Context::default())
            .await
            .expect("help answers");
        let index = success(&result);
        assert!(index["tools"].is_array());
        assert_eq!(index["tools"][0]["tool"], "widgets");
    }
    let wire = TestClient::new(f.server.clone())
        .request("tools/call", Some(json!({"name": "help"})))
        .await
        .expect("help answers");
    assert_eq!(wire["isError"], false);
    // On an action tool, absent arguments reach the absent-action gate, not an RPC error.
    let wire = TestClient::new(f.server.clone())
        .request(
            "tools/call",
            Some(json!({"name": "widgets", "arguments": null})),
        )
        .await
        .expect("a gate answers");
    assert_eq!(wire["isError"], true);
    let text = wire["content"][0]["text"].as_str().expect("text content");
    let body: Value = serde_json::from_str(text).expect("JSON payload");
    assert_eq!(body["error"], "missing_action");
}

#[tokio::test]
async fn call_4_and_43_unknown_tool_is_invalid_params_naming_it() {
    let f = fixture();
    let err = TestClient::new(f.server.clone())
        .request("tools/call", Some(json!({"name": "nope", "arguments": {}})))
        .await
        .expect_err("an unknown tool is a protocol error");
    assert_eq!(err.code(), -32602);
    assert_eq!(err.message(), "Unknown tool: nope");
    assert_eq!(err.data(), None, "decisions O7: no data");
    // CALL-43: the same for "nonexistent"; the envelope id is the transport's.
    let err = wymcp::testing::call_tool(
        &f.server,
        "nonexistent",
        Some(json!({})),
        Context::default(),
    )
    .await
    .expect_err("an unknown tool is a protocol error");
    assert_eq!(err.code(), -32602);
    assert!(err.message().contains("nonexistent"));
    // Lookup is by exact name.
    let err = wymcp::testing::call_tool(&f.server, "Widgets", None, Context::default())
        .await
        .expect_err("tool names are case-sensitive");
    assert_eq!(err.message(), "Unknown tool: Widgets");
}

#[tokio::test]
async fn wire_result_shape() {
    let f = fixture();
    let wire = TestClient::new(f.server.clone())
        .request(
            "tools/call",
            Some(json!({"name": "widgets", "arguments": {"action": "list"}})),
        )
        .await
        .expect("list answers");
    assert_eq!(keys(&wire), ["content", "isError"]);
    assert_eq!(wire["isError"], false);
    assert_eq!(wire["content"][0]["type"], "text");
    let body: Value =
        serde_json::from_str(wire["content"][0]["text"].as_str().expect("text")).expect("JSON");
    assert_eq!(body["limit"], 10);
}

// ---------------------------------------------------------------------------------------------
// Results: CALL-5 … CALL-10
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn call_5_create_applies_the_default_and_adds_hints() {
    let f = fixture();
    let result = call(
        &f.server,
        "widgets",
        json!({"action": "create", "data": {"name": "Bolt"}}),
    )
    .await;
    let body = success(&result);
    assert_eq!(
        body,
        json!({
            "message": "Created Bolt",
            "color": "blue",
            "hints": [{"tool": "widgets", "action": "get", "description": "View it",
                       "example": {"id": 42}}]
        })
    );
    assert_eq!(result.structured_content(), None, "no output schema");
}

#[tokio::test]
async fn call_6_list_without_data_gets_its_default_and_no_hints() {
    let f = fixture();
    let body = success(&call(&f.server, "widgets", json!({"action": "list"})).await);
    assert_eq!(body["limit"], 10);
    assert!(body.get("hints").is_none());
    // A reply without hint context: no hints even though hints() would answer for create.
    let body = success(
        &call(
            &f.server,
            "widgets",
            json!({"action": "list", "data": {"limit": 3}}),
        )
        .await,
    );
    assert_eq!(body["limit"], 3);
}

#[tokio::test]
async fn call_7_caller_value_beats_the_default() {
    let f = fixture();
    let body = success(
        &call(
            &f.server,
            "widgets",
            json!({"action": "create", "data": {"name": "X", "color": "red"}}),
        )
        .await,
    );
    assert_eq!(body["color"], "red");
    assert_eq!(body["message"], "Created X");
}

#[tokio::test]
async fn call_8_explicit_null_is_a_value() {
    let f = fixture();
    let before = f.runs.load(Ordering::SeqCst);
    let body = refusal(
        &call(
            &f.server,
            "widgets",
            json!({"action": "create", "data": {"name": "X", "color": null}}),
        )
        .await,
    );
    assert_eq!(body["error"], "invalid_values");
    assert_eq!(
        body["invalid"],
        json!([{"path": "/color", "problems": ["expected type string"]}])
    );
    assert_eq!(body["invalid_count"], 1);
    assert_eq!(
        f.runs.load(Ordering::SeqCst),
        before,
        "run_action not called"
    );
    // With a nullable schema it passes and the default is not applied over the null.
    let body = success(
        &call(
            &f.server,
            "widgets",
            json!({"action": "paint", "data": {"color": null}}),
        )
        .await,
    );
    assert_eq!(body["data"], json!({"color": null}));
    let body = success(&call(&f.server, "widgets", json!({"action": "paint"})).await);
    assert_eq!(body["data"], json!({"color": "blue"}));
}

#[tokio::test]
async fn call_9_failure_is_plain_text_from_handle_error() {
    let f = fixture();
    let result = call(&f.server, "widgets", json!({"action": "failing"})).await;
    assert!(result.is_error());
    assert_eq!(result.error_kind(), Some(ErrorKind::Tool));
    assert_eq!(result.text(), Some("Widget 99 not found"));
    assert_eq!(result.json(), None, "plain text, not JSON");
    assert_eq!(result.structured_content(), None);
}

#[tokio::test]
async fn call_10_failure_with_hint_context_is_a_json_body() {
    let f = fixture();
    let result = call(
        &f.server,
        "widgets",
        json!({"action": "failing_with_hints"}),
    )
    .await;
    assert!(result.is_error());
    assert_eq!(result.error_kind(), Some(ErrorKind::Tool));
    assert_eq!(
        payload(&result),
        json!({
            "error": "Widget 99 not found",
            "hints": [{"tool": "widgets", "action": "create", "description": "Create it instead"}]
        })
    );
}

#[tokio::test]
async fn result_vocabulary_edges() {
    let f = fixture();
    // A failure with a hint context is a JSON object even when hints and context are empty.
    let result = call(&f.server, "crasher", json!({"action": "quiet_failure"})).await;
    assert_eq!(result.error_kind(), Some(ErrorKind::Tool));
    assert_eq!(payload(&result), json!({"error": "handled: quiet"}));
    // A reply with a hint context but no hints: no `hints` key.
    let body = success(&call(&f.server, "crasher", json!({"action": "hinted_no_hints"})).await);
    assert_eq!(body, json!({"ok": true}));
    // A failure without a hint context is plain text: no context even when action_context
    // answers a map.
    let result = call(
        &f.server,
        "crasher",
        json!({"action": "failure_with_context"}),
    )
    .await;
    assert_eq!(result.error_kind(), Some(ErrorKind::Tool));
    assert_eq!(result.text(), Some("handled: plain"));
    // A non-object reply with something to add is kept under "result".
    let body = success(
        &call(
            &f.server,
            "crasher",
            json!({"action": "scalar_with_context"}),
        )
        .await,
    );
    assert_eq!(body, json!({"result": 7, "context": {"n": 1}}));
}

// ---------------------------------------------------------------------------------------------
// Gates 3 and 4, and the argument gates: CALL-11, CALL-27 … CALL-30
// ---------------------------------------------------------------------------------------------

/// The `actions` of a widgets missing or unknown action refusal: every action (13, under the
/// default bound of 20), each with its description and signature (`action_choices.rs` asserts
/// the order and the bounds whole).
fn assert_widget_choices(body: &mut Value) {
    let actions = body
        .as_object_mut()
        .and_then(|b| b.remove("actions"))
        .expect("the refusal lists the actions");
    let actions = actions.as_array().expect("actions is a list");
    let text = |a: &Value, key: &str| a[key].as_str().expect("a text").to_owned();
    let mut names: Vec<String> = actions.iter().map(|a| text(a, "name")).collect();
    names.sort_unstable();
    assert_eq!(names, WIDGET_ACTIONS);
    for action in actions {
        assert!(text(action, "signature").starts_with(&format!("{}(", text(action, "name"))));
        assert!(action["description"].is_string());
    }
}

#[tokio::test]
async fn call_11_unknown_action() {
    let f = fixture();
    let mut body = refusal(&call(&f.server, "widgets", json!({"action": "nope"})).await);
    assert_widget_choices(&mut body);
    assert_eq!(
        body,
        json!({
            "error": "unknown_action",
            "message": format!(
                "Unknown action 'nope' for tool 'widgets'. Valid actions: {}.",
                WIDGET_ACTIONS.join(", ")
            ),
            "valid_actions": WIDGET_ACTIONS,
            "help": WIDGETS_HELP,
        })
    );
    // Exact match only: no case folding, no trimming.
    for sent in ["Create", " create", "create ", ""] {
        let body = refusal(&call(&f.server, "widgets", json!({"action": sent})).await);
        assert_eq!(body["error"], "unknown_action", "{sent:?}");
    }
    assert_eq!(f.runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn call_27_unknown_argument() {
    let f = fixture();
    let body = refusal(&call(&f.server, "widgets", json!({"action": "list", "dta": {}})).await);
    assert_eq!(
        body,
        json!({
            "error": "unknown_arguments",
            "message": "Unknown argument(s): dta. Valid arguments: action, data.",
            "unknown": ["dta"],
            "unknown_count": 1,
            "valid_arguments": ["action", "data"],
            "help": WIDGETS_HELP,
        })
    );
    // Several, sorted; the count is exact.
    let body = refusal(
        &call(
            &f.server,
            "widgets",
            json!({"zeta": 1, "action": "list", "alpha": 2, "Data": {}}),
        )
        .await,
    );
    assert_eq!(body["unknown"], json!(["Data", "alpha", "zeta"]));
    assert_eq!(body["unknown_count"], 3);
    // Twelve: the first ten in sort order, count 12.
    let mut arguments = Map::new();
    for i in (1..=12).rev() {
        arguments.insert(format!("k{i:02}"), json!(i));
    }
    let body = refusal(&call(&f.server, "widgets", Value::Object(arguments)).await);
    let ten: Vec<String> = (1..=10).map(|i| format!("k{i:02}")).collect();
    assert_eq!(body["unknown"], json!(ten));
    assert_eq!(body["unknown_count"], 12);
    assert_eq!(
        body["message"],
        format!(
            "Unknown argument(s): {}. Valid arguments: action, data.",
            ten.join(", ")
        )
    );
    assert_eq!(f.runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn call_28_names_before_types() {
    let f = fixture();
    let body = refusal(&call(&f.server, "widgets", json!({"action": 5, "extra": 1})).await);
    assert_eq!(body["error"], "unknown_arguments");
    assert_eq!(body["unknown"], json!(["extra"]));
    let body = refusal(&call(&f.server, "widgets", json!({"action": 5})).await);
    assert_eq!(
        body,
        json!({
            "error": "invalid_argument_type",
            "message": "Argument 'action' must be a JSON string.",
            "argument": "action",
            "expected": "string",
            "help": WIDGETS_HELP,
        })
    );
    // null is the wrong type too (behaviour-spec §3.3).
    for wrong in [
        Value::Null,
        json!(["list"]),
        json!({"name": "list"}),
        json!(true),
    ] {
        let body = refusal(&call(&f.server, "widgets", json!({"action": wrong})).await);
        assert_eq!(body["error"], "invalid_argument_type");
        assert_eq!(body["argument"], "action");
    }
}

#[tokio::test]
async fn call_29_absent_action() {
    let f = fixture();
    for arguments in [json!({}), json!({"data": {"name": "x"}})] {
        let mut body = refusal(&call(&f.server, "widgets", arguments).await);
        assert_widget_choices(&mut body);
        assert_eq!(
            body,
            json!({
                "error": "missing_action",
                "message": format!(
                    "Missing required 'action' argument for tool 'widgets'. Valid actions: {}.",
                    WIDGET_ACTIONS.join(", ")
                ),
                "valid_actions": WIDGET_ACTIONS,
                "help": WIDGETS_HELP,
            })
        );
        assert!(body.get("input_schema").is_none());
    }
}

#[tokio::test]
async fn call_30_data_of_the_wrong_type() {
    let f = fixture();
    for wrong in [json!("x"), Value::Null, json!([]), json!(1)] {
        let body = refusal(
            &call(
                &f.server,
                "widgets",
                json!({"action": "list", "data": wrong}),
            )
            .await,
        );
        assert_eq!(
            body,
            json!({
                "error": "invalid_argument_type",
                "message": "Argument 'data' must be a JSON object.",
                "argument": "data",
                "expected": "object",
                "help": WIDGETS_HELP,
            })
        );
    }
    // Gate 2 answers before gates 3 and 4.
    let body = refusal(&call(&f.server, "widgets", json!({"data": "x"})).await);
    assert_eq!(body["argument"], "data");
    let body = refusal(&call(&f.server, "widgets", json!({"action": "nope", "data": "x"})).await);
    assert_eq!(body["argument"], "data");
}

// ---------------------------------------------------------------------------------------------
// Gates 5 and 6: CALL-12 … CALL-17
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn call_12_missing_required_field() {
    let f = fixture();
    let body = refusal(
        &call(
            &f.server,
            "widgets",
            json!({"action": "create", "data": {}}),
        )
        .await,
    );
    assert_eq!(
        body,
        json!({
            "error": "missing_required_fields",
            "message": "Required fields missing: name",
            "missing": ["name"],
            "schemas": [{"path": "/name", "schema": {"type": "string"}}],
            "action": "create",
            "input_schema": {
                "properties": {"name": {"type": "string"}, "color": {"type": "string"}},
                "required": ["name"],
                "defaults": {"color": "blue"},
            },
            "help": action_help("create"),
        })
    );
    assert!(body["input_schema"].get("required_one_of").is_none());
    // data absent reads as {}; a null counts as supplied.
    let body = refusal(&call(&f.server, "widgets", json!({"action": "create"})).await);
    assert_eq!(body["missing"], json!(["name"]));
    let body = refusal(
        &call(
            &f.server,
            "widgets",
            json!({"action": "create", "data": {"name": null}}),
        )
        .await,
    );
    assert_eq!(body["error"], "invalid_values", "null satisfies required");
    assert_eq!(f.runs.load(Ordering::SeqCst), 0);
}

fn identify_digest(defaults: Value) -> Value {
    json!({
        "properties": {
            "id": {"type": "integer"},
            "name": {"type": "string"},
            "color": {"type": "string"},
        },
        "required": [],
        "defaults": defaults,
        "required_one_of": [["id"], ["name", "color"]],
    })
}

#[tokio::test]
async fn call_13_missing_required_group() {
    let f = fixture();
    let body = refusal(
        &call(
            &f.server,
            "widgets",
            json!({"action": "identify", "data": {"name": "alpha"}}),
        )
        .await,
    );
    assert_eq!(
        body,
        json!({
            "error": "missing_required_group",
            "message": "At least one of these field groups must be fully present: (id) OR (name + color)",
            "required_one_of": [["id"], ["name", "color"]],
            "schemas": [
                {"path": "/id", "schema": {"type": "integer"}},
                {"path": "/color", "schema": {"type": "string"}},
            ],
            "action": "identify",
            "input_schema": identify_digest(json!({})),
            "help": action_help("identify"),
        })
    );
}

#[tokio::test]
async fn call_14_either_group_satisfies() {
    let f = fixture();
    for data in [
        json!({"id": 1}),
        json!({"name": "a", "color": "r"}),
        json!({"id": 1, "name": "a"}),
    ] {
        let body = success(
            &call(
                &f.server,
                "widgets",
                json!({"action": "identify", "data": data.clone()}),
            )
            .await,
        );
        assert_eq!(body["data"], data);
    }
}

#[tokio::test]
async fn call_15_required_answers_before_groups() {
    let f = fixture();
    let locate = |data: Value| json!({"action": "locate", "data": data});
    let body = refusal(&call(&f.server, "widgets", locate(json!({}))).await);
    assert_eq!(body["error"], "missing_required_fields");
    assert_eq!(body["missing"], json!(["path"]));
    assert_eq!(
        body["input_schema"]["required_one_of"],
        json!([["id"], ["name", "color"]])
    );
    let body = refusal(&call(&f.server, "widgets", locate(json!({"path": "/x"}))).await);
    assert_eq!(body["error"], "missing_required_group");
    assert_eq!(body["input_schema"]["required"], json!(["path"]));
    let body = refusal(&call(&f.server, "widgets", locate(json!({"id": 1}))).await);
    assert_eq!(body["error"], "missing_required_fields");
    assert_eq!(body["missing"], json!(["path"]));
    assert_eq!(
        body["input_schema"]["required_one_of"],
        json!([["id"], ["name", "color"]])
    );
    assert_eq!(body["help"], action_help("locate"));
    let body = success(
        &call(
            &f.server,
            "widgets",
            locate(json!({"path": "/x", "name": "n", "color": "c"})),
        )
        .await,
    );
    assert_eq!(body["data"]["path"], "/x");
}

#[tokio::test]
async fn call_16_defaults_do_not_satisfy_groups() {
    let f = fixture();
    let body = refusal(
        &call(
            &f.server,
            "widgets",
            json!({"action": "identify_with_default", "data": {"name": "alpha"}}),
        )
        .await,
    );
    assert_eq!(body["error"], "missing_required_group");
    assert_eq!(
        body["input_schema"],
        identify_digest(json!({"color": "blue"}))
    );
    // Supplying the group still works, and the default fills nothing the caller sent.
    let body = success(
        &call(
            &f.server,
            "widgets",
            json!({"action": "identify_with_default", "data": {"id": 3}}),
        )
        .await,
    );
    assert_eq!(body["data"], json!({"id": 3, "color": "blue"}));
}

#[tokio::test]
async fn call_17_null_counts_as_supplied_then_fails_the_value_gate() {
    let f = fixture();
    let body = refusal(
        &call(
            &f.server,
            "widgets",
            json!({"action": "identify", "data": {"id": null}}),
        )
        .await,
    );
    assert_eq!(body["error"], "invalid_values");
    assert_eq!(
        body["invalid"],
        json!([{"path": "/id", "problems": ["expected type integer"]}])
    );
    assert_eq!(
        body["message"],
        "Invalid value(s) for action 'identify': /id."
    );
    assert_eq!(body["input_schema"], identify_digest(json!({})));
    assert_eq!(body["help"], action_help("identify"));
}

// ---------------------------------------------------------------------------------------------
// Gate 7, the unknown-key gate: CALL-18 … CALL-23
// ---------------------------------------------------------------------------------------------

fn shape_digest() -> Value {
    json!({
        "properties": {
            "address": {"type": "object", "properties": {"zip": {"type": "string"}},
                        "additionalProperties": false},
            "meta": {"type": "object", "additionalProperties": true},
            "tags": {"type": "object"},
            "empty": {"type": "object", "additionalProperties": false},
            "labels": {"type": "object", "additionalProperties": {
                "type": "object",
                "properties": {"v": {"type": "integer"}},
                "additionalProperties": false
            }},
            "items": {"type": "array", "items": {
                "type": "object",
                "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}},
                "additionalProperties": false
            }},
        },
        "required": [],
        "defaults": {},
    })
}

#[tokio::test]
async fn call_18_unknown_key_at_the_root() {
    let f = fixture();
    let body = refusal(
        &call(
            &f.server,
            "widgets",
            json!({"action": "bare", "data": {"x": "ok", "bogus": 1}}),
        )
        .await,
    );
    assert_eq!(
        body,
        json!({
            "error": "unknown_params",
            "message": "Unknown parameter(s) for action 'bare': /bogus. These are rejected rather than silently ignored.",
            "unknown": ["/bogus"],
            "unknown_count": 1,
            "allowed": {"": ["x"]},
            "action": "bare",
            "input_schema": {"properties": {"x": {"type": "string"}}, "required": [], "defaults": {}},
            "help": action_help("bare"),
        })
    );
    assert_eq!(f.runs.load(Ordering::SeqCst), 0);
    // An action with no properties admits no key at all.
    let body = refusal(
        &call(
            &f.server,
            "widgets",
            json!({"action": "failing", "data": {"a": 1}}),
        )
        .await,
    );
    assert_eq!(body["unknown"], json!(["/a"]));
    assert_eq!(body["allowed"], json!({"": []}));
}

#[tokio::test]
async fn call_19_twelve_unknown_keys_list_ten() {
    let f = fixture();
    let mut data = Map::new();
    data.insert("x".into(), json!("ok"));
    for i in (1..=12).rev() {
        data.insert(format!("k{i:02}"), json!(i));
    }
    let body = refusal(
        &call(
            &f.server,
            "widgets",
            json!({"action": "bare", "data": data}),
        )
        .await,
    );
    let ten: Vec<String> = (1..=10).map(|i| format!("/k{i:02}")).collect();
    assert_eq!(body["unknown"], json!(ten));
    assert_eq!(body["unknown_count"], 12);
    assert_eq!(body["allowed"], json!({"": ["x"]}));
    assert_eq!(
        body["message"],
        format!(
            "Unknown parameter(s) for action 'bare': {}. These are rejected rather than silently ignored.",
            ten.join(", ")
        )
    );
}

#[tokio::test]
async fn call_20_unknown_key_in_a_nested_object() {
    let f = fixture();
    let body = refusal(
        &call(
            &f.server,
            "widgets",
            json!({"action": "shape", "data": {"address": {"zip": "1", "zpi": "2"}}}),
        )
        .await,
    );
    assert_eq!(body["error"], "unknown_params");
    assert_eq!(body["unknown"], json!(["/address/zpi"]));
    assert_eq!(body["unknown_count"], 1);
    assert_eq!(body["allowed"], json!({"/address": ["zip"]}));
    assert_eq!(body["action"], "shape");
    assert_eq!(
        body["input_schema"]["properties"]["address"]["additionalProperties"],
        false
    );
    assert_eq!(body["input_schema"], shape_digest());
    assert_eq!(body["help"], action_help("shape"));
    // Unknown keys at two depths: one answer, holders of both listed.
    let body = refusal(
        &call(
            &f.server,
            "widgets",
            json!({"action": "shape", "data": {"address": {"zpi": "2"}, "adress": {}}}),
        )
        .await,
    );
    assert_eq!(body["unknown"], json!(["/address/zpi", "/adress"]));
    assert_eq!(body["unknown_count"], 2);
    let allowed_root = ["address", "empty", "items", "labels", "meta", "tags"];
    assert_eq!(
        body["allowed"],
        json!({"": allowed_root, "/address": ["zip"]})
    );
}

#[tokio::test]
async fn call_21_open_free_form_and_empty_objects() {
    let f = fixture();
    let shape = |data: Value| json!({"action": "shape", "data": data});
    let body = success(
        &call(
            &f.server,
            "widgets",
            shape(json!({"meta": {"anything": {"deep": [1, {"x": 2}]}, "b": null}})),
        )
        .await,
    );
    assert_eq!(body["data"]["meta"]["b"], Value::Null);
    success(
        &call(
            &f.server,
            "widgets",
            shape(json!({"tags": {"a": 1, "b": [true]}})),
        )
        .await,
    );
    success(&call(&f.server, "widgets", shape(json!({"empty": {}}))).await);
    let body = refusal(&call(&f.server, "widgets", shape(json!({"empty": {"a": 1}}))).await);
    assert_eq!(body["error"], "unknown_params");
    assert_eq!(body["unknown"], json!(["/empty/a"]));
    assert_eq!(body["allowed"], json!({"/empty": []}));
}

#[tokio::test]
async fn call_22_additional_properties_schema_closes_the_values() {
    let f = fixture();
    let shape = |data: Value| json!({"action": "shape", "data": data});
    let body = refusal(
        &call(
            &f.server,
            "widgets",
            shape(json!({"labels": {"any": {"v": 1, "w": 2}}})),
        )
        .await,
    );
    assert_eq!(body["error"], "unknown_params");
    assert_eq!(body["unknown"], json!(["/labels/any/w"]));
    assert_eq!(body["allowed"], json!({"/labels/any": ["v"]}));
    success(
        &call(
            &f.server,
            "widgets",
            shape(json!({"labels": {"any": {"v": 1}}})),
        )
        .await,
    );
    // A caller key holding '/' or '~' is escaped the same way by both gates (decisions O3).
    let body = refusal(
        &call(
            &f.server,
            "widgets",
            shape(json!({"labels": {"a/b~c": {"w": 1}}})),
        )
        .await,
    );
    assert_eq!(body["unknown"], json!(["/labels/a~1b~0c/w"]));
    assert_eq!(body["allowed"], json!({"/labels/a~1b~0c": ["v"]}));
    let body = refusal(
        &call(
            &f.server,
            "widgets",
            shape(json!({"labels": {"a/b~c": {"v": "one"}}})),
        )
        .await,
    );
    assert_eq!(body["error"], "invalid_values");
    assert_eq!(
        body["invalid"],
        json!([{"path": "/labels/a~1b~0c/v", "problems": ["expected type integer"]}])
    );
}

#[tokio::test]
async fn call_23_bulk_call_refused_whole() {
    let f = fixture();
    let mut items: Vec<Value> = (0..5).map(|i| json!({"sku": format!("s{i}")})).collect();
    items[3] = json!({"sku": "s3", "skuu": "typo"});
    let body = refusal(
        &call(
            &f.server,
            "widgets",
            json!({"action": "shape", "data": {"items": items}}),
        )
        .await,
    );
    assert_eq!(body["error"], "unknown_params");
    assert_eq!(body["unknown"], json!(["/items/3/skuu"]));
    assert_eq!(body["unknown_count"], 1);
    assert_eq!(body["allowed"], json!({"/items/3": ["qty", "sku"]}));
    assert_eq!(f.runs.load(Ordering::SeqCst), 0, "run_action not called");
    // Pointer sort order is byte order: /items/10 sorts before /items/2.
    let items: Vec<Value> = (0..12).map(|i| json!({"sku": "s", "bad": i})).collect();
    let body = refusal(
        &call(
            &f.server,
            "widgets",
            json!({"action": "shape", "data": {"items": items}}),
        )
        .await,
    );
    assert_eq!(body["unknown_count"], 12);
    assert_eq!(
        body["unknown"],
        json!([
            "/items/0/bad",
            "/items/1/bad",
            "/items/10/bad",
            "/items/11/bad",
            "/items/2/bad",
            "/items/3/bad",
            "/items/4/bad",
            "/items/5/bad",
            "/items/6/bad",
            "/items/7/bad"
        ])
    );
    let allowed = body["allowed"].as_object().expect("allowed is an object");
    assert_eq!(allowed.len(), 10, "only the holders of the listed ten");
    assert!(!allowed.contains_key("/items/8"));
}

#[tokio::test]
async fn gate_order_on_data() {
    let f = fixture();
    // Missing required (5) answers before an unknown key (7).
    let body = refusal(
        &call(
            &f.server,
            "widgets",
            json!({"action": "create", "data": {"bogus": 1}}),
        )
        .await,
    );
    assert_eq!(body["error"], "missing_required_fields");
    // An unknown key (7) answers before a bad value (8).
    let body = refusal(
        &call(
            &f.server,
            "widgets",
            json!({"action": "create", "data": {"name": 5, "bogus": 1}}),
        )
        .await,
    );
    assert_eq!(body["error"], "unknown_params");
    // The group gate (6) answers before an unknown key (7).
    let body = refusal(
        &call(
            &f.server,
            "widgets",
            json!({"action": "identify", "data": {"bogus": 1}}),
        )
        .await,
    );
    assert_eq!(body["error"], "missing_required_group");
    // The key gate does not read values: a string where an object is declared is the value
    // gate's.
    let body = refusal(
        &call(
            &f.server,
            "widgets",
            json!({"action": "shape", "data": {"address": "Main St"}}),
        )
        .await,
    );
    assert_eq!(body["error"], "invalid_values");
    assert_eq!(
        body["invalid"],
        json!([{"path": "/address", "problems": ["expected type object"]}])
    );
    assert_eq!(f.runs.load(Ordering::SeqCst), 0);
}

// ---------------------------------------------------------------------------------------------
// Gate 8, the value gate: CALL-24 … CALL-26
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn call_24_whole_floats_cast_fractions_refused() {
    let f = fixture();
    let body = success(
        &call(
            &f.server,
            "widgets",
            json!({"action": "measure", "data": {"n": 2.0}}),
        )
        .await,
    );
    assert_eq!(body["data"]["n"], json!(2));
    assert!(body["data"]["n"].is_i64(), "run_action receives an integer");
    // Nested values are cast too.
    let body = success(
        &call(
            &f.server,
            "widgets",
            json!({"action": "shape", "data": {"items": [{"qty": 3.0}], "labels": {"k": {"v": -4.0}}}}),
        )
        .await,
    );
    assert!(body["data"]["items"][0]["qty"].is_i64());
    assert_eq!(body["data"]["labels"]["k"]["v"], json!(-4));
    let body = refusal(
        &call(
            &f.server,
            "widgets",
            json!({"action": "measure", "data": {"n": 2.5}}),
        )
        .await,
    );
    assert_eq!(
        body,
        json!({
            "error": "invalid_values",
            "message": "Invalid value(s) for action 'measure': /n.",
            "invalid": [{"path": "/n", "problems": ["expected type integer"]}],
            "invalid_count": 1,
            "schemas": [{"path": "/n", "schema": {"type": "integer"}}],
            "action": "measure",
            "input_schema": {"properties": {"n": {"type": "integer"}}, "required": [], "defaults": {}},
            "help": action_help("measure"),
        })
    );
    assert!(!body.to_string().contains("2.5"));
    // A whole float beyond i64/u64 is a type problem, not a lossy cast (decisions O17).
    let body = refusal(
        &call(
            &f.server,
            "widgets",
            json!({"action": "measure", "data": {"n": 1e20}}),
        )
        .await,
    );
    assert_eq!(
        body["invalid"],
        json!([{"path": "/n", "problems": ["expected type integer"]}])
    );
    // i64::MIN as a float is exact; u64::MAX + 1 is not.
    let body = success(
        &call(
            &f.server,
            "widgets",
            json!({"action": "measure", "data": {"n": -9_223_372_036_854_775_808.0}}),
        )
        .await,
    );
    assert_eq!(body["data"]["n"], json!(i64::MIN));
    let body = refusal(
        &call(
            &f.server,
            "widgets",
            json!({"action": "measure", "data": {"n": 18_446_744_073_709_551_616.0}}),
        )
        .await,
    );
    assert_eq!(body["invalid"][0]["path"], "/n");
}

#[tokio::test]
async fn call_25_formats_are_asserted() {
    let f = fixture();
    let body = refusal(
        &call(
            &f.server,
            "widgets",
            json!({"action": "schedule", "data": {"when": "yesterday"}}),
        )
        .await,
    );
    assert_eq!(
        body["invalid"],
        json!([{"path": "/when", "problems": ["must be a valid date-time"]}])
    );
    assert!(!body.to_string().contains("yesterday"));
    success(
        &call(
            &f.server,
            "widgets",
            json!({"action": "schedule", "data": {"when": "2026-01-02T03:04:05Z"}}),
        )
        .await,
    );
}

#[tokio::test]
async fn call_26_fifteen_offending_values_list_ten() {
    let f = fixture();
    let mut data = Map::new();
    for i in (1..=15).rev() {
        data.insert(format!("p{i:02}"), json!(format!("secret-{i}")));
    }
    let body = refusal(
        &call(
            &f.server,
            "widgets",
            json!({"action": "bulk", "data": data}),
        )
        .await,
    );
    assert_eq!(body["error"], "invalid_values");
    assert_eq!(body["invalid_count"], 15);
    let listed: Vec<Value> = (1..=10)
        .map(|i| json!({"path": format!("/p{i:02}"), "problems": ["expected type integer"]}))
        .collect();
    assert_eq!(body["invalid"], json!(listed));
    let paths: Vec<String> = (1..=10).map(|i| format!("/p{i:02}")).collect();
    assert_eq!(
        body["message"],
        format!("Invalid value(s) for action 'bulk': {}.", paths.join(", "))
    );
    assert!(!body.to_string().contains("secret"));
    assert_eq!(body["input_schema"]["required"], json!([]));
    assert_eq!(f.runs.load(Ordering::SeqCst), 0);
}

// ---------------------------------------------------------------------------------------------
// Fault containment: CALL-31, CALL-32 (Rust meaning), decisions O12
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn call_31_panic_in_run_action_is_contained() {
    let f = fixture();
    let result = call(&f.server, "crasher", json!({"action": "boom"})).await;
    assert_eq!(
        fault(&result, "crasher"),
        json!({"errorType": "tool_fault", "tool": "crasher", "exception": "panic", "message": "boom"})
    );
    // The wire result: isError, one text item, no structuredContent.
    let wire = TestClient::new(f.server.clone())
        .request(
            "tools/call",
            Some(json!({"name": "crasher", "arguments": {"action": "boom"}})),
        )
        .await
        .expect("a fault is a result, not an RPC error");
    assert_eq!(keys(&wire), ["content", "isError"]);
    assert_eq!(wire["isError"], true);
    // A formatted (String) payload.
    let body = fault(
        &call(&f.server, "crasher", json!({"action": "owned"})).await,
        "crasher",
    );
    assert_eq!(body["message"], "widget 7 exploded");
    // The same server answers the next call.
    let body = success(&call(&f.server, "crasher", json!({"action": "fine"})).await);
    assert_eq!(body, json!({"ok": true}));
    let body = success(&call(&f.server, "widgets", json!({"action": "list"})).await);
    assert_eq!(body["limit"], 10);
}

#[tokio::test]
async fn call_32_non_string_panic_payload() {
    let f = fixture();
    let body = fault(
        &call(&f.server, "crasher", json!({"action": "opaque"})).await,
        "crasher",
    );
    assert_eq!(body["message"], "non-string panic payload");
}

#[tokio::test]
async fn panics_in_hints_handle_error_and_action_context_are_contained() {
    let f = fixture();
    let cases = [
        ("crasher", "in_hints", "hints exploded"),
        ("crasher", "in_action_context", "context exploded"),
        ("crasher", "in_error_action_context", "context exploded"),
        ("bad_handler", "fail", "handler exploded"),
    ];
    for (tool, action, message) in cases {
        let body = fault(
            &call(&f.server, tool, json!({"action": action})).await,
            tool,
        );
        assert_eq!(body["message"], message, "{tool}/{action}");
        // After each panic the same server still answers.
        let body = success(&call(&f.server, "crasher", json!({"action": "fine"})).await);
        assert_eq!(body["ok"], true);
    }
    // handle_error without a panic, on the same tool, still renders the failure.
    let result = call(&f.server, "crasher", json!({"action": "in_handle_error"})).await;
    assert_eq!(result.error_kind(), Some(ErrorKind::Tool));
    assert_eq!(result.text(), Some("handled: nope"));
}

#[tokio::test]
async fn context_outlives_a_faulted_call() {
    // A context clone outlives a panicking call; its assigns stay usable.
    let f = fixture();
    let ctx = Context::builder()
        .assign("current_scope", json!("s"))
        .build();
    let _ = call_with(&f.server, "crasher", json!({"action": "boom"}), ctx.clone()).await;
    ctx.assign("after", json!(1));
    assert_eq!(ctx.assigns()["after"], 1);
    let body = success(&call_with(&f.server, "widgets", json!({"action": "list"}), ctx).await);
    assert_eq!(body["context"]["seen_scope"], "s");
}

// ---------------------------------------------------------------------------------------------
// Hand-written run vocabulary: CALL-33 … CALL-35 (Rust meaning)
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn call_34_plain_tool_classifies_its_own_errors() {
    let f = fixture();
    let result = call(&f.server, "counter", json!({"mode": "dispatch"})).await;
    assert!(result.is_error());
    assert_eq!(result.error_kind(), Some(ErrorKind::Dispatch));
    assert_eq!(result.text(), Some("rejected: bad mode"));
    assert_eq!(result.structured_content(), None);
    let result = call(&f.server, "counter", json!({"mode": "tool"})).await;
    assert!(result.is_error());
    assert_eq!(result.error_kind(), Some(ErrorKind::Tool));
    assert_eq!(result.text(), Some("the backend said no"));
    let wire = result.to_value(ProtocolVersion::V2025_11_25);
    assert_eq!(
        wire,
        json!({"content": [{"type": "text", "text": "the backend said no"}], "isError": true})
    );
}

#[tokio::test]
async fn call_35_assigns_persist_across_calls_of_a_session() {
    let f = fixture();
    let session: Arc<Mutex<Map<String, Value>>> = Arc::new(Mutex::new(Map::new()));
    let ctx = || Context::builder().shared_assigns(session.clone()).build();
    let first = call_with(&f.server, "counter", json!({}), ctx()).await;
    assert_eq!(first.text(), Some("1"));
    let second = call_with(&f.server, "counter", json!({}), ctx()).await;
    assert_eq!(second.text(), Some("2"));
    assert_eq!(
        session.lock().expect("not poisoned").get("count"),
        Some(&json!(2))
    );
    // Without a shared map, each call starts afresh.
    let alone = call(&f.server, "counter", json!({})).await;
    assert_eq!(alone.text(), Some("1"));
}

// ---------------------------------------------------------------------------------------------
// Output schema and structuredContent: CALL-36 … CALL-38
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn call_36_structured_content_by_revision() {
    let f = fixture();
    for tool_call in [
        ("stats", json!({"action": "good"})),
        ("plain_stats", json!({})),
    ] {
        let result = call(&f.server, tool_call.0, tool_call.1).await;
        let expected = json!({"count": 42, "label": "test"});
        assert_eq!(success(&result), expected);
        assert_eq!(result.structured_content(), Some(&expected));
        for version in [ProtocolVersion::V2025_06_18, ProtocolVersion::V2025_11_25] {
            let wire = result.to_value(version);
            assert_eq!(wire["structuredContent"], expected, "{version:?}");
            assert_eq!(wire["isError"], false);
        }
        let legacy = result.to_value(ProtocolVersion::V2025_03_26);
        assert!(legacy.get("structuredContent").is_none());
        assert_eq!(legacy["content"][0]["type"], "text");
        let text: Value =
            serde_json::from_str(legacy["content"][0]["text"].as_str().expect("text"))
                .expect("JSON");
        assert_eq!(text, expected, "the text block carries the same data");
        // Through the envelope, on a 2025-03-26 context.
        let wire = TestClient::new(f.server.clone())
            .with_version(ProtocolVersion::V2025_03_26)
            .request(
                "tools/call",
                Some(json!({"name": tool_call.0, "arguments": result_arguments(tool_call.0)})),
            )
            .await
            .expect("answers");
        assert!(wire.get("structuredContent").is_none());
    }
}

fn result_arguments(tool: &str) -> Value {
    if tool == "stats" {
        json!({"action": "good"})
    } else {
        json!({})
    }
}

#[tokio::test]
async fn call_37_nonconforming_result_omits_structured_content() {
    let f = fixture();
    for (tool, arguments) in [
        ("stats", json!({"action": "bad"})),
        ("stats", json!({"action": "scalar"})),
        ("plain_stats", json!({"mode": "bad"})),
        ("plain_stats", json!({"mode": "text"})),
    ] {
        let result = call(&f.server, tool, arguments.clone()).await;
        assert!(!result.is_error(), "{tool} {arguments}");
        assert_eq!(result.error_kind(), None);
        assert_eq!(result.structured_content(), None, "{tool} {arguments}");
        assert!(
            result
                .to_value(ProtocolVersion::V2025_11_25)
                .get("structuredContent")
                .is_none()
        );
    }
}

#[tokio::test]
async fn call_38_no_output_schema_no_structured_content() {
    let f = fixture();
    for (tool, arguments) in [
        ("widgets", json!({"action": "list"})),
        ("plainer", json!({"x": "a"})),
        ("help", json!({})),
    ] {
        let result = call(&f.server, tool, arguments).await;
        assert!(!result.is_error());
        assert_eq!(result.structured_content(), None);
        let wire = result.to_value(ProtocolVersion::V2025_11_25);
        assert_eq!(keys(&wire), ["content", "isError"]);
    }
}

// ---------------------------------------------------------------------------------------------
// Context: CALL-39, CALL-41; CALL-42
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn call_39_action_context_added_when_a_map() {
    let f = fixture();
    let body = success(&call(&f.server, "widgets", json!({"action": "list"})).await);
    assert_eq!(
        body,
        json!({"limit": 10, "context": {"tip": "2 widgets need attention"}})
    );
    // An action whose action_context answers None: no context key.
    let body = success(
        &call(
            &f.server,
            "widgets",
            json!({"action": "bare", "data": {"x": "a"}}),
        )
        .await,
    );
    assert!(body.get("context").is_none());
    // A tool keeping the default action_context: no context, no crash.
    let body = success(&call(&f.server, "namesakes", json!({"action": "help"})).await);
    assert_eq!(body, json!({"ran": "help"}));
    // A plain tool has no action_context at all.
    let body = success(&call(&f.server, "plainer", json!({"x": "a"})).await);
    assert!(body.get("context").is_none());
}

#[tokio::test]
async fn call_41_action_context_sees_the_dispatching_ctx() {
    let f = fixture();
    let ctx = Context::builder()
        .assign("current_scope", json!("sentinel"))
        .build();
    let body = success(&call_with(&f.server, "widgets", json!({"action": "list"}), ctx).await);
    assert_eq!(body["context"]["seen_scope"], "sentinel");
    assert_eq!(body["context"]["tip"], "2 widgets need attention");
}

#[tokio::test]
async fn call_42_actions_named_help_and_describe_dispatch_normally() {
    let f = fixture();
    for action in ["help", "describe"] {
        let body = success(&call(&f.server, "namesakes", json!({"action": action})).await);
        assert_eq!(body, json!({"ran": action}));
    }
    let body = refusal(&call(&f.server, "namesakes", json!({"action": "nope"})).await);
    assert_eq!(body["valid_actions"], json!(["describe", "help"]));
}

// ---------------------------------------------------------------------------------------------
// Plain tools: the unknown-key and value gates from their own input schema
// ---------------------------------------------------------------------------------------------

fn plainer_digest() -> Value {
    json!({
        "type": "object",
        "properties": {
            "x": {"type": "string"},
            "n": {"type": "integer"},
            "nested": {"type": "object", "properties": {"a": {"type": "integer"}},
                       "additionalProperties": false}
        },
        "required": ["x"],
        "additionalProperties": false
    })
}

#[tokio::test]
async fn plain_tool_unknown_keys() {
    let f = fixture();
    let body = refusal(&call(&f.server, "plainer", json!({"x": "a", "bogus": 1})).await);
    assert_eq!(
        body,
        json!({
            "error": "unknown_params",
            "message": "Unknown parameter(s) for tool 'plainer': /bogus. These are rejected rather than silently ignored.",
            "unknown": ["/bogus"],
            "unknown_count": 1,
            "allowed": {"": ["n", "nested", "x"]},
            "input_schema": plainer_digest(),
            "help": r#"help {tool: "plainer"}"#,
        })
    );
    let body = refusal(
        &call(
            &f.server,
            "plainer",
            json!({"x": "a", "nested": {"a": 1, "b": 2}}),
        )
        .await,
    );
    assert_eq!(body["unknown"], json!(["/nested/b"]));
    assert_eq!(body["allowed"], json!({"/nested": ["a"]}));
    // Unknown keys answer before values, and before the schema's own required.
    let body = refusal(&call(&f.server, "plainer", json!({"bogus": 1})).await);
    assert_eq!(body["error"], "unknown_params");
    // A plain tool's arguments vocabulary is its schema: action/data are not special.
    let body = refusal(&call(&f.server, "plainer", json!({"x": "a", "action": "list"})).await);
    assert_eq!(body["unknown"], json!(["/action"]));
    // The published schema in tools/list states the same closure.
    let listed = f.server.list_tools(ProtocolVersion::V2025_11_25);
    let def = listed["tools"]
        .as_array()
        .and_then(|t| t.iter().find(|d| d["name"] == "plainer"))
        .expect("plainer listed");
    assert_eq!(def["inputSchema"], plainer_digest());
}

#[tokio::test]
async fn plain_tool_values() {
    let f = fixture();
    let body = refusal(&call(&f.server, "plainer", json!({"x": 5, "n": "many"})).await);
    assert_eq!(
        body,
        json!({
            "error": "invalid_values",
            "message": "Invalid value(s) for tool 'plainer': /n, /x.",
            "invalid": [
                {"path": "/n", "problems": ["expected type integer"]},
                {"path": "/x", "problems": ["expected type string"]},
            ],
            "invalid_count": 2,
            "schemas": [
                {"path": "/n", "schema": {"type": "integer"}},
                {"path": "/x", "schema": {"type": "string"}},
            ],
            "input_schema": plainer_digest(),
            "help": r#"help {tool: "plainer"}"#,
        })
    );
    // The schema's own `required` is a value-gate problem at the root, shown as (data).
    let body = refusal(&call(&f.server, "plainer", json!({})).await);
    assert_eq!(
        body["invalid"],
        json!([{"path": "", "problems": ["missing required property 'x'"]}])
    );
    assert_eq!(
        body["message"],
        "Invalid value(s) for tool 'plainer': (data)."
    );
    // A passing call reaches run with whole floats cast.
    let body = success(
        &call(
            &f.server,
            "plainer",
            json!({"x": "a", "n": 2.0, "nested": {"a": 7.0}}),
        )
        .await,
    );
    assert_eq!(
        body,
        json!({"arguments": {"x": "a", "n": 2, "nested": {"a": 7}}})
    );
    assert!(body["arguments"]["n"].is_i64());
    assert!(body["arguments"]["nested"]["a"].is_i64());
}

#[tokio::test]
async fn plain_tool_root_is_classified_like_any_object_schema() {
    let f = fixture();
    // counter declares `mode` only, with additionalProperties absent: closed.
    let body = refusal(&call(&f.server, "counter", json!({"other": 1})).await);
    assert_eq!(body["error"], "unknown_params");
    assert_eq!(body["allowed"], json!({"": ["mode"]}));
    assert_eq!(body["help"], r#"help {tool: "counter"}"#);
    assert!(body.get("action").is_none());
    // A root with no properties is free-form; additionalProperties: true opens a closed one.
    for tool in ["loose", "open"] {
        let body = success(&call(&f.server, tool, json!({"anything": {"deep": [1]}})).await);
        assert_eq!(body["arguments"]["anything"]["deep"], json!([1]), "{tool}");
    }
    // additionalProperties: false with no properties admits no key at all.
    let body = refusal(&call(&f.server, "sealed", json!({"a": 1})).await);
    assert_eq!(body["unknown"], json!(["/a"]));
    assert_eq!(body["allowed"], json!({"": []}));
    success(&call(&f.server, "sealed", json!({})).await);
}
