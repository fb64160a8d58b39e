//! Acceptance checks for the injected `help` tool: behaviour-spec §4.6 (HELP-1 … HELP-16), plus
//! plain tools in help, the closure help publishes, and the one source of action summaries.
//!
//! Every check goes through `Server::call_tool("help", Some(args), ctx)` and asserts exact JSON.
//!
//! Skipped, and why:
//! * HELP-3 (`register_tool(widgets)` mid-session shows in the index at once) and HELP-16 (help
//!   never clears the dirty-tool-list flag): runtime tool registration and the session's dirty
//!   flag are not built yet (§6.25 belongs to the session/transport work).
//! * The telemetry halves of HELP-8 (`level: :action`, `is_error: true`), HELP-13 (no
//!   `wymcp.help.called` event on a fault) and HELP-14 (the whole check is telemetry): telemetry
//!   assertions are a later issue. Their non-telemetry halves are tested here (HELP-8's answer,
//!   and HELP-14's two calls answering at the action and index levels).
//! * HELP-13's "`action_context` returns a string" cannot be written in Rust (`action_context`
//!   returns `Option<Map>`); its Rust meaning, a panic inside `action_context` during
//!   `help {tool, action}` contained as a `tool_fault` result, is tested instead.

use serde_json::{Map, Value, json};
use wymcp::tool::{CallToolResult, ErrorKind};
use wymcp::{
    ActionResult, ActionSchema, ActionTool, Actions, CallOutput, CallResult, Context, Data,
    PlainTool, ProtocolVersion, Reply, Server,
};

/// The help tool's description, exactly as behaviour-spec §2.3 writes it.
const HELP_DESCRIPTION: &str = "Get details about this server's tools. No arguments: an index of every tool and its actions. {tool}: that tool's actions in full (schemas, notes, examples). {tool, action}: one action in full.";

const CREATE_NOTES: &str = "Names are unique.\nColor defaults to blue.";

/// The §4.6 fixture tool. `create_description` is the one thing the drift test varies.
struct Widgets {
    create_description: &'static str,
}

impl Widgets {
    fn new() -> Self {
        Widgets {
            create_description: "Create a widget",
        }
    }
}

impl ActionTool for Widgets {
    fn name(&self) -> &str {
        "widgets"
    }
    fn description(&self) -> &str {
        "Manage widgets"
    }
    fn actions(&self) -> Actions {
        // Declared out of order on purpose: help and tools/list sort by action name.
        Actions::new()
            .action("list", ActionSchema::new("List widgets"))
            .action(
                "create",
                ActionSchema::new(self.create_description)
                    .property("name", json!({"type": "string"}))
                    .property("color", json!({"type": "string"}))
                    .required(["name"])
                    .default_value("color", json!("blue"))
                    .notes(CREATE_NOTES)
                    .related(["list"])
                    .example(json!({"name": "bolt"})),
            )
            .action(
                "identify",
                ActionSchema::new("Identify by id or by (name + color)")
                    .property("id", json!({"type": "integer"}))
                    .property("name", json!({"type": "string"}))
                    .property("color", json!({"type": "string"}))
                    .required_one_of([vec!["id"], vec!["name", "color"]]),
            )
    }
    async fn run_action(&self, action: &str, _data: Data, _ctx: Context) -> ActionResult {
        Ok(Reply::new(json!({"ran": action})))
    }
    fn action_context(&self, action: &str, _ctx: &Context) -> Option<Map<String, Value>> {
        (action == "list").then(|| object(json!({"tip": "2 widgets need attention"})))
    }
}

/// A tool whose `action_context` panics (HELP-13's Rust meaning).
struct Faulty;

impl ActionTool for Faulty {
    fn name(&self) -> &str {
        "faulty"
    }
    fn description(&self) -> &str {
        "Its context panics"
    }
    fn actions(&self) -> Actions {
        Actions::new().action("boom", ActionSchema::new("Panics in action_context"))
    }
    async fn run_action(&self, _action: &str, _data: Data, _ctx: Context) -> ActionResult {
        Ok(Reply::new(json!({})))
    }
    fn action_context(&self, _action: &str, _ctx: &Context) -> Option<Map<String, Value>> {
        panic!("context exploded")
    }
}

/// A tool with nested object properties (HELP-15): `addr` is closed by the unknown-key gate,
/// `meta` opens itself with `additionalProperties: true`.
struct Depot;

impl ActionTool for Depot {
    fn name(&self) -> &str {
        "depot"
    }
    fn description(&self) -> &str {
        "Ship parcels"
    }
    fn actions(&self) -> Actions {
        Actions::new().action(
            "ship",
            ActionSchema::new("Ship a parcel")
                .property(
                    "addr",
                    json!({"type": "object", "properties": {"zip": {}}}),
                )
                .property(
                    "meta",
                    json!({"type": "object", "properties": {"k": {}}, "additionalProperties": true}),
                ),
        )
    }
    async fn run_action(&self, _action: &str, _data: Data, _ctx: Context) -> ActionResult {
        Ok(Reply::new(json!({})))
    }
}

/// A tool whose context reads the caller's assigns: help must pass the call's own context.
struct Inbox;

impl ActionTool for Inbox {
    fn name(&self) -> &str {
        "inbox"
    }
    fn description(&self) -> &str {
        "Read mail"
    }
    fn actions(&self) -> Actions {
        Actions::new().action("read", ActionSchema::new("Read the inbox"))
    }
    async fn run_action(&self, _action: &str, _data: Data, _ctx: Context) -> ActionResult {
        Ok(Reply::new(json!({})))
    }
    fn action_context(&self, _action: &str, ctx: &Context) -> Option<Map<String, Value>> {
        let user = ctx.assigns().get("user").cloned()?;
        Some(object(json!({"user": user})))
    }
}

/// A plain tool: its own input schema, no actions.
struct Echo;

impl PlainTool for Echo {
    fn name(&self) -> &str {
        "echo"
    }
    fn description(&self) -> &str {
        "Echoes its message"
    }
    fn input_schema(&self) -> Map<String, Value> {
        object(json!({
            "type": "object",
            "properties": {
                "message": {"type": "string"},
                "opts": {"type": "object", "properties": {"loud": {"type": "boolean"}}},
            },
            "required": ["message"],
        }))
    }
    async fn run(&self, arguments: Map<String, Value>, _ctx: Context) -> CallResult {
        Ok(CallOutput::text(
            arguments["message"].as_str().unwrap_or_default(),
        ))
    }
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("expected a JSON object, got {other}"),
    }
}

/// The §4.6 fixture: session tools `[widgets, help]`.
fn fixture() -> Server {
    Server::builder()
        .tool(Widgets::new())
        .build()
        .expect("the fixture builds")
}

async fn call(server: &Server, args: Value) -> CallToolResult {
    wymcp::testing::call_tool(server, "help", Some(args), Context::default())
        .await
        .expect("help is always found and its arguments are an object")
}

/// A successful help answer, as JSON.
async fn answer(server: &Server, args: Value) -> Value {
    let result = call(server, args).await;
    assert!(!result.is_error(), "unexpected error answer: {result:?}");
    assert_eq!(result.error_kind(), None);
    assert_eq!(result.content().len(), 1);
    result.json().expect("help answers one JSON text item")
}

/// An error help answer (`isError: true`), as JSON.
async fn refusal(server: &Server, args: Value) -> Value {
    let result = call(server, args).await;
    assert!(result.is_error(), "expected an error answer: {result:?}");
    assert_eq!(result.content().len(), 1);
    assert_eq!(result.structured_content(), None);
    result.json().expect("help refuses with one JSON text item")
}

fn create_rendered() -> Value {
    json!({
        "description": "Create a widget",
        "properties": {"name": {"type": "string"}, "color": {"type": "string"}},
        "required": ["name"],
        "defaults": {"color": "blue"},
        "notes": CREATE_NOTES,
        "related": ["list"],
        "examples": [{"name": "bolt"}],
    })
}

fn identify_rendered() -> Value {
    json!({
        "description": "Identify by id or by (name + color)",
        "properties": {
            "id": {"type": "integer"},
            "name": {"type": "string"},
            "color": {"type": "string"},
        },
        "required": [],
        "required_one_of": [["id"], ["name", "color"]],
    })
}

fn list_rendered() -> Value {
    json!({"description": "List widgets", "properties": {}, "required": []})
}

/// `{"tool": t, "action": a}` merged with a rendered action (the action level's shape).
fn action_level(tool: &str, action: &str, rendered: Value, context: Option<Value>) -> Value {
    let mut body = object(json!({"tool": tool, "action": action}));
    body.extend(object(rendered));
    if let Some(context) = context {
        body.insert("context".into(), context);
    }
    Value::Object(body)
}

fn unknown_tool(sent: &str) -> Value {
    json!({
        "error": "unknown_tool",
        "message": format!("Unknown tool '{sent}'. Valid tools: help, widgets."),
        "valid_tools": ["help", "widgets"],
        "help": "help {}",
    })
}

// ---------------------------------------------------------------------------------------------
// Index
// ---------------------------------------------------------------------------------------------

/// HELP-1: the index lists every tool in tools/list order, help last with no actions.
#[tokio::test]
async fn help_1_index_lists_widgets_then_help() {
    let server = fixture();
    let expected = json!({"tools": [
        {
            "tool": "widgets",
            "description": "Manage widgets",
            "actions": [
                "create: Create a widget",
                "identify: Identify by id or by (name + color)",
                "list: List widgets",
            ],
        },
        {"tool": "help", "description": HELP_DESCRIPTION, "actions": []},
    ]});
    assert_eq!(answer(&server, json!({})).await, expected);
}

/// HELP-1, edge: absent and `null` arguments read as `{}` and answer the index.
#[tokio::test]
async fn absent_or_null_arguments_answer_the_index() {
    let server = fixture();
    let index = answer(&server, json!({})).await;
    for args in [None, Some(Value::Null)] {
        let result = wymcp::testing::call_tool(&server, "help", args, Context::default())
            .await
            .expect("help is found");
        assert!(!result.is_error());
        assert_eq!(result.json(), Some(index.clone()));
    }
}

/// HELP-2: a server with only help indexes exactly help.
#[tokio::test]
async fn help_2_help_only_server_indexes_help_alone() {
    let server = Server::builder().build().expect("an empty server builds");
    assert_eq!(
        answer(&server, json!({})).await,
        json!({"tools": [{"tool": "help", "description": HELP_DESCRIPTION, "actions": []}]})
    );
}

/// The index follows the tools/list order (configured order, help last).
#[tokio::test]
async fn index_follows_tools_list_order() {
    let server = Server::builder()
        .tool(Depot)
        .plain_tool(Echo)
        .tool(Widgets::new())
        .build()
        .expect("builds");
    let index = answer(&server, json!({})).await;
    let names: Vec<&str> = index["tools"]
        .as_array()
        .expect("tools is an array")
        .iter()
        .map(|t| t["tool"].as_str().expect("tool is a string"))
        .collect();
    assert_eq!(names, ["depot", "echo", "widgets", "help"]);
    assert_eq!(names, server.tool_names());
}

// ---------------------------------------------------------------------------------------------
// Tool level
// ---------------------------------------------------------------------------------------------

/// HELP-4: the tool level renders every action, `required` always, optional keys only when
/// declared.
#[tokio::test]
async fn help_4_tool_level_renders_every_action() {
    let server = fixture();
    let body = answer(&server, json!({"tool": "widgets"})).await;
    assert_eq!(
        body,
        json!({
            "tool": "widgets",
            "description": "Manage widgets",
            "actions": {
                "create": create_rendered(),
                "identify": identify_rendered(),
                "list": list_rendered(),
            },
        })
    );
    // The spec's individual assertions, spelled out.
    let create = &body["actions"]["create"];
    assert_eq!(create["required"], json!(["name"]));
    assert_eq!(create["defaults"], json!({"color": "blue"}));
    assert_eq!(create["notes"], json!(CREATE_NOTES));
    assert_eq!(create["related"], json!(["list"]));
    assert_eq!(create["examples"], json!([{"name": "bolt"}]));
    assert_eq!(create["properties"]["name"], json!({"type": "string"}));
    assert!(body["actions"]["identify"].get("required_one_of").is_some());
    assert!(body["actions"]["list"].get("notes").is_none());
}

/// `help {tool: "help"}` → help's own tool level, no actions.
#[tokio::test]
async fn tool_level_of_help_itself() {
    let server = fixture();
    assert_eq!(
        answer(&server, json!({"tool": "help"})).await,
        json!({"tool": "help", "description": HELP_DESCRIPTION, "actions": {}})
    );
}

// ---------------------------------------------------------------------------------------------
// Action level
// ---------------------------------------------------------------------------------------------

/// HELP-5: the action level merges the rendered action at top level; no context for `create`.
#[tokio::test]
async fn help_5_action_level_without_context() {
    let server = fixture();
    let body = answer(&server, json!({"tool": "widgets", "action": "create"})).await;
    assert_eq!(
        body,
        action_level("widgets", "create", create_rendered(), None)
    );
    assert!(body.get("context").is_none());
}

/// HELP-6: the action level carries `action_context`; undeclared optional keys are absent.
#[tokio::test]
async fn help_6_action_level_with_context() {
    let server = fixture();
    let body = answer(&server, json!({"tool": "widgets", "action": "list"})).await;
    assert_eq!(
        body,
        json!({
            "tool": "widgets",
            "action": "list",
            "description": "List widgets",
            "properties": {},
            "required": [],
            "context": {"tip": "2 widgets need attention"},
        })
    );
    for absent in [
        "required_one_of",
        "defaults",
        "notes",
        "related",
        "examples",
    ] {
        assert!(body.get(absent).is_none(), "{absent} must be absent");
    }
}

/// The action level of `identify` carries its groups and no context.
#[tokio::test]
async fn action_level_with_required_one_of() {
    let server = fixture();
    assert_eq!(
        answer(&server, json!({"tool": "widgets", "action": "identify"})).await,
        action_level("widgets", "identify", identify_rendered(), None)
    );
}

/// HELP-14 (non-telemetry half): the two calls it observes answer at the action and index
/// levels. The telemetry assertions are skipped (see the top of this file).
#[tokio::test]
async fn help_14_answers_behind_the_telemetry_check() {
    let server = fixture();
    let ctx = Context::builder().session_id("session-14").build();
    let result = wymcp::testing::call_tool(
        &server,
        "help",
        Some(json!({"tool": "widgets", "action": "create"})),
        ctx.clone(),
    )
    .await
    .expect("help is found");
    assert!(!result.is_error());
    assert_eq!(result.json().expect("json")["action"], "create");
    let result = wymcp::testing::call_tool(&server, "help", Some(json!({})), ctx)
        .await
        .expect("help is found");
    assert!(!result.is_error());
    assert!(result.json().expect("json").get("tools").is_some());
}

/// The action level hands `action_context` the help call's own context (per-request data).
#[tokio::test]
async fn action_context_reads_the_callers_context() {
    let server = Server::builder().tool(Inbox).build().expect("builds");
    let ctx = Context::builder().assign("user", json!("ada")).build();
    let result = wymcp::testing::call_tool(
        &server,
        "help",
        Some(json!({"tool": "inbox", "action": "read"})),
        ctx,
    )
    .await
    .expect("help is found");
    assert!(!result.is_error());
    assert_eq!(
        result.json().expect("json"),
        json!({
            "tool": "inbox",
            "action": "read",
            "description": "Read the inbox",
            "properties": {},
            "required": [],
            "context": {"user": "ada"},
        })
    );
    // No assign, no context: the key is absent rather than null.
    let body = answer(&server, json!({"tool": "inbox", "action": "read"})).await;
    assert!(body.get("context").is_none());
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/// HELP-7: an unknown tool, with the sorted valid tools (help included) and the index pointer.
#[tokio::test]
async fn help_7_unknown_tool() {
    let server = fixture();
    let body = refusal(&server, json!({"tool": "nope"})).await;
    assert_eq!(body, unknown_tool("nope"));
    assert!(
        body["message"]
            .as_str()
            .expect("message")
            .contains("Unknown tool 'nope'")
    );
}

/// HELP-8 (answer half): an action without a tool.
#[tokio::test]
async fn help_8_action_without_tool() {
    let server = fixture();
    assert_eq!(
        refusal(&server, json!({"action": "create"})).await,
        json!({
            "error": "missing_tool",
            "message": "help with action 'create' requires a tool. Valid tools: help, widgets.",
            "valid_tools": ["help", "widgets"],
            "help": "help {}",
        })
    );
}

/// HELP-9: an unknown action of a known tool, pointing at the tool level.
#[tokio::test]
async fn help_9_unknown_action() {
    let server = fixture();
    assert_eq!(
        refusal(&server, json!({"tool": "widgets", "action": "nope"})).await,
        json!({
            "error": "unknown_action",
            "message": "Unknown action 'nope' for tool 'widgets'. Valid actions: create, identify, list.",
            "valid_actions": ["create", "identify", "list"],
            "actions": [
                {"name": "create", "description": "Create a widget",
                 "signature": "create(name: string, color?: string)"},
                {"name": "identify", "description": "Identify by id or by (name + color)",
                 "signature": "identify(color?: string, id?: integer, name?: string; one of (id) | (name + color))"},
                {"name": "list", "description": "List widgets", "signature": "list()"},
            ],
            "help": "help {tool: \"widgets\"}",
        })
    );
}

/// HELP-9 / §4.4: help's `unknown_action` is exactly dispatch's gate-4 payload (one dialect).
#[tokio::test]
async fn unknown_action_is_the_dispatch_payload() {
    let server = fixture();
    let from_help = refusal(&server, json!({"tool": "widgets", "action": "nope"})).await;
    let dispatched = wymcp::testing::call_tool(
        &server,
        "widgets",
        Some(json!({"action": "nope"})),
        Context::default(),
    )
    .await
    .expect("widgets is found");
    assert!(dispatched.is_error());
    assert_eq!(dispatched.json(), Some(from_help));
}

/// HELP-10: an unknown tool wins over any action.
#[tokio::test]
async fn help_10_unknown_tool_wins_over_action() {
    let server = fixture();
    assert_eq!(
        refusal(&server, json!({"tool": "nope", "action": "create"})).await,
        unknown_tool("nope")
    );
}

/// HELP-11: an unknown argument is a tool-dialect refusal pointing at `help {}` (O14), not a
/// JSON-RPC error.
#[tokio::test]
async fn help_11_unknown_argument() {
    let server = fixture();
    let result = call(&server, json!({"tol": "widgets"})).await;
    assert!(result.is_error());
    assert_eq!(result.error_kind(), Some(ErrorKind::Dispatch));
    assert_eq!(
        result.json().expect("json"),
        json!({
            "error": "unknown_arguments",
            "message": "Unknown argument(s): tol. Valid arguments: tool, action.",
            "unknown": ["tol"],
            "unknown_count": 1,
            "valid_arguments": ["tool", "action"],
            "help": "help {}",
        })
    );
}

/// Gate 1 before gate 2: a stray key is reported before a wrong type.
#[tokio::test]
async fn unknown_argument_before_argument_type() {
    let server = fixture();
    let body = refusal(&server, json!({"tool": 5, "tol": "x"})).await;
    assert_eq!(body["error"], "unknown_arguments");
    assert_eq!(body["unknown"], json!(["tol"]));
}

/// HELP-12: a wrong argument type names the argument and points at `help {}` (O14).
#[tokio::test]
async fn help_12_argument_type() {
    let server = fixture();
    let result = call(&server, json!({"tool": 5})).await;
    assert!(result.is_error());
    assert_eq!(result.error_kind(), Some(ErrorKind::Dispatch));
    assert_eq!(
        result.json().expect("json"),
        json!({
            "error": "invalid_argument_type",
            "message": "Argument 'tool' must be a JSON string.",
            "argument": "tool",
            "expected": "string",
            "help": "help {}",
        })
    );
}

/// §4.2 [inferred]: an explicit `null` is a present key of the wrong type, not an absent one.
#[tokio::test]
async fn null_argument_is_a_type_refusal() {
    let server = fixture();
    let body = refusal(&server, json!({"tool": "widgets", "action": null})).await;
    assert_eq!(
        body,
        json!({
            "error": "invalid_argument_type",
            "message": "Argument 'action' must be a JSON string.",
            "argument": "action",
            "expected": "string",
            "help": "help {}",
        })
    );
}

/// §4.4: quoted targets pass through the bounded echo.
#[tokio::test]
async fn quoted_targets_are_bounded() {
    let server = fixture();
    let long = "x".repeat(250);
    let bounded = format!("{}…(+50 chars)", "x".repeat(200));
    assert_eq!(
        refusal(&server, json!({"tool": long})).await,
        unknown_tool(&bounded)
    );
    let body = refusal(&server, json!({"action": long})).await;
    assert_eq!(
        body["message"],
        format!("help with action '{bounded}' requires a tool. Valid tools: help, widgets.")
    );
    let body = refusal(&server, json!({"tool": "widgets", "action": long})).await;
    assert_eq!(
        body["message"],
        format!(
            "Unknown action '{bounded}' for tool 'widgets'. Valid actions: create, identify, list."
        )
    );
}

// ---------------------------------------------------------------------------------------------
// Faults
// ---------------------------------------------------------------------------------------------

/// HELP-13 (Rust meaning): a panic inside `action_context` during `help {tool, action}` is
/// contained as a `tool_fault` result of the help call; the server lives on.
#[tokio::test]
async fn help_13_action_context_panic_is_a_tool_fault() {
    let server = Server::builder()
        .tool(Faulty)
        .tool(Widgets::new())
        .build()
        .expect("builds");
    let result = call(&server, json!({"tool": "faulty", "action": "boom"})).await;
    assert!(result.is_error());
    assert_eq!(result.error_kind(), None);
    assert_eq!(
        result.json().expect("json"),
        json!({
            "errorType": "tool_fault",
            "tool": "help",
            "exception": "panic",
            "message": "context exploded",
        })
    );
    // The tool level never calls action_context, and the server still answers.
    let body = answer(&server, json!({"tool": "faulty"})).await;
    assert_eq!(
        body["actions"]["boom"],
        json!({"description": "Panics in action_context", "properties": {}, "required": []})
    );
    assert_eq!(
        answer(&server, json!({"tool": "widgets", "action": "list"})).await["context"],
        json!({"tip": "2 widgets need attention"})
    );
}

// ---------------------------------------------------------------------------------------------
// Closure (HELP-15) and plain tools
// ---------------------------------------------------------------------------------------------

/// HELP-15: tool and action levels publish the unknown-key gate's closure on `addr`; an object
/// that opens itself is published verbatim.
#[tokio::test]
async fn help_15_closure_published() {
    let server = Server::builder().tool(Depot).build().expect("builds");
    let ship = json!({
        "description": "Ship a parcel",
        "properties": {
            "addr": {"type": "object", "properties": {"zip": {}}, "additionalProperties": false},
            "meta": {"type": "object", "properties": {"k": {}}, "additionalProperties": true},
        },
        "required": [],
    });
    let tool = answer(&server, json!({"tool": "depot"})).await;
    assert_eq!(
        tool,
        json!({"tool": "depot", "description": "Ship parcels", "actions": {"ship": ship}})
    );
    assert_eq!(
        tool["actions"]["ship"]["properties"]["addr"]["additionalProperties"],
        json!(false)
    );
    let action = answer(&server, json!({"tool": "depot", "action": "ship"})).await;
    assert_eq!(action, action_level("depot", "ship", ship, None));
    assert_eq!(
        action["properties"]["addr"]["additionalProperties"],
        json!(false)
    );
}

/// A plain tool is indexed with no actions, and its tool level publishes its input schema
/// (closure written out).
#[tokio::test]
async fn plain_tool_in_index_and_tool_level() {
    let server = Server::builder()
        .tool(Widgets::new())
        .plain_tool(Echo)
        .build()
        .expect("builds");
    let index = answer(&server, json!({})).await;
    assert_eq!(
        index["tools"][1],
        json!({"tool": "echo", "description": "Echoes its message", "actions": []})
    );
    assert_eq!(index["tools"][2]["tool"], "help");

    let input_schema = json!({
        "type": "object",
        "properties": {
            "message": {"type": "string"},
            "opts": {
                "type": "object",
                "properties": {"loud": {"type": "boolean"}},
                "additionalProperties": false,
            },
        },
        "required": ["message"],
        "additionalProperties": false,
    });
    assert_eq!(
        answer(&server, json!({"tool": "echo"})).await,
        json!({
            "tool": "echo",
            "description": "Echoes its message",
            "input_schema": input_schema,
            "actions": {},
        })
    );
    // valid_tools includes the plain tool.
    assert_eq!(
        refusal(&server, json!({"tool": "nope"})).await["valid_tools"],
        json!(["echo", "help", "widgets"])
    );
}

/// A plain tool (and help) has no actions: asking for one is `unknown_action` with none valid.
#[tokio::test]
async fn action_of_a_tool_without_actions() {
    let server = Server::builder().plain_tool(Echo).build().expect("builds");
    for tool in ["echo", "help"] {
        let body = refusal(&server, json!({"tool": tool, "action": "run"})).await;
        assert_eq!(body["error"], "unknown_action");
        assert_eq!(body["valid_actions"], json!([]));
        assert_eq!(body["help"], format!("help {{tool: \"{tool}\"}}"));
    }
}

// ---------------------------------------------------------------------------------------------
// One source for action summaries (§2.2)
// ---------------------------------------------------------------------------------------------

async fn summaries_both_ways(server: &Server) -> (Vec<String>, String) {
    let index = answer(server, json!({})).await;
    let summaries: Vec<String> = index["tools"][0]["actions"]
        .as_array()
        .expect("actions is an array")
        .iter()
        .map(|s| s.as_str().expect("a summary is a string").to_owned())
        .collect();
    let list = server.list_tools(ProtocolVersion::V2025_11_25);
    assert_eq!(list["tools"][0]["name"], "widgets");
    let description = list["tools"][0]["inputSchema"]["properties"]["action"]["description"]
        .as_str()
        .expect("the action enum has a description")
        .to_owned();
    (summaries, description)
}

/// The help index's summaries and the tools/list action enum description come from one
/// function: change one action description and both surfaces change together, equal.
#[tokio::test]
async fn index_summaries_and_action_enum_share_one_source() {
    let before = fixture();
    let after = Server::builder()
        .tool(Widgets {
            create_description: "Make a brand-new widget",
        })
        .build()
        .expect("builds");

    let (index_before, enum_before) = summaries_both_ways(&before).await;
    let (index_after, enum_after) = summaries_both_ways(&after).await;

    assert_eq!(index_before.join("\n"), enum_before);
    assert_eq!(index_after.join("\n"), enum_after);
    assert_eq!(
        enum_before,
        "create: Create a widget\nidentify: Identify by id or by (name + color)\nlist: List widgets"
    );
    assert_eq!(
        enum_after,
        "create: Make a brand-new widget\nidentify: Identify by id or by (name + color)\nlist: List widgets"
    );
    // Only the changed line differs, on both surfaces.
    assert_eq!(index_before[1..], index_after[1..]);
    assert_ne!(index_before[0], index_after[0]);
    // The tool level and the action level carry the new description too.
    assert_eq!(
        answer(&after, json!({"tool": "widgets"})).await["actions"]["create"]["description"],
        "Make a brand-new widget"
    );
}
