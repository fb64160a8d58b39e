//! `expose = "actions"`: upstream tools as the actions of one action-dispatched tool
//! ([`UpstreamActions`]), each action's schema made from the tool's `inputSchema`
//! ([`action_schema`]) and validated at start like any action schema.

use std::sync::Arc;

use serde_json::{Map, Value, json};
use wymcp::client::ToolInfo;
use wymcp::tool::Failure;
use wymcp::{ActionError, ActionResult, ActionTool, Actions, Context, Data, Reply};

use crate::config::SchemaFallback;
use crate::report::Notice;
use crate::upstream::Upstream;

/// One upstream tool served as an action: its name and the validated action schema.
#[derive(Debug)]
pub(crate) struct Action {
    pub(crate) name: String,
    schema: Value,
    read_only: bool,
    destructive: bool,
}

/// Upstream tools served as the actions of one tool: each call checked by wymcp's gates
/// against the action's schema before it is forwarded.
#[derive(Debug)]
pub(crate) struct UpstreamActions {
    name: String,
    description: String,
    actions: Vec<Action>,
    upstream: Arc<Upstream>,
}

impl UpstreamActions {
    pub(crate) fn new(name: String, actions: Vec<Action>, upstream: Arc<Upstream>) -> Self {
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
        }
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
    /// the upstream's.
    async fn run_action(&self, action: &str, data: Data, ctx: Context) -> ActionResult {
        let result = self
            .upstream
            .call_tool(action, data.into_value(), &ctx)
            .await
            .map_err(Failure::new)?;
        if result.is_error() {
            return Err(Failure::msg(format!(
                "upstream {} answered an error: {}",
                self.upstream.name(),
                result.text()
            )));
        }
        // Taken from the answer, not copied.
        let (_, mut raw) = result.into_parts();
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
        Ok(Reply::new(Value::Object(reply)))
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
