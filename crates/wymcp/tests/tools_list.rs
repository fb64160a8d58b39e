//! Acceptance checks of behaviour-spec §2.5 (LIST-1 … LIST-12): the exact JSON of
//! `Server::list_tools` per protocol revision, and the official MCP JSON Schema of 2025-03-26,
//! 2025-06-18 and 2025-11-25 accepting every definition these tests' servers serve.
//!
//! Checks with no test here:
//!
//! * LIST-8 (runtime `register_tool` puts runtime tools first): runtime registration is not
//!   built yet.
//! * LIST-11 is covered only in what `list_tools` owns: it takes no cursor (there is no
//!   pagination to ask for), and its result carries `tools` alone, never `nextCursor`. Ignoring a
//!   `cursor` param on the wire is the transport's part.

mod mcp_schema;
mod spec_tool;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use spec_tool::{Spec, object};
use wymcp::{
    ActionResult, ActionSchema, ActionTool, Actions, CallOutput, CallResult, Context, Data,
    PlainTool, ProtocolVersion, Reply, Server, ServerBuilder,
};

/// Every revision `list_tools` serves in the session era.
const SESSION_ERA: [ProtocolVersion; 3] = [
    ProtocolVersion::V2025_03_26,
    ProtocolVersion::V2025_06_18,
    ProtocolVersion::V2025_11_25,
];

/// The revisions whose definitions carry `title` and `outputSchema`.
const WITH_TITLES: [ProtocolVersion; 2] =
    [ProtocolVersion::V2025_06_18, ProtocolVersion::V2025_11_25];

const HELP_DESCRIPTION: &str = "Get details about this server's tools. No arguments: an index of every tool and its actions. {tool}: that tool's actions in full (schemas, notes, examples). {tool, action}: one action in full.";

/// The help tool's definition, exactly as behaviour-spec §2.3 writes it.
fn help_definition() -> Value {
    json!({
        "name": "help",
        "description": HELP_DESCRIPTION,
        "inputSchema": {
            "type": "object",
            "properties": {
                "tool": {"type": "string", "description": "Tool name to get details about"},
                "action": {
                    "type": "string",
                    "description": "Action name within that tool (requires tool)"
                }
            },
            "additionalProperties": false
        }
    })
}

/// A plain tool with its own input schema and optional extras.
struct Plain {
    name: String,
    input: Map<String, Value>,
    title: Option<String>,
    output: Option<Map<String, Value>>,
}

impl PlainTool for Plain {
    fn name(&self) -> &str {
        &self.name
    }
    fn description(&self) -> &str {
        "Echoes its message"
    }
    fn input_schema(&self) -> Map<String, Value> {
        self.input.clone()
    }
    async fn run(&self, _arguments: Map<String, Value>, _ctx: Context) -> CallResult {
        Ok(CallOutput::text("ran"))
    }
    fn title(&self) -> Option<String> {
        self.title.clone()
    }
    fn output_schema(&self) -> Option<Map<String, Value>> {
        self.output.clone()
    }
}

/// Builds a server that must build, and checks every definition it serves against the official
/// MCP schemas of every session-era revision before any test looks at it.
fn build(builder: ServerBuilder) -> Server {
    let server = builder.build().expect("a valid configuration builds");
    mcp_schema::assert_served_definitions_valid(&server);
    server
}

/// The generated input schema of an action tool, exactly as behaviour-spec §2.2 writes it.
fn action_input_schema(names: &[&str], summaries: &str) -> Value {
    json!({
        "type": "object",
        "required": ["action"],
        "properties": {
            "action": {"type": "string", "enum": names, "description": summaries},
            "data": {"type": "object"}
        }
    })
}

/// Asserts the whole `tools/list` result served to `version`.
#[track_caller]
fn assert_listed(server: &Server, version: ProtocolVersion, expected: Vec<Value>) {
    assert_eq!(
        server.list_tools(version),
        json!({ "tools": expected }),
        "tools/list for {version}"
    );
}

// LIST-1 … LIST-3 ---------------------------------------------------------------------------

#[test]
fn list_1_action_enum_and_summaries() {
    let server = build(Server::builder().tool(Spec::new(
        "t",
        Actions::from_value(json!({
            "alpha": {"description": "Do alpha", "properties": {}},
            "beta": {"description": "Do beta", "properties": {}}
        })),
    )));
    let definition = json!({
        "name": "t",
        "description": "The t tool",
        "inputSchema": action_input_schema(&["alpha", "beta"], "alpha: Do alpha\nbeta: Do beta")
    });
    for version in SESSION_ERA {
        assert_listed(
            &server,
            version,
            vec![definition.clone(), help_definition()],
        );
    }
    assert_eq!(
        server.list_tools(ProtocolVersion::V2025_11_25)["tools"][0]["inputSchema"]["properties"]["action"],
        json!({"type": "string", "enum": ["alpha", "beta"], "description": "alpha: Do alpha\nbeta: Do beta"})
    );
}

#[test]
fn list_2_actions_are_sorted_by_name_whatever_the_declaration_order() {
    let server = build(
        Server::builder().tool(Spec::new(
            "t",
            Actions::new()
                .action("list", ActionSchema::new("List all"))
                .action("create", ActionSchema::new("Create one"))
                .action("identify", ActionSchema::new("Identify one"))
                .action(
                    "get",
                    ActionSchema::new("Get a widget by ID. Returns name and color."),
                ),
        )),
    );
    let definition = json!({
        "name": "t",
        "description": "The t tool",
        "inputSchema": action_input_schema(
            &["create", "get", "identify", "list"],
            "create: Create one\nget: Get a widget by ID. Returns name and color.\nidentify: Identify one\nlist: List all"
        )
    });
    for version in SESSION_ERA {
        assert_listed(
            &server,
            version,
            vec![definition.clone(), help_definition()],
        );
    }
}

#[test]
fn list_2_sort_is_string_comparison() {
    let server = build(
        Server::builder().tool(Spec::new(
            "t",
            Actions::new()
                .action("alpha", ActionSchema::new("a"))
                .action("_private", ActionSchema::new("p"))
                .action("Zeta", ActionSchema::new("z"))
                .action("item10", ActionSchema::new("ten"))
                .action("item9", ActionSchema::new("nine")),
        )),
    );
    assert_eq!(
        server.list_tools(ProtocolVersion::V2025_11_25)["tools"][0]["inputSchema"],
        action_input_schema(
            &["Zeta", "_private", "alpha", "item10", "item9"],
            "Zeta: z\n_private: p\nalpha: a\nitem10: ten\nitem9: nine"
        )
    );
}

#[test]
fn list_3_data_is_a_bare_object_whatever_the_action_declares() {
    let server = build(
        Server::builder().tool(Spec::new(
            "t",
            Actions::new().action(
                "get",
                ActionSchema::new("Get a pull request")
                    .property("url", json!({"type": "string", "format": "uri"}))
                    .property("project_key", json!({"type": "string"}))
                    .property("pr_id", json!({"type": "integer", "minimum": 1}))
                    .property(
                        "opts",
                        json!({"type": "object", "properties": {"deep": {"type": "boolean"}}}),
                    )
                    .property("verbose", json!({"type": "boolean"}))
                    .required(["opts"])
                    .required_one_of([vec!["url"], vec!["project_key", "pr_id"]])
                    .default_value("verbose", json!(false))
                    .notes("Notes stay in help.")
                    .related(["get"])
                    .example(json!({"url": "https://example.com/pr/1", "opts": {}})),
            ),
        )),
    );
    let definition = json!({
        "name": "t",
        "description": "The t tool",
        "inputSchema": action_input_schema(&["get"], "get: Get a pull request")
    });
    for version in SESSION_ERA {
        assert_listed(
            &server,
            version,
            vec![definition.clone(), help_definition()],
        );
    }
}

// LIST-4 … LIST-6 ---------------------------------------------------------------------------

fn one_action() -> Actions {
    Actions::new().action("get", ActionSchema::new("Get it"))
}

fn one_action_definition(name: &str) -> Map<String, Value> {
    object(json!({
        "name": name,
        "description": format!("The {name} tool"),
        "inputSchema": action_input_schema(&["get"], "get: Get it")
    }))
}

#[test]
fn list_4_title_only_when_given_and_only_from_2025_06_18() {
    let server = build(
        Server::builder()
            .tool(Spec::new("plain_t", one_action()))
            .tool(Spec::new("titled", one_action()).title("My Titled Tool")),
    );
    let untitled = Value::Object(one_action_definition("plain_t"));
    let mut titled = one_action_definition("titled");
    assert_listed(
        &server,
        ProtocolVersion::V2025_03_26,
        vec![
            untitled.clone(),
            Value::Object(titled.clone()),
            help_definition(),
        ],
    );
    titled.insert("title".into(), json!("My Titled Tool"));
    for version in WITH_TITLES {
        assert_listed(
            &server,
            version,
            vec![
                untitled.clone(),
                Value::Object(titled.clone()),
                help_definition(),
            ],
        );
    }
}

#[test]
fn list_5_annotations_verbatim_on_every_revision_and_an_empty_map_omitted() {
    let annotations = json!({"readOnlyHint": true, "openWorldHint": false, "title": "Annotated"});
    let server = build(
        Server::builder()
            .tool(Spec::new("annotated", one_action()).annotations(annotations.clone()))
            .tool(Spec::new("empty", one_action()).annotations(json!({})))
            .tool(Spec::new("none", one_action())),
    );
    let mut annotated = one_action_definition("annotated");
    annotated.insert("annotations".into(), annotations);
    for version in SESSION_ERA {
        assert_listed(
            &server,
            version,
            vec![
                Value::Object(annotated.clone()),
                Value::Object(one_action_definition("empty")),
                Value::Object(one_action_definition("none")),
                help_definition(),
            ],
        );
    }
}

#[test]
fn list_6_output_schema_verbatim_from_2025_06_18_and_absent_on_2025_03_26() {
    let output = json!({
        "type": "object",
        "properties": {
            "count": {"type": "integer", "description": "How many"},
            "item": {"type": "object", "properties": {"id": {"type": "integer"}}}
        },
        "required": ["count"]
    });
    let server = build(
        Server::builder().tool(
            Spec::new("counted", one_action())
                .output(output.clone())
                .title("Counted")
                .annotations(json!({"idempotentHint": true})),
        ),
    );
    // 2025-03-26 loses title and outputSchema, keeps annotations.
    let mut legacy = one_action_definition("counted");
    legacy.insert("annotations".into(), json!({"idempotentHint": true}));
    assert_listed(
        &server,
        ProtocolVersion::V2025_03_26,
        vec![Value::Object(legacy.clone()), help_definition()],
    );
    // The output schema is served exactly as written: no closure is published into it.
    let mut current = legacy;
    current.insert("title".into(), json!("Counted"));
    current.insert("outputSchema".into(), output);
    for version in WITH_TITLES {
        assert_listed(
            &server,
            version,
            vec![Value::Object(current.clone()), help_definition()],
        );
    }
}

// LIST-7, LIST-9 … LIST-11 ------------------------------------------------------------------

#[test]
fn list_7_consumer_tools_in_order_then_help() {
    let server = build(Server::builder().tool(Spec::new("test_tool", one_action())));
    for version in SESSION_ERA {
        let names: Vec<Value> = server.list_tools(version)["tools"]
            .as_array()
            .expect("tools is an array")
            .iter()
            .map(|d| d["name"].clone())
            .collect();
        assert_eq!(names, [json!("test_tool"), json!("help")]);
    }

    let empty = build(Server::builder());
    for version in SESSION_ERA {
        assert_listed(&empty, version, vec![help_definition()]);
    }

    let mixed = build(
        Server::builder()
            .tool(Spec::new("zeta", one_action()))
            .plain_tool(Plain {
                name: "echo".into(),
                input: object(json!({"type": "object"})),
                title: None,
                output: None,
            })
            .tool(Spec::new("alpha", one_action())),
    );
    let names: Vec<Value> = mixed.list_tools(ProtocolVersion::V2025_11_25)["tools"]
        .as_array()
        .expect("tools is an array")
        .iter()
        .map(|d| d["name"].clone())
        .collect();
    assert_eq!(
        names,
        [json!("zeta"), json!("echo"), json!("alpha"), json!("help")]
    );
}

#[test]
fn list_9_help_definition_is_exact_on_every_revision() {
    let server = build(Server::builder().tool(Spec::new("t", one_action())));
    for version in SESSION_ERA {
        let listed = server.list_tools(version);
        let help = &listed["tools"][1];
        assert_eq!(help, &help_definition(), "help for {version}");
        assert_eq!(help["inputSchema"]["additionalProperties"], json!(false));
        let keys: Vec<&String> = help["inputSchema"]["properties"]
            .as_object()
            .expect("help declares properties")
            .keys()
            .collect();
        assert_eq!(keys, ["action", "tool"]);
        assert!(help["inputSchema"].get("required").is_none());
    }
}

#[test]
fn list_10_a_tool_with_no_actions() {
    let server = build(Server::builder().tool(Spec::new("idle", Actions::new())));
    let definition = json!({
        "name": "idle",
        "description": "The idle tool",
        "inputSchema": {
            "type": "object",
            "required": ["action"],
            "properties": {
                "action": {"type": "string", "enum": [], "description": ""},
                "data": {"type": "object"}
            }
        }
    });
    for version in SESSION_ERA {
        assert_listed(
            &server,
            version,
            vec![definition.clone(), help_definition()],
        );
    }
}

#[test]
fn list_11_the_result_is_the_full_list_without_next_cursor() {
    let server = build(
        Server::builder()
            .tool(Spec::new("a", one_action()))
            .tool(Spec::new("b", one_action())),
    );
    for version in SESSION_ERA {
        let listed = server.list_tools(version);
        let keys: Vec<&String> = listed
            .as_object()
            .expect("the result is an object")
            .keys()
            .collect();
        assert_eq!(keys, ["tools"], "{version}");
        assert_eq!(listed["tools"].as_array().map(Vec::len), Some(3));
    }
}

// LIST-12 -----------------------------------------------------------------------------------

/// What the describing callbacks of [`Drifting`] read: a phase the test moves after build, and
/// how often each callback ran.
#[derive(Default)]
struct Config {
    phase: AtomicUsize,
    calls: Mutex<BTreeMap<&'static str, usize>>,
}

impl Config {
    fn read(&self, callback: &'static str) -> usize {
        *self
            .calls
            .lock()
            .expect("calls lock")
            .entry(callback)
            .or_default() += 1;
        self.phase.load(Ordering::SeqCst)
    }
}

const DESCRIPTIONS: [&str; 2] = ["Captured at build", "Changed after build"];

/// A tool whose every describing callback reads configuration that changes after build.
struct Drifting(Arc<Config>);

impl ActionTool for Drifting {
    fn name(&self) -> &str {
        ["drifting", "renamed"][self.0.read("name")]
    }
    fn description(&self) -> &str {
        DESCRIPTIONS[self.0.read("description")]
    }
    fn actions(&self) -> Actions {
        let mut actions = Actions::new().action("get", ActionSchema::new("Get it"));
        if self.0.read("actions") > 0 {
            actions = actions.action("put", ActionSchema::new("Put it"));
        }
        actions
    }
    async fn run_action(&self, action: &str, _data: Data, _ctx: Context) -> ActionResult {
        Ok(Reply::new(json!({ "ran": action })))
    }
    fn title(&self) -> Option<String> {
        Some(format!("Title {}", self.0.read("title")))
    }
    fn annotations(&self) -> Option<Map<String, Value>> {
        Some(object(
            json!({"readOnlyHint": self.0.read("annotations") == 0}),
        ))
    }
    fn output_schema(&self) -> Option<Map<String, Value>> {
        let phase = self.0.read("output_schema");
        Some(object(
            json!({"type": "object", "maxProperties": phase + 1}),
        ))
    }
}

#[tokio::test]
async fn list_12_definitions_captured_at_build_are_what_is_served() {
    let config = Arc::new(Config::default());
    let server = build(Server::builder().tool(Drifting(Arc::clone(&config))));
    let before: Vec<Value> = SESSION_ERA.iter().map(|v| server.list_tools(*v)).collect();
    let index_before =
        wymcp::testing::call_tool(&server, "help", Some(json!({})), Context::default())
            .await
            .expect("help answers")
            .json();

    config.phase.store(1, Ordering::SeqCst);

    let expected_current = json!({
        "name": "drifting",
        "description": "Captured at build",
        "title": "Title 0",
        "annotations": {"readOnlyHint": true},
        "outputSchema": {"type": "object", "maxProperties": 1},
        "inputSchema": action_input_schema(&["get"], "get: Get it")
    });
    let expected_legacy = json!({
        "name": "drifting",
        "description": "Captured at build",
        "annotations": {"readOnlyHint": true},
        "inputSchema": action_input_schema(&["get"], "get: Get it")
    });
    assert_listed(
        &server,
        ProtocolVersion::V2025_03_26,
        vec![expected_legacy, help_definition()],
    );
    for version in WITH_TITLES {
        assert_listed(
            &server,
            version,
            vec![expected_current.clone(), help_definition()],
        );
    }
    let after: Vec<Value> = SESSION_ERA.iter().map(|v| server.list_tools(*v)).collect();
    assert_eq!(before, after);

    // Help's index reads the same stored text.
    let index = wymcp::testing::call_tool(&server, "help", Some(json!({})), Context::default())
        .await
        .expect("help answers")
        .json();
    assert_eq!(index, index_before);
    assert_eq!(
        index,
        Some(json!({"tools": [
            {"tool": "drifting", "description": "Captured at build", "actions": ["get: Get it"]},
            {"tool": "help", "description": HELP_DESCRIPTION, "actions": []}
        ]}))
    );

    // Every describing callback ran exactly once, at build; serving called none of them.
    let calls = config.calls.lock().expect("calls lock").clone();
    assert_eq!(
        calls,
        BTreeMap::from([
            ("actions", 1),
            ("annotations", 1),
            ("description", 1),
            ("name", 1),
            ("output_schema", 1),
            ("title", 1),
        ])
    );
}

// Definitions beyond the LIST checks --------------------------------------------------------

#[test]
fn tool_description_reaches_the_wire_verbatim() {
    let description = "Line one\nLine two — ünïcode, \"quoted\", trailing spaces  \n\n";
    let server =
        build(Server::builder().tool(Spec::new("verbatim", one_action()).description(description)));
    for version in SESSION_ERA {
        assert_eq!(
            server.list_tools(version)["tools"][0]["description"],
            json!(description)
        );
    }
}

#[test]
fn plain_tool_definition_publishes_its_input_schema_with_the_gate_closure() {
    let server = build(Server::builder().plain_tool(Plain {
        name: "echo".into(),
        input: object(json!({
            "type": "object",
            "properties": {
                "message": {"type": "string", "description": "What to echo"},
                "opts": {"type": "object", "properties": {"loud": {"type": "boolean"}}},
                "free": {"type": "object"}
            },
            "required": ["message"]
        })),
        title: Some("Echo".into()),
        output: Some(object(
            json!({"type": "object", "properties": {"echo": {"type": "string"}}}),
        )),
    }));
    let input = json!({
        "type": "object",
        "properties": {
            "message": {"type": "string", "description": "What to echo"},
            "opts": {
                "type": "object",
                "properties": {"loud": {"type": "boolean"}},
                "additionalProperties": false
            },
            "free": {"type": "object"}
        },
        "required": ["message"],
        "additionalProperties": false
    });
    assert_listed(
        &server,
        ProtocolVersion::V2025_03_26,
        vec![
            json!({"name": "echo", "description": "Echoes its message", "inputSchema": input}),
            help_definition(),
        ],
    );
    for version in WITH_TITLES {
        assert_listed(
            &server,
            version,
            vec![
                json!({
                    "name": "echo",
                    "description": "Echoes its message",
                    "title": "Echo",
                    "inputSchema": input,
                    "outputSchema": {"type": "object", "properties": {"echo": {"type": "string"}}}
                }),
                help_definition(),
            ],
        );
    }
}

// The official MCP schemas ------------------------------------------------------------------

#[test]
fn mcp_schema_accepts_every_kind_of_definition_the_server_serves() {
    // Every server the tests above build is checked by `build`; this one gathers every kind of
    // definition in one list: title, annotations, output schema, no actions, a plain tool, help.
    let server = build(
        Server::builder()
            .tool(
                Spec::new("full", one_action())
                    .title("Full")
                    .annotations(json!({
                        "title": "Full tool",
                        "readOnlyHint": false,
                        "destructiveHint": true,
                        "idempotentHint": false,
                        "openWorldHint": true
                    }))
                    .output(json!({"type": "object", "properties": {"n": {"type": "integer"}}})),
            )
            .tool(Spec::new("idle", Actions::new()))
            .plain_tool(Plain {
                name: "echo".into(),
                input: object(json!({
                    "type": "object",
                    "properties": {"message": {"type": "string"}},
                    "required": ["message"]
                })),
                title: Some("Echo".into()),
                output: None,
            }),
    );
    assert_eq!(server.tool_names(), ["full", "idle", "echo", "help"]);
}

#[test]
fn mcp_schema_validators_refuse_what_is_not_a_tool() {
    // The validators are not vacuous: a definition that breaks the schema fails on every
    // revision, and so does a list holding one.
    let broken = [
        json!({"inputSchema": {"type": "object"}}),
        json!({"name": 7, "inputSchema": {"type": "object"}}),
        json!({"name": "x"}),
        json!({"name": "x", "inputSchema": {"type": "array"}}),
        json!({"name": "x", "inputSchema": {"type": "object", "properties": {"p": 1}}}),
        json!({"name": "x", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": "yes"}}),
    ];
    for version in mcp_schema::REVISIONS {
        let tool = mcp_schema::validator(version, "Tool");
        let list = mcp_schema::validator(version, "ListToolsResult");
        for definition in &broken {
            assert!(
                !mcp_schema::problems(&tool, definition).is_empty(),
                "{version} accepted {definition}"
            );
            let result = json!({"tools": [definition]});
            assert!(
                !mcp_schema::problems(&list, &result).is_empty(),
                "{version} accepted {result}"
            );
        }
        assert!(!mcp_schema::problems(&list, &json!({})).is_empty());
    }
    // From 2025-06-18 an output schema must be an object schema.
    for version in [ProtocolVersion::V2025_06_18, ProtocolVersion::V2025_11_25] {
        let tool = mcp_schema::validator(version, "Tool");
        let definition = json!({
            "name": "x", "inputSchema": {"type": "object"}, "outputSchema": {"type": "array"}
        });
        assert!(
            !mcp_schema::problems(&tool, &definition).is_empty(),
            "{version} accepted {definition}"
        );
    }
}
