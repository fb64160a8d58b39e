//! Typed actions (`#[derive(ActionEnum)]` + `TypedActionTool`): a typed tool and a literal tool
//! describing the same actions serve identical `tools/list` definitions, identical help and
//! identical gate refusals; defaults, `Option`, docs, `deny_unknown_fields`, inlining and panic
//! containment; payloads an action cannot serve are refused by `build()`.

use serde::Deserialize;
use serde_json::{Map, Value, json};
use wymcp::tool::CallToolResult;
use wymcp::{
    ActionEnum, ActionResult, ActionTool, Actions, Context, Data, JsonSchema, ProtocolVersion,
    Reply, Server, TypedActionTool,
};

/// A postal address (the struct doc is not served: the field doc describes the property)
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Address {
    /// Street and number
    street: String,
    /// Postal code
    zip: Option<String>,
}

fn default_priority() -> u8 {
    3
}

#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct CreateTask {
    /// The task's title
    title: String,
    /// 1 (urgent) to 5
    #[serde(default = "default_priority")]
    priority: u8,
    /// Labels
    #[serde(default)]
    tags: Vec<String>,
    /// Who does it
    #[schemars(email)]
    assignee: Option<String>,
    /// Where
    address: Option<Address>,
    /// Where to send the invoice
    billing: Option<Address>,
}

/// Derives through `wymcp::JsonSchema`, whose generated code names this crate's `schemars`.
#[derive(Debug, Deserialize, wymcp::JsonSchema)]
struct GetTask {
    /// The task's id
    id: Option<u32>,
    /// The task's exact title
    title: Option<String>,
}

#[derive(Debug, ActionEnum)]
enum TaskAction {
    /// Create a task
    ///
    /// Titles are unique.
    /// Priority defaults to 3.
    #[wymcp(example = {"title": "Write docs"})]
    Create(CreateTask),
    /// Get a task by id or by title
    #[wymcp(required_one_of = [["id"], ["title"]], related = ["create"])]
    Get(GetTask),
    /// Remove every done task
    #[wymcp(rename = "clear_done")]
    Clear,
}

/// The typed tool.
struct TypedTasks;

impl TypedActionTool for TypedTasks {
    type Action = TaskAction;
    fn name(&self) -> &str {
        "tasks"
    }
    fn description(&self) -> &str {
        "Task management"
    }
    async fn run(&self, action: TaskAction, _ctx: Context) -> ActionResult {
        match action {
            TaskAction::Create(c) => {
                if c.title == "boom" {
                    panic!("typed run exploded");
                }
                Ok(Reply::new(json!({
                    "title": c.title,
                    "priority": c.priority,
                    "tags": c.tags,
                    "assignee": c.assignee,
                    "street": c.address.map(|a| a.street),
                })))
            }
            TaskAction::Get(g) => Ok(Reply::new(json!({"id": g.id, "title": g.title}))),
            TaskAction::Clear => Ok(Reply::new(json!({"cleared": true}))),
        }
    }
    fn action_context(&self, action: &str, _ctx: &Context) -> Option<Map<String, Value>> {
        context(action)
    }
}

fn context(action: &str) -> Option<Map<String, Value>> {
    (action == "clear_done").then(|| {
        let mut m = Map::new();
        m.insert("tip".into(), json!("3 tasks are done"));
        m
    })
}

/// The same actions, written as a literal by hand.
struct LiteralTasks;

impl ActionTool for LiteralTasks {
    fn name(&self) -> &str {
        "tasks"
    }
    fn description(&self) -> &str {
        "Task management"
    }
    fn actions(&self) -> Actions {
        wymcp::actions!({
            "create": {
                "description": "Create a task",
                "notes": "Titles are unique.\nPriority defaults to 3.",
                "examples": [{"title": "Write docs"}],
                "properties": {
                    "title": {"type": "string", "description": "The task's title"},
                    "priority": {
                        "type": "integer", "minimum": 0, "maximum": 255,
                        "description": "1 (urgent) to 5"
                    },
                    "tags": {"type": "array", "items": {"type": "string"}, "description": "Labels"},
                    "assignee": {"type": "string", "format": "email", "description": "Who does it"},
                    "address": {
                        "type": "object",
                        "description": "Where",
                        "properties": {
                            "street": {"type": "string", "description": "Street and number"},
                            "zip": {"type": "string", "description": "Postal code"}
                        },
                        "required": ["street"],
                        "additionalProperties": false
                    },
                    "billing": {
                        "type": "object",
                        "description": "Where to send the invoice",
                        "properties": {
                            "street": {"type": "string", "description": "Street and number"},
                            "zip": {"type": "string", "description": "Postal code"}
                        },
                        "required": ["street"],
                        "additionalProperties": false
                    }
                },
                "required": ["title"],
                "defaults": {"priority": 3, "tags": []}
            },
            "get": {
                "description": "Get a task by id or by title",
                "properties": {
                    "id": {
                        "type": "integer", "minimum": 0, "maximum": 4294967295,
                        "description": "The task's id"
                    },
                    "title": {"type": "string", "description": "The task's exact title"}
                },
                "required_one_of": [["id"], ["title"]],
                "related": ["create"]
            },
            "clear_done": {"description": "Remove every done task", "properties": {}}
        })
    }
    async fn run_action(&self, action: &str, _data: Data, _ctx: Context) -> ActionResult {
        Ok(Reply::new(json!({"ran": action})))
    }
    fn action_context(&self, action: &str, _ctx: &Context) -> Option<Map<String, Value>> {
        context(action)
    }
}

fn typed() -> Server {
    Server::builder()
        .typed_tool(TypedTasks)
        .build()
        .expect("the typed tool builds")
}

fn literal() -> Server {
    Server::builder()
        .tool(LiteralTasks)
        .build()
        .expect("the literal tool builds")
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime")
        .block_on(f)
}

fn call(server: &Server, tool: &str, arguments: Value) -> CallToolResult {
    block_on(wymcp::testing::call_tool(
        server,
        tool,
        Some(arguments),
        Context::default(),
    ))
    .expect("the tool exists and the arguments are an object")
}

/// A result as one comparable value: error flag, error kind, and the JSON (or text) content.
fn outcome(result: &CallToolResult) -> Value {
    json!({
        "is_error": result.is_error(),
        "kind": result.error_kind().map(|k| k.as_str()),
        "body": result.json().unwrap_or_else(|| json!(result.text())),
    })
}

fn call_json(server: &Server, arguments: Value) -> Value {
    let result = call(server, "tasks", arguments);
    assert!(!result.is_error(), "{:?}", result.text());
    result.json().expect("a JSON reply")
}

#[test]
fn typed_and_literal_tools_list_identically() {
    for version in [
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
    ] {
        assert_eq!(
            typed().list_tools(version),
            literal().list_tools(version),
            "{version:?}"
        );
    }
}

#[test]
fn typed_and_literal_help_is_identical_at_every_level() {
    let (typed, literal) = (typed(), literal());
    let mut asks = vec![json!({}), json!({"tool": "tasks"})];
    for action in ["create", "get", "clear_done", "nope"] {
        asks.push(json!({"tool": "tasks", "action": action}));
    }
    for ask in asks {
        let t = outcome(&call(&typed, "help", ask.clone()));
        let l = outcome(&call(&literal, "help", ask.clone()));
        assert_eq!(t, l, "help {ask}");
    }
    // The action level of help carries what the derive read from the enum.
    let create = call(&typed, "help", json!({"tool": "tasks", "action": "create"}));
    let create = create.json().expect("help answers JSON");
    let notes = "Titles are unique.\\nPriority defaults to 3.";
    assert!(create.to_string().contains(notes), "{create}");
}

#[test]
fn typed_and_literal_refuse_the_same_bad_calls_identically() {
    let (typed, literal) = (typed(), literal());
    let bad_calls = [
        // unknown action
        json!({"action": "destroy", "data": {}}),
        // missing action
        json!({"data": {}}),
        // unknown argument
        json!({"action": "create", "data": {"title": "x"}, "force": true}),
        // missing required
        json!({"action": "create", "data": {}}),
        // missing group (required_one_of)
        json!({"action": "get", "data": {}}),
        // unknown key at the root of data
        json!({"action": "clear_done", "data": {"all": true}}),
        // unknown key nested (deny_unknown_fields)
        json!({"action": "create", "data": {"title": "x", "address": {"street": "a", "zpi": "1"}}}),
        // invalid value with a format
        json!({"action": "create", "data": {"title": "x", "assignee": "not-an-email"}}),
        // wrong type, out of range
        json!({"action": "create", "data": {"title": "x", "priority": "high"}}),
        json!({"action": "create", "data": {"title": "x", "priority": 300}}),
        json!({"action": "get", "data": {"id": -1}}),
        // null for an optional property: omit it instead
        json!({"action": "get", "data": {"id": null}}),
        // nested required missing
        json!({"action": "create", "data": {"title": "x", "billing": {"zip": "1"}}}),
    ];
    for bad in bad_calls {
        let t = outcome(&call(&typed, "tasks", bad.clone()));
        let l = outcome(&call(&literal, "tasks", bad.clone()));
        assert_eq!(t["is_error"], true, "{bad} was admitted");
        assert_eq!(t, l, "{bad}");
    }
}

#[test]
fn defaults_are_applied_and_delivered_typed() {
    let reply = call_json(
        &typed(),
        json!({"action": "create", "data": {"title": "Write docs"}}),
    );
    assert_eq!(
        reply,
        json!({
            "title": "Write docs",
            "priority": 3,
            "tags": [],
            "assignee": null,
            "street": null
        })
    );
    let reply = call_json(
        &typed(),
        json!({"action": "create", "data": {
            "title": "Ship", "priority": 1, "tags": ["release"],
            "assignee": "ada@example.com", "address": {"street": "Main St 1"}
        }}),
    );
    assert_eq!(
        reply,
        json!({
            "title": "Ship",
            "priority": 1,
            "tags": ["release"],
            "assignee": "ada@example.com",
            "street": "Main St 1"
        })
    );
}

fn action_schema(name: &str) -> Value {
    TaskAction::actions()
        .entries()
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.clone())
        .expect("the action is declared")
}

#[test]
fn option_fields_and_defaulted_fields_are_not_required() {
    let create = action_schema("create");
    assert_eq!(create["required"], json!(["title"]));
    assert_eq!(create["defaults"], json!({"priority": 3, "tags": []}));
    assert!(create["properties"]["priority"].get("default").is_none());
    let get = action_schema("get");
    assert!(get.get("required").is_none(), "{get}");
    // An optional property is omitted, not null.
    assert_eq!(get["properties"]["id"]["type"], "integer");
    let reply = call_json(
        &typed(),
        json!({"action": "get", "data": {"title": "Ship"}}),
    );
    assert_eq!(reply, json!({"id": null, "title": "Ship"}));
}

#[test]
fn docs_become_descriptions_and_notes() {
    let create = action_schema("create");
    assert_eq!(create["description"], "Create a task");
    assert_eq!(
        create["notes"],
        "Titles are unique.\nPriority defaults to 3."
    );
    assert_eq!(
        create["properties"]["title"]["description"],
        "The task's title"
    );
    assert_eq!(create["properties"]["address"]["description"], "Where");
    assert_eq!(
        create["properties"]["address"]["properties"]["zip"]["description"],
        "Postal code"
    );
    assert_eq!(
        action_schema("clear_done")["description"],
        "Remove every done task"
    );
    let names: Vec<String> = TaskAction::actions()
        .entries()
        .iter()
        .map(|(n, _)| n.clone())
        .collect();
    assert_eq!(names, ["create", "get", "clear_done"]);
}

#[test]
fn deny_unknown_fields_closes_the_nested_object() {
    // schemars writes the closure itself (not only the gate's publication).
    let create = action_schema("create");
    assert_eq!(
        create["properties"]["address"]["additionalProperties"],
        false
    );
    let refused = call(
        &typed(),
        "tasks",
        json!({"action": "create", "data": {"title": "x", "address": {"street": "a", "floor": 2}}}),
    );
    assert!(refused.is_error());
    let body = refused.json().expect("a refusal is JSON");
    assert_eq!(body["error"], "unknown_params", "{body}");
    assert!(body.to_string().contains("/address/floor"), "{body}");
}

/// Every (key, value) of every object in `value`, at any depth.
fn entries(value: &Value, out: &mut Vec<(String, Value)>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                out.push((k.clone(), v.clone()));
                entries(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| entries(v, out)),
        _ => {}
    }
}

#[test]
fn served_schemas_are_free_of_refs_and_schemars_noise() {
    let server = typed();
    let mut served = vec![server.list_tools(ProtocolVersion::V2025_11_25)];
    for action in ["create", "get", "clear_done"] {
        let help = call(&server, "help", json!({"tool": "tasks", "action": action}));
        served.push(help.json().expect("help answers JSON"));
    }
    let mut all = Vec::new();
    served.iter().for_each(|v| entries(v, &mut all));
    for (key, value) in &all {
        assert!(
            !["$ref", "$defs", "definitions", "$schema"].contains(&key.as_str()),
            "{key} is served: {value}"
        );
        if key == "format" {
            // The one format is the email the struct asked for (no int32-style formats).
            assert_eq!(value, "email");
        }
    }
    let create = action_schema("create");
    assert!(create["properties"]["billing"]["properties"].is_object());
    assert!(create["properties"]["priority"].get("format").is_none());
    assert_eq!(create["properties"]["assignee"]["format"], "email");
}

#[test]
fn a_panic_in_run_is_contained() {
    let server = typed();
    let result = call(
        &server,
        "tasks",
        json!({"action": "create", "data": {"title": "boom"}}),
    );
    assert!(result.is_error());
    let body = result.json().expect("a fault body");
    assert_eq!(body["errorType"], "tool_fault");
    assert_eq!(body["message"], "typed run exploded");
    // The server goes on answering.
    let reply = call_json(&server, json!({"action": "clear_done", "data": {}}));
    assert_eq!(reply["cleared"], true);
    assert_eq!(reply["context"]["tip"], "3 tasks are done");
}

#[test]
fn from_action_and_action_name_round_trip() {
    let data = Data::from_value(json!({"id": 7})).expect("an object");
    let action = TaskAction::from_action("get", data).expect("parses");
    assert_eq!(action.action_name(), "get");
    assert!(matches!(
        action,
        TaskAction::Get(GetTask {
            id: Some(7),
            title: None
        })
    ));
    let clear = TaskAction::from_action("clear_done", Data::from_value(json!({})).expect("{}"));
    assert_eq!(clear.expect("a unit action").action_name(), "clear_done");
    let unknown = TaskAction::from_action("destroy", Data::from_value(json!({})).expect("{}"));
    assert_eq!(
        unknown.expect_err("not an action").to_string(),
        "unknown action \"destroy\""
    );
}

/// A variant whose payload is not a struct.
#[derive(ActionEnum)]
#[allow(dead_code)]
enum NotAStruct {
    /// Echo a string
    Echo(String),
}

/// A recursive payload: schemars cannot inline it.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Tree {
    /// Child nodes
    children: Vec<Tree>,
}

#[derive(ActionEnum)]
#[allow(dead_code)]
enum Recursive {
    /// Plant a tree
    Plant(Tree),
}

struct Bad<A>(std::marker::PhantomData<fn() -> A>);

impl<A: ActionEnum> TypedActionTool for Bad<A> {
    type Action = A;
    fn name(&self) -> &str {
        "bad"
    }
    fn description(&self) -> &str {
        "Refused"
    }
    async fn run(&self, _action: A, _ctx: Context) -> ActionResult {
        Ok(Reply::new(json!({})))
    }
}

fn build_error<A: ActionEnum>() -> String {
    Server::builder()
        .typed_tool(Bad::<A>(std::marker::PhantomData))
        .build()
        .expect_err("refused")
        .to_string()
}

#[test]
fn payloads_an_action_cannot_serve_are_refused_by_build() {
    let error = build_error::<NotAStruct>();
    assert!(
        error.starts_with("tool \"bad\", action \"echo\": properties must be an object"),
        "{error}"
    );
    assert!(error.contains("variant `Echo` is `String`"), "{error}");
    let error = build_error::<Recursive>();
    assert!(
        error.starts_with("tool \"bad\", action \"plant\": "),
        "{error}"
    );
    assert!(error.contains("$ref"), "{error}");
}

/// A deserialization the gates cannot foresee (a custom `Deserialize`) is answered as a tool
/// error, never a panic.
#[derive(JsonSchema)]
struct Picky {
    /// Any string but "no"
    word: String,
}

impl<'de> Deserialize<'de> for Picky {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Raw {
            word: String,
        }
        let raw = Raw::deserialize(d)?;
        if raw.word == "no" {
            return Err(serde::de::Error::custom("\"no\" is not accepted"));
        }
        Ok(Picky { word: raw.word })
    }
}

#[derive(ActionEnum)]
enum PickyAction {
    /// Say a word
    Say(Picky),
}

struct PickyTool;

impl TypedActionTool for PickyTool {
    type Action = PickyAction;
    fn name(&self) -> &str {
        "picky"
    }
    fn description(&self) -> &str {
        "Picky"
    }
    async fn run(&self, action: PickyAction, _ctx: Context) -> ActionResult {
        let PickyAction::Say(p) = action;
        Ok(Reply::new(json!({"said": p.word})))
    }
}

#[test]
fn a_struct_refusing_admitted_data_is_a_tool_error() {
    let server = Server::builder()
        .typed_tool(PickyTool)
        .build()
        .expect("builds");
    let ok = call(
        &server,
        "picky",
        json!({"action": "say", "data": {"word": "yes"}}),
    );
    assert_eq!(ok.json().expect("JSON")["said"], "yes");
    let refused = call(
        &server,
        "picky",
        json!({"action": "say", "data": {"word": "no"}}),
    );
    assert!(refused.is_error());
    assert_eq!(refused.error_kind().map(|k| k.as_str()), Some("tool"));
    let text = refused.text().expect("a text error");
    assert!(
        text.starts_with("Operation failed: data does not match the expected shape"),
        "{text}"
    );
}
