//! `expose = "tools"`: each upstream tool served as a tool of its own ([`UpstreamTool`]), its
//! input and output schemas, title and annotations kept; a task-augmented call forwarded as
//! one (`crate::tasks`).

use std::sync::Arc;

use serde_json::{Map, Value, json};
use wymcp::client::ToolInfo;
use wymcp::task::{TaskStart, TaskSupport};
use wymcp::{CallError, CallResult, Context, PlainTool, ToolPolicy};

use crate::config::SchemaFallback;
use crate::report::Notice;
use crate::tasks;
use crate::upstream::Upstream;

/// One upstream tool, served under `name`, forwarded once its arguments pass the unknown-key
/// and value gates of its own input schema.
#[derive(Debug)]
pub(crate) struct UpstreamTool {
    name: String,
    upstream_name: String,
    description: String,
    input_schema: Map<String, Value>,
    output_schema: Option<Map<String, Value>>,
    title: Option<String>,
    annotations: Option<Map<String, Value>>,
    scopes: Vec<String>,
    upstream: Arc<Upstream>,
    /// Whether the upstream serves tasks: a call whose downstream request declares the
    /// extension is then forwarded declaring it too (`crate::tasks`).
    tasks: bool,
    /// Whether it runs as a task, as the upstream tool's definition says
    /// ([`tasks::support_of`]).
    task_support: TaskSupport,
}

impl UpstreamTool {
    /// The tool `tool` of `upstream`, served as `name`; `None` (with a notice) when its
    /// schema is refused and `fallback` leaves it out.
    pub(crate) fn new(
        name: String,
        tool: &ToolInfo,
        upstream: &Arc<Upstream>,
        fallback: SchemaFallback,
        tasks: bool,
        notices: &mut Vec<Notice>,
    ) -> Option<UpstreamTool> {
        let raw = tool.raw();
        let mut input_schema = tool.input_schema().as_object().cloned().unwrap_or_default();
        if let Err(problem) = wymcp_core::schema::InputSchema::build(&input_schema) {
            if fallback == SchemaFallback::Omit {
                notices.push(Notice::new(
                    upstream.name(),
                    tool.name(),
                    format!("input schema refused ({problem}): left out"),
                ));
                return None;
            }
            notices.push(Notice::new(
                upstream.name(),
                tool.name(),
                format!("input schema refused ({problem}): served accepting any object"),
            ));
            input_schema = json!({"type": "object", "additionalProperties": true})
                .as_object()
                .cloned()
                .unwrap_or_default();
        }
        let mut output_schema = tool.output_schema().and_then(Value::as_object).cloned();
        if let Some(schema) = &output_schema
            && let Err(problem) = wymcp_core::schema::build_output_schema(schema)
        {
            notices.push(Notice::new(
                upstream.name(),
                tool.name(),
                format!("output schema refused ({problem}): served without one"),
            ));
            output_schema = None;
        }
        let mut annotations = raw.get("annotations").and_then(Value::as_object).cloned();
        if let Some(a) = &annotations
            && let Err(problem) = wymcp_core::schema::check_annotations(a)
        {
            notices.push(Notice::new(
                upstream.name(),
                tool.name(),
                format!("annotations refused ({problem}): served without them"),
            ));
            annotations = None;
        }
        Some(UpstreamTool {
            name,
            upstream_name: tool.name().to_owned(),
            description: tool.description().unwrap_or_default().to_owned(),
            input_schema,
            output_schema,
            title: tool.title().map(str::to_owned),
            annotations,
            scopes: upstream
                .config()
                .scopes
                .get(tool.name())
                .cloned()
                .unwrap_or_default(),
            upstream: Arc::clone(upstream),
            tasks,
            task_support: tasks::support_of(tool),
        })
    }

    /// The policy it is registered with: an upstream that serves tasks has each of its tools
    /// run as the gateway's task when the upstream makes it one (started when the call hands
    /// off), with the task support its definition declares, `Optional` when it does not
    /// ([`tasks::support_of`]).
    pub(crate) fn policy(&self) -> ToolPolicy {
        if !self.tasks {
            return ToolPolicy::new();
        }
        ToolPolicy::new()
            .task_support(self.task_support)
            .task_start(TaskStart::OnHandOff)
    }
}

impl PlainTool for UpstreamTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> Map<String, Value> {
        self.input_schema.clone()
    }

    /// The upstream's content and `structuredContent` as it sent them; its `isError`
    /// answer is this tool's error, with the upstream's text.
    /// Forwarded declaring the tasks extension when the upstream serves tasks and the
    /// downstream request declares it (`crate::tasks`).
    async fn run(&self, arguments: Map<String, Value>, ctx: Context) -> CallResult {
        let arguments = Value::Object(arguments);
        if self.tasks && tasks::declares_tasks(&ctx) {
            let result = tasks::call(&self.upstream, &self.upstream_name, arguments, &ctx).await;
            return result.and_then(tasks::output);
        }
        let result = self
            .upstream
            .call_tool(&self.upstream_name, arguments, &ctx)
            .await
            .map_err(|e| {
                tasks::relay_required(&e, &ctx);
                CallError::tool(e.to_string())
            })?;
        tasks::output(result)
    }

    fn output_schema(&self) -> Option<Map<String, Value>> {
        self.output_schema.clone()
    }

    fn title(&self) -> Option<String> {
        self.title.clone()
    }

    fn annotations(&self) -> Option<Map<String, Value>> {
        self.annotations.clone()
    }

    fn scopes(&self) -> Vec<String> {
        self.scopes.clone()
    }
}
