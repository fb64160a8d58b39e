//! `expose = "actions"`: upstream tools as the actions of one action-dispatched tool
//! ([`UpstreamActions`]), each action's schema made from the tool's `inputSchema`
//! ([`action_schema`]) and validated at start like any action schema. A task-augmented call
//! of an upstream that serves tasks runs as the gateway's task, as in `tools` mode
//! (`crate::tasks`).

use std::sync::Arc;

use serde_json::{Map, Value, json};
use wymcp::client::ToolInfo;
use wymcp::task::{TaskStart, TaskSupport};
use wymcp::tool::Failure;
use wymcp::{
    ActionError, ActionResult, ActionTool, Actions, CallError, Context, Data, Reply, ToolPolicy,
};

use crate::config::SchemaFallback;
use crate::report::Notice;
use crate::tasks;
use crate::upstream::Upstream;

/// One upstream tool served as an action: its name and the validated action schema.
#[derive(Debug)]
pub(crate) struct Action {
    pub(crate) name: String,
    schema: Value,
    read_only: bool,
    destructive: bool,
    /// Whether it runs as a task, as the upstream tool's definition says
    /// ([`tasks::support_of`]).
    task_support: TaskSupport,
}

/// Upstream tools served as the actions of one tool: each call checked by wymcp's gates
/// against the action's schema before it is forwarded.
#[derive(Debug)]
pub(crate) struct UpstreamActions {
    name: String,
    description: String,
    actions: Vec<Action>,
    upstream: Arc<Upstream>,
    /// Whether the upstream serves tasks: a call whose downstream request declares the
    /// extension is then forwarded declaring it too (`crate::tasks`).
    tasks: bool,
}

impl UpstreamActions {
    pub(crate) fn new(
        name: String,
        actions: Vec<Action>,
        upstream: Arc<Upstream>,
        tasks: bool,
    ) -> Self {
        let names: Vec<&str> = actions.iter().map(|a| a.name.as_str()).collect();
        let description = format!(
            "The tools of the MCP server {:?} as actions: {}. Call with {{\"action\": NAME, \"data\": {{...}}}}; help(tool, action) shows an action's data.",
            upstream.name(),
            names.join(", ")
        );
        UpstreamActions {
            name,
            description,
            actions,
            upstream,
            tasks,
        }
    }

    /// The policy it is registered with: for an upstream that serves tasks, each action's
    /// task support as its upstream tool's (`Optional` when the tool does not say), started
    /// when the call hands off, as `tools` mode registers each tool
    /// (`UpstreamTool::policy`).
    pub(crate) fn policy(&self) -> ToolPolicy {
        if !self.tasks {
            return ToolPolicy::new();
        }
        self.actions.iter().fold(
            ToolPolicy::new().task_start(TaskStart::OnHandOff),
            |policy, action| policy.action_task_support(action.name.clone(), action.task_support),
        )
    }

    /// The failure of an upstream `isError` answer, its text the upstream's.
    fn answered_error(&self, text: &str) -> Failure {
        Failure::msg(format!(
            "upstream {} answered an error: {text}",
            self.upstream.name()
        ))
    }
}

/// The reply of an upstream tool result `raw`: its `content` and its `structuredContent`,
/// taken from the answer, not copied.
fn reply(mut raw: Value) -> Value {
    let mut reply = Map::new();
    reply.insert(
        "content".to_owned(),
        raw.get_mut("content")
            .map(Value::take)
            .unwrap_or_else(|| json!([])),
    );
    if let Some(structured) = raw.get_mut("structuredContent").map(Value::take) {
        reply.insert("structuredContent".to_owned(), structured);
    }
    Value::Object(reply)
}

/// The action's failure for the error a task-augmented call ended with (`crate::tasks`): the
/// upstream task's JSON-RPC error as it is, else its text.
fn failure(error: CallError) -> Failure {
    match error.protocol_error() {
        Some(failed) => Failure::protocol(failed.clone()),
        None => Failure::msg(error.message()),
    }
}

impl ActionTool for UpstreamActions {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn actions(&self) -> Actions {
        self.actions.iter().fold(Actions::new(), |actions, a| {
            actions.action_value(a.name.clone(), a.schema.clone())
        })
    }

    /// The upstream's answer as it sent it: `{"content": [...]}` with `structuredContent`
    /// when it sent one. An upstream `isError` answer is this action's failure, its text
    /// the upstream's. Forwarded declaring the tasks extension when the upstream serves
    /// tasks and the downstream request declares it (`crate::tasks`).
    async fn run_action(&self, action: &str, data: Data, ctx: Context) -> ActionResult {
        if self.tasks && tasks::declares_tasks(&ctx) {
            let result = tasks::call(&self.upstream, action, data.into_value(), &ctx)
                .await
                .map_err(failure)?;
            if result.is_error() {
                return Err(self.answered_error(&result.text()));
            }
            let (_, raw) = result.into_parts();
            return Ok(Reply::new(reply(raw)));
        }
        let result = self
            .upstream
            .call_tool(action, data.into_value(), &ctx)
            .await
            .map_err(|error| {
                tasks::relay_required(&error, &ctx);
                Failure::new(error)
            })?;
        if result.is_error() {
            return Err(self.answered_error(&result.text()));
        }
        // Taken from the answer, not copied.
        let (_, raw) = result.into_parts();
        Ok(Reply::new(reply(raw)))
    }

    /// The reason as it is: it names the upstream already.
    fn handle_error(&self, reason: &ActionError) -> String {
        reason.to_string()
    }

    /// `readOnlyHint` when every action is read-only, else `destructiveHint` when one is
    /// destructive (per action, the notes say).
    fn annotations(&self) -> Option<Map<String, Value>> {
        let value = if self.actions.iter().all(|a| a.read_only) {
            json!({"readOnlyHint": true})
        } else {
            json!({"readOnlyHint": false, "destructiveHint": self.actions.iter().any(|a| a.destructive)})
        };
        value.as_object().cloned()
    }
}

/// The action made from the upstream tool `tool`, its schema validated as the build will
/// validate it; `None` (with a notice) when it is left out. A schema refused is widened or
/// left out as `fallback` says, and a notice says which and why.
pub(crate) fn action(
    upstream: &str,
    tool: &ToolInfo,
    scopes: Option<&Vec<String>>,
    fallback: SchemaFallback,
    notices: &mut Vec<Notice>,
) -> Option<Action> {
    let raw = tool.raw();
    let annotations = raw.get("annotations");
    let hint = |key: &str| {
        annotations
            .and_then(|a| a.get(key))
            .and_then(Value::as_bool)
    };
    let read_only = hint("readOnlyHint") == Some(true);
    // MCP's default for a tool that is not read-only: destructive.
    let destructive = !read_only && hint("destructiveHint") != Some(false);
    let schema = action_schema(tool, scopes, read_only, destructive, false);
    let problem = match wymcp_core::validate_action(tool.name(), &schema) {
        Ok(_) => {
            return Some(Action {
                name: tool.name().to_owned(),
                schema,
                read_only,
                destructive,
                task_support: tasks::support_of(tool),
            });
        }
        Err(problem) => problem.to_string(),
    };
    if fallback == SchemaFallback::Omit {
        notices.push(Notice::new(
            upstream,
            tool.name(),
            format!("input schema refused ({problem}): left out"),
        ));
        return None;
    }
    let widened = action_schema(tool, scopes, read_only, destructive, true);
    match wymcp_core::validate_action(tool.name(), &widened) {
        Ok(_) => {
            notices.push(Notice::new(
                upstream,
                tool.name(),
                format!("input schema refused ({problem}): served with any value for each of its properties"),
            ));
            Some(Action {
                name: tool.name().to_owned(),
                schema: widened,
                read_only,
                destructive,
                task_support: tasks::support_of(tool),
            })
        }
        Err(again) => {
            notices.push(Notice::new(
                upstream,
                tool.name(),
                format!("input schema refused ({problem}), and widened too ({again}): left out"),
            ));
            None
        }
    }
}

/// The action schema of an upstream tool: the first line of its description, its
/// `inputSchema`'s `properties` and `required` (with `widen`, each property of any value and
/// the required ones those declared), the rest of the description, its hints and its
/// output schema in `notes`, and the scopes configured.
fn action_schema(
    tool: &ToolInfo,
    scopes: Option<&Vec<String>>,
    read_only: bool,
    destructive: bool,
    widen: bool,
) -> Value {
    let text = tool.description().unwrap_or_default().trim();
    let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
    let first = first.trim();
    let description = if first.is_empty() {
        format!("Calls the upstream tool {}", tool.name())
    } else {
        first.to_owned()
    };
    let input = tool.input_schema();
    let mut properties = input
        .get("properties")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let mut required = input.get("required").cloned();
    if widen {
        let mut names: Vec<String> = properties
            .as_object()
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        let listed: Vec<String> = required
            .as_ref()
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        for name in &listed {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
        names.sort();
        names.dedup();
        properties = Value::Object(names.into_iter().map(|n| (n, json!({}))).collect());
        let mut listed = listed;
        listed.sort();
        listed.dedup();
        required = (!listed.is_empty()).then(|| json!(listed));
    }
    let mut schema = Map::new();
    schema.insert("description".to_owned(), json!(description));
    schema.insert("properties".to_owned(), properties);
    if let Some(required) = required.filter(|r| r.as_array().is_none_or(|a| !a.is_empty())) {
        schema.insert("required".to_owned(), required);
    }
    let mut notes = Vec::new();
    if !rest.trim().is_empty() {
        notes.push(rest.trim().to_owned());
    }
    if read_only {
        notes.push("Read-only.".to_owned());
    } else if destructive {
        notes.push("May be destructive.".to_owned());
    }
    if let Some(output) = tool.output_schema() {
        notes.push(format!(
            "Answers structuredContent matching the schema {output}"
        ));
    }
    if !notes.is_empty() {
        schema.insert("notes".to_owned(), json!(notes.join("\n\n")));
    }
    if let Some(scopes) = scopes {
        schema.insert("scopes".to_owned(), json!(scopes));
    }
    Value::Object(schema)
}
