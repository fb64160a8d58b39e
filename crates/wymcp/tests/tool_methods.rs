//! `#[wymcp::tool]` beyond the notes example: one `Params<T>` struct as the data (served as
//! the `ActionEnum` variant carrying it is), a parameter whose type only its `JsonSchema`
//! knows, the `Context` as a parameter, every return form, and `hints` (typed by the
//! generated action enum), `action_context`, `title` and `annotations` as methods of the same
//! block.

#![allow(clippy::unwrap_used, missing_docs)]

use serde_json::{Map, Value, json};
use wymcp::tool::{CallToolResult, Failure, Params};
use wymcp::{
    ActionEnum, ActionResult, Context, Hint, ProtocolVersion, Reply, Server, TypedActionTool,
};

/// A task's urgency
#[wymcp::data]
#[serde(rename_all = "snake_case")]
enum Urgency {
    Low,
    High,
}

fn three() -> u8 {
    3
}

/// The data of `create`, as one struct.
#[wymcp::data]
struct CreateTask {
    /// The task's title
    title: String,
    /// 1 (urgent) to 5
    #[serde(default = "three")]
    priority: u8,
}

struct Tasks;

/// Task management
#[wymcp::tool(name = "tasks")]
impl Tasks {
    /// Create a task
    #[wymcp(example = {"title": "Ship"})]
    async fn create(&self, Params(task): Params<CreateTask>) -> ActionResult {
        let reply = json!({"title": task.title, "priority": task.priority});
        Ok(Reply::new(reply).with_hint_context(json!({"title": task.title})))
    }

    /// Flag a task's urgency
    async fn flag(&self, title: String, urgency: Option<Urgency>, ctx: &Context) -> Value {
        let urgency = match urgency {
            Some(Urgency::High) => "high",
            Some(Urgency::Low) => "low",
            None => "unset",
        };
        json!({"title": title, "urgency": urgency, "user": ctx.assigns().get("user")})
    }

    /// Fail on purpose
    async fn fail(&self, ctx: Context) -> Result<Reply, Failure> {
        let _ = ctx;
        Err(Failure::msg("failed on purpose").with_hint_context(json!({"title": "x"})))
    }

    /// Not an action: a helper the actions may call.
    #[wymcp(skip)]
    async fn helper(&self) -> u8 {
        1
    }

    /// Hints, typed by the action: the match is exhaustive.
    fn hints(&self, action: TasksAction, hint_context: &Value) -> Vec<Hint> {
        let title = hint_context["title"].as_str().unwrap_or_default();
        let why = format!("flag {title} after {}", action.name());
        match action {
            TasksAction::Create | TasksAction::Fail => vec![Hint::new("tasks", "flag", why)],
            TasksAction::Flag => Vec::new(),
        }
    }

    fn action_context(&self, action: &str, _ctx: &Context) -> Option<Map<String, Value>> {
        let mut context = Map::new();
        context.insert("action".into(), json!(action));
        (action == "flag").then_some(context)
    }

    fn title(&self) -> Option<String> {
        Some("Tasks".into())
    }

    fn annotations(&self) -> Option<Map<String, Value>> {
        json!({"readOnlyHint": false}).as_object().cloned()
    }
}

/// The same `create` as an `ActionEnum` variant.
#[derive(ActionEnum)]
enum TaskAction {
    /// Create a task
    #[wymcp(example = {"title": "Ship"})]
    Create(#[allow(dead_code)] CreateTask),
}

struct TypedTasks;

impl TypedActionTool for TypedTasks {
    type Action = TaskAction;
    fn name(&self) -> &str {
        "tasks"
    }
    fn description(&self) -> &str {
        "Task management"
    }
    async fn run(&self, _action: TaskAction, _ctx: Context) -> ActionResult {
        Ok(Reply::new(json!({})))
    }
}

fn server() -> Server {
    Server::builder().tool(Tasks).build().unwrap()
}

fn call(server: &Server, arguments: Value) -> CallToolResult {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let ctx = Context::default();
    ctx.assign("user", json!("ada"));
    runtime
        .block_on(wymcp::testing::call_tool(
            server,
            "tasks",
            Some(arguments),
            ctx,
        ))
        .unwrap()
}

fn definition(server: &Server) -> Value {
    let list = server.list_tools(ProtocolVersion::V2025_11_25);
    list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "tasks")
        .cloned()
        .unwrap()
}

#[test]
fn a_params_struct_is_served_as_the_action_enum_variant_carrying_it() {
    let typed = Server::builder().typed_tool(TypedTasks).build().unwrap();
    let ours = wymcp::ActionTool::actions(&Tasks);
    let theirs = TaskAction::actions();
    assert_eq!(ours.entries()[0], theirs.entries()[0]);
    let create = &ours.entries()[0].1;
    assert_eq!(create["required"], json!(["title"]));
    assert_eq!(create["defaults"], json!({"priority": 3}));
    assert_eq!(definition(&typed)["name"], "tasks");
}

#[test]
fn a_params_struct_receives_the_admitted_data_with_its_defaults() {
    let result = call(
        &server(),
        json!({"action": "create", "data": {"title": "Ship"}}),
    );
    let body = result.json().unwrap();
    assert_eq!(
        (&body["title"], &body["priority"]),
        (&json!("Ship"), &json!(3))
    );
    assert_eq!(body["hints"][0]["description"], "flag Ship after create");
    let refused = call(
        &server(),
        json!({"action": "create", "data": {"title": "Ship", "priority": 256}}),
    );
    assert!(refused.is_error());
    assert!(
        refused.text().unwrap().contains("invalid_values"),
        "{refused:?}"
    );
}

#[test]
fn a_parameter_of_a_deriving_type_gets_its_schema_and_its_gate() {
    let flag = &wymcp::ActionTool::actions(&Tasks).entries()[1].1.clone();
    assert_eq!(
        flag["properties"]["urgency"]["enum"],
        json!(["low", "high"])
    );
    assert_eq!(
        flag["properties"]["urgency"]["description"],
        "A task's urgency"
    );
    assert_eq!(flag["required"], json!(["title"]));
    let admitted = call(
        &server(),
        json!({"action": "flag", "data": {"title": "Ship", "urgency": "high"}}),
    );
    let body = admitted.json().unwrap();
    assert_eq!(body["urgency"], "high");
    assert_eq!(
        body["user"], "ada",
        "the method received the call's context"
    );
    assert_eq!(body["context"], json!({"action": "flag"}));
    let refused = call(
        &server(),
        json!({"action": "flag", "data": {"title": "Ship", "urgency": "urgent"}}),
    );
    assert!(refused.is_error());
    assert!(refused.text().unwrap().contains("/urgency"), "{refused:?}");
}

#[test]
fn a_failure_keeps_its_hint_context_and_the_skipped_method_is_no_action() {
    let failed = call(&server(), json!({"action": "fail", "data": {}}));
    assert!(failed.is_error());
    let text = failed.text().unwrap();
    assert!(text.contains("failed on purpose"), "{text}");
    assert!(text.contains("flag x after fail"), "{text}");
    let names: Vec<String> = wymcp::ActionTool::actions(&Tasks)
        .entries()
        .iter()
        .map(|(n, _)| n.clone())
        .collect();
    assert_eq!(names, ["create", "flag", "fail"]);
    let skipped = call(&server(), json!({"action": "helper", "data": {}}));
    assert!(
        skipped.text().unwrap().contains("unknown_action"),
        "{skipped:?}"
    );
    assert_eq!(
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(Tasks.helper()),
        1
    );
}

#[test]
fn title_and_annotations_come_from_the_block() {
    let tool = definition(&server());
    assert_eq!(tool["title"], "Tasks");
    assert_eq!(tool["annotations"], json!({"readOnlyHint": false}));
    assert_eq!(tool["description"], "Task management");
}

#[test]
fn the_action_enum_names_every_action() {
    assert_eq!(TasksAction::from_name("flag"), Some(TasksAction::Flag));
    assert_eq!(TasksAction::from_name("helper"), None);
    assert_eq!(TasksAction::Create.name(), "create");
}

#[wymcp::data]
struct Found {
    /// The titles found
    titles: Vec<String>,
}

struct Search;

#[wymcp::plain_tool(name = "search")]
impl Search {
    /// Find tasks by a word of their title
    async fn find(&self, word: String, limit: Option<u8>) -> Result<Found, Failure> {
        let titles = vec![format!("{word} ({})", limit.unwrap_or(10))];
        Ok(Found { titles })
    }
}

struct Titles;

#[wymcp::plain_tool]
impl Titles {
    /// List every title
    async fn titles(&self) -> Result<Vec<String>, Failure> {
        Ok(vec!["Ship".into()])
    }
}

#[test]
fn a_plain_tool_serves_its_struct_output_as_validated_structured_content() {
    let server = Server::builder()
        .plain_tool(Search)
        .plain_tool(Titles)
        .build()
        .unwrap();
    let list = server.list_tools(ProtocolVersion::V2025_11_25);
    let search = &list["tools"][0];
    assert_eq!(search["name"], "search");
    assert_eq!(search["inputSchema"]["required"], json!(["word"]));
    assert_eq!(
        search["outputSchema"]["properties"]["titles"],
        json!({"type": "array", "items": {"type": "string"}, "description": "The titles found"})
    );
    // A list is no object: no output schema, served as text only.
    assert_eq!(list["tools"][1]["name"], "titles");
    assert!(list["tools"][1].get("outputSchema").is_none(), "{list}");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let found = runtime
        .block_on(wymcp::testing::call_tool(
            &server,
            "search",
            Some(json!({"word": "Ship", "limit": 2})),
            Context::default(),
        ))
        .unwrap();
    assert_eq!(
        found.structured_content(),
        Some(&json!({"titles": ["Ship (2)"]}))
    );
    let refused = runtime
        .block_on(wymcp::testing::call_tool(
            &server,
            "search",
            Some(json!({"limit": 300})),
            Context::default(),
        ))
        .unwrap();
    assert!(refused.is_error());
    assert_eq!(refused.error_kind().map(|k| k.as_str()), Some("dispatch"));
}

/// Property names as serde gives them: the compile-time check follows `rename_all`.
#[wymcp::data]
#[serde(rename_all = "camelCase")]
struct Lookup {
    project_key: Option<String>,
    pr_id: Option<u32>,
}

struct Reviews;

/// Pull requests
#[wymcp::tool]
impl Reviews {
    /// Get a pull request
    #[wymcp(required_one_of = [["projectKey", "prId"]], example = {"projectKey": "W", "prId": 1})]
    async fn get(&self, Params(lookup): Params<Lookup>) -> Result<Value, Failure> {
        Ok(json!({"key": lookup.project_key, "id": lookup.pr_id}))
    }
}

#[test]
fn a_renamed_struct_s_properties_are_the_ones_checked() {
    let get = wymcp::ActionTool::actions(&Reviews).entries()[0].1.clone();
    assert_eq!(get["required_one_of"], json!([["projectKey", "prId"]]));
    assert!(get["properties"].get("projectKey").is_some(), "{get}");
    Server::builder().tool(Reviews).build().unwrap();
}
