//! A value or required-key refusal (`missing_required_fields`, `missing_required_group`,
//! `invalid_values` for a type, enum, format or range problem) quotes, beside the contract's
//! fields, the property's schema cut to `type`, `format`, `enum`, the bounds, lengths, `pattern`,
//! item counts and `description`, and the value the action's first example has at that path.
//! Asserted whole, over real Streamable HTTP on 127.0.0.1 (issue 47, second item).

#![allow(clippy::unwrap_used, missing_docs)]

mod http_harness;

use http_harness::{Answer, Http, data_lines};
use serde_json::{Map, Value, json};
use wymcp::transport::http::StreamableHttp;
use wymcp::{
    ActionResult, ActionSchema, ActionTool, Actions, CallOutput, CallResult, Context, Data, Limits,
    PlainTool, Reply, Server,
};

const STATUSES: [&str; 12] = [
    "new", "open", "triaged", "planned", "started", "blocked", "review", "testing", "staged",
    "shipped", "closed", "wontfix",
];

/// `create` declares an example; `note` none.
struct Tasks;

impl ActionTool for Tasks {
    fn name(&self) -> &str {
        "tasks"
    }
    fn description(&self) -> &str {
        "Tasks"
    }
    fn actions(&self) -> Actions {
        Actions::new()
            .action(
                "create",
                ActionSchema::new("Create a task")
                    .property(
                        "title",
                        json!({"type": "string", "maxLength": 80, "description": "What to do"}),
                    )
                    .property(
                        "priority",
                        json!({"type": "integer", "minimum": 1, "maximum": 5,
                               "description": "1 is the most urgent"}),
                    )
                    .property("due", json!({"type": "string", "format": "date-time"}))
                    .property("status", json!({"type": "string", "enum": STATUSES}))
                    .property(
                        "code",
                        json!({"type": "string", "pattern": "^[A-Z]{3}$", "minLength": 3,
                               "description": "Three capitals"}),
                    )
                    .property(
                        "tags",
                        json!({"type": "array", "items": {"type": "string"}, "maxItems": 2}),
                    )
                    .property(
                        "kind",
                        json!({"oneOf": [{"const": "bug", "description": "Broken"},
                                         {"const": "chore"}]}),
                    )
                    .property(
                        "address",
                        json!({"type": "object", "properties": {
                            "zip": {"type": "string", "description": "Postal code"},
                            "city": {"type": "string"}
                        }, "required": ["zip"]}),
                    )
                    .required(["title"])
                    .example(
                        json!({"title": "Ship the release", "priority": 2, "code": "REL",
                                    "address": {"zip": "75001", "city": "Paris"}}),
                    ),
            )
            .action(
                "find",
                ActionSchema::new("Find a task by id or by title")
                    .property(
                        "id",
                        json!({"type": "integer", "minimum": 1, "description": "Its id"}),
                    )
                    .property("title", json!({"type": "string", "minLength": 1}))
                    .property("project", json!({"type": "string"}))
                    .required_one_of(vec![vec!["id"], vec!["title", "project"]])
                    .example(json!({"id": 7})),
            )
            .action(
                "note",
                ActionSchema::new("Note something")
                    .property("text", json!({"type": "string", "description": "The note"}))
                    .required(["text"]),
            )
    }
    async fn run_action(&self, _action: &str, _data: Data, _ctx: Context) -> ActionResult {
        Ok(Reply::new(json!({"ok": true})))
    }
}

struct Count;

impl PlainTool for Count {
    fn name(&self) -> &str {
        "count"
    }
    fn description(&self) -> &str {
        "Counts"
    }
    fn input_schema(&self) -> Map<String, Value> {
        match json!({"type": "object",
                     "properties": {"n": {"type": "integer", "minimum": 0, "description": "How many"}},
                     "required": ["n"]})
        {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }
    async fn run(&self, _arguments: Map<String, Value>, _ctx: Context) -> CallResult {
        Ok(CallOutput::json(json!({"ok": true})))
    }
}

async fn serve(limits: Limits) -> Http {
    let server = Server::builder()
        .name("schemas")
        .limits(limits)
        .tool(Tasks)
        .plain_tool(Count)
        .build()
        .unwrap();
    Http::serve(StreamableHttp::builder(server)).await
}

/// Calls `tool` with `arguments` in a fresh session over HTTP: the refusal payload (the
/// result must be `isError`).
async fn refusal(http: &Http, tool: &str, arguments: Value) -> Value {
    let session = http.open_session(json!({})).await;
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}});
    let answer = Answer::read(http.session_post(&session, &body).await).await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    let envelope = if answer.text.trim_start().starts_with('{') {
        answer.json()
    } else {
        data_lines(&answer.text).pop().unwrap()
    };
    let result = &envelope["result"];
    assert_eq!(result["isError"], true, "{envelope}");
    serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap()
}

/// `create`'s digest, as the data-level refusals carry it.
fn create_digest() -> Value {
    json!({
        "properties": {
            "title": {"type": "string", "maxLength": 80, "description": "What to do"},
            "priority": {"type": "integer", "minimum": 1, "maximum": 5,
                         "description": "1 is the most urgent"},
            "due": {"type": "string", "format": "date-time"},
            "status": {"type": "string", "enum": STATUSES},
            "code": {"type": "string", "pattern": "^[A-Z]{3}$", "minLength": 3,
                     "description": "Three capitals"},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
            "kind": {"oneOf": [{"const": "bug", "description": "Broken"}, {"const": "chore"}]},
            "address": {"type": "object", "properties": {
                "zip": {"type": "string", "description": "Postal code"},
                "city": {"type": "string"}
            }, "required": ["zip"], "additionalProperties": false},
        },
        "required": ["title"],
        "defaults": {},
    })
}

const CREATE_HELP: &str = r#"help {tool: "tasks", action: "create"}"#;

#[tokio::test]
async fn a_missing_required_key_quotes_its_schema_and_the_example_value() {
    let http = serve(Limits::default()).await;
    assert_eq!(
        refusal(&http, "tasks", json!({"action": "create", "data": {}})).await,
        json!({
            "error": "missing_required_fields",
            "message": "Required fields missing: title",
            "missing": ["title"],
            "schemas": [{"path": "/title",
                         "schema": {"type": "string", "maxLength": 80, "description": "What to do"},
                         "example": "Ship the release"}],
            "action": "create",
            "input_schema": create_digest(),
            "help": CREATE_HELP,
        })
    );
}

#[tokio::test]
async fn a_missing_required_key_without_an_example_quotes_the_schema_alone() {
    let http = serve(Limits::default()).await;
    assert_eq!(
        refusal(&http, "tasks", json!({"action": "note"})).await,
        json!({
            "error": "missing_required_fields",
            "message": "Required fields missing: text",
            "missing": ["text"],
            "schemas": [{"path": "/text", "schema": {"type": "string", "description": "The note"}}],
            "action": "note",
            "input_schema": {"properties": {"text": {"type": "string", "description": "The note"}},
                             "required": ["text"], "defaults": {}},
            "help": r#"help {tool: "tasks", action: "note"}"#,
        })
    );
}

#[tokio::test]
async fn a_wrong_type_quotes_the_schema_and_the_example_value() {
    let http = serve(Limits::default()).await;
    let data = json!({"title": "x", "priority": "high", "due": 5});
    assert_eq!(
        refusal(&http, "tasks", json!({"action": "create", "data": data})).await,
        json!({
            "error": "invalid_values",
            "message": "Invalid value(s) for action 'create': /due, /priority.",
            "invalid": [
                {"path": "/due", "problems": ["expected type string"]},
                {"path": "/priority", "problems": ["expected type integer"]},
            ],
            "invalid_count": 2,
            "schemas": [
                // The example sets no due: the schema alone.
                {"path": "/due", "schema": {"type": "string", "format": "date-time"}},
                {"path": "/priority",
                 "schema": {"type": "integer", "minimum": 1, "maximum": 5,
                            "description": "1 is the most urgent"},
                 "example": 2},
            ],
            "action": "create",
            "input_schema": create_digest(),
            "help": CREATE_HELP,
        })
    );
}

#[tokio::test]
async fn nested_paths_quote_the_nested_schema_and_example() {
    let http = serve(Limits::default()).await;
    // A nested required key: the problem is the object's, the schema the missing key's.
    let body = refusal(
        &http,
        "tasks",
        json!({"action": "create", "data": {"title": "x", "address": {"city": "Lyon"}}}),
    )
    .await;
    assert_eq!(
        body,
        json!({
            "error": "invalid_values",
            "message": "Invalid value(s) for action 'create': /address.",
            "invalid": [{"path": "/address", "problems": ["missing required property 'zip'"]}],
            "invalid_count": 1,
            "schemas": [{"path": "/address/zip",
                         "schema": {"type": "string", "description": "Postal code"},
                         "example": "75001"}],
            "action": "create",
            "input_schema": create_digest(),
            "help": CREATE_HELP,
        })
    );
    // A nested wrong type.
    let body = refusal(
        &http,
        "tasks",
        json!({"action": "create", "data": {"title": "x", "address": {"zip": 75001}}}),
    )
    .await;
    assert_eq!(
        body["schemas"],
        json!([{"path": "/address/zip",
                "schema": {"type": "string", "description": "Postal code"},
                "example": "75001"}])
    );
    assert_eq!(
        body["invalid"],
        json!([{"path": "/address/zip", "problems": ["expected type string"]}])
    );
}

#[tokio::test]
async fn a_range_quotes_the_schema_and_the_example_value() {
    let http = serve(Limits::default()).await;
    let body = refusal(
        &http,
        "tasks",
        json!({"action": "create", "data": {"title": "x", "priority": 9}}),
    )
    .await;
    assert_eq!(
        body,
        json!({
            "error": "invalid_values",
            "message": "Invalid value(s) for action 'create': /priority.",
            "invalid": [{"path": "/priority", "problems": ["must be <= 5"]}],
            "invalid_count": 1,
            "schemas": [{"path": "/priority",
                         "schema": {"type": "integer", "minimum": 1, "maximum": 5,
                                    "description": "1 is the most urgent"},
                         "example": 2}],
            "action": "create",
            "input_schema": create_digest(),
            "help": CREATE_HELP,
        })
    );
}

#[tokio::test]
async fn a_length_a_pattern_and_an_item_count_quote_their_schemas() {
    let http = serve(Limits::default()).await;
    let long = "t".repeat(81);
    let data = json!({"title": long, "code": "ab", "tags": ["a", "b", "c"]});
    let body = refusal(&http, "tasks", json!({"action": "create", "data": data})).await;
    assert_eq!(
        body["invalid"],
        json!([
            {"path": "/code", "problems": ["length must be >= 3", "must match pattern ^[A-Z]{3}$"]},
            {"path": "/tags", "problems": ["must have <= 2 items"]},
            {"path": "/title", "problems": ["length must be <= 80"]},
        ])
    );
    assert_eq!(
        body["schemas"],
        json!([
            {"path": "/code",
             "schema": {"type": "string", "pattern": "^[A-Z]{3}$", "minLength": 3,
                        "description": "Three capitals"},
             "example": "REL"},
            {"path": "/tags", "schema": {"type": "array", "maxItems": 2}},
            {"path": "/title",
             "schema": {"type": "string", "maxLength": 80, "description": "What to do"},
             "example": "Ship the release"},
        ])
    );
}

#[tokio::test]
async fn a_format_and_an_enum_quote_their_schemas() {
    let http = serve(Limits::default()).await;
    let data = json!({"title": "x", "due": "tomorrow", "status": "done", "kind": "feature"});
    let body = refusal(&http, "tasks", json!({"action": "create", "data": data})).await;
    assert_eq!(
        body,
        json!({
            "error": "invalid_values",
            "message": "Invalid value(s) for action 'create': /due, /kind, /status.",
            "invalid": [
                {"path": "/due", "problems": ["must be a valid date-time"]},
                {"path": "/kind", "problems": ["must match exactly one schema in oneOf"]},
                {"path": "/status", "problems": ["must be one of the allowed values"]},
            ],
            "invalid_count": 3,
            "schemas": [
                {"path": "/due", "schema": {"type": "string", "format": "date-time"}},
                // Alternatives of constants (a documented Rust enum) are listed as the enum.
                {"path": "/kind", "schema": {"enum": ["bug", "chore"]}},
                {"path": "/status",
                 "schema": {"type": "string", "enum": STATUSES[..10], "enum_omitted": 2}},
            ],
            "action": "create",
            "input_schema": create_digest(),
            "help": CREATE_HELP,
        })
    );
}

#[tokio::test]
async fn a_missing_group_quotes_each_absent_member_in_the_groups_order() {
    let http = serve(Limits::default()).await;
    let digest = json!({
        "properties": {
            "id": {"type": "integer", "minimum": 1, "description": "Its id"},
            "title": {"type": "string", "minLength": 1},
            "project": {"type": "string"},
        },
        "required": [],
        "required_one_of": [["id"], ["title", "project"]],
        "defaults": {},
    });
    // `title` was sent: the absent members are id and project.
    assert_eq!(
        refusal(
            &http,
            "tasks",
            json!({"action": "find", "data": {"title": "Ship"}})
        )
        .await,
        json!({
            "error": "missing_required_group",
            "message": "At least one of these field groups must be fully present: \
                        (id) OR (title + project)",
            "required_one_of": [["id"], ["title", "project"]],
            "schemas": [
                {"path": "/id", "schema": {"type": "integer", "minimum": 1, "description": "Its id"},
                 "example": 7},
                {"path": "/project", "schema": {"type": "string"}},
            ],
            "action": "find",
            "input_schema": digest,
            "help": r#"help {tool: "tasks", action: "find"}"#,
        })
    );
    let body = refusal(&http, "tasks", json!({"action": "find"})).await;
    let paths: Vec<&str> = body["schemas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["/id", "/title", "/project"]);
}

#[tokio::test]
async fn a_long_enum_is_cut_at_the_limit_and_counted() {
    let http = serve(Limits::default().max_listed_enum_values(3)).await;
    let body = refusal(
        &http,
        "tasks",
        json!({"action": "create", "data": {"title": "x", "status": 1}}),
    )
    .await;
    assert_eq!(
        body["schemas"],
        json!([{"path": "/status",
                "schema": {"type": "string", "enum": ["new", "open", "triaged"],
                           "enum_omitted": 9}}])
    );
    // The default lists ten.
    let http = serve(Limits::default()).await;
    let body = refusal(
        &http,
        "tasks",
        json!({"action": "create", "data": {"title": "x", "status": 1}}),
    )
    .await;
    assert_eq!(
        body["schemas"][0]["schema"],
        json!({"type": "string", "enum": STATUSES[..10], "enum_omitted": 2})
    );
}

#[tokio::test]
async fn a_plain_tool_quotes_its_own_schema() {
    let http = serve(Limits::default()).await;
    let digest = json!({"type": "object",
        "properties": {"n": {"type": "integer", "minimum": 0, "description": "How many"}},
        "required": ["n"], "additionalProperties": false});
    let schemas = json!([{"path": "/n",
        "schema": {"type": "integer", "minimum": 0, "description": "How many"}}]);
    assert_eq!(
        refusal(&http, "count", json!({})).await,
        json!({
            "error": "invalid_values",
            "message": "Invalid value(s) for tool 'count': (data).",
            "invalid": [{"path": "", "problems": ["missing required property 'n'"]}],
            "invalid_count": 1,
            "schemas": schemas,
            "input_schema": digest,
            "help": r#"help {tool: "count"}"#,
        })
    );
    let body = refusal(&http, "count", json!({"n": "two"})).await;
    assert_eq!(body["schemas"], schemas);
    // A range problem quotes the same excerpt.
    let body = refusal(&http, "count", json!({"n": -1})).await;
    assert_eq!(
        body["invalid"],
        json!([{"path": "/n", "problems": ["must be >= 0"]}])
    );
    assert_eq!(body["schemas"], schemas);
}
