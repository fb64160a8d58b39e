//! The server every path of the matrix serves: an action tool for the gates, a plain tool
//! sending progress and log messages, one asking the client (elicitation and sampling), one
//! running until cancelled, a resource, a prompt and its completion.

use serde_json::{Map, Value, json};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use wymcp::Prompt;
use wymcp::Resource;
use wymcp::completion::CompletionValues;
use wymcp::prompt::PromptMessage;
use wymcp::prompt::{GetPromptResult, PromptArgument, PromptArguments, PromptError};
use wymcp::protocol::LogLevel;
use wymcp::session::{Elicitation, Sampling};
use wymcp::{
    ActionResult, ActionSchema, ActionTool, Actions, CallError, CallOutput, CallResult, Content,
    Context, Data, PlainTool, Reply, Server,
};

/// The server's name and version, as `initialize` and `_meta` serverInfo give them.
pub(crate) const NAME: &str = "matrix";
pub(crate) const VERSION: &str = "1.0.0";
pub(crate) const INSTRUCTIONS: &str = "Manage tasks with the tasks tool.";
pub(crate) const README: &str = "test://readme";

fn object(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

/// The action tool whose gates every path must refuse alike.
struct Tasks;

impl ActionTool for Tasks {
    fn name(&self) -> &str {
        "tasks"
    }
    fn description(&self) -> &str {
        "Task management"
    }
    fn actions(&self) -> Actions {
        Actions::new().action(
            "create",
            ActionSchema::new("Create a task")
                .property("title", json!({"type": "string", "minLength": 1}))
                .property(
                    "priority",
                    json!({"type": "integer", "minimum": 1, "maximum": 5}),
                )
                .required(["title"]),
        )
    }
    async fn run_action(&self, _action: &str, data: Data, _ctx: Context) -> ActionResult {
        Ok(Reply::new(
            json!({"created": data["title"], "priority": data.get("priority")}),
        ))
    }
}

/// Reports progress twice and logs at two levels, then answers which messages went out.
struct Steps;

impl PlainTool for Steps {
    fn name(&self) -> &str {
        "steps"
    }
    fn description(&self) -> &str {
        "Sends progress and log messages"
    }
    fn input_schema(&self) -> Map<String, Value> {
        object(json!({"type": "object"}))
    }
    async fn run(&self, _arguments: Map<String, Value>, ctx: Context) -> CallResult {
        let first = ctx.progress(1.0, Some(2.0), Some("half way"));
        let debug = ctx.log(LogLevel::Debug, json!("details"));
        let warning = ctx.log_as(LogLevel::Warning, "steps", json!({"careful": true}));
        let second = ctx.progress(2.0, Some(2.0), None);
        Ok(CallOutput::json(json!({
            "first": first, "debug": debug, "warning": warning, "second": second
        })))
    }
}

/// Registers `widgets` on its session, when the call has one (the session era): answers
/// whether it did, and whether the session's tool list is dirty since.
struct Register;

impl PlainTool for Register {
    fn name(&self) -> &str {
        "register"
    }
    fn description(&self) -> &str {
        "Registers a tool on the session"
    }
    fn input_schema(&self) -> Map<String, Value> {
        object(json!({"type": "object"}))
    }
    async fn run(&self, _arguments: Map<String, Value>, ctx: Context) -> CallResult {
        let Some(session) = ctx.session() else {
            return Ok(CallOutput::json(json!({"registered": false})));
        };
        session
            .register_plain_tool(Widgets)
            .map_err(|e| CallError::tool(e.to_string()))?;
        let dirty = session.is_tool_list_dirty();
        Ok(CallOutput::json(
            json!({"registered": true, "dirty": dirty}),
        ))
    }
}

/// The tool [`Register`] adds at runtime.
struct Widgets;

impl PlainTool for Widgets {
    fn name(&self) -> &str {
        "widgets"
    }
    fn description(&self) -> &str {
        "Registered at runtime"
    }
    fn input_schema(&self) -> Map<String, Value> {
        object(json!({"type": "object"}))
    }
    async fn run(&self, _arguments: Map<String, Value>, _ctx: Context) -> CallResult {
        Ok(CallOutput::json(json!({"widgets": []})))
    }
}

/// Asks the client for a name (elicitation) and a summary (sampling) in one round.
struct Ask;

impl PlainTool for Ask {
    fn name(&self) -> &str {
        "ask"
    }
    fn description(&self) -> &str {
        "Asks the user's name and a summary"
    }
    fn input_schema(&self) -> Map<String, Value> {
        object(json!({"type": "object"}))
    }
    async fn run(&self, _arguments: Map<String, Value>, ctx: Context) -> CallResult {
        let form = Elicitation::form(
            "What is your name?",
            json!({"type": "object", "properties": {"name": {"type": "string"}},
                   "required": ["name"]}),
        )
        .key("name");
        let sampling = Sampling::prompt("Summarize the task")
            .max_tokens(50)
            .key("summary");
        let (name, summary) = tokio::join!(ctx.elicit(form), ctx.sample(sampling));
        let failed = |e: wymcp::session::ClientRequestError| CallError::tool(e.to_string());
        let (name, summary) = (name.map_err(failed)?, summary.map_err(failed)?);
        Ok(CallOutput::json(json!({
            "name": name["content"]["name"],
            "summary": summary["content"]["text"],
            "model": summary["model"],
        })))
    }
}

/// Hands its context's cancellation token to the probe, reports progress once, then runs
/// until cancelled.
struct Slow {
    token: watch::Sender<Option<CancellationToken>>,
}

impl PlainTool for Slow {
    fn name(&self) -> &str {
        "slow"
    }
    fn description(&self) -> &str {
        "Runs until cancelled"
    }
    fn input_schema(&self) -> Map<String, Value> {
        object(json!({"type": "object"}))
    }
    async fn run(&self, _arguments: Map<String, Value>, ctx: Context) -> CallResult {
        self.token.send_replace(Some(ctx.cancellation().clone()));
        ctx.progress(1.0, None, Some("started"));
        std::future::pending::<()>().await;
        Ok(CallOutput::text("never"))
    }
}

/// A prompt greeting its `name` argument.
struct Greeting;

impl Prompt for Greeting {
    fn name(&self) -> &str {
        "greeting"
    }
    fn description(&self) -> Option<String> {
        Some("Greets someone".into())
    }
    fn arguments(&self) -> Vec<PromptArgument> {
        vec![
            PromptArgument::required("name").description("Who to greet"),
            PromptArgument::optional("tone"),
        ]
    }
    async fn get(
        &self,
        args: PromptArguments,
        _ctx: Context,
    ) -> Result<GetPromptResult, PromptError> {
        if args.get("tone").map(String::as_str) == Some("rude") {
            return Err(PromptError::InvalidArguments("tone must be polite".into()));
        }
        Ok(
            GetPromptResult::new(vec![PromptMessage::user(Content::text(format!(
                "Hello, {}!",
                args["name"]
            )))])
            .description("a greeting"),
        )
    }
}

/// The cancellation token of the `slow` call's context, once it runs.
pub(crate) type SlowToken = watch::Receiver<Option<CancellationToken>>;

/// A fresh server, and the probe of its `slow` tool; `list_changed`: whether it declares
/// `listChanged` (what a `subscriptions/listen` stream needs to hear of list changes) and
/// serves `register`, which changes its session's tool list.
pub(crate) fn server(list_changed: bool) -> (Server, SlowToken) {
    let (token, probe) = watch::channel(None);
    let mut builder = Server::builder()
        .list_changed(list_changed)
        .name(NAME)
        .version(VERSION)
        .instructions(INSTRUCTIONS)
        .tool(Tasks)
        .plain_tool(Steps)
        .plain_tool(Ask)
        .plain_tool(Slow { token })
        .resource(Resource::text(README, "readme", "Read me first."))
        .prompt(Greeting)
        .prompt_completion(
            "greeting",
            "name",
            CompletionValues::new(["Ada", "Alan", "Grace"]),
        );
    if list_changed {
        builder = builder.plain_tool(Register);
    }
    let server = builder
        .build()
        .unwrap_or_else(|e| panic!("the matrix server builds: {e}"));
    (server, probe)
}
