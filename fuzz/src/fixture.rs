//! The server every protocol-level target serves: an action tool with defaults, enums,
//! `required_one_of` and integers; a plain tool reporting progress and logging; a tool that
//! elicits (a server request in a session, `input_required` in 2026-07-28); a resource, a
//! resource template and a prompt.

use std::sync::OnceLock;

use serde_json::{Map, Value, json};
use wymcp::mrtr::RequestStateKeys;
use wymcp::protocol::LogLevel;
use wymcp::session::Elicitation;
use wymcp::{ActionResult, ActionSchema, ActionTool, Actions, CallError, CallOutput, CallResult, Context, Data, PlainTool, Reply, Server};

/// The key the fixture's `requestState`s are sealed with.
pub const STATE_KEY: [u8; 32] = [42; 32];

/// The tool names, prompt names and resource URIs the fixture serves (for the dictionaries).
pub const TOOLS: [&str; 4] = ["notes", "echo", "ask", "help"];
/// The fixture's resource URIs, static and matching its template.
pub const URIS: [&str; 3] = ["fixture://readme", "fixture://notes/7", "fixture://notes/x%20y"];
/// The fixture's prompt.
pub const PROMPT: &str = "summarize";

struct Notes;

impl ActionTool for Notes {
    fn name(&self) -> &str {
        "notes"
    }
    fn description(&self) -> &str {
        "Keeps notes"
    }
    fn actions(&self) -> Actions {
        Actions::new()
            .action(
                "add",
                ActionSchema::new("Add a note")
                    .property("text", json!({"type": "string", "minLength": 1, "maxLength": 64}))
                    .property("tags", json!({"type": "array", "items": {"type": "string"}}))
                    .property("level", json!({"enum": ["low", "high"]}))
                    .required(["text"])
                    .default_value("tags", json!([])),
            )
            .action(
                "get",
                ActionSchema::new("Get a note by id or title")
                    .property("id", json!({"type": "integer", "minimum": 0}))
                    .property("title", json!({"type": "string"}))
                    .required_one_of([["id"], ["title"]]),
            )
            .action(
                "list",
                ActionSchema::new("List notes")
                    .property("limit", json!({"type": "integer", "minimum": 1, "maximum": 50}))
                    .property(
                        "filter",
                        json!({"type": "object", "properties": {"tag": {"type": "string"}},
                               "additionalProperties": false}),
                    )
                    .default_value("limit", json!(10)),
            )
    }
    async fn run_action(&self, action: &str, data: Data, ctx: Context) -> ActionResult {
        ctx.log(LogLevel::Info, json!({"action": action}));
        Ok(Reply::new(json!({"action": action, "data": data.into_value()})))
    }
}

struct Echo;

impl PlainTool for Echo {
    fn name(&self) -> &str {
        "echo"
    }
    fn description(&self) -> &str {
        "Echoes its message, reporting progress"
    }
    fn input_schema(&self) -> Map<String, Value> {
        object(json!({"type": "object", "properties": {
            "message": {"type": "string"}, "steps": {"type": "integer", "minimum": 0, "maximum": 3}
        }}))
    }
    async fn run(&self, arguments: Map<String, Value>, ctx: Context) -> CallResult {
        let steps = arguments.get("steps").and_then(Value::as_u64).unwrap_or(0);
        for step in 0..steps {
            ctx.progress(step as f64, Some(steps as f64), Some("working"));
            ctx.log(LogLevel::Debug, json!({"step": step}));
        }
        let message = arguments.get("message").and_then(Value::as_str).unwrap_or("");
        Ok(CallOutput::text(message))
    }
}

struct Ask;

impl PlainTool for Ask {
    fn name(&self) -> &str {
        "ask"
    }
    fn description(&self) -> &str {
        "Asks the client for a name"
    }
    fn input_schema(&self) -> Map<String, Value> {
        object(json!({"type": "object"}))
    }
    async fn run(&self, _arguments: Map<String, Value>, ctx: Context) -> CallResult {
        let _ = ctx.set_request_state(json!({"asked": true}));
        let form = Elicitation::form(
            "Your name?",
            json!({"type": "object", "properties": {"name": {"type": "string"}}}),
        )
        .key("user_name");
        let answer = ctx
            .elicit(form)
            .await
            .map_err(|e| CallError::tool(format!("asking failed: {e}")))?;
        Ok(CallOutput::json(answer))
    }
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

#[derive(Clone)]
struct Docs;

#[wymcp::resources]
impl Docs {
    /// A note, by its id
    #[wymcp(template = "fixture://notes/{id}", mime_type = "text/plain")]
    async fn note(&self, id: String) -> String {
        format!("note {id}")
    }

    /// The readme
    #[wymcp(uri = "fixture://readme")]
    async fn readme(&self) -> String {
        "read me".to_owned()
    }
}

/// Summarize the notes carrying a tag
#[wymcp::prompt]
async fn summarize(/** The tag */ tag: String, /** Words */ words: Option<u32>) -> String {
    format!("Summarize {tag} in {} words", words.unwrap_or(50))
}

/// The fixture server (built once per process; a `Server` is cheap to clone).
pub fn server() -> Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER
        .get_or_init(|| builder().build().expect("the fixture server builds"))
        .clone()
}

/// The fixture server's builder, for a target that gives it stores of its own.
pub fn builder() -> wymcp::ServerBuilder {
    Server::builder()
        .name("fuzz-fixture")
        .tool(Notes)
        .plain_tool(Echo)
        .plain_tool(Ask)
        .resource(Docs.readme_resource())
        .resource_template(Docs.note_resource())
        .prompt(summarize)
        .request_state_keys(RequestStateKeys::new(STATE_KEY).expect("32 bytes"))
}
